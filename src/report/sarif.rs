//! SARIF 2.1.0 for GitHub code scanning and other SARIF consumers, built with `serde-sarif`'s
//! typed model of the official schema.
//!
//! One SARIF run per kind of analysis, each with its own `automationDetails.id` category so GitHub
//! tracks their alerts apart: `mcp-stdio-guard/runtime/` (every checked server) and
//! `mcp-stdio-guard/scan/` (the static scan). `tool.driver.rules` is generated from the catalogue
//! (the runtime run lists the runtime and protocol rules, the scan run the scan rules), and every
//! result names its rule by id and index.
//!
//! Every result has a physical location (GitHub rejects the whole upload otherwise): a source
//! finding its file and region, a runtime finding its server's anchor (see [`super::locate`]) at
//! the anchor's line; the stdout line and byte offset go to the result's properties. URIs are
//! relative to `%SRCROOT%`, declared in `originalUriBaseIds`. `primaryLocationLineHash` is the
//! upload action's own line hash ([`super::linehash`]). Suppressed findings never reach the
//! report, so no result carries `suppressions` (which GitHub ignores anyway). Output is
//! deterministic apart from the invocation's times: targets, issues and properties keep a stable
//! order.

use super::locate::Place;
use super::{CiContext, Report, utc_timestamp};
use crate::catalog::{self, Check, Rule, Severity};
use crate::exit::Exit;
use crate::issue::{Issue, Location, Stream};
use serde_json::{Value, json};
use serde_sarif::sarif;
use std::collections::BTreeMap;

pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
/// `automationDetails.id` of the runtime run (a category: it ends with `/`).
pub const RUNTIME_CATEGORY: &str = "mcp-stdio-guard/runtime/";
/// `automationDetails.id` of the static-scan run.
pub const SCAN_CATEGORY: &str = "mcp-stdio-guard/scan/";
pub const SRCROOT: &str = "%SRCROOT%";

pub fn render(report: &Report, ctx: &CiContext) -> String {
    let mut runs = Vec::new();
    if !report.targets.is_empty() || report.interrupted.is_some() {
        let rules: Vec<&'static Rule> = catalog::all()
            .filter(|r| r.check != Check::StaticScan)
            .collect();
        let several = report.targets.len() > 1;
        let mut results = Vec::new();
        for (i, t) in report.targets.iter().enumerate() {
            for issue in &t.issues {
                let prefix = several.then_some(t.name.as_str());
                results.push(result(issue, &rules, ctx, Some(i), prefix, Some(&t.name)));
            }
        }
        runs.push(run(
            RUNTIME_CATEGORY,
            "Runtime check: the servers were spawned and spoken to as a strict MCP client.",
            rules,
            results,
            report,
            ctx,
        ));
    }
    if let Some(scan) = &report.scan {
        let rules: Vec<&'static Rule> = catalog::all()
            .filter(|r| r.check == Check::StaticScan)
            .collect();
        let results = scan
            .issues
            .iter()
            .map(|issue| result(issue, &rules, ctx, None, None, None))
            .collect();
        runs.push(run(
            SCAN_CATEGORY,
            "Static scan: source code that writes to stdout.",
            rules,
            results,
            report,
            ctx,
        ));
    }
    let log = sarif::Sarif::builder()
        .schema(SCHEMA_URI)
        .version(json!("2.1.0"))
        .runs(runs)
        .build();
    let mut text = serde_json::to_string_pretty(&log).expect("SARIF values serialize");
    text.push('\n');
    text
}

fn run(
    category: &str,
    description: &str,
    rules: Vec<&'static Rule>,
    results: Vec<sarif::Result>,
    report: &Report,
    ctx: &CiContext,
) -> sarif::Run {
    let driver = sarif::ToolComponent::builder()
        .name("mcp-stdio-guard")
        .version(crate::VERSION)
        .semantic_version(crate::VERSION)
        .information_uri(crate::REPOSITORY_URL)
        .rules(rules.iter().map(|r| descriptor(r)).collect::<Vec<_>>())
        .build();
    let mut root_uri = super::locate::file_uri(&ctx.sources.root);
    if !root_uri.ends_with('/') {
        root_uri.push('/');
    }
    let mut bases = BTreeMap::new();
    bases.insert(
        SRCROOT.to_string(),
        sarif::ArtifactLocation::builder().uri(root_uri).build(),
    );
    sarif::Run::builder()
        .tool(sarif::Tool::builder().driver(driver).build())
        .automation_details(
            sarif::RunAutomationDetails::builder()
                .id(category)
                .description(sarif::Message::builder().text(description).build())
                .build(),
        )
        .original_uri_base_ids(bases)
        .column_kind(json!("unicodeCodePoints"))
        .invocations(vec![invocation(report, ctx)])
        .results(results)
        .build()
}

