//! Human text, in the reference tool's style: a PASS/FAIL header, the facts of the run, then one
//! line per issue with its code and message and a `help:` line with the fix.

use super::{Report, ScanSection, Target, status};
use crate::issue::{Issue, Location, escape_bytes};
use crate::runtime::record::{
    CapabilityStatus, Era, OperationStatus, ProbeStatus, RunRecord, ShutdownStage,
};
use std::fmt::Write;

/// How many stderr lines a failing report shows.
const STDERR_TAIL_LINES: usize = 12;

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    // A report joined from JSON reports (`merge`) has the verdicts, not the runs' facts.
    if report.recorded_json.is_some() {
        out.push_str(&servers_table(report, false));
        return out;
    }
    if let Some((shard, _)) = &report.shard
        && report.targets.is_empty()
    {
        let _ = writeln!(
            out,
            "shard {}/{}: no server falls in this shard",
            shard.index, shard.count
        );
        return out;
    }
    if report.targets.is_empty() {
        if let Some(scan) = &report.scan {
            scan_text(&mut out, scan);
        }
        interrupted_text(&mut out, report);
        return out;
    }
    let several =
        report.targets.len() > 1 || report.interrupted.is_some() || report.shard.is_some();
    for (i, target) in report.targets.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        // `--scan` findings belong to the (single) server the run checked.
        let extra = if i == 0 { report.scan_issues() } else { &[] };
        target_text(&mut out, target, several, extra);
    }
    interrupted_text(&mut out, report);
    if let Some(path) = &report.transcript
        && report.exit() != crate::exit::Exit::Clean
    {
        let _ = writeln!(
            out,
            "transcript: {} (every byte of the run; `mcp-stdio-guard replay {}` prints it)",
            path.display(),
            path.display()
        );
    }
    out
}

/// One line per server (`FAIL name: 2 errors, 1 warning (stdout-non-json, ...)`), failures
/// first when `failures_first`, then a line of totals: the end of a registry run on a terminal,
/// and `merge`'s text report.
pub fn servers_table(report: &Report, failures_first: bool) -> String {
    let mut rows: Vec<(bool, String)> = report
        .targets
        .iter()
        .map(|t| {
            let s = status::summary(&t.issues);
            let verdict = if s.errors > 0 {
                "FAIL"
            } else if s.warnings > 0 {
                "WARN"
            } else {
                "PASS"
            };
            let codes = status::codes(
                t.issues
                    .iter()
                    .filter(|i| i.severity != crate::catalog::Severity::Note),
            );
            let mut line = format!(
                "{verdict}  {}: {} error{}, {} warning{}",
                t.name,
                s.errors,
                plural(s.errors),
                s.warnings,
                plural(s.warnings)
            );
            if !codes.is_empty() {
                let _ = write!(line, " ({})", codes.join(", "));
            }
            let _ = write!(line, " in {:.1} s", t.context.duration.as_secs_f64());
            (s.errors > 0, line)
        })
        .collect();
    if failures_first {
        // Stable: servers keep their order within each group.
        rows.sort_by_key(|(failed, _)| !failed);
    }
    let mut out = String::new();
    for (_, line) in &rows {
        let _ = writeln!(out, "{line}");
    }
    let failed = rows.iter().filter(|(f, _)| *f).count();
    let _ = writeln!(
        out,
        "{} server{}: {failed} failed, {} passed",
        rows.len(),
        plural(rows.len()),
        rows.len() - failed
    );
    out
}

/// The last lines of an interrupted run: what was not judged.
fn interrupted_text(out: &mut String, report: &Report) {
    let Some(i) = &report.interrupted else {
        return;
    };
    if !out.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(out, "INTERRUPTED {}", i.describe());
    if !i.not_judged.is_empty() {
        let _ = writeln!(out, "  not judged: {}", i.not_judged.join(", "));
    }
}

