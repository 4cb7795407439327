//! Status arithmetic shared by every format: check statuses, class statuses, the summary status
//! and badge of the reference's JSON contract.

use crate::catalog::{Check, Class, Severity};
use crate::issue::{Issue, Phase};
use crate::runtime::checks::lists::ListKind;
use crate::runtime::record::{CapabilityStatus, OperationStatus, ProbeStatus, RunRecord};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Pass,
    Skipped,
    Warning,
    Fail,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Skipped => "skipped",
            Status::Warning => "warning",
            Status::Fail => "fail",
        }
    }
}

/// The status of a set of issues: fail on an error, warning on a warning, else pass.
pub fn of_issues<'a>(issues: impl IntoIterator<Item = &'a Issue>) -> Status {
    let mut status = Status::Pass;
    for i in issues {
        match i.severity {
            Severity::Error => return Status::Fail,
            Severity::Warning => status = Status::Warning,
            Severity::Note => {}
        }
    }
    status
}

/// Unique codes of the issues, in first-seen order.
pub fn codes<'a>(issues: impl IntoIterator<Item = &'a Issue>) -> Vec<&'static str> {
    let mut seen = Vec::new();
    for i in issues {
        if !seen.contains(&i.code()) {
            seen.push(i.code());
        }
    }
    seen
}

pub const CONTRACT_CLASSES: [Class; 3] = [
    Class::InstallRuntime,
    Class::StdioTransport,
    Class::McpProtocol,
];

/// The reference's `summary` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub status: &'static str,
    pub issue_class: String,
    pub primary_code: &'static str,
    pub primary_class: &'static str,
    pub errors: usize,
    pub warnings: usize,
    pub notes: usize,
    pub badge_message: &'static str,
    pub badge_color: &'static str,
    pub display: &'static str,
}

pub fn summary(issues: &[Issue]) -> Summary {
    let counted: Vec<&Issue> = issues
        .iter()
        .filter(|i| i.severity != Severity::Note)
        .collect();
    let errors = counted
        .iter()
        .filter(|i| i.severity == Severity::Error)
        .count();
    let warnings = counted.len() - errors;
    let notes = issues.len() - counted.len();
    let error_classes: BTreeSet<Class> = counted
        .iter()
        .filter(|i| i.severity == Severity::Error)
        .map(|i| i.rule.class)
        .collect();
    let status = if errors == 0 && warnings == 0 {
        "pass"
    } else if errors == 0 {
        "warning"
    } else if error_classes.iter().all(|c| *c == Class::InstallRuntime) {
        "needs_inspection"
    } else {
        "fail"
    };
    let classes: BTreeSet<Class> = counted.iter().map(|i| i.rule.class).collect();
    let issue_class = match classes.len() {
        0 => String::new(),
        1 => classes
            .iter()
            .next()
            .map(|c| c.as_str().to_string())
            .unwrap_or_default(),
        _ => "mixed".to_string(),
    };
    let primary = counted
        .iter()
        .find(|i| i.severity == Severity::Error)
        .or_else(|| counted.first())
        .copied();
    let (badge_message, badge_color, display) = match status {
        "pass" => ("pass", "brightgreen", "verified"),
        "warning" => ("pass with warnings", "yellow", "verified with warnings"),
        "needs_inspection" => (
            "needs inspection",
            "orange",
            "runtime or install issue; inspect before presenting as protocol failure",
        ),
        _ => ("fail", "red", "stdio transport or MCP protocol failure"),
    };
    Summary {
        status,
        issue_class,
        primary_code: primary.map(|i| i.code()).unwrap_or(""),
        primary_class: primary.map(|i| i.rule.class.as_str()).unwrap_or(""),
        errors,
        warnings,
        notes,
        badge_message,
        badge_color,
        display,
    }
}

// ------------------------------------------------------------------------------------ checks

