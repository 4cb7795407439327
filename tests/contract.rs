//! The JSON report's contract (`schemaVersion: 1`, docs/report.schema.json): representative runs —
//! a pass, a failure in each phase, a spawn failure, a repeat with a failed run, several servers,
//! the scan — are validated against the JSON Schema users validate against, and against the
//! meaning of the fields: a check never says `pass` without its evidence, counts add up, codes
//! name real findings. tests/fixtures/servers/contract_cases.json pins each status rule on a
//! fixture (exact issues and JSON pointers), and every one of those reports goes through the
//! same validation.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::Duration;
use support::*;

const BASE_ARGS: [&str; 9] = [
    "--json",
    "--no-discover",
    "--no-capability-probes",
    "--quiet-ms",
    "300",
    "--timeout",
    "3000",
    "--shutdown-grace",
    "1000",
];

fn schema() -> &'static jsonschema::Validator {
    static SCHEMA: OnceLock<jsonschema::Validator> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let text = std::fs::read_to_string(repo().join("docs/report.schema.json"))
            .expect("docs/report.schema.json");
        let doc: Value = serde_json::from_str(&text).expect("the contract schema is JSON");
        jsonschema::draft202012::meta::validate(&doc)
            .expect("the contract schema is a 2020-12 schema");
        jsonschema::validator_for(&doc).expect("the contract schema compiles")
    })
}