fn invocation(report: &Report, ctx: &CiContext) -> sarif::Invocation {
    let inv = &ctx.invocation;
    let duration = inv.end.duration_since(inv.start).unwrap_or_default();
    let description = match inv.exit {
        Exit::Clean => "no error-level findings",
        Exit::Findings => "error-level findings",
        Exit::Usage => "usage or configuration error",
        Exit::Internal => "internal failure",
    };
    let properties = bag(&[("durationMs", json!(duration.as_millis() as u64))], None);
    // An interrupted run did not execute to its end: its results cover the judged servers only.
    if let Some(i) = &report.interrupted {
        let mut text = i.describe();
        if !i.not_judged.is_empty() {
            text.push_str(&format!("; not judged: {}", i.not_judged.join(", ")));
        }
        return sarif::Invocation::builder()
            .execution_successful(false)
            .exit_code(i64::from(i.exit_code()))
            .exit_code_description("interrupted by a signal; the results are partial")
            .exit_signal_number(i64::from(i.signal))
            .tool_execution_notifications(vec![
                sarif::Notification::builder()
                    .message(sarif::Message::builder().text(text).build())
                    .level(json!("error"))
                    .build(),
            ])
            .start_time_utc(utc_timestamp(inv.start))
            .end_time_utc(utc_timestamp(inv.end))
            .properties(properties)
            .build();
    }
    sarif::Invocation::builder()
        .execution_successful(inv.exit != Exit::Internal)
        .exit_code(i64::from(inv.exit.code()))
        .exit_code_description(description)
        .start_time_utc(utc_timestamp(inv.start))
        .end_time_utc(utc_timestamp(inv.end))
        .properties(properties)
        .build()
}

/// `StdoutNonJson` for `stdout-non-json`: the rule's `name`, an identifier as SARIF expects.
pub fn rule_name(code: &str) -> String {
    code.split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn level(severity: Severity) -> sarif::ResultLevel {
    match severity {
        Severity::Error => sarif::ResultLevel::Error,
        Severity::Warning => sarif::ResultLevel::Warning,
        Severity::Note => sarif::ResultLevel::Note,
    }
}

fn descriptor(rule: &Rule) -> sarif::ReportingDescriptor {
    let text = format!(
        "What it catches: {}\n\nWhy it matters: {}\n\nExample: {}\n\nFix: {}",
        rule.what, rule.why, rule.example, rule.fix
    );
    let markdown = format!(
        "**What it catches.** {}\n\n**Why it matters.** {}\n\n**Example.** {}\n\n**Fix.** {}\n\n[Documentation]({})",
        rule.what,
        rule.why,
        rule.example,
        rule.fix,
        rule.docs_url()
    );
    let precision = if rule.check == Check::StaticScan {
        "high"
    } else {
        "very-high"
    };
    let problem = problem_severity(rule.severity);
    let mut tags = vec![
        "mcp".to_string(),
        rule.class.as_str().to_string(),
        rule.check.as_str().to_string(),
    ];
    if rule.check == Check::StaticScan {
        tags.push("static-scan".into());
    }
    sarif::ReportingDescriptor::builder()
        .id(rule.code)
        .name(rule_name(rule.code))
        .short_description(
            sarif::MultiformatMessageString::builder()
                .text(rule.summary)
                .build(),
        )
        .full_description(
            sarif::MultiformatMessageString::builder()
                .text(rule.what)
                .build(),
        )
        .help(
            sarif::MultiformatMessageString::builder()
                .text(text)
                .markdown(markdown)
                .build(),
        )
        .help_uri(rule.docs_url())
        .default_configuration(
            sarif::ReportingConfiguration::builder()
                .level(json!(rule.severity.as_str()))
                .build(),
        )
        .properties(bag(
            &[
                ("precision", json!(precision)),
                ("problem.severity", json!(problem)),
            ],
            Some(tags),
        ))
        .build()
}

/// GitHub's `problem.severity` vocabulary.
fn problem_severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "recommendation",
    }
}

fn bag(pairs: &[(&str, Value)], tags: Option<Vec<String>>) -> sarif::PropertyBag {
    let extra: BTreeMap<String, Value> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    match tags {
        Some(tags) => sarif::PropertyBag::builder()
            .tags(tags)
            .additional_properties(extra)
            .build(),
        None => sarif::PropertyBag::builder()
            .additional_properties(extra)
            .build(),
    }
}

