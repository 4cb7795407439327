//! GitHub Actions: workflow-command annotations, the Markdown step summary, and the defusing of
//! workflow commands a hostile server could smuggle into the job log.
//!
//! Annotations (`::error file=…,line=…,title=…::message`) carry GitHub's escaping (`%`, `\r`, `\n`
//! in the message; also `:` and `,` in properties). GitHub shows at most 10 error and 10 warning
//! annotations per step (and 10 notices), so at most that many of each level are emitted, in report
//! order; a plain line counts the rest, which the step summary lists.
//!
//! The step summary (appended to `$GITHUB_STEP_SUMMARY` by `main`) has the verdict, a table of
//! checks per server, the first offending bytes, every finding with its fix, and the stderr tail;
//! it is cut to a byte budget (GitHub refuses a step summary over 1 MiB) with a note saying so.
//!
//! Server bytes reach the job log through the reports (escaped evidence keeps printable ASCII such
//! as `::error::x` or `##[error]x`, and the runner acts on `##[command]` anywhere in a line). In the
//! text stream [`fence`] stops command processing around the report with a one-time token; JSON and
//! XML streams are [`defuse`]d by escapes that change no parsed value.

use super::locate::AnchorKind;
use super::{CiContext, Report, Target, junit::xml_safe, status};
use crate::catalog::{Check, Severity};
use crate::issue::{Issue, Location};
use std::fmt::Write;

/// Annotations GitHub displays per step and level.
pub const MAX_PER_LEVEL: usize = 10;
/// GitHub's limit for one step's summary.
pub const SUMMARY_LIMIT: usize = 1024 * 1024;
/// Findings listed per section of the summary before "and N more".
const SUMMARY_FINDINGS: usize = 50;
/// stderr shown per server in the summary.
const SUMMARY_STDERR_BYTES: usize = 8 * 1024;

/// Escapes workflow-command data (the message).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One annotation per finding, within GitHub's per-step limits, then a line counting the rest.
pub fn annotations(report: &Report, ctx: &CiContext) -> String {
    let mut out = String::new();
    let mut shown = [0usize; 3];
    let mut hidden = [0usize; 3];
    let several = report.targets.len() > 1;
    let all = report
        .targets
        .iter()
        .enumerate()
        .flat_map(|(i, t)| t.issues.iter().map(move |issue| (Some(i), Some(t), issue)))
        .chain(report.scan_issues().iter().map(|issue| (None, None, issue)));
    for (index, target, issue) in all {
        let slot = match issue.severity {
            Severity::Error => 0,
            Severity::Warning => 1,
            Severity::Note => 2,
        };
        if shown[slot] == MAX_PER_LEVEL {
            hidden[slot] += 1;
            continue;
        }
        shown[slot] += 1;
        let command = ["error", "warning", "notice"][slot];
        let place = ctx.sources.place(index, issue);
        let mut props = Vec::new();
        // The last-resort anchor (the program name) is not a file: the annotation then belongs
        // to the job, not to a line.
        let is_file = place.anchor != Some(AnchorKind::Command);
        if place.file.in_root && is_file {
            props.push(format!("file={}", escape_property(&place.file.path)));
            props.push(format!("line={}", place.start_line));
            if let Some((col, end_line, end_col)) = place.span {
                props.push(format!("col={col}"));
                props.push(format!("endLine={end_line}"));
                if end_line == place.start_line {
                    props.push(format!("endColumn={end_col}"));
                }
            }
        }
        let title = match target {
            Some(t) if several => format!("mcp-stdio-guard {} ({})", issue.code(), t.name),
            _ => format!("mcp-stdio-guard {}", issue.code()),
        };
        props.push(format!("title={}", escape_property(&title)));
        let mut message = issue.message.clone();
        if let Some(run) = issue.run {
            let _ = write!(message, " (run {run})");
        }
        if let Some(source) = super::source::Source::of(issue) {
            let _ = write!(message, "\n{}", source.sentence());
        }
        let _ = write!(
            message,
            "\nhelp: {}\ndocs: {}",
            issue.help,
            issue.rule.docs_url()
        );
        let _ = writeln!(
            out,
            "::{command} {}::{}",
            props.join(","),
            escape_data(&message)
        );
    }
    let rest: usize = hidden.iter().sum();
    if rest > 0 {
        let _ = writeln!(
            out,
            "mcp-stdio-guard: {rest} more finding{} not annotated ({} error{}, {} warning{}, {} note{}): GitHub shows {MAX_PER_LEVEL} annotations of each level per step; the step summary and the SARIF/JSON reports list every finding.",
            plural(rest),
            hidden[0],
            plural(hidden[0]),
            hidden[1],
            plural(hidden[1]),
            hidden[2],
            plural(hidden[2]),
        );
    }
    out
}