/// Everything wrong with a report: schema violations, then broken meaning.
fn violations(report: &Value) -> Vec<String> {
    let mut out: Vec<String> = schema()
        .iter_errors(report)
        .take(20)
        .map(|e| format!("schema: at {}: {e}", e.instance_path()))
        .collect();
    match report.get("servers").and_then(Value::as_array) {
        Some(servers) => {
            for (n, s) in servers.iter().enumerate() {
                out.extend(
                    server_meaning(s)
                        .into_iter()
                        .map(|m| format!("servers[{n}]: {m}")),
                );
            }
            out.extend(counts(report));
        }
        None if report.get("findings").is_some() => out.extend(counts_of(report, "findings")),
        None => out.extend(server_meaning(report)),
    }
    out
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `ok`, `summary.issueCounts` and `issueClasses` agree with `issues`.
fn counts(report: &Value) -> Vec<String> {
    counts_of(report, "issues")
}

fn counts_of(report: &Value, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let issues = report[key].as_array().cloned().unwrap_or_default();
    let n = |sev: &str| issues.iter().filter(|i| i["severity"] == sev).count() as u64;
    let (errors, warnings) = (n("error"), n("warning"));
    if report["ok"] != Value::Bool(errors == 0) {
        out.push(format!(
            "ok is {} with {errors} error findings",
            report["ok"]
        ));
    }
    let c = &report["summary"]["issueCounts"];
    if c["error"] != errors || c["warning"] != warnings || c["total"] != errors + warnings {
        out.push(format!(
            "summary.issueCounts {c} for {errors} errors and {warnings} warnings"
        ));
    }
    let expected_status = match (errors, warnings) {
        (0, 0) => vec!["pass"],
        (0, _) => vec!["warning"],
        _ => vec!["fail", "needs_inspection"],
    };
    let status = report["summary"]["status"].as_str().unwrap_or("");
    if !expected_status.contains(&status) {
        out.push(format!(
            "summary.status {status:?} for {errors} errors, {warnings} warnings"
        ));
    }
    out
}

fn server_meaning(s: &Value) -> Vec<String> {
    let mut out = counts(s);
    let codes: BTreeSet<&str> = s["issues"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["code"].as_str())
        .chain(
            s["staticFindings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["reason"].as_str()),
        )
        .collect();
    let checks = s["checks"].as_object().cloned().unwrap_or_default();
    for (name, c) in &checks {
        let status = c["status"].as_str().unwrap_or("");
        let own = strs(&c["issueCodes"]);
        for code in &own {
            if !codes.contains(code) {
                out.push(format!("checks.{name} names {code}, which no finding has"));
            }
        }
        if status == "fail" && own.is_empty() && c.get("reason").is_none() {
            out.push(format!("checks.{name} fails with no code and no reason"));
        }
        if status == "skipped" && !own.is_empty() {
            out.push(format!("checks.{name} is skipped but names {own:?}"));
        }
    }
    let initialized = s["initialized"] == Value::Bool(true);
    let started = s["process"]["started"] == Value::Bool(true);
    let init = checks["initialize"]["status"].as_str().unwrap_or("");
    if matches!(init, "pass" | "warning") && !initialized {
        out.push(format!(
            "checks.initialize is {init} but the handshake never completed"
        ));
    }
    if started && !initialized && init != "fail" {
        out.push(format!(
            "the handshake never completed but checks.initialize is {init}"
        ));
    }
    let ops = s["operations"].as_array().cloned().unwrap_or_default();
    let op = checks["operation"]["status"].as_str().unwrap_or("");
    if ops.is_empty() && op != "skipped" {
        out.push(format!(
            "no operation was asked for but checks.operation is {op}"
        ));
    }
    if ops.iter().any(|o| o["responded"] == Value::Bool(false)) && op != "fail" {
        out.push(format!(
            "an operation got no valid reply but checks.operation is {op}"
        ));
    }
    if matches!(op, "pass" | "warning") && !ops.iter().all(|o| o["responded"] == Value::Bool(true))
    {
        out.push(format!(
            "checks.operation is {op} without a reply to every operation"
        ));
    }
    if s["operation"] != ops.first().cloned().unwrap_or(Value::Null) {
        out.push("operation is not the first of operations".into());
    }
    if s["command"] != s["fingerprint"]["command"]["argv"] {
        out.push("command differs from fingerprint.command.argv".into());
    }
    if s["repeat"] != s["fingerprint"]["repeat"] {
        out.push("repeat differs from fingerprint.repeat".into());
    }
    match s["runs"].as_array() {
        Some(runs) => {
            let failed: Vec<Value> = runs
                .iter()
                .filter(|r| r["ok"] == Value::Bool(false))
                .map(|r| r["run"].clone())
                .collect();
            let rc = &checks["repeat"];
            if rc["failedRuns"] != Value::from(failed.clone()) {
                out.push(format!(
                    "checks.repeat.failedRuns {} for failed runs {failed:?}",
                    rc["failedRuns"]
                ));
            }
            if (rc["status"] == "fail") == failed.is_empty() {
                out.push(format!(
                    "checks.repeat is {} with failed runs {failed:?}",
                    rc["status"]
                ));
            }
            if rc["runs"] != runs.len()
                || s["fingerprint"]["runs"].as_array().map(Vec::len) != Some(runs.len())
            {
                out.push("checks.repeat.runs / fingerprint.runs do not count the runs".into());
            }
            for (n, r) in runs.iter().enumerate() {
                out.extend(counts(r).into_iter().map(|m| format!("runs[{n}]: {m}")));
            }
        }
        None => {
            if checks["repeat"]["status"] != "skipped" {
                out.push("one run, but checks.repeat is not skipped".into());
            }
        }
    }
    if s["adversarial"]["enabled"] == Value::Bool(true)
        && s["adversarial"]["status"] != checks["adversarial"]["status"]
    {
        out.push("adversarial.status differs from checks.adversarial.status".into());
    }
    out
}

#[test]
fn every_status_rule_follows_the_evidence() {
    cases::run_cases_checked(
        &repo().join("tests/fixtures/servers"),
        "contract_cases.json",
        &BASE_ARGS,
        10,
        6,
        violations,
    );
}

/// One guard run whose JSON report must honour the contract.
fn contract_run(args: &[&str]) -> (Value, Vec<String>) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let run = guard(&args, &repo(), &[], &[], Duration::from_secs(90));
    let report = run.json();
    let found = violations(&report);
    (report, found)
}

#[test]
fn every_report_shape_honours_the_contract() {
    let fixture = |name: &str| format!("tests/fixtures/servers/{name}");
    let clean = fixture("clean.py");
    let exits = fixture("exits_on_request.py");
    let shapes: Vec<(&str, Vec<&str>)> = vec![
        // The defaults: era probe, capability probes, a request.
        (
            "pass",
            vec![
                "--json",
                "--request",
                "tools/list",
                "--",
                "python3",
                "examples/hello-server/server.py",
            ],
        ),
        // A failure after the handshake, with a static scan merged in.
        (
            "failure with scan",
            vec![
                "--json",
                "--scan",
                "examples",
                "--request",
                "tools/list",
                "--",
                "python3",
                &exits,
            ],
        ),
        // Hostile probes.
        (
            "adversarial",
            vec![
                "--json",
                "--no-capability-probes",
                "--adversarial-probes",
                "invalid-method,notification",
                "--",
                "python3",
                &clean,
            ],
        ),
        // Several servers in one report.
        (
            "several servers",
            vec![
                "--json",
                "--no-capability-probes",
                "--protocol",
                "all",
                "--",
                "python3",
                &clean,
            ],
        ),
        // The scan alone.
        ("scan", vec!["scan", "--format", "json", "examples"]),
        // Pollution traced to its lines (`source`, `occurrences`, `stdoutLines`), with a
        // transcript named in the report.
        (
            "traced with transcript",
            vec![
                "--json",
                "--request",
                "tools/list",
                "--transcript",
                "target/contract-transcript.jsonl",
                "--",
                "python3",
                "examples/noisy-server/server.py",
            ],
        ),
        // One shard of several servers (`shard`, always `servers[]`).
        (
            "shard",
            vec![
                "--json",
                "--no-capability-probes",
                "--protocol",
                "all",
                "--shard",
                "1/2",
                "--",
                "python3",
                "examples/noisy-server/server.py",
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (name, args) in &shapes {
        let (report, found) = contract_run(args);
        if !found.is_empty() {
            failures.push(format!("{name}:\n  {}", found.join("\n  ")));
        }
        if *name == "several servers" {
            assert!(
                report["servers"].as_array().is_some_and(|s| s.len() >= 2),
                "{name}: {report}"
            );
        }
        if *name == "traced with transcript" {
            let issues = report["issues"].as_array().unwrap();
            assert!(
                issues.iter().all(|i| i["source"]["sink"] == "print"),
                "{name}: {report}"
            );
            assert!(issues.iter().any(|i| i["stdoutLines"].is_array()), "{name}");
            assert!(report["transcript"].is_string(), "{name}");
        }
        if *name == "shard" {
            assert_eq!(report["shard"]["count"], 2, "{name}: {report}");
            assert!(report["servers"].is_array(), "{name}");
        }
    }
    assert!(
        failures.is_empty(),
        "reports break the contract:\n{}",
        failures.join("\n")
    );
}

/// The validation itself can fail: a report with a status that lies, a count that is off and a
/// field of the wrong type is caught on each count.
#[test]
fn the_contract_check_catches_a_lying_report() {
    let (mut report, found) = contract_run(&[
        "--json",
        "--no-discover",
        "--no-capability-probes",
        "--request",
        "tools/list",
        "--",
        "python3",
        "tests/fixtures/servers/exits_on_request.py",
    ]);
    assert!(found.is_empty(), "{found:?}");
    report["checks"]["operation"]["status"] = "pass".into();
    report["summary"]["issueCounts"]["error"] = 0.into();
    report["command"] = "python3 x.py".into();
    report["process"]["phase"] = "shutdown".into();
    let found = violations(&report);
    for needle in [
        "checks.operation is pass",
        "summary.issueCounts",
        "at /command",
        "at /process/phase",
    ] {
        assert!(
            found.iter().any(|f| f.contains(needle)),
            "{needle:?} not caught in {found:#?}"
        );
    }
}