fn result(
    issue: &Issue,
    rules: &[&'static Rule],
    ctx: &CiContext,
    target: Option<usize>,
    prefix: Option<&str>,
    target_name: Option<&str>,
) -> sarif::Result {
    let index = rules
        .iter()
        .position(|r| r.code == issue.code())
        .expect("a run lists the rules of every issue it reports");
    let place = ctx.sources.place(target, issue);
    let mut text = String::new();
    if let Some(p) = prefix {
        text.push_str(p);
        text.push_str(": ");
    }
    text.push_str(issue.message.trim_end());
    if let Some(run) = issue.run {
        text.push_str(&format!(" (run {run})"));
    }
    if !text.ends_with('.') {
        text.push('.');
    }
    if issue.help != issue.rule.fix {
        text.push_str(" Fix: ");
        text.push_str(issue.help.trim_end());
    }
    let mut builder_props: Vec<(&str, Value)> = vec![
        ("check", json!(issue.rule.check.as_str())),
        ("class", json!(issue.rule.class.as_str())),
    ];
    if let Some(name) = target_name {
        builder_props.push(("target", json!(name)));
    }
    if let Some(kind) = place.anchor {
        builder_props.push(("anchor", json!(kind.as_str())));
    }
    if let Some(d) = issue.detail_code {
        builder_props.push(("detailCode", json!(d)));
    }
    if let Some(p) = issue.phase {
        builder_props.push(("phase", json!(p.as_str())));
    }
    if let Some(r) = issue.run {
        builder_props.push(("run", json!(r)));
    }
    if let Some(Location::Stream {
        stream,
        line,
        byte_offset,
    }) = &issue.location
    {
        let name = match stream {
            Stream::Stdin => "stdin",
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        builder_props.push(("stream", json!(name)));
        builder_props.push(("streamLine", json!(line)));
        builder_props.push(("byteOffset", json!(byte_offset)));
    }
    if let Some(e) = &issue.evidence {
        builder_props.push(("evidence", json!(e)));
    }
    for key in ["context", "language"] {
        if let Some(v) = issue.fields.get(key) {
            builder_props.push((key, v.clone()));
        }
    }
    let mut r = sarif::Result::builder()
        .rule_id(issue.code())
        .rule_index(index as i64)
        .level(level(issue.severity))
        .message(sarif::Message::builder().text(text).build())
        .locations(vec![location(&place)])
        .properties(bag(&builder_props, None))
        .build();
    if let Some(hash) = ctx.sources.line_hash(&place) {
        let mut fp = BTreeMap::new();
        fp.insert("primaryLocationLineHash".to_string(), hash.to_string());
        r.partial_fingerprints = Some(fp);
    }
    r
}

fn location(place: &Place) -> sarif::Location {
    let artifact = if place.file.in_root {
        sarif::ArtifactLocation::builder()
            .uri(place.file.uri())
            .uri_base_id(SRCROOT)
            .build()
    } else {
        sarif::ArtifactLocation::builder()
            .uri(place.file.uri())
            .build()
    };
    let region = match place.span {
        Some((column, end_line, end_column)) => sarif::Region::builder()
            .start_line(i64::from(place.start_line))
            .start_column(i64::from(column.max(1)))
            .end_line(i64::from(end_line))
            .end_column(i64::from(end_column.max(1)))
            .build(),
        None => sarif::Region::builder()
            .start_line(i64::from(place.start_line))
            .build(),
    };
    sarif::Location::builder()
        .physical_location(
            sarif::PhysicalLocation::builder()
                .artifact_location(artifact)
                .region(region)
                .build(),
        )
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule descriptor is the catalogue's entry, field by field.
    #[test]
    fn rule_descriptors_come_from_the_catalogue() {
        for rule in catalog::all() {
            let d = serde_json::to_value(descriptor(rule)).unwrap();
            assert_eq!(d["id"], rule.code);
            assert_eq!(d["name"], rule_name(rule.code));
            assert_eq!(d["shortDescription"]["text"], rule.summary);
            assert_eq!(d["fullDescription"]["text"], rule.what);
            for part in [rule.what, rule.why, rule.example, rule.fix] {
                assert!(
                    d["help"]["text"].as_str().unwrap().contains(part),
                    "{}",
                    rule.code
                );
                assert!(
                    d["help"]["markdown"].as_str().unwrap().contains(part),
                    "{}",
                    rule.code
                );
            }
            assert!(
                d["help"]["markdown"]
                    .as_str()
                    .unwrap()
                    .contains(&rule.docs_url())
            );
            assert_eq!(d["helpUri"], rule.docs_url());
            assert!(
                rule.docs_url()
                    .ends_with(&format!("docs/rules.md#{}", rule.code))
            );
            assert_eq!(d["defaultConfiguration"]["level"], rule.severity.as_str());
            let props = &d["properties"];
            assert!(matches!(
                props["precision"].as_str(),
                Some("very-high" | "high")
            ));
            assert_eq!(props["problem.severity"], problem_severity(rule.severity));
            let tags = props["tags"].as_array().unwrap();
            assert!(
                tags.iter().any(|t| t == rule.check.as_str()),
                "{}",
                rule.code
            );
        }
    }

    #[test]
    fn rule_names_are_identifiers() {
        assert_eq!(rule_name("stdout-non-json"), "StdoutNonJson");
        assert_eq!(rule_name("static-print-call"), "StaticPrintCall");
        for rule in catalog::all() {
            let name = rule_name(rule.code);
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric()), "{name}");
        }
    }
}