/// The phase in which a run's outcome was decided: where its first error was found (the
/// server's start for a spawn failure), else the end of its work after the handshake
/// (`post-initialize`), or the handshake itself when it never completed.
pub fn decided_phase(run: &RunRecord) -> Phase {
    if !run.process.started {
        return Phase::Startup;
    }
    if let Some(p) = run
        .issues
        .iter()
        .filter(|i| i.is_error())
        .find_map(|i| i.phase)
    {
        return p;
    }
    if run.initialized {
        Phase::PostInitialize
    } else {
        Phase::Initialize
    }
}

/// What a target asked for. A check that was not asked for (or has nothing to look at) is
/// `skipped`; one that was asked for but could not run because an earlier step failed is `fail`
/// with the codes of that step; one that ran has the status of its findings. A check never
/// says `pass` without the evidence it checks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked {
    pub operations: bool,
    pub capabilities: bool,
    pub adversarial: bool,
    pub effects: bool,
    pub scan: bool,
    pub repeat: bool,
}

/// The verdict of one check.
#[derive(Debug, Clone)]
pub struct CheckVerdict<'a> {
    pub check: Check,
    pub status: Status,
    /// The findings that decide it: its own, and for a check that could not run, those of the
    /// step that stopped it.
    pub issues: Vec<&'a Issue>,
    /// Why it was skipped, or why it could not run.
    pub reason: Option<&'static str>,
}

impl<'a> CheckVerdict<'a> {
    pub fn codes(&self) -> Vec<&'static str> {
        codes(self.issues.iter().copied())
    }

    fn skipped(check: Check, reason: &'static str) -> CheckVerdict<'a> {
        CheckVerdict {
            check,
            status: Status::Skipped,
            issues: Vec::new(),
            reason: Some(reason),
        }
    }

    /// The status of the check's own findings.
    fn of(check: Check, issues: Vec<&'a Issue>) -> CheckVerdict<'a> {
        CheckVerdict {
            check,
            status: of_issues(issues.iter().copied()),
            issues,
            reason: None,
        }
    }

    /// Could not run (or did not finish) because of `blockers`.
    fn blocked(
        check: Check,
        mut own: Vec<&'a Issue>,
        blockers: Vec<&'a Issue>,
        reason: &'static str,
    ) -> CheckVerdict<'a> {
        for b in blockers {
            if !own.iter().any(|o| std::ptr::eq(*o, b)) {
                own.push(b);
            }
        }
        CheckVerdict {
            check,
            status: Status::Fail,
            issues: own,
            reason: Some(reason),
        }
    }
}

/// The error findings recorded up to and including `phase`: the step that stopped what came
/// after. Every error when none carries a phase that early.
fn blockers(issues: &[Issue], phase: Phase) -> Vec<&Issue> {
    let early: Vec<&Issue> = issues
        .iter()
        .filter(|i| i.is_error() && i.phase.is_some_and(|p| p <= phase))
        .collect();
    if early.is_empty() {
        issues.iter().filter(|i| i.is_error()).collect()
    } else {
        early
    }
}

fn own(issues: &[Issue], check: Check) -> Vec<&Issue> {
    issues.iter().filter(|i| i.rule.check == check).collect()
}

/// The checks of one run of a server (`issues`: the findings that count for it).
pub fn run_checks<'a>(
    run: &'a RunRecord,
    issues: &'a [Issue],
    asked: &Asked,
) -> Vec<CheckVerdict<'a>> {
    Check::ALL
        .into_iter()
        .filter(|c| !matches!(c, Check::StaticScan | Check::Repeat))
        .map(|check| run_check(check, run, issues, asked))
        .collect()
}