/// `scan` on its own: one `file:line:col: [severity] rule: message` line per finding, its help,
/// then a verdict line with the counts.
fn scan_text(out: &mut String, scan: &ScanSection) {
    for issue in &scan.issues {
        issue_text(out, issue);
    }
    let summary = status::summary(&scan.issues);
    let files = scan
        .issues
        .iter()
        .filter_map(|i| match &i.location {
            Some(Location::Source { file, .. }) => Some(file),
            _ => None,
        })
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let st = &scan.stats;
    let verdict = if summary.errors > 0 { "FAIL" } else { "PASS" };
    let _ = writeln!(
        out,
        "{verdict} static scan: {} error{}, {} warning{}{} in {files} file{} ({} file{} checked, {} parsed, {} ms)",
        summary.errors,
        plural(summary.errors),
        summary.warnings,
        plural(summary.warnings),
        if summary.notes > 0 {
            format!(", {} note{}", summary.notes, plural(summary.notes))
        } else {
            String::new()
        },
        plural(files),
        st.files,
        plural(st.files),
        st.parsed,
        st.duration.as_millis()
    );
}

fn target_text(out: &mut String, t: &Target, named: bool, extra: &[Issue]) {
    let all: Vec<Issue> = t.issues.iter().chain(extra).cloned().collect();
    let summary = status::summary(&all);
    let verdict = if summary.errors > 0 { "FAIL" } else { "PASS" };
    if named {
        let _ = writeln!(out, "{verdict} MCP stdio guard: {}", t.name);
    } else {
        let _ = writeln!(out, "{verdict} MCP stdio guard");
    }
    let _ = writeln!(out, "command: {}", t.context.argv.join(" "));
    for run in &t.runs {
        if t.runs.len() > 1 {
            let _ = writeln!(out, "run {}:", run.run);
        }
        run_text(out, run, &t.context.protocol);
    }
    if let Some(d) = &t.drift {
        if d.codes.is_empty() {
            let _ = writeln!(
                out,
                "drift: none across {} runs ({} passed, {} failed)",
                t.runs.len(),
                d.passed_runs.len(),
                d.failed_runs.len()
            );
        } else {
            let _ = writeln!(out, "drift: {}", d.codes.join(", "));
        }
    }
    for issue in &all {
        issue_text(out, issue);
    }
    let failed = t.runs.iter().any(|r| r.has_errors());
    if failed && let Some(run) = t.runs.iter().rev().find(|r| !r.stderr_tail.is_empty()) {
        stderr_text(out, &run.stderr_tail);
    }
    let _ = writeln!(
        out,
        "summary: {} error{}, {} warning{}{}",
        summary.errors,
        plural(summary.errors),
        summary.warnings,
        plural(summary.warnings),
        if summary.notes > 0 {
            format!(", {} note{}", summary.notes, plural(summary.notes))
        } else {
            String::new()
        }
    );
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn run_text(out: &mut String, run: &RunRecord, requested: &str) {
    let p = &run.process;
    if !p.started {
        let err = p
            .spawn_error
            .as_ref()
            .map(|(c, m)| format!("{m} ({c})"))
            .unwrap_or_default();
        let _ = writeln!(out, "spawn: failed: {err}");
        return;
    }
    let init = if run.initialized {
        match run.timings.initialize {
            Some(d) => format!("ok ({} ms)", d.as_millis()),
            None => "ok".into(),
        }
    } else {
        "failed".into()
    };
    if run.era == Era::Stateless {
        let _ = writeln!(out, "discover: {init}");
    } else {
        let _ = writeln!(out, "initialize: {init}");
    }
    let _ = writeln!(
        out,
        "frames: {} stdout / {} invalid",
        run.frames, run.invalid_frames
    );
    let _ = writeln!(
        out,
        "stderr: {} line{} ({} bytes{})",
        p.output.stderr_lines,
        plural(p.output.stderr_lines as usize),
        p.output.stderr_bytes,
        if p.output.stderr_truncated {
            ", tail kept"
        } else {
            ""
        }
    );
    let negotiated = run.negotiated_protocol.as_deref().unwrap_or("none");
    if run.era == Era::Stateless {
        let _ = writeln!(
            out,
            "protocol: {negotiated} (stateless era, found by server/discover; supported {}{})",
            run.discover.supported_versions.join(", "),
            if run.legacy_refused {
                "; refuses the legacy initialize handshake"
            } else {
                ""
            }
        );
    } else if run.also_stateless {
        let _ = writeln!(
            out,
            "protocol: {negotiated} (dual-era: also speaks {} through server/discover, checked in a second process)",
            run.discover.supported_versions.join(", ")
        );
    } else if negotiated == requested {
        let _ = writeln!(out, "protocol: {negotiated}");
    } else {
        let _ = writeln!(out, "protocol: {negotiated} (requested {requested})");
    }
    let advertised: Vec<String> = run
        .capability_checks
        .iter()
        .filter(|c| c.advertised)
        .map(|c| {
            let what = match (c.status, c.item_count) {
                (CapabilityStatus::Responded, Some(n)) if c.pages > 1 => {
                    format!("{n} in {} pages", c.pages)
                }
                (CapabilityStatus::Responded, Some(n)) => n.to_string(),
                (CapabilityStatus::NotProbed, _) => "not probed".into(),
                (status, _) => status.as_str().to_string(),
            };
            format!("{} {what}", c.kind.items_key())
        })
        .collect();
    if !advertised.is_empty() {
        let _ = writeln!(out, "capabilities: {}", advertised.join(", "));
    }
    if let Some(ts) = &run.tool_schema {
        let _ = writeln!(
            out,
            "tool schemas: {}/{} valid",
            ts.valid_tool_count, ts.tool_count
        );
    }
    for op in &run.operations {
        let what = match op.status {
            OperationStatus::Responded => "responded".to_string(),
            OperationStatus::Error => match &op.error {
                Some((code, msg)) => format!("error {code}: {msg}"),
                None => "error".into(),
            },
            other => other.as_str().to_string(),
        };
        let _ = writeln!(out, "request: {} {what}", op.method);
    }
    effects_text(out, run);
    adversarial_text(out, run);
    if let Some(b) = &run.buffering {
        let mode = match b.rerun_mode {
            "unbuffered" => "with PYTHONUNBUFFERED=1",
            _ => "without PYTHONUNBUFFERED",
        };
        if b.extra_pollution == 0 {
            let _ = writeln!(out, "buffering: rerun {mode}: no other pollution");
        } else {
            let _ = writeln!(
                out,
                "buffering: rerun {mode}: {} line(s) of pollution the main run did not show",
                b.extra_pollution
            );
        }
    }
    let sd = &p.shutdown;
    let how = match sd.stage {
        ShutdownStage::NotStarted => "not started".to_string(),
        ShutdownStage::ExitedEarly => format!("exited on its own with {}", exit_text(run)),
        ShutdownStage::StdinEof => match sd.stdin_eof_to_exit {
            Some(d) => format!("exited on stdin EOF after {} ms", d.as_millis()),
            None => "exited on stdin EOF".into(),
        },
        ShutdownStage::Sigterm => "needed SIGTERM".into(),
        ShutdownStage::Sigkill => "needed SIGKILL".into(),
        ShutdownStage::Unkillable => "survived SIGKILL".into(),
    };
    let _ = writeln!(out, "shutdown: {how}");
}

/// The no-effect proof: how many effects, and those of each operation.
fn effects_text(out: &mut String, run: &RunRecord) {
    let Some(rec) = &run.effects else { return };
    let mut phases: Vec<(&str, usize)> = Vec::new();
    for e in &rec.effects {
        match phases.iter_mut().find(|(p, _)| *p == e.phase.as_str()) {
            Some((_, n)) => *n += 1,
            None => phases.push((e.phase.as_str(), 1)),
        }
    }
    let by_phase: Vec<String> = phases.iter().map(|(p, n)| format!("{p} {n}")).collect();
    let _ = writeln!(
        out,
        "effects: {} observed{}{}",
        rec.effects.len(),
        if by_phase.is_empty() {
            String::new()
        } else {
            format!(" ({})", by_phase.join(", "))
        },
        observers_text(rec)
    );
    for op in &run.operations {
        let mine = crate::runtime::checks::effects::of_operation(op, &rec.effects);
        if op.request_id.is_none() {
            continue;
        }
        let name = op
            .safe_tool_call_name
            .as_deref()
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        let list: Vec<String> = mine
            .iter()
            .map(|e| format!("{} {}", e.kind.as_str(), e.summary))
            .collect();
        let _ = writeln!(
            out,
            "  {}{name}: {}",
            op.method,
            if list.is_empty() {
                "no effect".to_string()
            } else {
                list.join("; ")
            }
        );
    }
}

/// `; observers: syscalls, canary, effects log (not run: process watch)`.
fn observers_text(rec: &crate::runtime::effects::EffectsRecord) -> String {
    let ran: Vec<&str> = rec
        .observers
        .iter()
        .filter(|o| o.ran)
        .map(|o| o.name)
        .collect();
    let not: Vec<String> = rec
        .observers
        .iter()
        .filter(|o| !o.ran)
        .map(|o| match &o.note {
            Some(why) => format!("{} ({why})", o.name),
            None => o.name.to_string(),
        })
        .collect();
    let mut out = format!(
        "; observers: {}",
        if ran.is_empty() {
            "none".into()
        } else {
            ran.join(", ")
        }
    );
    if !not.is_empty() {
        out.push_str(&format!("; not run: {}", not.join("; ")));
    }
    out
}

/// One line per adversarial probe.
fn adversarial_text(out: &mut String, run: &RunRecord) {
    let Some(adv) = &run.adversarial else { return };
    let count = |s: ProbeStatus| adv.probes.iter().filter(|p| p.status == s).count();
    let _ = writeln!(
        out,
        "adversarial: {} probe{}: {} pass, {} warning, {} fail, {} skipped",
        adv.probes.len(),
        plural(adv.probes.len()),
        count(ProbeStatus::Pass),
        count(ProbeStatus::Warning),
        count(ProbeStatus::Fail),
        count(ProbeStatus::Skipped)
    );
    for p in &adv.probes {
        let detail = match &p.skip_reason {
            Some(why) => why.clone(),
            None => {
                let mut d = format!("{}; session {}", p.reply, p.session.as_str());
                if p.effects_observed {
                    d.push_str(&format!(
                        "; {} effect{}",
                        p.effects.len(),
                        plural(p.effects.len())
                    ));
                }
                if !p.issue_codes.is_empty() {
                    d.push_str(&format!(": {}", p.issue_codes.join(", ")));
                }
                d
            }
        };
        let _ = writeln!(out, "  {} {}: {detail}", p.name, p.status.as_str());
    }
}

fn exit_text(run: &RunRecord) -> String {
    match (run.process.exit_code, run.process.signal) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "unknown status".into(),
    }
}

