//! Probes: one file per phase of a run. Each drives the [`Session`](super::session::Session) and
//! leaves its verdicts in the session's issues (judging pure data through `checks/`).

pub mod adversarial;
pub mod corpus;
pub mod discover;
pub mod handshake;
pub mod invalid_args;
pub mod lists;
pub mod requests;
pub mod shutdown;

use super::session::Outcome;
use super::transport::ExitInfo;
use crate::catalog::runtime as rules;
use crate::issue::Issue;
use crate::runtime::checks::tools::NameRule;
use crate::runtime::session::Session;
use serde_json::Value;
use std::time::Duration;

/// Which probes a run sends beyond the handshake and the explicit operations.
#[derive(Debug, Clone)]
pub struct ProbeSpec {
    /// Send `server/discover` first (dual-era detection).
    pub discover: bool,
    /// How long a silent server may take to answer `server/discover` before it counts as legacy.
    pub discover_window: Duration,
    /// List every advertised capability (`tools/list`, `resources/list`, ...).
    pub capabilities: bool,
    /// Pages followed per list before giving up.
    pub max_pages: usize,
    pub name_rule: NameRule,
}

impl Default for ProbeSpec {
    fn default() -> Self {
        ProbeSpec {
            discover: true,
            discover_window: Duration::from_millis(1000),
            capabilities: true,
            max_pages: 100,
            name_rule: NameRule::Spec,
        }
    }
}

/// Stateless era: every result MUST carry `resultType`, cacheable ones `ttlMs` and `cacheScope`
/// (each reported once per method).
pub fn check_result_type(s: &mut Session, method: &str, value: &Value) {
    if s.request_meta.is_none() {
        return;
    }
    if crate::runtime::checks::discover::is_cacheable(method)
        && let Some(issue) = crate::runtime::checks::discover::cache_fields(value, method)
    {
        let code = issue.code();
        let already = s.issues.iter().any(|i| {
            i.code() == code && i.fields.get("method").and_then(Value::as_str) == Some(method)
        });
        if !already {
            s.record(issue);
        }
    }
    if value.get("resultType").is_some_and(Value::is_string) {
        return;
    }
    let already = s.issues.iter().any(|i| {
        i.is(&crate::catalog::protocol::RESULT_TYPE_MISSING)
            && i.fields.get("method").and_then(Value::as_str) == Some(method)
    });
    if !already {
        s.record(
            Issue::new(
                &crate::catalog::protocol::RESULT_TYPE_MISSING,
                format!(
                    "the {method} result has no string resultType, which the stateless era requires"
                ),
            )
            .field("method", method),
        );
    }
}

/// The detail code for an exit, given the phase wording (`before-initialize`, `during-operation`, ...).
pub fn exit_detail(exit: &ExitInfo, suffix: &str) -> &'static str {
    let kind = if exit.signal.is_some() {
        "signal"
    } else if exit.is_clean() {
        "clean"
    } else {
        "nonzero"
    };
    // Every combination the catalogue declares, spelled out so the strings stay 'static.
    match (kind, suffix) {
        ("clean", "before-initialize") => "clean-exit-before-initialize",
        ("nonzero", "before-initialize") => "nonzero-exit-before-initialize",
        ("signal", "before-initialize") => "signal-exit-before-initialize",
        ("clean", "during-operation") => "clean-exit-during-operation",
        ("nonzero", "during-operation") => "nonzero-exit-during-operation",
        ("signal", "during-operation") => "signal-exit-during-operation",
        ("signal", _) => "signal-exit-after-initialize",
        ("clean", _) => "clean-exit-after-initialize",
        _ => "nonzero-exit-after-initialize",
    }
}

/// Adds the exit facts of the reference's exit issues: `exitCode` and `signal` (a name), each
/// `null` when the exit had none.
pub fn with_exit(issue: Issue, exit: &ExitInfo) -> Issue {
    issue
        .field("exitCode", exit.code.map_or(Value::Null, Value::from))
        .field(
            "signal",
            exit.signal.map_or(Value::Null, |s| {
                Value::from(crate::runtime::transport::signal_name(s))
            }),
        )
}

/// The issue for a wait that ended because stdout closed while the process kept running.
pub fn stdout_closed_issue(what: &str) -> Issue {
    Issue::new(
        &rules::STDOUT_CLOSED_EARLY,
        format!("stdout closed while the server was still running, before it answered {what}"),
    )
}

/// True when the outcome means the session cannot go on.
pub fn is_fatal(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Exited(_) | Outcome::StdoutClosed | Outcome::OutputLimit
    )
}