fn run_check<'a>(
    check: Check,
    run: &'a RunRecord,
    issues: &'a [Issue],
    asked: &Asked,
) -> CheckVerdict<'a> {
    let mine = own(issues, check);
    let started = run.process.started;
    let not_started = || {
        CheckVerdict::blocked(
            check,
            mine.clone(),
            blockers(issues, Phase::Startup),
            "the server could not be started",
        )
    };
    let not_initialized = || {
        CheckVerdict::blocked(
            check,
            mine.clone(),
            blockers(issues, Phase::Initialize),
            "the handshake never completed",
        )
    };
    match check {
        Check::Stdout | Check::JsonRpc | Check::Process | Check::PythonBuffering => {
            if started || check == Check::Process {
                CheckVerdict::of(check, mine)
            } else {
                not_started()
            }
        }
        Check::Initialize => {
            if !started {
                not_started()
            } else if run.initialized {
                CheckVerdict::of(check, mine)
            } else {
                not_initialized()
            }
        }
        Check::Operation => {
            if !asked.operations {
                return CheckVerdict::skipped(
                    check,
                    "no --request, config request or safe tool call was given",
                );
            }
            if !started {
                return not_started();
            }
            if !run.initialized {
                return not_initialized();
            }
            operation_check(run, issues, mine)
        }
        Check::Capabilities => {
            if !asked.capabilities {
                return CheckVerdict::skipped(check, "capability probes were off");
            }
            if !started {
                return not_started();
            }
            if !run.initialized {
                return not_initialized();
            }
            let advertised: Vec<_> = run
                .capability_checks
                .iter()
                .filter(|c| c.advertised)
                .collect();
            if advertised.is_empty() {
                return CheckVerdict::skipped(check, "the server advertised no list capability");
            }
            if advertised
                .iter()
                .any(|c| c.status == CapabilityStatus::NotProbed)
            {
                return CheckVerdict::blocked(
                    check,
                    mine,
                    blockers(issues, Phase::Capabilities),
                    "the session ended before every advertised list was probed",
                );
            }
            CheckVerdict::of(check, mine)
        }
        Check::ToolSchema => {
            if run.tool_schema.is_some() {
                return CheckVerdict::of(check, mine);
            }
            let listed_tools = asked.capabilities
                && run
                    .capability(ListKind::Tools)
                    .is_some_and(|c| c.advertised);
            let asked_tools = run.operations.iter().any(|o| o.method == "tools/list");
            if !(listed_tools || asked_tools) {
                return CheckVerdict::skipped(check, "no tools list was asked for or advertised");
            }
            if !started {
                return not_started();
            }
            if !run.initialized {
                return not_initialized();
            }
            // The tools list was due but never arrived whole: the list's own findings say why.
            let why: Vec<&Issue> = issues
                .iter()
                .filter(|i| {
                    i.is_error()
                        && (matches!(i.rule.check, Check::Capabilities | Check::Operation)
                            || i.phase.is_some_and(|p| p <= Phase::Operation))
                })
                .collect();
            CheckVerdict::blocked(check, mine, why, "no valid tools list was received")
        }
        Check::Adversarial => {
            let Some(adv) = &run.adversarial else {
                return if asked.adversarial && !started {
                    not_started()
                } else {
                    CheckVerdict::skipped(check, "no adversarial probe was selected")
                };
            };
            if !run.initialized {
                return not_initialized();
            }
            if adv.probes.iter().all(|p| p.status == ProbeStatus::Skipped) {
                return CheckVerdict::skipped(
                    check,
                    "every selected probe was skipped (not applicable)",
                );
            }
            CheckVerdict::of(check, mine)
        }
        Check::Effects => {
            if !asked.effects {
                return CheckVerdict::skipped(
                    check,
                    "no effects were configured for the no-effect proof",
                );
            }
            if !started {
                return not_started();
            }
            CheckVerdict::of(check, mine)
        }
        Check::StaticScan | Check::Repeat => unreachable!("checks of a target, not of a run"),
    }
}

