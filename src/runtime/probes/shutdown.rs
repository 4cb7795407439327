//! The shutdown ladder, run at the end of every run: stop sending, wait a quiet window for late
//! output, close stdin, wait for the exit while reading stdout to EOF, then SIGTERM the process
//! group, then SIGKILL it; finally find and kill descendants that outlived the server.

use super::exit_detail;
use crate::catalog::{Severity, runtime as rules};
use crate::issue::{Issue, Phase};
use crate::runtime::load::GraceEnd;
use crate::runtime::process::{self, GroupSignal, ServerProcess};
use crate::runtime::record::{ShutdownRecord, ShutdownStage};
use crate::runtime::session::Session;
use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug, Clone)]
pub struct LadderConfig {
    /// The late-output window: watched from the moment the session became ready until stdin is
    /// closed (at least this long after initialization; see [`quiet_until`]).
    pub quiet: Duration,
    /// How long a server may take to exit after stdin EOF.
    pub stdin_grace: Duration,
    /// How long after SIGTERM before SIGKILL.
    pub term_grace: Duration,
    /// How long to wait after SIGKILL.
    pub kill_grace: Duration,
    /// Needing SIGTERM is a warning instead of an error.
    pub allow_sigterm: bool,
}

impl Default for LadderConfig {
    fn default() -> Self {
        LadderConfig {
            quiet: Duration::from_millis(1000),
            stdin_grace: Duration::from_millis(3000),
            term_grace: Duration::from_millis(2000),
            kill_grace: Duration::from_millis(1000),
            allow_sigterm: false,
        }
    }
}

/// What the ladder's last step does.
const KILLED: &str = if cfg!(windows) {
    "terminated its Job object (the server and every process it started)"
} else {
    "killed its process group with SIGKILL"
};

/// The polite stop the ladder sends after stdin EOF.
const POLITE_STOP: &str = if cfg!(windows) {
    "CTRL_BREAK"
} else {
    "SIGTERM"
};

/// How long the quiet window lasts at least after the server's last reply: a line written right
/// after a reply is still seen. Never longer than the window itself (`--quiet-ms 0`: none).
pub const QUIET_SETTLE: Duration = Duration::from_millis(100);

/// The end of the late-output window. It runs from the moment the session became ready
/// (`notifications/initialized` sent, or a stateless server's discover answered), concurrently
/// with the capability probes and operations, so at the end only what is left of it is waited
/// for, and at least [`QUIET_SETTLE`] after the last reply. A session that never became ready
/// gets the whole window from now.
fn quiet_until(s: &Session, quiet: Duration) -> Instant {
    let now = s.now();
    let window_end = s.initialized_at.map_or(now + quiet, |t| t + quiet);
    let settle_end = s
        .last_reply_at
        .map_or(Duration::ZERO, |t| t + QUIET_SETTLE.min(quiet));
    Instant::now() + window_end.max(settle_end).saturating_sub(now)
}

/// A load-aware grace (stdin EOF, SIGTERM) is extended while the server is active by at most
/// this many times the grace itself (`--shutdown-grace` 3000 ms: up to 9000 ms more).
pub const GRACE_CAP_FACTOR: u32 = 3;

/// The words a shutdown finding adds when the machine was saturated when the grace ran out.
fn saturation_note(end: &GraceEnd) -> String {
    match (end, end.saturated()) {
        (GraceEnd::Capped { waited, .. }, Some((m, share))) => format!(
            " (but the machine was saturated: {} runnable processes on {} cores, load {:.1}; the server was busy or waiting for a CPU for all {} ms it was given and got {:.0}% of a core, so it may simply not have got the CPU to exit: a warning, not an error)",
            m.procs_running,
            m.cores,
            m.load1,
            waited.as_millis(),
            share * 100.0
        ),
        _ => String::new(),
    }
}

fn saturation_fields(
    m: &crate::runtime::load::Machine,
    share: f64,
    end: &GraceEnd,
) -> serde_json::Value {
    let waited = match end {
        GraceEnd::Capped { waited, .. } => waited.as_millis() as u64,
        _ => 0,
    };
    serde_json::json!({
        "procsRunning": m.procs_running,
        "cores": m.cores,
        "load1": m.load1,
        "cpuShare": (share * 1000.0).round() / 1000.0,
        "waitedMs": waited,
    })
}

