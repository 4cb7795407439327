//! Reports for CI: SARIF, JUnit, GitHub annotations and the step summary, end to end.
//!
//! - One canonical report (a runtime run with passes, warnings, a failure with non-UTF-8 evidence
//!   and a hostile stderr, plus a static scan with errors, warnings and a suppression) rendered in
//!   every format by one invocation, against golden files (`UPDATE_GOLDEN=1` regenerates).
//! - Every SARIF file these tests produce is validated against the official SARIF 2.1.0 schema
//!   (`tests/schemas/`) and by Microsoft's SARIF Multitool with GitHub's ingestion rules
//!   (`validate --rule-kind "Sarif;Gh"`), and every result must have a located file and line.
//! - Every JUnit file is read by junitparser; its counts must match the JSON report's checks.
//! - Secrets never reach any output; bad output paths fail before anything runs; an interrupted
//!   run leaves no report file; GitHub mode keeps machine streams clean and within its limits.
//!
//! The validators are installed by `scripts/install-test-deps` (`scripts/test` runs it and
//! exports `MCP_GUARD_TEST_DEPS`); without them the tests that need them fail with the command.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;
use support::*;

const LONG: Duration = Duration::from_secs(90);

static SCRATCH: Mutex<u32> = Mutex::new(0);

/// A fresh folder for one scenario's files (kept under target/ so failures can be inspected).
fn scratch(name: &str) -> PathBuf {
    let mut n = SCRATCH.lock().unwrap();
    *n += 1;
    let dir =
        repo()
            .join("target/report-tests")
            .join(format!("{name}-{}-{}", std::process::id(), *n));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// The guard (without the GitHub variables of the machine running the tests) plus `envs`.
fn run_guard(args: &[String], cwd: &Path, envs: &[(&str, &str)]) -> Run {
    let envs: Vec<(String, String)> = envs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    guard(args, cwd, &envs, &[], LONG)
}

const FAST: [&str; 6] = [
    "--timeout",
    "20000",
    "--quiet-ms",
    "300",
    "--shutdown-grace",
    "1000",
];

// ------------------------------------------------------------------------------------ validators

struct Validators {
    python: PathBuf,
    multitool: PathBuf,
}

fn validators() -> Validators {
    const HOW: &str = "run scripts/test (or scripts/install-test-deps, then MCP_GUARD_TEST_DEPS=$PWD/.test-deps cargo test)";
    let Some(root) = std::env::var_os("MCP_GUARD_TEST_DEPS") else {
        panic!(
            "MCP_GUARD_TEST_DEPS is not set, so the SARIF and JUnit validators are missing: {HOW}"
        );
    };
    let python = PathBuf::from(root).join("venv/bin/python");
    let multitool = repo().join(
        "tests/validators/node/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool",
    );
    for needed in [&python, &multitool] {
        assert!(
            needed.exists(),
            "missing validator {}: {HOW}",
            needed.display()
        );
    }
    Validators { python, multitool }
}

/// Schema, location invariants, and GitHub's ingestion rules, for every file.
fn validate_sarif(files: &[PathBuf], v: &Validators) {
    let mut problems = Vec::new();
    // The official schema, with the jsonschema package's Draft 7 validator.
    let out = Command::new(&v.python)
        .arg(repo().join("tests/validators/python/sarif_schema.py"))
        .arg(repo().join("tests/schemas/sarif-2.1.0.json"))
        .args(files)
        .output()
        .expect("run the schema validator");
    let report =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        report.contains(&format!("checked {} files", files.len())),
        "the schema validator did not run: {report}"
    );
    if !out.status.success() {
        problems.push(format!("schema: {report}"));
    }
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        let value: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}", f.display()));
        problems.extend(
            location_problems(&value)
                .into_iter()
                .map(|p| format!("{}: {p}", f.display())),
        );
    }
    // GitHub code scanning's rules (GH*) and the SARIF rules; notes are advice (rule ids like
    // `CS2001`, snippets), errors and warnings fail. About 2 s per file: two processes share them.
    let half = files.len().div_ceil(2);
    let batches: Vec<Vec<PathBuf>> = files.chunks(half.max(1)).map(<[PathBuf]>::to_vec).collect();
    let outputs: Vec<(Vec<PathBuf>, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = batches
            .into_iter()
            .map(|batch| {
                scope.spawn(move || {
                    let text = multitool(&batch, v);
                    (batch, text)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (batch, text) in outputs {
        assert!(
            text.contains(&format!("Done. {} files scanned.", batch.len())),
            "the SARIF Multitool did not scan every file:\n{text}"
        );
        for line in text.lines() {
            let is_finding = batch
                .iter()
                .any(|f| line.starts_with(&*f.to_string_lossy()))
                && (line.contains(": error ") || line.contains(": warning "));
            if is_finding {
                problems.push(format!("multitool: {line}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "invalid SARIF:\n{}",
        problems.join("\n")
    );
}

/// `Sarif.Multitool validate --rule-kind "Sarif;Gh"` on some files: its whole output.
fn multitool(files: &[PathBuf], v: &Validators) -> String {
    let out = Command::new(&v.multitool)
        .arg("validate")
        .arg("--config")
        .arg(repo().join("tests/validators/sarif-multitool.xml"))
        .args(["--rule-kind", "Sarif;Gh", "--level", "Error;Warning"])
        .args(files)
        .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        .output()
        .expect("run the SARIF Multitool");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the SARIF Multitool failed:\n{text}");
    text
}

/// GitHub rejects a whole upload when one result has no location: every result must name a
/// file (relative to `%SRCROOT%`, or a `file://` URI) and a line, and its rule.
fn location_problems(sarif: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (r, run) in sarif["runs"].as_array().unwrap().iter().enumerate() {
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        for (i, result) in run["results"].as_array().unwrap().iter().enumerate() {
            let at = format!("runs[{r}].results[{i}]");
            let loc = &result["locations"][0]["physicalLocation"];
            let uri = loc["artifactLocation"]["uri"].as_str().unwrap_or("");
            let base = loc["artifactLocation"]["uriBaseId"].as_str();
            if uri.is_empty() {
                out.push(format!("{at}: no artifactLocation.uri"));
            }
            if base.is_none() && !uri.starts_with("file:///") {
                out.push(format!("{at}: relative uri {uri:?} without uriBaseId"));
            }
            if loc["region"]["startLine"].as_u64().unwrap_or(0) < 1 {
                out.push(format!("{at}: no region.startLine"));
            }
            let index = result["ruleIndex"].as_u64().unwrap_or(u64::MAX) as usize;
            if rules.get(index).map(|rule| &rule["id"]) != Some(&result["ruleId"]) {
                out.push(format!("{at}: ruleIndex does not point at ruleId"));
            }
            if result.get("suppressions").is_some() {
                out.push(format!("{at}: a suppressed result was emitted"));
            }
        }
    }
    out
}

/// junitparser's reading of each file: declared and counted totals must agree.
fn parse_junit(files: &[PathBuf], v: &Validators) -> BTreeMap<String, Value> {
    let out = Command::new(&v.python)
        .arg(repo().join("tests/validators/python/junit_counts.py"))
        .args(files)
        .output()
        .expect("run junitparser");
    assert!(
        out.status.success(),
        "junitparser cannot read the JUnit files: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed: BTreeMap<String, Value> = serde_json::from_slice(&out.stdout).unwrap();
    for (file, suites) in &parsed {
        for suite in suites.as_array().unwrap() {
            assert_eq!(
                suite["declared"], suite["counted"],
                "{file}: suite {} declares other counts than its test cases",
                suite["name"]
            );
        }
    }
    parsed
}

/// The JUnit suites must say what the JSON report says: one suite per server with a test per
/// check (staticScan aside), failures and skips exactly where the JSON checks fail or skip.
fn junit_matches_json(junit: &Value, json: &Value, scan_findings: Option<&[Value]>) {
    let servers: Vec<&Value> = match json.get("servers") {
        Some(list) => list.as_array().unwrap().iter().collect(),
        None if json.get("checks").is_some() => vec![json],
        None => vec![],
    };
    let suites = junit.as_array().unwrap();
    assert_eq!(
        suites.len(),
        servers.len() + usize::from(scan_findings.is_some()),
        "one suite per server and one for the scan"
    );
    for (suite, server) in suites.iter().zip(&servers) {
        let checks = server["checks"].as_object().unwrap();
        let expected: BTreeMap<&str, &str> = checks
            .iter()
            .filter(|(k, _)| *k != "staticScan")
            .map(|(k, v)| (k.as_str(), v["status"].as_str().unwrap()))
            .collect();
        let got: BTreeMap<&str, &str> = suite["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["name"].as_str().unwrap(), c["result"].as_str().unwrap()))
            .collect();
        assert_eq!(expected.len(), got.len(), "{}", suite["name"]);
        for (check, status) in expected {
            let want = match status {
                "fail" => "failure",
                "skipped" => "skipped",
                _ => "pass",
            };
            assert_eq!(got[check], want, "{}: check {check}", suite["name"]);
        }
        for case in suite["cases"].as_array().unwrap() {
            if case["result"] == "failure" {
                let ty = case["type"].as_str().unwrap();
                let codes = &server["checks"][case["name"].as_str().unwrap()]["issueCodes"];
                assert!(
                    codes.as_array().unwrap().iter().any(|c| c == ty),
                    "failure type {ty} is not a code of the check"
                );
                assert!(
                    case["message"].as_str().unwrap().contains("fix:"),
                    "the message names the fix"
                );
            }
        }
    }
    if let Some(findings) = scan_findings {
        let suite = suites.last().unwrap();
        for case in suite["cases"].as_array().unwrap() {
            let rule = case["name"].as_str().unwrap();
            let errors = findings
                .iter()
                .filter(|f| f["rule"] == rule && f["severity"] == "error")
                .count();
            assert_eq!(case["result"] == "failure", errors > 0, "scan rule {rule}");
        }
    }
}

// ------------------------------------------------------------------------------- normalization

/// Times vary; the rule descriptors are the catalogue's text (checked field by field by the unit
/// tests of `report::sarif`), so the golden file keeps only their ids, names and levels.
fn normalize_sarif(text: &str) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    for run in v["runs"].as_array_mut().unwrap() {
        // The checkout's absolute path, percent-encoded.
        run["originalUriBaseIds"]["%SRCROOT%"]["uri"] = Value::from("file://<repo>/");
        for rule in run["tool"]["driver"]["rules"].as_array_mut().unwrap() {
            *rule = serde_json::json!({
                "id": rule["id"],
                "name": rule["name"],
                "defaultConfiguration": rule["defaultConfiguration"],
            });
        }
        for inv in run["invocations"].as_array_mut().unwrap() {
            inv["startTimeUtc"] = Value::from("<time>");
            inv["endTimeUtc"] = Value::from("<time>");
        }
    }
    normalize_json(&mut v);
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}

/// `time="0.123"` attributes vary from run to run.
fn normalize_junit(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(" time=\"") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 7..];
        let end = after.find('"').unwrap();
        out.push_str(" time=\"N\"");
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    normalize_text(&out)
}

fn normalize_token(text: &str) -> String {
    let mut out = text.to_string();
    while let Some(i) = out.find("mcp-stdio-guard-") {
        let end = out[i + 16..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .map_or(out.len(), |e| i + 16 + e);
        if end - i - 16 != 32 {
            break;
        }
        out.replace_range(i..end, "<token>");
    }
    out
}

// ------------------------------------------------------------------------------------- the tests

#[test]
fn canonical_report_in_every_format() {
    let v = validators();
    let dir = scratch("canonical");
    let here = repo().join("tests/fixtures/reports/canonical");
    let summary = dir.join("summary.md");
    let mut args = s(&FAST);
    args.extend(s(&[
        "--request",
        "tools/list",
        "--scan",
        "src",
        "--fail-on-static",
    ]));
    args.extend(s(&["--format", "github"]));
    for (flag, name) in [
        ("--sarif", "canonical.sarif"),
        ("--junit", "canonical.xml"),
        ("--json-file", "canonical.json"),
    ] {
        args.push(flag.into());
        args.push(dir.join(name).display().to_string());
    }
    args.extend(s(&["--", "python3", "server.py"]));
    let ws = repo().display().to_string();
    let summary_path = summary.display().to_string();
    let run = run_guard(
        &args,
        &here,
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", &summary_path),
            ("GITHUB_WORKSPACE", &ws),
        ],
    );
    assert_eq!(run.status, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.stderr, "", "GitHub format writes annotations to stdout");

    let golden = repo().join("tests/golden/reports");
    let json_text = std::fs::read_to_string(dir.join("canonical.json")).unwrap();
    let mut json: Value = serde_json::from_str(&json_text).unwrap();
    let sarif = std::fs::read_to_string(dir.join("canonical.sarif")).unwrap();
    let junit = std::fs::read_to_string(dir.join("canonical.xml")).unwrap();
    let md = std::fs::read_to_string(&summary).unwrap();

    // What the canonical report must contain, whatever the golden files say.
    let codes: Vec<(&str, &str)> = json["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["code"].as_str().unwrap(), i["severity"].as_str().unwrap()))
        .collect();
    assert!(
        codes.contains(&("stdout-invalid-utf8", "error")),
        "{codes:?}"
    );
    assert!(
        codes.contains(&("tool-name-not-portable", "warning")),
        "{codes:?}"
    );
    assert!(codes.contains(&("static-print-call", "error")), "{codes:?}");
    assert!(
        codes.contains(&("static-print-call", "warning")),
        "{codes:?}"
    );
    assert_eq!(
        codes.iter().filter(|c| c.0 == "static-print-call").count(),
        2,
        "the suppressed print is left out"
    );
    assert_eq!(json["checks"]["initialize"]["status"], "pass");
    assert!(
        sarif.contains(r#"b\"caf\\xe9 ready\\n\""#),
        "non-UTF-8 evidence, escaped"
    );
    assert!(!junit.contains('\u{1b}') && !junit.contains('\u{0}'));
    assert!(
        junit.contains(r"\x1b[31mred") && junit.contains(r"\u{fffe}"),
        "control bytes shown, not dropped"
    );
    // The hostile stderr cannot run workflow commands inside the fenced text.
    let fence_start = run.stdout.find("::stop-commands::").expect("fenced");
    let fence_end = run.stdout.rfind("::mcp-stdio-guard-").expect("resumed");
    assert!(run.stdout[fence_start..fence_end].contains("::error file=server.py,line=1::injected"));
    let annotations: Vec<&str> = run.stdout[fence_end..]
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("::"))
        .collect();
    assert_eq!(annotations.len(), 4, "{annotations:?}");
    assert!(annotations[0].starts_with(
        "::error file=tests/fixtures/reports/canonical/server.py,line=1,title=mcp-stdio-guard stdout-invalid-utf8::"
    ));
    assert!(md.contains("## ❌ mcp-stdio-guard: FAIL") && md.contains("First offending bytes"));
    // Server text outside code blocks is escaped; inside them it is inert anyway.
    let outside_code: String = md.split("```").step_by(2).collect();
    assert!(
        !outside_code.contains("![tracker]") && !outside_code.contains("<b>"),
        "Markdown from the server is inert: {md}"
    );

    // Real consumers.
    validate_sarif(&[dir.join("canonical.sarif")], &v);
    let parsed = parse_junit(&[dir.join("canonical.xml")], &v);
    let suites = parsed.values().next().unwrap();
    junit_matches_json(
        suites,
        &json,
        Some(json["staticFindings"].as_array().unwrap()),
    );
    let err = suites[0]["system_err"].as_str().unwrap();
    assert!(
        err.contains("</system-err>]]><injected/>"),
        "stderr survives the XML round trip: {err}"
    );

    // Golden files.
    normalize_json(&mut json);
    let checks = [
        (
            "canonical.github.txt",
            normalize_token(&normalize_text(&run.stdout)),
        ),
        (
            "canonical.json",
            serde_json::to_string_pretty(&json).unwrap() + "\n",
        ),
        ("canonical.sarif", normalize_sarif(&sarif)),
        ("canonical.junit.xml", normalize_junit(&junit)),
        ("canonical.summary.md", normalize_text(&md)),
    ];
    let failures: Vec<String> = checks
        .iter()
        .filter_map(|(name, actual)| check_golden(&golden.join(name), actual).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Several kinds of run, each written as SARIF and JUnit: all valid, all located.
#[test]
fn every_sarif_and_junit_file_is_valid_and_every_result_is_located() {
    let v = validators();
    let dir = scratch("corpus");
    let outside = std::env::temp_dir().join(format!("mcp-guard-outside-{}.py", std::process::id()));
    std::fs::write(&outside, "print('outside the repository')\n").unwrap();
    // (name, args before the outputs, expected exit code)
    let scenarios: Vec<(&str, Vec<String>, i32)> = vec![
        ("scan-all-languages", s(&["scan", "tests/fixtures/scan"]), 1),
        (
            "scan-outside-root",
            vec!["scan".into(), outside.display().to_string()],
            1,
        ),
        ("scan-clean", s(&["scan", "examples/hello-server"]), 0),
        (
            "clean-server",
            [
                &FAST[..],
                &["--", "python3", "tests/fixtures/servers/clean.py"],
            ]
            .concat()
            .iter()
            .map(|a| a.to_string())
            .collect(),
            0,
        ),
        (
            "mcp-config",
            [
                &FAST[..],
                &["--mcp-config", "tests/fixtures/reports/mcp.json"],
            ]
            .concat()
            .iter()
            .map(|a| a.to_string())
            .collect(),
            1,
        ),
        (
            "bad-interpreter",
            s(&["--", "tests/fixtures/servers/bad_interpreter.py"]),
            1,
        ),
        (
            "repeat-drift",
            [
                &FAST[..],
                &[
                    "--repeat",
                    "2",
                    "--",
                    "python3",
                    "tests/fixtures/servers/crash_after_initialized.py",
                ],
            ]
            .concat()
            .iter()
            .map(|a| a.to_string())
            .collect(),
            1,
        ),
    ];
    let handles: Vec<_> = scenarios
        .into_iter()
        .map(|(name, mut args, code)| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let sarif = dir.join(format!("{name}.sarif"));
                let junit = dir.join(format!("{name}.xml"));
                let json = dir.join(format!("{name}.json"));
                let insert = args.iter().position(|a| a == "--").unwrap_or(args.len());
                let outputs = [
                    "--format".to_string(),
                    "sarif".into(),
                    "--sarif".into(),
                    sarif.display().to_string(),
                    "--junit".into(),
                    junit.display().to_string(),
                    "--json-file".into(),
                    json.display().to_string(),
                ];
                args.splice(insert..insert, outputs);
                let run = run_guard(&args, &repo(), &[]);
                assert_eq!(
                    run.status,
                    Some(code),
                    "{name}: {}\n{}",
                    run.stdout,
                    run.stderr
                );
                // The main stream and the file are the same report.
                assert_eq!(
                    run.stdout,
                    std::fs::read_to_string(&sarif).unwrap(),
                    "{name}"
                );
                (name, sarif, junit, json)
            })
        })
        .collect();
    let done: Vec<(&str, PathBuf, PathBuf, PathBuf)> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    let _ = std::fs::remove_file(&outside);
    let sarifs: Vec<PathBuf> = done.iter().map(|d| d.1.clone()).collect();
    validate_sarif(&sarifs, &v);
    validators_reject_what_github_rejects(&dir, &sarifs[0], &v);
    let junits: Vec<PathBuf> = done.iter().map(|d| d.2.clone()).collect();
    let parsed = parse_junit(&junits, &v);
    for (name, sarif, junit, json) in &done {
        let json: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        let suites = &parsed[&*junit.to_string_lossy()];
        junit_matches_json(
            suites,
            &json,
            json.get("findings")
                .and_then(Value::as_array)
                .map(Vec::as_slice),
        );
        let sarif: Value = serde_json::from_str(&std::fs::read_to_string(sarif).unwrap()).unwrap();
        let results: Vec<&Value> = sarif["runs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["results"].as_array().unwrap())
            .collect();
        let uris: Vec<&str> = results
            .iter()
            .map(|r| {
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        match *name {
            "scan-clean" | "clean-server" => assert!(results.is_empty(), "{name}: {uris:?}"),
            "scan-outside-root" => {
                assert!(uris.iter().all(|u| u.starts_with("file:///")), "{uris:?}")
            }
            "mcp-config" => {
                // Anchored at each server's key in the client config.
                let r = results
                    .iter()
                    .find(|r| r["ruleId"] == "stdout-invalid-utf8")
                    .unwrap();
                let loc = &r["locations"][0]["physicalLocation"];
                assert_eq!(
                    loc["artifactLocation"]["uri"],
                    "tests/fixtures/reports/mcp.json"
                );
                assert_eq!(loc["region"]["startLine"], 7);
                assert!(r["partialFingerprints"]["primaryLocationLineHash"].is_string());
                assert!(
                    r["message"]["text"]
                        .as_str()
                        .unwrap()
                        .starts_with("latin1: ")
                );
            }
            "bad-interpreter" => assert_eq!(uris, ["tests/fixtures/servers/bad_interpreter.py"]),
            "scan-all-languages" => {
                assert!(results.len() > 20, "{}", results.len());
                // The line hash is the upload action's, for the file's line.
                let r = results[0];
                let loc = &r["locations"][0]["physicalLocation"];
                let file = repo().join(loc["artifactLocation"]["uri"].as_str().unwrap());
                let line = loc["region"]["startLine"].as_u64().unwrap() as u32;
                let expected = mcp_stdio_guard::report::linehash::line_hash(
                    &std::fs::read(file).unwrap(),
                    line,
                )
                .unwrap();
                assert_eq!(
                    r["partialFingerprints"]["primaryLocationLineHash"],
                    expected.as_str()
                );
            }
            _ => assert!(!results.is_empty(), "{name}"),
        }
    }
}

/// The validators are not rubber stamps: a result without a location (GitHub rejects the
/// upload), a result whose level is not a SARIF level (the schema), and a JUnit file cut short
/// all fail.
fn validators_reject_what_github_rejects(dir: &Path, good: &Path, v: &Validators) {
    let mut sarif: Value = serde_json::from_str(&std::fs::read_to_string(good).unwrap()).unwrap();
    let result = &mut sarif["runs"][0]["results"][0];
    assert!(result.is_object(), "the first scenario has results");
    result.as_object_mut().unwrap().remove("locations");
    let unlocated = dir.join("unlocated.sarif");
    std::fs::write(&unlocated, serde_json::to_string(&sarif).unwrap()).unwrap();
    sarif["runs"][0]["results"][0]["level"] = Value::from("fatal");
    let bad_level = dir.join("bad-level.sarif");
    std::fs::write(&bad_level, serde_json::to_string(&sarif).unwrap()).unwrap();
    for (file, expected) in [(&unlocated, "GH1015"), (&bad_level, "schema:")] {
        let caught = std::panic::catch_unwind(|| validate_sarif(std::slice::from_ref(file), v));
        let message = caught
            .expect_err("an invalid SARIF file passed validation")
            .downcast::<String>()
            .map(|m| *m)
            .unwrap_or_default();
        assert!(message.contains(expected), "{expected} not in: {message}");
    }
    let cut = dir.join("cut.xml");
    std::fs::write(
        &cut,
        "<testsuites><testsuite name=\"x\" tests=\"1\"><testcase",
    )
    .unwrap();
    assert!(std::panic::catch_unwind(|| parse_junit(std::slice::from_ref(&cut), v)).is_err());
}

#[test]
fn secrets_never_appear_in_any_format() {
    let dir = scratch("secrets");
    let secrets = [
        "s3cr3t-env-value-123",
        "cfg-secret-value-456",
        "tok-secret-789",
    ];
    let summary = dir.join("summary.md");
    let mut seen = String::new();
    for format in ["github", "json", "sarif", "junit", "text"] {
        let mut args = s(&FAST);
        args.extend(s(&[
            "--config",
            "tests/fixtures/reports/leaky.config.json",
            "--env",
            "GUARD_SECRET_ENV=s3cr3t-env-value-123",
            "--request",
            "tools/list",
            "--format",
            format,
        ]));
        for (flag, ext) in [
            ("--sarif", "sarif"),
            ("--junit", "xml"),
            ("--json-file", "json"),
        ] {
            args.push(flag.into());
            args.push(dir.join(format!("{format}.{ext}")).display().to_string());
        }
        let summary_path = summary.display().to_string();
        let run = run_guard(
            &args,
            &repo(),
            &[
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_STEP_SUMMARY", &summary_path),
            ],
        );
        assert_eq!(
            run.status,
            Some(1),
            "{format}: {}\n{}",
            run.stdout,
            run.stderr
        );
        seen.push_str(&run.stdout);
        seen.push_str(&run.stderr);
        for ext in ["sarif", "xml", "json"] {
            seen.push_str(&std::fs::read_to_string(dir.join(format!("{format}.{ext}"))).unwrap());
        }
    }
    seen.push_str(&std::fs::read_to_string(&summary).unwrap());
    // Every SARIF and JUnit file these runs wrote is valid too (the redaction breaks nothing).
    let v = validators();
    let formats = ["github", "json", "sarif", "junit", "text"];
    let sarifs: Vec<PathBuf> = formats
        .iter()
        .map(|f| dir.join(format!("{f}.sarif")))
        .collect();
    validate_sarif(&sarifs, &v);
    let junits: Vec<PathBuf> = formats
        .iter()
        .map(|f| dir.join(format!("{f}.xml")))
        .collect();
    parse_junit(&junits, &v);
    for secret in secrets {
        assert!(
            !seen.contains(secret),
            "secret {secret} leaked into a report"
        );
    }
    // The leaks were there to be found: redacted, not missing.
    assert!(
        seen.contains("leaking <redacted> <redacted> <redacted>"),
        "the leak is reported"
    );
    assert!(
        seen.contains("stderr leaks <redacted>"),
        "the stderr tail is reported"
    );
    assert!(
        seen.contains("::error file=tests/fixtures/reports/leaky.config.json,line=2"),
        "annotations on the config file"
    );
}

#[test]
fn bad_output_paths_fail_before_anything_runs() {
    let dir = scratch("bad-paths");
    let marker = dir.join("spawned");
    let server = format!("touch {}", marker.display());
    let existing_dir = dir.display().to_string();
    for (flag, path, expect) in [
        ("--sarif", "/nonexistent-dir-xyz/r.sarif", "does not exist"),
        ("--junit", existing_dir.as_str(), "is a folder"),
        ("--json-file", "tests", "is a folder"),
        ("--sarif", "Cargo.toml/r.sarif", "is a file, not a folder"),
        ("--junit", "/proc/r.xml", "cannot create a file in /proc"),
    ] {
        for scan in [false, true] {
            let mut args = vec![flag.to_string(), path.to_string()];
            if scan {
                args.splice(0..0, s(&["scan", "tests/fixtures/reports/canonical/src"]));
            } else {
                args.extend(s(&["--", "sh", "-c", &server]));
            }
            let run = run_guard(&args, &repo(), &[]);
            assert_eq!(run.status, Some(2), "{args:?}: {}", run.stderr);
            assert_eq!(run.stdout, "");
            assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
            assert!(
                run.stderr.contains(flag) && run.stderr.contains(expect),
                "{}",
                run.stderr
            );
        }
    }
    let same = dir.join("r.out").display().to_string();
    let run = run_guard(
        &s(&[
            "--sarif", &same, "--junit", &same, "--", "sh", "-c", &server,
        ]),
        &repo(),
        &[],
    );
    assert_eq!(run.status, Some(2));
    assert!(
        run.stderr.contains("give each report its own file"),
        "{}",
        run.stderr
    );
    assert!(
        !marker.exists(),
        "the server was spawned despite a bad output path"
    );
}

/// A named pipe (as `/dev/stdout` is) gets the report written into it and stays a pipe; a
/// symlink stays a link and the file it names gets the report. (A pipe in a scratch folder, not
/// `/dev/stdout` itself: a regression here must not replace a device node of the machine.)
#[test]
fn pipes_are_written_in_place_and_links_followed() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("special");
    let fifo = dir.join("sarif.pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let target = dir.join("junit-target.xml");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("junit.xml");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    // The reader opens the pipe first and reads until the guard closes it.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let run = run_guard(
        &s(&[
            "scan",
            "examples/noisy-server",
            "--sarif",
            &fifo.display().to_string(),
            "--junit",
            &link.display().to_string(),
        ]),
        &repo(),
        &[],
    );
    assert_eq!(run.status, Some(1), "{}", run.stderr);
    let piped = reader.join().unwrap();
    let sarif: Value = serde_json::from_str(&piped).expect("the whole SARIF went through the pipe");
    assert_eq!(sarif["version"], "2.1.0");
    let copy = dir.join("piped.sarif");
    std::fs::write(&copy, &piped).unwrap();
    let v = validators();
    validate_sarif(std::slice::from_ref(&copy), &v);
    parse_junit(std::slice::from_ref(&target), &v);
    std::fs::remove_file(&copy).unwrap();
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .contains("<testsuites")
    );
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["junit-target.xml", "junit.xml", "sarif.pipe"],
        "no temporary file left"
    );
}

/// The scan works files in parallel: its reports must still come out in one order, run after
/// run (only the invocation times differ).
#[test]
fn reports_are_deterministic() {
    let dir = scratch("deterministic");
    let mut outputs = Vec::new();
    for n in 0..3 {
        let sarif = dir.join(format!("{n}.sarif"));
        let junit = dir.join(format!("{n}.xml"));
        let run = run_guard(
            &s(&[
                "scan",
                "tests/fixtures/scan",
                "--format",
                "github",
                "--sarif",
                &sarif.display().to_string(),
                "--junit",
                &junit.display().to_string(),
            ]),
            &repo(),
            &[],
        );
        assert_eq!(run.status, Some(1), "{}", run.stderr);
        let sarif = std::fs::read_to_string(&sarif).unwrap();
        assert!(sarif.matches("\"ruleId\"").count() > 20);
        let stdout: String = run
            .stdout
            .lines()
            .filter(|l| !l.starts_with("FAIL static scan"))
            .collect();
        outputs.push((
            normalize_sarif(&sarif),
            normalize_junit(&std::fs::read_to_string(&junit).unwrap()),
            stdout,
        ));
    }
    assert!(
        outputs.windows(2).all(|w| w[0] == w[1]),
        "reports differ between runs"
    );
    // The same report as the others: validated once.
    let v = validators();
    validate_sarif(&[dir.join("0.sarif")], &v);
    parse_junit(&[dir.join("0.xml")], &v);
}

/// A report file that cannot be written after the run (a full disk: `/dev/full`) is a one-line
/// internal error, exit 3, and costs neither the other files nor the main stream.
#[test]
fn a_failed_report_write_keeps_the_other_outputs() {
    let dir = scratch("full");
    let junit = dir.join("r.xml");
    let run = run_guard(
        &s(&[
            "scan",
            "examples/noisy-server",
            "--sarif",
            "/dev/full",
            "--junit",
            &junit.display().to_string(),
        ]),
        &repo(),
        &[],
    );
    assert_eq!(run.status, Some(3), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("cannot write the report file /dev/full"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("FAIL static scan"), "{}", run.stdout);
    parse_junit(&[junit], &validators());
}

#[test]
fn an_interrupted_run_writes_its_partial_report_whole() {
    let dir = scratch("interrupted");
    let sarif = dir.join("r.sarif");
    let args = s(&[
        "--timeout",
        "60000",
        "--sarif",
        &sarif.display().to_string(),
        "--",
        "python3",
        "tests/fixtures/servers/never_answers.py",
    ]);
    let child = Command::new(GUARD)
        .args(&args)
        .current_dir(repo())
        .env_remove("GITHUB_ACTIONS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("INTERRUPTED interrupted by signal 15: 0 of 1 server judged"),
        "{text}"
    );
    // The report file is whole (no temporary file beside it) and says the run was cut short.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["r.sarif"], "files left behind: {left:?}");
    let log: Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{invocation}");
    assert_eq!(invocation["exitCode"], 143);
    assert_eq!(invocation["exitSignalNumber"], 15);
    assert_eq!(log["runs"][0]["results"], json!([]));
    validate_sarif(std::slice::from_ref(&sarif), &validators());
}

#[test]
fn github_actions_keeps_machine_streams_clean_and_within_limits() {
    let dir = scratch("github");
    let summary = dir.join("summary.md");
    // A summary file that other steps almost filled: what we append keeps the step under 1 MiB.
    std::fs::write(&summary, "x".repeat(1024 * 1024 - 3000)).unwrap();
    let summary_path = summary.display().to_string();
    let env = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_STEP_SUMMARY", summary_path.as_str()),
    ];

    // A scan with dozens of findings, JSON on stdout: stdout is exactly the JSON report, the
    // annotations go to stderr, at most 10 per level.
    let run = run_guard(
        &s(&["scan", "tests/fixtures/scan", "--json"]),
        &repo(),
        &env,
    );
    assert_eq!(run.status, Some(1));
    let json = run.json();
    let findings = |severity: &str| {
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == severity)
            .count()
    };
    assert!(findings("warning") > 10, "{}", findings("warning"));
    let count = |level: &str| {
        run.stderr
            .lines()
            .filter(|l| l.starts_with(&format!("::{level} ")))
            .count()
    };
    assert_eq!(count("error"), findings("error").min(10));
    assert_eq!(count("warning"), 10);
    assert_eq!(count("notice"), findings("note").min(10));
    assert!(
        run.stderr.contains("more findings not annotated"),
        "{}",
        run.stderr
    );
    assert!(std::fs::metadata(&summary).unwrap().len() <= 1024 * 1024);
    assert!(
        std::fs::read_to_string(&summary)
            .unwrap()
            .contains("Summary cut here")
    );

    // A hostile server under --json: no `##[` command survives on stdout, the value is unchanged.
    let run = run_guard(
        &[
            &FAST[..],
            &[
                "--json",
                "--no-github",
                "--",
                "python3",
                "tests/fixtures/reports/canonical/server.py",
            ],
        ]
        .concat()
        .iter()
        .map(|a| a.to_string())
        .collect::<Vec<_>>(),
        &repo(),
        &env,
    );
    assert!(
        !run.stdout.contains("##["),
        "a legacy workflow command reached the log"
    );
    assert!(
        run.json()["stderr"]
            .as_str()
            .unwrap()
            .contains("##[warning]injected")
    );
    assert_eq!(run.stderr, "", "--no-github: no annotations");

    // The default format inside Actions is `github`: fenced text, then annotations; outside, text.
    let args: Vec<String> = [
        &FAST[..],
        &["--", "python3", "tests/fixtures/servers/invalid_utf8.py"],
    ]
    .concat()
    .iter()
    .map(|a| a.to_string())
    .collect();
    let on = run_guard(&args, &repo(), &env);
    assert!(
        on.stdout.starts_with("::stop-commands::mcp-stdio-guard-"),
        "{}",
        on.stdout
    );
    assert!(
        on.stdout
            .contains("\n::error file=tests/fixtures/servers/invalid_utf8.py,line=1,")
    );
    let off = run_guard(&args, &repo(), &[]);
    assert!(
        off.stdout.starts_with("FAIL MCP stdio guard\n") && !off.stdout.contains("::"),
        "{}",
        off.stdout
    );
}