/// `checks.operation` of a run that completed its handshake: every operation asked for must
/// have a valid reply; one that got none (or was never sent) fails with what stopped it.
fn operation_check<'a>(
    run: &'a RunRecord,
    issues: &'a [Issue],
    mine: Vec<&'a Issue>,
) -> CheckVerdict<'a> {
    let unanswered = run.operations.iter().any(|o| {
        matches!(
            o.status,
            OperationStatus::Timeout
                | OperationStatus::MissingResponse
                | OperationStatus::Invalid
                | OperationStatus::Skipped
        )
    });
    if !unanswered {
        return CheckVerdict::of(Check::Operation, mine);
    }
    // Why: the operations' own findings, and the stdout/JSON-RPC/process findings of the phase
    // (a reply that broke a framing rule, a crash, a closed stdout).
    let why: Vec<&Issue> = issues
        .iter()
        .filter(|i| {
            i.is_error()
                && matches!(
                    i.rule.check,
                    Check::Stdout | Check::JsonRpc | Check::Process
                )
                && i.phase.is_some_and(|p| p <= Phase::Operation)
        })
        .collect();
    CheckVerdict::blocked(
        Check::Operation,
        mine,
        why,
        "an operation got no valid reply",
    )
}

/// The worst of several verdicts of one check (runs of a repeated target): skipped only when
/// every one was.
fn worst<'a>(check: Check, verdicts: Vec<CheckVerdict<'a>>) -> CheckVerdict<'a> {
    let ran: Vec<CheckVerdict<'a>> = verdicts
        .iter()
        .filter(|v| v.status != Status::Skipped)
        .cloned()
        .collect();
    if ran.is_empty() {
        return verdicts
            .into_iter()
            .next()
            .unwrap_or_else(|| CheckVerdict::skipped(check, "not run"));
    }
    merge(check, ran)
}

fn merge<'a>(check: Check, ran: Vec<CheckVerdict<'a>>) -> CheckVerdict<'a> {
    let status = ran.iter().map(|v| v.status).max().unwrap_or(Status::Pass);
    let reason = ran
        .iter()
        .find(|v| v.status == status)
        .and_then(|v| v.reason);
    let mut issues: Vec<&'a Issue> = Vec::new();
    for v in ran {
        for i in v.issues {
            if !issues.iter().any(|o| std::ptr::eq(*o, i)) {
                issues.push(i);
            }
        }
    }
    CheckVerdict {
        check,
        status,
        issues,
        reason,
    }
}

/// Every check of a target, in contract order: each run's runtime checks (the first run also
/// carries the once-per-target findings: probes, the buffering rerun), the worst over the runs;
/// the static scan; and `repeat` (`fail` when a run failed, `warning` on drift alone).
pub fn target_checks<'a>(
    t: &'a super::Target,
    scan: Option<&'a super::ScanSection>,
) -> Vec<CheckVerdict<'a>> {
    let asked = t.asked(scan.is_some());
    let per_run: Vec<Vec<CheckVerdict<'a>>> = t
        .runs
        .iter()
        .zip(&t.run_issues)
        .map(|(run, issues)| run_checks(run, issues, &asked))
        .collect();
    let mut out = Vec::new();
    for check in Check::ALL {
        let verdict = match check {
            Check::StaticScan => match scan {
                Some(s) => CheckVerdict::of(check, s.issues.iter().collect()),
                None => CheckVerdict::skipped(check, "no static scan ran"),
            },
            Check::Repeat => repeat_check(t),
            _ => worst(
                check,
                per_run
                    .iter()
                    .filter_map(|vs| vs.iter().find(|v| v.check == check).cloned())
                    .collect(),
            ),
        };
        out.push(verdict);
    }
    out
}

fn repeat_check(t: &super::Target) -> CheckVerdict<'_> {
    let Some(drift) = &t.drift else {
        return CheckVerdict::skipped(
            Check::Repeat,
            "one run only (use --repeat N to compare fresh runs)",
        );
    };
    let mut issues: Vec<&Issue> = own(&t.issues, Check::Repeat);
    if drift.failed_runs.is_empty() {
        return CheckVerdict::of(Check::Repeat, issues);
    }
    // A failed run fails the repeat check: its errors say why.
    for (run, run_issues) in t.runs.iter().zip(&t.run_issues) {
        if drift.failed_runs.contains(&run.run) {
            issues.extend(run_issues.iter().filter(|i| i.is_error()));
        }
    }
    CheckVerdict {
        check: Check::Repeat,
        status: Status::Fail,
        issues,
        reason: Some("a run failed"),
    }
}
