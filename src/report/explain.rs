//! `explain CODE` and `docs/rules.md`: both rendered from the catalogue.

use crate::catalog::{self, Rule};
use std::fmt::Write;

/// The full documentation of one rule, as plain text.
pub fn rule_text(rule: &Rule) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", rule.code, rule.summary);
    let _ = writeln!(
        out,
        "class: {}   default severity: {}   check: {}",
        rule.class.as_str(),
        rule.severity.as_str(),
        rule.check.as_str()
    );
    if !rule.detail_codes.is_empty() {
        let _ = writeln!(out, "detail codes: {}", rule.detail_codes.join(", "));
    }
    for (title, body) in [
        ("What it catches", rule.what),
        ("Why it matters", rule.why),
        ("Example", rule.example),
        ("Fix", rule.fix),
    ] {
        let _ = writeln!(out, "\n{title}:\n  {body}");
    }
    out
}

/// One line per rule.
pub fn list_text() -> String {
    let mut out = String::new();
    for rule in catalog::all() {
        let _ = writeln!(
            out,
            "{:<40} {:<8} {}",
            rule.code,
            rule.severity.as_str(),
            rule.summary
        );
    }
    out
}

/// `docs/rules.md`, generated; a test fails when the committed file is stale.
pub fn rules_markdown() -> String {
    let mut out = String::from(
        "# Rules\n\n<!-- Generated from src/catalog by `UPDATE_GOLDEN=1 cargo test`; do not edit by hand. -->\n\n\
         Every issue code mcp-stdio-guard reports, with its class, default severity and the check it belongs to.\n\
         `mcp-stdio-guard explain <code>` prints the same text.\n\n\
         | code | class | severity | summary |\n| --- | --- | --- | --- |\n",
    );
    for rule in catalog::all() {
        let _ = writeln!(
            out,
            "| [`{0}`](#{0}) | {1} | {2} | {3} |",
            rule.code,
            rule.class.as_str(),
            rule.severity.as_str(),
            rule.summary.replace('|', "\\|")
        );
    }
    for rule in catalog::all() {
        let _ = write!(
            out,
            "\n## {}\n\n{}\n\n- class: `{}`\n- default severity: `{}`\n- check: `{}`\n",
            rule.code,
            rule.summary,
            rule.class.as_str(),
            rule.severity.as_str(),
            rule.check.as_str()
        );
        if !rule.detail_codes.is_empty() {
            let details: Vec<String> = rule.detail_codes.iter().map(|d| format!("`{d}`")).collect();
            let _ = writeln!(out, "- detail codes: {}", details.join(", "));
        }
        if rule.reference {
            let _ = writeln!(out, "- same code as the reference tool");
        }
        for (title, body) in [
            ("What it catches", rule.what),
            ("Why it matters", rule.why),
            ("Example", rule.example),
            ("Fix", rule.fix),
        ] {
            let _ = write!(out, "\n**{title}.** {body}\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `explain` and the JSON report name the same class for every code (the class a registry
    /// displays must not depend on where it is read).
    #[test]
    fn explain_names_the_class_the_json_report_emits() {
        for rule in catalog::all() {
            let issue = crate::issue::Issue::new(rule, "x");
            let json = crate::report::json::issue_value(&issue);
            let class = json["class"].as_str().unwrap();
            assert!(
                rule_text(rule).contains(&format!("class: {class} ")),
                "{}: explain says {:?}, JSON says {class}",
                rule.code,
                rule_text(rule).lines().nth(1)
            );
        }
    }
}