/// How long stdout may stay open after the process exited before a descendant is blamed.
const HELD_OPEN_GRACE: Duration = Duration::from_millis(500);

pub async fn run(
    s: &mut Session,
    server: &mut ServerProcess,
    cfg: &LadderConfig,
) -> ShutdownRecord {
    let mut rec = ShutdownRecord {
        stage: ShutdownStage::ExitedEarly,
        stdin_eof_to_exit: None,
        stdout_held_open: false,
        descendants_killed: Vec::new(),
    };
    if s.exited.is_none() && s.stdout_limit.is_none() {
        let until = quiet_until(s, cfg.quiet);
        s.observe_until(until, |_| false).await;
        // A server waiting for a CPU may not have written its late line yet.
        s.observe_while_runnable(cfg.quiet).await;
    }
    if let Some((_, exit)) = s.exited {
        report_unrequested_exit(s, exit);
    } else {
        s.phase = Phase::Shutdown;
        s.link.close_stdin(Duration::from_millis(500)).await;
        s.mark_stdin_closed();
        let closed_at = s.now();
        // Whether the polite stop reached the server. Always on Unix (a failed `killpg` means the
        // group is already gone, and the wait below sees the exit); on Windows a CTRL_BREAK
        // needs a console shared with the server, and without one the ladder goes on to the kill.
        let mut term_sent = true;
        let eof_end = s
            .wait_exit_busy(cfg.stdin_grace, cfg.stdin_grace * GRACE_CAP_FACTOR)
            .await;
        rec.stage = if eof_end == GraceEnd::Exited {
            ShutdownStage::StdinEof
        } else {
            term_sent = server.signal_group(GroupSignal::Terminate) || cfg!(unix);
            // A stopped process only sees SIGTERM once continued.
            server.signal_group(GroupSignal::Continue);
            if term_sent
                && s.wait_exit_busy(cfg.term_grace, cfg.term_grace * GRACE_CAP_FACTOR)
                    .await
                    == GraceEnd::Exited
            {
                ShutdownStage::Sigterm
            } else {
                server.signal_group(GroupSignal::Kill);
                if s.wait_exit(Instant::now() + cfg.kill_grace).await {
                    ShutdownStage::Sigkill
                } else {
                    ShutdownStage::Unkillable
                }
            }
        };
        if let Some((at, _)) = s.exited {
            rec.stdin_eof_to_exit = Some(at.saturating_sub(closed_at));
        }
        // A write failed while the process ran on (it was alive when the quiet window ended): it
        // closed its stdin. Checked only now, when the failure's event has surely been read; every
        // write was queued before the guard closed stdin, so any failure is the server's doing.
        if let Some((at, error)) = s.stdin_error.clone() {
            s.record(Issue::new(
                &rules::STDIN_CLOSED_EARLY,
                format!(
                    "writing to the server's stdin failed after {} ms ({error}) while the process kept running: it closed stdin, and every message sent after that was lost",
                    at.as_millis()
                ),
            ));
        }
        let grace_ms = cfg.stdin_grace.as_millis();
        // Still busy when even the extended grace ran out, on a saturated machine: the server
        // may simply not have got a CPU to exit with. Said, and a warning.
        let saturated = eof_end.saturated();
        match rec.stage {
            ShutdownStage::Sigterm => {
                let severity = if cfg.allow_sigterm || saturated.is_some() {
                    Severity::Warning
                } else {
                    Severity::Error
                };
                let mut issue = Issue::new(
                    &rules::SHUTDOWN_SIGTERM_REQUIRED,
                    format!(
                        "the server was still running {grace_ms} ms after stdin closed and only exited on {POLITE_STOP}; clients that just close stdin leave it running as an orphan{}",
                        saturation_note(&eof_end)
                    ),
                )
                .severity(severity);
                if let Some((m, share)) = saturated {
                    issue = issue.field("saturated", saturation_fields(&m, share, &eof_end));
                }
                s.record(issue);
            }
            ShutdownStage::Sigkill | ShutdownStage::Unkillable if !term_sent => s.record(Issue::new(
                &rules::SHUTDOWN_SIGKILL_REQUIRED,
                format!(
                    "the server ignored stdin EOF for {grace_ms} ms; the guard {KILLED} (CTRL_BREAK could not be sent: the guard has no console)"
                ),
            )),
            ShutdownStage::Sigkill | ShutdownStage::Unkillable => {
                let mut issue = Issue::new(
                    &rules::SHUTDOWN_SIGKILL_REQUIRED,
                    format!(
                        "the server ignored stdin EOF for {grace_ms} ms and {POLITE_STOP} for {} ms; the guard {KILLED}{}",
                        cfg.term_grace.as_millis(),
                        saturation_note(&eof_end)
                    ),
                );
                if let Some((m, share)) = saturated {
                    issue = issue
                        .severity(Severity::Warning)
                        .field("saturated", saturation_fields(&m, share, &eof_end));
                }
                s.record(issue);
            }
            _ => {}
        }
    }
    s.phase = Phase::Shutdown;

    reap(s, server, &mut rec).await;
    rec
}

