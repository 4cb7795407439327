//! JUnit XML for CI test tabs (GitHub test reporters, GitLab, Jenkins), built with `quick-junit`.
//!
//! One `testsuite` per checked server and one for the static scan. A server's suite has one
//! `testcase` per check of the catalogue (`classname` = the server, `name` = the check id): a
//! check with error-level findings fails (`type` = the first error's code, the message names the
//! problem and the fix, the body lists every finding), a check that did not apply is `skipped`,
//! warnings and notes pass and are listed in the test's `system-out`. The scan's suite has one
//! test per scan rule the scan applied (`name` = the rule id). The server's stderr tail goes to
//! its suite's `system-err`.
//!
//! Every text from a server is made XML-safe first: invalid UTF-8 bytes, control characters and
//! the code points XML 1.0 forbids are shown as `\xNN` / `\u{...}` escapes (quick-junit would
//! silently drop them), so a hostile server can neither break the file nor hide bytes.

use super::{CiContext, Report, ScanSection, Target, status};
use crate::catalog::Check;
use crate::issue::{Issue, Location};
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};
use std::fmt::Write;

/// stderr kept in `system-err`: the last lines, at most this many bytes.
const STDERR_TAIL_BYTES: usize = 64 * 1024;
const STDERR_TAIL_LINES: usize = 200;

pub fn render(report: &Report, ctx: &CiContext) -> String {
    let mut junit = quick_junit::Report::new("mcp-stdio-guard");
    let total = ctx
        .invocation
        .end
        .duration_since(ctx.invocation.start)
        .unwrap_or_default();
    junit.set_time(total);
    for t in &report.targets {
        junit.add_test_suite(target_suite(t));
    }
    if let Some(scan) = &report.scan {
        junit.add_test_suite(scan_suite(scan));
    }
    if let Some(i) = &report.interrupted {
        junit.add_test_suite(interrupted_suite(i));
    }
    let mut text = junit.to_string().expect("JUnit XML serializes to a string");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// An interrupted run: one errored test per server the signal left unjudged (a run cut short
/// must not look green in a test tab), or one for the run when every server was judged.
fn interrupted_suite(i: &super::Interruption) -> TestSuite {
    let mut suite = TestSuite::new("interrupted");
    let names: Vec<String> = if i.not_judged.is_empty() {
        vec!["run".to_string()]
    } else {
        i.not_judged.clone()
    };
    for name in names {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_message(i.describe());
        status.set_type("interrupted");
        let mut case = TestCase::new(xml_safe(name.as_bytes()), status);
        case.set_classname("interrupted");
        suite.add_test_case(case);
    }
    suite
}

fn target_suite(t: &Target) -> TestSuite {
    let name = xml_safe(t.name.as_bytes());
    let mut suite = TestSuite::new(name.clone());
    suite.set_time(t.runs.iter().map(|r| r.timings.total).sum());
    suite.add_property(Property::new(
        "command",
        xml_safe(t.context.argv.join(" ").as_bytes()),
    ));
    suite.add_property(Property::new("protocol", t.context.protocol.clone()));
    suite.add_property(Property::new("runs", t.runs.len().to_string()));
    let first = &t.runs[0];
    for verdict in t.checks(None) {
        let check = verdict.check;
        if check == Check::StaticScan {
            continue; // the scan has its own suite
        }
        let st = verdict.status;
        let mine: Vec<&Issue> = t.issues.iter().filter(|i| i.rule.check == check).collect();
        let mut case = match st {
            status::Status::Skipped => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(verdict.reason.unwrap_or("not run"));
                TestCase::new(check.as_str(), s)
            }
            status::Status::Fail => TestCase::new(
                check.as_str(),
                failure(&verdict.issues, verdict.reason, Some(check)),
            ),
            _ => TestCase::new(check.as_str(), TestCaseStatus::success()),
        };
        case.set_classname(name.clone());
        // A skipped check took no time, whatever its phase's timer says.
        let time = match check {
            _ if st == status::Status::Skipped => None,
            Check::Initialize => first.timings.initialize,
            Check::Operation => first.timings.operations,
            Check::Process => Some(first.timings.total),
            _ => None,
        };
        if let Some(d) = time {
            case.set_time(d);
        }
        let others: Vec<&Issue> = mine.iter().copied().filter(|i| !i.is_error()).collect();
        if st != status::Status::Fail && !others.is_empty() {
            case.set_system_out(listing(&others));
        }
        suite.add_test_case(case);
    }
    if let Some(run) = t.runs.iter().rev().find(|r| !r.stderr_tail.is_empty()) {
        suite.set_system_err(stderr_tail(&run.stderr_tail));
    }
    suite
}

