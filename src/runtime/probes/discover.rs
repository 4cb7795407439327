//! The era probe, sent before anything else as dual-era clients do: `server/discover`. A discover
//! result naming a stateless revision means the 2026-07-28 era (no `initialize`); an error, silence
//! within a short window, or any other answer means legacy. The window is short on purpose: a
//! legacy server that ignores unknown methods must not cost the full timeout on every run.

use crate::issue::Phase;
use crate::protocol;
use crate::runtime::checks::discover::{self, Verdict};
use crate::runtime::record::{DiscoverAnswer, DiscoverRecord};
use crate::runtime::session::{Outcome, Reply, Session};
use serde_json::{Value, json};
use std::time::Duration;

/// What the probe decided.
#[derive(Debug)]
pub enum Era {
    /// A stateless server: its capabilities, and whether the session can go on.
    Stateless { capabilities: Value, usable: bool },
    /// Legacy: go on with `initialize`.
    Legacy,
    /// The process exited or closed stdout on the probe.
    Crashed,
}

/// The `_meta` every stateless-era request carries.
pub fn request_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": protocol::MODERN_REVISION,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-stdio-guard", "version": crate::VERSION},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

pub async fn run(s: &mut Session, window: Duration) -> (Era, DiscoverRecord) {
    s.phase = Phase::Initialize;
    let mut rec = DiscoverRecord {
        probed: true,
        ..DiscoverRecord::default()
    };
    let started = s.now();
    let window = window.min(s.cfg.timeout);
    let extensions = s.extensions.len();
    let outcome = s
        .request_with_timeout(
            "server/discover",
            Some(json!({"_meta": request_meta()})),
            window,
        )
        .await;
    // A busy server (still importing) gets the window stretched like any deadline, but the
    // window is the guard's own bound, not a timeout the server missed: no deadline note.
    s.extensions.truncate(extensions);
    rec.duration = Some(s.now().saturating_sub(started));
    rec.request_id = Some(s.last_request_id());
    let era = match outcome {
        Outcome::Reply(Reply::Result { value, .. }) => accept(s, &value, &mut rec),
        Outcome::Reply(Reply::Error { .. }) => {
            rec.answer = Some(DiscoverAnswer::Error);
            Era::Legacy
        }
        Outcome::Reply(Reply::Broken { .. }) | Outcome::Misaddressed => {
            rec.answer = Some(DiscoverAnswer::Broken);
            Era::Legacy
        }
        Outcome::Timeout => {
            rec.answer = Some(DiscoverAnswer::Silence);
            Era::Legacy
        }
        Outcome::OutputLimit => {
            rec.answer = Some(DiscoverAnswer::Broken);
            Era::Legacy
        }
        Outcome::Exited(_) | Outcome::StdoutClosed => {
            rec.answer = Some(DiscoverAnswer::Crashed);
            Era::Crashed
        }
    };
    (era, rec)
}

/// After a failed `initialize`: did the discover result arrive after all, later than the window?
/// Then the server is stateless (slow to start, not legacy), and the handshake's verdicts about
/// `initialize` are withdrawn.
pub fn late(s: &mut Session, rec: &mut DiscoverRecord) -> Option<Era> {
    let id = rec.request_id.clone()?;
    let Some(Reply::Result { value, .. }) = s.late_replies.get(&id).cloned() else {
        return None;
    };
    if !matches!(discover::check(&value), Verdict::Stateless { .. }) {
        return None;
    }
    s.issues.retain(|i| {
        !(i.phase == Some(Phase::Initialize) && i.rule.check == crate::catalog::Check::Initialize)
    });
    rec.duration = None;
    Some(accept(s, &value, rec))
}

/// Judges a discover result; on a stateless server, readies the session for its requests.
pub fn accept(s: &mut Session, value: &Value, rec: &mut DiscoverRecord) -> Era {
    match discover::check(value) {
        Verdict::Stateless {
            versions,
            capabilities,
            issues,
            usable,
        } => {
            for i in issues {
                s.record(i);
            }
            rec.answer = Some(DiscoverAnswer::Result);
            rec.supported_versions = versions;
            s.negotiated = Some(protocol::MODERN_REVISION.to_string());
            if usable {
                s.request_meta = Some(request_meta());
                s.mark_initialized();
                s.phase = Phase::PostInitialize;
            }
            Era::Stateless {
                capabilities,
                usable,
            }
        }
        Verdict::Legacy { issues } => {
            for i in issues {
                s.record(i);
            }
            rec.answer = Some(DiscoverAnswer::UnexpectedResult);
            Era::Legacy
        }
    }
}