/// After the exit: stdout held open by a descendant, descendants left running (killed), and
/// whatever of the group is left.
async fn reap(s: &mut Session, server: &mut ServerProcess, rec: &mut ShutdownRecord) {
    // The process is gone (or unkillable): stdout should reach EOF unless a descendant holds it.
    if s.stdout_eof.is_none() && s.stdout_limit.is_none() {
        let eof = s
            .observe_until(Instant::now() + HELD_OPEN_GRACE, |s| s.stdout_eof.is_some())
            .await;
        if !eof {
            rec.stdout_held_open = true;
            let holders = server.descendants().await;
            s.record(Issue::new(
                &rules::SHUTDOWN_STDOUT_HELD_OPEN,
                format!(
                    "the server exited but its stdout stayed open: {}",
                    describe_procs(&holders, "a descendant process holds it")
                ),
            ));
        }
    }
    let left = server.descendants().await;
    if !left.is_empty() {
        s.record(Issue::new(
            &rules::SHUTDOWN_DESCENDANTS_LEFT,
            format!(
                "{} process(es) started by the server were still running after it exited; the guard killed them: {}",
                left.len(),
                describe_procs(&left, "")
            ),
        ));
        rec.descendants_killed = left.iter().map(|p| (p.pid, p.argv.clone())).collect();
        process::kill_all(&left);
    }
    // Anything of the group that is left (including a process that survived the checks above).
    server.signal_group(GroupSignal::Kill);
    process::forget_run(server.pid);
    s.link.stop_reading();
    server.finish_stderr(Duration::from_millis(500)).await;
}

/// The process exited before the guard closed stdin: report it unless a probe already did.
fn report_unrequested_exit(s: &mut Session, exit: crate::runtime::transport::ExitInfo) {
    let already = [
        &rules::SERVER_EXITED,
        &rules::OPERATION_MISSING_RESPONSE,
        &crate::catalog::protocol::CAPABILITY_LIST_MISSING_RESPONSE,
        &rules::SERVER_CRASHED,
    ]
    .iter()
    .any(|rule| s.issues.has(rule));
    // An exit the guard caused (it stopped reading a flooding stdout) is not the server's doing.
    if already || !s.initialized || s.stdout_limit.is_some() {
        return;
    }
    let detail = exit_detail(&exit, "after-initialize");
    let issue = if exit.is_clean() {
        Issue::new(
            &rules::SERVER_EXITED,
            format!(
                "the server exited with {} during the {} phase, before the client closed stdin",
                exit.describe(),
                s.phase.as_str()
            ),
        )
    } else {
        Issue::new(
            &rules::SERVER_CRASHED,
            format!(
                "the server exited with {} during the {} phase, after the initialize handshake",
                exit.describe(),
                s.phase.as_str()
            ),
        )
    };
    s.record(super::with_exit(issue.detail(detail), &exit));
}

fn describe_procs(procs: &[process::ProcInfo], empty: &str) -> String {
    if procs.is_empty() {
        return empty.to_string();
    }
    procs
        .iter()
        .take(8)
        .map(|p| {
            let argv = crate::redact::argv(&p.argv).join(" ");
            format!(
                "pid {} `{}`",
                p.pid,
                if argv.is_empty() { "?".into() } else { argv }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
