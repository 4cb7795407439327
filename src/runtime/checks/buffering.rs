//! Stdio buffering, diagnosed on evidence (the reference guessed from the command line).
//!
//! Two kinds of evidence. Within one run: stdout pollution, or replies the guard waited for, that
//! arrived only after the guard closed stdin — output held in a buffer and flushed at exit (Python
//! block-buffers stdout on a pipe). Across two runs (`--unbuffered-rerun`): the same server run
//! again in the other buffering mode shows pollution the main run did not. Either way the
//! pollution itself keeps its own code; `python-buffered-stdio` explains why it was late or
//! hidden.

use crate::catalog::{Check, adversarial as rules};
use crate::issue::{Issue, Phase};
use std::collections::BTreeSet;

/// Codes that are about the stream as a whole, not about bytes that arrived.
/// stdout findings that are about the stream's end, not bytes in it.
const NOT_POLLUTION: [&crate::catalog::Rule; 2] = [
    &crate::catalog::runtime::STDOUT_CLOSED_EARLY,
    &crate::catalog::runtime::STDOUT_OUTPUT_LIMIT_EXCEEDED,
];

fn is_pollution(i: &Issue) -> bool {
    i.rule.check == Check::Stdout && !NOT_POLLUTION.iter().any(|r| i.is(r))
}

/// Pollution whose phase says when its bytes arrived. An unterminated tail is only framed at EOF,
/// whenever its bytes came, so it proves nothing about buffering.
fn arrived_late(i: &Issue) -> bool {
    is_pollution(i)
        && !i.is(&crate::catalog::runtime::STDOUT_WITHOUT_NEWLINE)
        && i.phase == Some(Phase::Shutdown)
}

/// Evidence within one run: `pollution` findings that arrived after stdin closed, and whether a
/// reply the guard gave up on arrived after stdin closed.
pub fn at_exit(issues: &[Issue], replies_after_eof: usize) -> Vec<Issue> {
    let mut out = Vec::new();
    // A flood the guard cut off at the output limit was still streaming, not flushed at exit.
    let flooded = issues
        .iter()
        .any(|i| i.is(&crate::catalog::runtime::STDOUT_OUTPUT_LIMIT_EXCEEDED));
    let late: Vec<&Issue> = issues.iter().filter(|i| arrived_late(i)).collect();
    if !late.is_empty() && !flooded {
        let count: u64 = late
            .iter()
            .map(|i| {
                1 + i
                    .fields
                    .get("moreOccurrences")
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(0)
            })
            .sum();
        let first = late[0];
        let mut issue = Issue::new(
            &rules::PYTHON_BUFFERED_STDIO,
            format!(
                "{count} stdout line(s) that are not protocol messages arrived only after the guard closed stdin, as the process exited (first: {}): output held in a stdio buffer until exit, the way Python block-buffers stdout on a pipe",
                first.evidence.as_deref().unwrap_or(first.code())
            ),
        )
        .detail("flushed-at-exit")
        .phase(Phase::Shutdown);
        if let Some(loc) = &first.location {
            issue = issue.at(loc.clone());
        }
        out.push(issue);
    }
    let timed_out = issues.iter().any(|i| {
        i.is(&crate::catalog::runtime::INITIALIZE_TIMEOUT)
            || i.is(&crate::catalog::runtime::OPERATION_TIMEOUT)
            || i.is(&crate::catalog::protocol::CAPABILITY_LIST_TIMEOUT)
    });
    if timed_out && replies_after_eof > 0 {
        out.push(
            Issue::new(
                &rules::PYTHON_BUFFERED_STDIO,
                format!(
                    "{replies_after_eof} reply(ies) the guard had given up waiting for arrived only after it closed stdin: the server's stdout is block-buffered and flushed at exit, so clients time out"
                ),
            )
            .detail("replies-at-exit")
            .phase(Phase::Shutdown),
        );
    }
    out
}

/// The buffering mode of the rerun.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RerunMode {
    /// `PYTHONUNBUFFERED=1` (the main run was buffered).
    Unbuffered,
    /// `PYTHONUNBUFFERED` removed (the main run was unbuffered).
    Buffered,
}

impl RerunMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RerunMode::Unbuffered => "unbuffered",
            RerunMode::Buffered => "buffered",
        }
    }
}

/// Pollution identity across processes: the code and the offending bytes with digits masked
/// (timestamps and pids differ between runs).
fn key(i: &Issue) -> (&'static str, String) {
    let evidence = i.evidence.clone().unwrap_or_else(|| i.message.clone());
    let masked: String = evidence
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    (i.code(), masked)
}

