//! The legacy-era handshake: `initialize` → validate → `notifications/initialized`.

use super::{exit_detail, stdout_closed_issue};
use crate::catalog::runtime as rules;
use crate::issue::{Issue, Phase};
use crate::runtime::checks::initialize;
use crate::runtime::session::{Outcome, Reply, Session};
use serde_json::{Value, json};

/// What the handshake established.
#[derive(Debug, Default)]
pub struct Handshake {
    pub ok: bool,
    pub result: Option<Value>,
    pub duration_ms: Option<u128>,
}

pub fn initialize_params(protocol: &str) -> Value {
    json!({
        "protocolVersion": protocol,
        "capabilities": {},
        "clientInfo": {"name": "mcp-stdio-guard", "version": crate::VERSION},
    })
}

pub async fn run(s: &mut Session) -> Handshake {
    s.phase = Phase::Initialize;
    let requested = s.cfg.protocol.clone();
    let started = s.now();
    let outcome = s
        .request("initialize", Some(initialize_params(&requested)))
        .await;
    let mut hs = Handshake::default();
    let timeout_ms = s.cfg.timeout.as_millis();
    match outcome {
        Outcome::Reply(Reply::Result { value, at, .. }) => {
            hs.duration_ms = Some(at.saturating_sub(started).as_millis());
            let verdict = initialize::check(&value, &requested);
            for issue in verdict.issues {
                s.record(issue);
            }
            hs.result = Some(value);
            if verdict.usable {
                s.negotiated = verdict.negotiated;
                s.phase = Phase::PostInitialize;
                s.notify("notifications/initialized", None);
                s.mark_initialized();
                hs.ok = true;
            }
        }
        Outcome::Reply(Reply::Error { error, .. }) => {
            s.record(Issue::new(
                &rules::INITIALIZE_ERROR,
                format!(
                    "the server answered initialize with error {}: {:?}",
                    error.code, error.message
                ),
            ));
        }
        // The reply arrived but could not be read; the issue naming why is already recorded.
        Outcome::Reply(Reply::Broken { .. }) | Outcome::Misaddressed | Outcome::OutputLimit => {}
        Outcome::Timeout => s.record(
            Issue::new(
                &rules::INITIALIZE_TIMEOUT,
                format!("the server did not answer initialize within {timeout_ms} ms"),
            )
            .detail("startup-timeout")
            .field("timeoutMs", timeout_ms as u64),
        ),
        Outcome::Exited(exit) => s.record(super::with_exit(
            Issue::new(
                &rules::SERVER_EXITED,
                format!(
                    "the server exited with {} before answering initialize",
                    exit.describe()
                ),
            )
            .detail(exit_detail(&exit, "before-initialize")),
            &exit,
        )),
        Outcome::StdoutClosed => s.record(stdout_closed_issue("initialize")),
    }
    hs
}
