//! Status arithmetic shared by every format: check statuses, class statuses, the summary status
//! and badge of the reference's JSON contract.

use crate::catalog::{Check, Class, Severity};
use crate::issue::Issue;
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

/// A check's status: skipped when it did not run and found nothing.
pub fn of_check(
    check: Check,
    issues: &[Issue],
    ran: &BTreeSet<Check>,
) -> (Status, Vec<&'static str>) {
    let mine: Vec<&Issue> = issues.iter().filter(|i| i.rule.check == check).collect();
    let codes = codes(mine.iter().copied());
    if mine.is_empty() && !ran.contains(&check) {
        return (Status::Skipped, codes);
    }
    (of_issues(mine), codes)
}

/// The JSON contract's class of an issue: static-scan findings count as stdio transport.
pub fn contract_class(class: Class) -> Class {
    match class {
        Class::StaticScan => Class::StdioTransport,
        other => other,
    }
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
        .map(|i| contract_class(i.rule.class))
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
    let classes: BTreeSet<Class> = counted
        .iter()
        .map(|i| contract_class(i.rule.class))
        .collect();
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
        primary_class: primary
            .map(|i| contract_class(i.rule.class).as_str())
            .unwrap_or(""),
        errors,
        warnings,
        notes,
        badge_message,
        badge_color,
        display,
    }
}