fn issue_text(out: &mut String, issue: &Issue) {
    let run = issue.run.map(|r| format!(" (run {r})")).unwrap_or_default();
    let location = match &issue.location {
        Some(Location::Source {
            file, line, column, ..
        }) => format!("{}:{line}:{column}: ", file.display()),
        _ => String::new(),
    };
    let context = issue
        .fields
        .get("context")
        .and_then(|v| v.as_str())
        .map(|c| format!(" ({c})"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "[{}] {}{run}: {location}{}{context}",
        issue.severity.as_str(),
        issue.code(),
        issue.message
    );
    if let Some(source) = super::source::Source::of(issue) {
        let _ = writeln!(out, "  {}", source.sentence());
    }
    if let Some(lines) = issue.fields.get("stdoutLines").and_then(|v| v.as_array()) {
        let at: Vec<String> = lines
            .iter()
            .filter_map(|l| l.get("line").and_then(|n| n.as_u64()))
            .map(|n| n.to_string())
            .collect();
        let count = issue
            .fields
            .get("occurrences")
            .and_then(|v| v.as_u64())
            .unwrap_or(lines.len() as u64);
        let _ = writeln!(out, "  seen {count} times: stdout lines {}", at.join(", "));
    }
    if let Some(more) = issue.fields.get("moreOccurrences").and_then(|v| v.as_u64()) {
        let _ = writeln!(out, "  ... and {more} more like it");
    }
    let _ = writeln!(out, "  help: {}", issue.help);
}

fn stderr_text(out: &mut String, tail: &[u8]) {
    let text = String::from_utf8_lossy(tail);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(STDERR_TAIL_LINES);
    let _ = writeln!(
        out,
        "stderr tail (last {} line{}):",
        lines.len() - start,
        plural(lines.len() - start)
    );
    for line in &lines[start..] {
        // Control characters from the server are shown escaped, never sent to the terminal.
        if line.chars().any(|c| c.is_control() && c != '\t') {
            let _ = writeln!(out, "  | {}", escape_bytes(line.as_bytes(), 200));
        } else {
            let _ = writeln!(out, "  | {line}");
        }
    }
}