/// Evidence across two runs: the pollution of the rerun that the main run did not show,
/// imported with a prefix that says so, then one `python-buffered-stdio` explaining it.
pub fn compare(main: &[Issue], rerun: &[Issue], mode: RerunMode) -> Vec<Issue> {
    let seen: BTreeSet<(&'static str, String)> =
        main.iter().filter(|i| is_pollution(i)).map(key).collect();
    let mut added: BTreeSet<(&'static str, String)> = BTreeSet::new();
    let mut out = Vec::new();
    let prefix = match mode {
        RerunMode::Unbuffered => {
            "hidden by stdio buffering (seen when rerun with PYTHONUNBUFFERED=1)"
        }
        RerunMode::Buffered => {
            "seen only when stdout is block-buffered (rerun without PYTHONUNBUFFERED)"
        }
    };
    for i in rerun.iter().filter(|i| is_pollution(i)) {
        let k = key(i);
        if seen.contains(&k) || !added.insert(k) {
            continue;
        }
        let mut imported = i.clone();
        imported.message = format!("{prefix}: {}", i.message);
        imported.run = None;
        out.push(imported.field("bufferingRerun", mode.as_str()));
    }
    if let Some(first) = out.first() {
        let (detail, what) = match mode {
            RerunMode::Unbuffered => (
                "hidden-by-buffering",
                "with PYTHONUNBUFFERED=1 the server wrote stdout pollution that the main (block-buffered) run never showed: buffering hid it, or would have flushed it later",
            ),
            RerunMode::Buffered => (
                "only-when-buffered",
                "without PYTHONUNBUFFERED the server wrote stdout pollution that the main (unbuffered) run never showed: block-buffered output reaches stdout at another moment, often at exit",
            ),
        };
        let summary = Issue::new(
            &rules::PYTHON_BUFFERED_STDIO,
            format!(
                "{what} ({} line(s); first: {})",
                out.len(),
                first.evidence.as_deref().unwrap_or(first.code())
            ),
        )
        .detail(detail)
        .field("bufferingRerun", mode.as_str());
        out.push(summary);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::runtime::STDOUT_NON_JSON;

    fn pollution(evidence: &str, phase: Phase) -> Issue {
        Issue::new(
            &STDOUT_NON_JSON,
            format!("stdout line 3 is not JSON: {evidence}"),
        )
        .evidence(evidence)
        .at_stdout(3, 100)
        .phase(phase)
    }

    #[test]
    fn pollution_after_stdin_eof_is_flushed_at_exit() {
        let found = at_exit(&[pollution("b\"debug\\n\"", Phase::Shutdown)], 0);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].detail_code, Some("flushed-at-exit"));
        assert!(at_exit(&[pollution("b\"x\\n\"", Phase::Operation)], 0).is_empty());
        let timeout = Issue::new(&crate::catalog::runtime::INITIALIZE_TIMEOUT, "t");
        let found = at_exit(std::slice::from_ref(&timeout), 2);
        assert_eq!(found[0].detail_code, Some("replies-at-exit"));
        assert!(at_exit(&[timeout], 0).is_empty());
        // Late lines of a flood stopped at the output limit are no buffering evidence.
        let limit = Issue::new(&crate::catalog::runtime::STDOUT_OUTPUT_LIMIT_EXCEEDED, "l");
        assert!(at_exit(&[pollution("b\"x\\n\"", Phase::Shutdown), limit], 0).is_empty());
    }

    #[test]
    fn only_new_pollution_of_the_rerun_counts() {
        let main = [pollution("b\"banner 12\\n\"", Phase::Initialize)];
        let rerun = [
            pollution("b\"banner 13\\n\"", Phase::Initialize),
            pollution("b\"in tool\\n\"", Phase::Operation),
            pollution("b\"in tool\\n\"", Phase::Operation),
        ];
        let found = compare(&main, &rerun, RerunMode::Unbuffered);
        let codes: Vec<&str> = found.iter().map(Issue::code).collect();
        assert_eq!(codes, ["stdout-non-json", "python-buffered-stdio"]);
        assert!(found[0].message.starts_with("hidden by stdio buffering"));
        assert_eq!(found[1].detail_code, Some("hidden-by-buffering"));
        assert!(compare(&main, &main, RerunMode::Buffered).is_empty());
    }
}