fn scan_suite(scan: &ScanSection) -> TestSuite {
    let name = format!("static scan: {}", scan.paths.join(" "));
    let name = xml_safe(name.as_bytes());
    let mut suite = TestSuite::new(name.clone());
    suite.set_time(scan.stats.duration);
    suite.add_property(Property::new("files", scan.stats.files.to_string()));
    suite.add_property(Property::new("parsed", scan.stats.parsed.to_string()));
    for rule in scan.rules_applied() {
        let mine: Vec<&Issue> = scan.issues.iter().filter(|i| i.rule == rule).collect();
        let failed = mine.iter().any(|i| i.is_error());
        let mut case = if failed {
            TestCase::new(rule.code, failure(&mine, None, None))
        } else {
            TestCase::new(rule.code, TestCaseStatus::success())
        };
        case.set_classname(name.clone());
        if !failed && !mine.is_empty() {
            case.set_system_out(listing(&mine));
        }
        suite.add_test_case(case);
    }
    suite
}

/// A failed test: `type` = the first error's code, the message names it and its fix, the body
/// lists every finding of the test. A check that failed because it could not run (`reason`)
/// says so first; one with no finding at all is typed by the reason alone.
fn failure(issues: &[&Issue], reason: Option<&str>, check: Option<Check>) -> TestCaseStatus {
    let errors: Vec<&Issue> = issues.iter().copied().filter(|i| i.is_error()).collect();
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
    let Some(first) = errors.first().copied() else {
        let why = reason.unwrap_or("the check failed");
        status.set_type("not-run");
        status.set_message(xml_safe(why.as_bytes()));
        status.set_description(listing(issues));
        return status;
    };
    status.set_type(first.code());
    let more = match errors.len() {
        1 => String::new(),
        n => format!(
            " (and {} more error{})",
            n - 1,
            if n == 2 { "" } else { "s" }
        ),
    };
    // The first error belongs to an earlier step: say that this check could not run.
    let because = match (reason, check) {
        (Some(r), Some(c)) if first.rule.check != c => format!("{r}: "),
        _ => String::new(),
    };
    status.set_message(xml_safe(
        format!(
            "{because}{}: {}{} -- fix: {}",
            first.code(),
            where_(first),
            more,
            first.rule.help_short()
        )
        .as_bytes(),
    ));
    status.set_description(listing(issues));
    status
}

fn where_(i: &Issue) -> String {
    match &i.location {
        Some(Location::Source {
            file, line, column, ..
        }) => format!("{}:{line}:{column}: {}", file.display(), i.message),
        _ => match super::source::Source::of(i) {
            Some(source) => format!("{}; {}", i.message, source.sentence()),
            None => i.message.clone(),
        },
    }
}

/// Every finding as `[severity] code: message`, its evidence and its help.
fn listing(issues: &[&Issue]) -> String {
    let mut out = String::new();
    for i in issues {
        let run = i.run.map(|r| format!(" (run {r})")).unwrap_or_default();
        let _ = writeln!(
            out,
            "[{}] {}{run}: {}",
            i.severity.as_str(),
            i.code(),
            where_(i)
        );
        if let Some(e) = &i.evidence
            && !i.message.contains(e.as_str())
        {
            let _ = writeln!(out, "  bytes: {e}");
        }
        let _ = writeln!(out, "  help: {}", i.help);
        let _ = writeln!(out, "  docs: {}", i.rule.docs_url());
    }
    xml_safe(out.as_bytes())
}

fn stderr_tail(tail: &[u8]) -> String {
    let start = tail.len().saturating_sub(STDERR_TAIL_BYTES);
    let mut bytes = &tail[start..];
    // Start at a line boundary when the cut fell inside a line.
    if start > 0
        && let Some(nl) = bytes.iter().position(|b| *b == b'\n')
    {
        bytes = &bytes[nl + 1..];
    }
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let keep = &lines[lines.len().saturating_sub(STDERR_TAIL_LINES + 1)..];
    xml_safe(&keep.join(&b'\n'))
}

/// Text any XML 1.0 parser accepts, with nothing hidden: valid UTF-8 is kept except characters
/// XML forbids (C0 controls but tab, newline and carriage return; U+FFFE, U+FFFF), which become
/// `\u{...}`; every byte of an invalid UTF-8 sequence becomes `\xNN`; a backslash stays a
/// backslash (the escapes are for reading, like the text report's).
pub fn xml_safe(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            let allowed = matches!(c, '\t' | '\n' | '\r')
                || (c >= ' ' && c != '\u{7f}' && c != '\u{fffe}' && c != '\u{ffff}');
            if allowed {
                out.push(c);
            } else if (c as u32) < 0x100 {
                let _ = write!(out, "\\x{:02x}", c as u32);
            } else {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_safe_keeps_text_and_shows_every_unsafe_byte() {
        assert_eq!(xml_safe(b"caf\xc3\xa9 ok\t\n"), "café ok\t\n");
        assert_eq!(xml_safe(b"caf\xe9"), "caf\\xe9");
        assert_eq!(xml_safe(b"\x1b[31mred\x00"), "\\x1b[31mred\\x00");
        assert_eq!(xml_safe("\u{fffe}\u{7f}".as_bytes()), "\\u{fffe}\\x7f");
        assert_eq!(xml_safe(b"\xff\xfe"), "\\xff\\xfe");
    }
}