/// Wraps a text stream in `::stop-commands::` so the runner executes nothing inside it.
pub fn fence(text: &str, token: &str) -> String {
    format!("::stop-commands::{token}\n{text}::{token}::\n")
}

/// The kind of machine stream [`defuse`] rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Json,
    Xml,
}

/// Rewrites a JSON or XML stream so that no line can be read as a workflow command, without
/// changing what a parser reads: `##[` gets its bracket escaped (`\u005b` in JSON strings,
/// `&#91;` in XML text), and an XML text line starting with `::` gets its first colon as `&#58;`.
/// (`#` is not JSON or XML syntax, so `##[` only occurs inside strings or text.)
pub fn defuse(text: &str, syntax: Syntax) -> String {
    match syntax {
        Syntax::Json => text.replace("##[", "##\\u005b"),
        Syntax::Xml => {
            let text = text.replace("##[", "##&#91;");
            let mut out = String::with_capacity(text.len());
            for line in text.split_inclusive('\n') {
                let trimmed = line.trim_start();
                if trimmed.starts_with("::") {
                    let indent = line.len() - trimmed.len();
                    out.push_str(&line[..indent]);
                    out.push_str("&#58;");
                    out.push_str(&trimmed[1..]);
                } else {
                    out.push_str(line);
                }
            }
            out
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Markdown text: characters that would format, link, embed or break a table are escaped.
fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '!' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// An inline code span that holds any text (its fence is longer than any backtick run inside);
/// `|` is escaped so it stays inside a table cell.
/// Paths as inline code, space-separated.
fn code_list(paths: &[String]) -> String {
    paths.iter().map(|p| code(p)).collect::<Vec<_>>().join(" ")
}

fn code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ").replace('|', "\\|");
    let longest = longest_run(&s, '`');
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for ch in s.chars() {
        if ch == c {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

fn icon(st: status::Status) -> &'static str {
    match st {
        status::Status::Pass => "✅ pass",
        status::Status::Warning => "⚠️ warning",
        status::Status::Fail => "❌ fail",
        status::Status::Skipped => "⏭️ skipped",
    }
}

fn severity_icon(s: Severity) -> &'static str {
    match s {
        Severity::Error => "❌",
        Severity::Warning => "⚠️",
        Severity::Note => "ℹ️",
    }
}

/// The Markdown step summary, at most `budget` bytes.
pub fn summary(report: &Report, ctx: &CiContext, budget: usize) -> String {
    let all: Vec<Issue> = report.issues().cloned().collect();
    let s = status::summary(&all);
    let (mark, verdict) = if report.interrupted.is_some() {
        ("⛔", "INTERRUPTED")
    } else if s.errors > 0 {
        ("❌", "FAIL")
    } else if s.warnings > 0 {
        ("⚠️", "PASS with warnings")
    } else {
        ("✅", "PASS")
    };
    let mut head = String::new();
    let _ = writeln!(head, "## {mark} mcp-stdio-guard: {verdict}\n");
    let mut what = Vec::new();
    if let Some(i) = &report.interrupted {
        let judged = i.total - i.not_judged.len();
        what.push(format!("{judged} of {} server{}", i.total, plural(i.total)));
    } else if !report.targets.is_empty() {
        let n = report.targets.len();
        what.push(format!("{n} server{}", plural(n)));
    }
    if let Some(scan) = &report.scan {
        what.push(format!("the static scan of {}", code_list(&scan.paths)));
    }
    let _ = writeln!(
        head,
        "**{} error{}, {} warning{}{}** in {} · exit code {}\n",
        s.errors,
        plural(s.errors),
        s.warnings,
        plural(s.warnings),
        if s.notes > 0 {
            format!(", {} note{}", s.notes, plural(s.notes))
        } else {
            String::new()
        },
        what.join(" and "),
        report
            .interrupted
            .as_ref()
            .map_or(ctx.invocation.exit.code(), |i| i.exit_code())
    );
    if let Some(i) = &report.interrupted {
        let _ = writeln!(head, "> **The guard was {}.**", i.describe());
        if !i.not_judged.is_empty() {
            let _ = writeln!(head, "> Not judged: {}\n", code_list(&i.not_judged));
        }
    }
    let mut blocks: Vec<String> = vec![head];
    for t in &report.targets {
        target_blocks(&mut blocks, t);
    }
    if let Some(scan) = &report.scan {
        scan_blocks(&mut blocks, scan);
    }
    assemble(blocks, budget)
}

/// Joins blocks while they fit in `budget`, then says how much was left out.
fn assemble(blocks: Vec<String>, budget: usize) -> String {
    const NOTE_ROOM: usize = 400;
    let mut out = String::new();
    let total = blocks.len();
    for (i, block) in blocks.into_iter().enumerate() {
        if out.len() + block.len() + NOTE_ROOM > budget {
            let _ = writeln!(
                out,
                "\n> **Summary cut here** to stay within GitHub's step-summary size limit: {} more section{} not shown. The JSON and SARIF reports have every finding.",
                total - i,
                plural(total - i)
            );
            // The note itself may not fit a tiny budget: never exceed it.
            if out.len() > budget {
                let mut cut = budget;
                while !out.is_char_boundary(cut) {
                    cut -= 1;
                }
                out.truncate(cut);
            }
            return out;
        }
        out.push_str(&block);
    }
    out
}

fn target_blocks(blocks: &mut Vec<String>, t: &Target) {
    let s = status::summary(&t.issues);
    let mut b = String::new();
    let mark = if s.errors > 0 {
        "❌"
    } else if s.warnings > 0 {
        "⚠️"
    } else {
        "✅"
    };
    let _ = writeln!(b, "### {mark} {}\n", code(&t.name));
    let command = t.context.argv.join(" ");
    if command != t.name {
        let _ = writeln!(b, "Command: {}\n", code(&command));
    }
    let _ = writeln!(
        b,
        "| check | status | codes, or why skipped |\n| --- | --- | --- |"
    );
    for verdict in t.checks(None) {
        let check = verdict.check;
        if check == Check::StaticScan {
            continue;
        }
        let st = verdict.status;
        let codes = verdict.codes();
        let detail = if st == status::Status::Skipped || codes.is_empty() {
            md(verdict.reason.unwrap_or(""))
        } else {
            codes.iter().map(|c| code(c)).collect::<Vec<_>>().join(" ")
        };
        let _ = writeln!(b, "| {} | {} | {detail} |", md(check.title()), icon(st));
    }
    b.push('\n');
    let offending = t
        .issues
        .iter()
        .filter(|i| i.rule.check == Check::Stdout)
        .chain(t.issues.iter())
        .find(|i| i.evidence.is_some());
    if let Some(i) = offending {
        let at = match &i.location {
            Some(Location::Stream {
                line, byte_offset, ..
            }) => format!(" at stdout line {line} (byte {byte_offset})"),
            _ => String::new(),
        };
        let _ = writeln!(
            b,
            "**First offending bytes**{at}: {}\n",
            code(i.evidence.as_deref().unwrap_or_default())
        );
    }
    blocks.push(b);
    findings_blocks(blocks, &t.issues.iter().collect::<Vec<_>>());
    if !t.issues.iter().any(Issue::is_error) {
        return;
    }
    if let Some(run) = t.runs.iter().rev().find(|r| !r.stderr_tail.is_empty()) {
        let tail = &run.stderr_tail[run.stderr_tail.len().saturating_sub(SUMMARY_STDERR_BYTES)..];
        let text = xml_safe(tail);
        let fence = "`".repeat(longest_run(&text, '`').max(2) + 1);
        blocks.push(format!(
            "<details><summary>stderr tail ({} bytes)</summary>\n\n{fence}text\n{}\n{fence}\n\n</details>\n\n",
            tail.len(),
            text.trim_end()
        ));
    }
}

fn findings_blocks(blocks: &mut Vec<String>, issues: &[&Issue]) {
    if issues.is_empty() {
        return;
    }
    blocks.push("#### Findings and how to fix them\n\n".into());
    for i in issues.iter().take(SUMMARY_FINDINGS) {
        let mut b = String::new();
        let place = match &i.location {
            Some(Location::Source {
                file, line, column, ..
            }) => format!("{} ", code(&format!("{}:{line}:{column}", file.display()))),
            _ => String::new(),
        };
        let run = i.run.map(|r| format!(" (run {r})")).unwrap_or_default();
        let _ = writeln!(
            b,
            "- {} {place}**{}**{run}: {}",
            severity_icon(i.severity),
            code(i.code()),
            md(&i.message)
        );
        if let Some(source) = super::source::Source::of(i) {
            let _ = writeln!(b, "  - {}", md(&source.sentence()));
        }
        // The catalogue's own fix is Markdown written for docs/rules.md (code spans render);
        // a finding's own help may quote the server, so it is escaped.
        let fix = if i.help == i.rule.fix {
            i.help.replace(['\n', '\r'], " ")
        } else {
            md(&i.help)
        };
        let _ = writeln!(b, "  - fix: {fix} ([docs]({}))", i.rule.docs_url());
        blocks.push(b);
    }
    if issues.len() > SUMMARY_FINDINGS {
        blocks.push(format!(
            "- … and {} more (see the JSON or SARIF report)\n",
            issues.len() - SUMMARY_FINDINGS
        ));
    }
    blocks.push("\n".into());
}

fn scan_blocks(blocks: &mut Vec<String>, scan: &super::ScanSection) {
    let s = status::summary(&scan.issues);
    let mark = if s.errors > 0 {
        "❌"
    } else if s.warnings > 0 {
        "⚠️"
    } else {
        "✅"
    };
    let mut b = String::new();
    let _ = writeln!(b, "### {mark} Static scan of {}\n", code_list(&scan.paths));
    let _ = writeln!(
        b,
        "{} file{} checked, {} parsed{}.\n",
        scan.stats.files,
        plural(scan.stats.files),
        scan.stats.parsed,
        if scan.fail_on_findings {
            ""
        } else {
            "; findings are warnings (use --fail-on-static to fail on them)"
        }
    );
    let _ = writeln!(b, "| rule | findings |\n| --- | --- |");
    for rule in scan.rules_applied() {
        let n = scan.issues.iter().filter(|i| i.rule == rule).count();
        let st = if n == 0 {
            "✅ 0".to_string()
        } else {
            let worst = scan
                .issues
                .iter()
                .filter(|i| i.rule == rule)
                .map(|i| i.severity)
                .max()
                .unwrap_or(Severity::Note);
            format!("{} {n}", severity_icon(worst))
        };
        let _ = writeln!(b, "| {} | {st} |", code(rule.code));
    }
    b.push('\n');
    blocks.push(b);
    findings_blocks(blocks, &scan.issues.iter().collect::<Vec<_>>());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_command_escaping_follows_the_runner() {
        assert_eq!(escape_data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn defused_streams_parse_to_the_same_value() {
        let json = "{\n  \"tail\": \"##[error]boom ::error::x\"\n}\n";
        let defused = defuse(json, Syntax::Json);
        assert!(!defused.contains("##["));
        let a: serde_json::Value = serde_json::from_str(json).unwrap();
        let b: serde_json::Value = serde_json::from_str(&defused).unwrap();
        assert_eq!(a, b);
        let xml = "<a>\n::error::x\n  ::warning::y ##[error]z</a>\n";
        let d = defuse(xml, Syntax::Xml);
        assert_eq!(
            d,
            "<a>\n&#58;:error::x\n  &#58;:warning::y ##&#91;error]z</a>\n"
        );
        for line in d.lines() {
            assert!(!line.trim_start().starts_with("::"));
        }
    }

    #[test]
    fn markdown_escapes_keep_hostile_text_inert() {
        assert_eq!(
            md("![x](http://t/)<img>|"),
            "\\!\\[x\\](http://t/)&lt;img&gt;\\|"
        );
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x|"), "`` `x\\| ``");
    }

    #[test]
    fn the_summary_never_exceeds_its_budget() {
        let blocks: Vec<String> = (0..100)
            .map(|i| format!("block {i} {}\n", "x".repeat(100)))
            .collect();
        let out = assemble(blocks.clone(), 2000);
        assert!(out.len() <= 2000, "{}", out.len());
        assert!(out.contains("Summary cut here"));
        assert!(assemble(blocks.clone(), 100).len() <= 100);
        assert!(!assemble(blocks, 1 << 20).contains("cut here"));
    }
}
