//! Probes: one file per phase of a run. Each drives the [`Session`](super::session::Session) and
//! leaves its verdicts in the session's issues (judging pure data through `checks/`).

pub mod handshake;
pub mod requests;
pub mod shutdown;

use super::session::Outcome;
use super::transport::ExitInfo;
use crate::catalog::runtime as rules;
use crate::issue::Issue;

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
