//! Real MCP servers built with the official SDKs — TypeScript `@modelcontextprotocol/sdk` and
//! Python `mcp` — run under the guard. The cases live in `tests/sdk/cases.json`: each names a
//! server, the requests to send, the environment, and the exact verdict expected (`ok` and the
//! multiset of issue codes with their severities, plus line/phase where they are stable). A false
//! failure on a clean SDK server is the worst bug the guard can have, and a missed defect on a
//! polluted one the second worst: both show up here.
//!
//! The SDKs are installed by `scripts/install-test-deps` (`scripts/test` runs it and exports
//! `MCP_GUARD_TEST_DEPS`). Without them these tests fail with the command to run, unless
//! `MCP_GUARD_SKIP_SDK=1` says to skip them (loudly).
//!
//! A Python SDK server (mcp 2.3) needs about 1.5 s of CPU just to import the SDK, so the cases run
//! in parallel on a pool of threads (`MCP_GUARD_SDK_JOBS`, default 4: more only makes every server
//! slower on a 2-core machine), the two tests take turns, and every mismatch is reported at once,
//! as a readable diff with the command that reproduces it.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const GUARD: &str = env!("CARGO_BIN_EXE_mcp-stdio-guard");
const DEFAULT_JOBS: usize = 4;

/// The two tests each start a few dozen servers; run side by side they would starve each other's
/// servers of CPU (a Python server then needs seconds to answer `initialize`).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

// ------------------------------------------------------------------------------- the cases file

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    #[serde(rename = "$comment")]
    _comment: Value,
    defaults: Defaults,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Defaults {
    timeout_ms: u64,
    shutdown_grace_ms: u64,
    quiet_ms: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Case {
    name: String,
    /// argv, run from `tests/sdk/`; `{python}` is the test venv's interpreter.
    command: Vec<String>,
    protocol: Option<String>,
    #[serde(default)]
    requests: Vec<Request>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    unset_env: Vec<String>,
    /// More guard flags (`--adversarial-probes all`, `--effects`, `--unbuffered-rerun`).
    #[serde(default)]
    args: Vec<String>,
    quiet_ms: Option<u64>,
    /// Why the verdict is what it is, for the reader of cases.json.
    #[serde(rename = "note")]
    _note: Option<String>,
    expect: Expect,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    method: String,
    params: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Expect {
    ok: bool,
    /// stdout frames the guard saw only after it closed stdin (output flushed at exit).
    frames_after_stdin_eof: Option<u64>,
    issues: Vec<ExpectedIssue>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpectedIssue {
    code: String,
    severity: String,
    line: Option<u64>,
    byte_offset: Option<u64>,
    phase: Option<String>,
    detail_code: Option<String>,
    /// The write call the finding was traced to: `{file, line, sink, confidence}`, or
    /// `{confidence: "ambiguous", candidates: ["file:line", ...]}`.
    source: Option<Value>,
    /// The finding was not traced (no `source`).
    #[serde(default)]
    untraced: bool,
    /// Findings traced to one call are one finding counting its lines.
    occurrences: Option<u64>,
}

fn sdk_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk")
}

fn load_cases() -> CaseFile {
    let path = sdk_dir().join("cases.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let file: CaseFile = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not a valid cases file: {e}", path.display()));
    let mut names = std::collections::BTreeSet::new();
    for case in &file.cases {
        assert!(
            names.insert(&case.name),
            "duplicate case name {:?}",
            case.name
        );
        assert!(
            !case.command.is_empty(),
            "case {:?} has an empty command",
            case.name
        );
    }
    file
}

// ------------------------------------------------------------------------ the test dependencies

/// Writes straight to the process's stderr: libtest captures `eprintln!` of passing tests, and a
/// skip or the suite's timing must show in every log.
fn loud(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{text}");
}

struct Deps {
    root: PathBuf,
    python: PathBuf,
}

/// The installed SDKs, or `None` when `MCP_GUARD_SKIP_SDK=1` asks to skip. Anything else that is
/// missing fails the test with the command that installs it.
fn test_deps(test: &str) -> Option<Deps> {
    if std::env::var_os("MCP_GUARD_SKIP_SDK").is_some_and(|v| v == "1") {
        loud(&format!(
            "\n**** SKIPPED {test}: MCP_GUARD_SKIP_SDK=1, the guard was NOT tested on real SDK servers ****\n"
        ));
        return None;
    }
    const HOW: &str = "run scripts/test (or scripts/install-test-deps, then MCP_GUARD_TEST_DEPS=$PWD/.test-deps cargo test); MCP_GUARD_SKIP_SDK=1 skips these tests";
    let Some(root) = std::env::var_os("MCP_GUARD_TEST_DEPS") else {
        panic!("MCP_GUARD_TEST_DEPS is not set: {HOW}");
    };
    let root = PathBuf::from(root);
    let python = root.join("venv/bin/python");
    let node_sdk = sdk_dir().join("node/node_modules/@modelcontextprotocol/sdk/package.json");
    for needed in [&python, &node_sdk] {
        if !needed.exists() {
            panic!("missing test dependency {}: {HOW}", needed.display());
        }
    }
    Some(Deps { root, python })
}

// ------------------------------------------------------------------------------- running a case

/// What the guard was run with, so a mismatch can be reproduced by hand.
struct Invocation {
    env: Vec<(String, Option<String>)>,
    args: Vec<String>,
}

impl Invocation {
    fn new(case: &Case, defaults: &Defaults, deps: &Deps) -> Invocation {
        let mut args: Vec<String> = vec![
            "--json".into(),
            "--timeout".into(),
            defaults.timeout_ms.to_string(),
            "--shutdown-grace".into(),
            defaults.shutdown_grace_ms.to_string(),
            "--quiet-ms".into(),
            case.quiet_ms.unwrap_or(defaults.quiet_ms).to_string(),
        ];
        if let Some(protocol) = &case.protocol {
            args.extend(["--protocol".into(), protocol.clone()]);
        }
        for request in &case.requests {
            args.extend(["--request".into(), request.method.clone()]);
            if let Some(params) = &request.params {
                args.extend(["--params".into(), params.to_string()]);
            }
        }
        args.extend(case.args.iter().cloned());
        args.push("--".into());
        let python = deps.python.to_string_lossy();
        args.extend(case.command.iter().map(|a| a.replace("{python}", &python)));

        let mut env: Vec<(String, Option<String>)> =
            case.unset_env.iter().map(|k| (k.clone(), None)).collect();
        env.extend(case.env.iter().map(|(k, v)| (k.clone(), Some(v.clone()))));
        Invocation { env, args }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(GUARD);
        cmd.current_dir(sdk_dir()).args(&self.args);
        for (key, value) in &self.env {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd
    }

    /// A shell line that reproduces the run.
    fn shell(&self) -> String {
        let mut line = format!("cd {} && env", sdk_dir().display());
        for (key, value) in &self.env {
            match value {
                Some(value) => write!(line, " {key}={}", quote(value)).unwrap(),
                None => write!(line, " -u {key}").unwrap(),
            }
        }
        write!(line, " {}", quote(GUARD)).unwrap();
        for arg in &self.args {
            write!(line, " {}", quote(arg)).unwrap();
        }
        line
    }
}

fn quote(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:{}@,+".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

struct Outcome {
    name: String,
    elapsed: Duration,
    /// Empty when the verdict is exactly the expected one.
    mismatches: Vec<String>,
    summary: String,
    repro: String,
}

fn run_case(case: &Case, defaults: &Defaults, deps: &Deps) -> Outcome {
    let invocation = Invocation::new(case, defaults, deps);
    let started = Instant::now();
    let output = invocation.command().output();
    let elapsed = started.elapsed();
    let mut outcome = Outcome {
        name: case.name.clone(),
        elapsed,
        mismatches: Vec::new(),
        summary: String::new(),
        repro: invocation.shell(),
    };
    let output = match output {
        Ok(output) => output,
        Err(e) => {
            outcome
                .mismatches
                .push(format!("cannot run the guard: {e}"));
            return outcome;
        }
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    let code = output.status.code();
    if !matches!(code, Some(0 | 1)) {
        outcome.mismatches.push(format!(
            "guard exit status {:?} (expected 0 or 1); its stderr: {}",
            output.status,
            stderr.trim()
        ));
        return outcome;
    }
    let report: Value = match serde_json::from_slice(&output.stdout) {
        Ok(report) => report,
        Err(e) => {
            outcome.mismatches.push(format!(
                "the guard's stdout is not a JSON report ({e}); its stderr: {}",
                stderr.trim()
            ));
            return outcome;
        }
    };
    compare(case, &report, code == Some(0), &mut outcome);
    outcome
}

/// One issue of the guard's report, as the expectation sees it.
#[derive(Debug)]
struct ActualIssue {
    code: String,
    severity: String,
    line: Option<u64>,
    byte_offset: Option<u64>,
    phase: Option<String>,
    detail_code: Option<String>,
    message: String,
    /// `source` projected to what an expectation names (see [`ExpectedIssue::source`]).
    source: Option<Value>,
    occurrences: Option<u64>,
}

/// The parts of a finding's `source` an expectation names: the file, line, sink and confidence
/// (columns are left out), or the candidates as `file:line`.
fn project_source(source: &Value) -> Value {
    match source.get("candidates").and_then(Value::as_array) {
        Some(all) => serde_json::json!({
            "confidence": source["confidence"],
            "candidates": all
                .iter()
                .map(|c| format!("{}:{}", c["file"].as_str().unwrap_or(""), c["line"]))
                .collect::<Vec<_>>(),
        }),
        None => serde_json::json!({
            "file": source["file"],
            "line": source["line"],
            "sink": source["sink"],
            "confidence": source["confidence"],
        }),
    }
}

impl ActualIssue {
    fn from_json(issue: &Value) -> ActualIssue {
        let text = |key: &str| issue.get(key).and_then(Value::as_str).map(str::to_string);
        ActualIssue {
            code: text("code").unwrap_or_default(),
            severity: text("severity").unwrap_or_default(),
            line: issue.get("line").and_then(Value::as_u64),
            byte_offset: issue.get("byteOffset").and_then(Value::as_u64),
            // The finer phase when the report has one (`capabilities`, `shutdown`).
            phase: text("phaseDetail")
                .or_else(|| text("phase"))
                .filter(|p| !p.is_empty()),
            detail_code: text("detailCode").filter(|d| !d.is_empty()),
            message: text("message").unwrap_or_default(),
            source: issue.get("source").map(project_source),
            occurrences: issue.get("occurrences").and_then(Value::as_u64),
        }
    }

    fn matches(&self, want: &ExpectedIssue) -> bool {
        self.code == want.code
            && self.severity == want.severity
            && want.line.is_none_or(|l| self.line == Some(l))
            && want.byte_offset.is_none_or(|b| self.byte_offset == Some(b))
            && want
                .phase
                .as_ref()
                .is_none_or(|p| self.phase.as_ref() == Some(p))
            && want
                .detail_code
                .as_ref()
                .is_none_or(|d| self.detail_code.as_ref() == Some(d))
            && want
                .source
                .as_ref()
                .is_none_or(|s| self.source.as_ref() == Some(s))
            && (!want.untraced || self.source.is_none())
            && want.occurrences.is_none_or(|n| self.occurrences == Some(n))
    }

    fn describe(&self) -> String {
        let mut text = format!("{} {}", self.severity, self.code);
        if let Some(detail) = &self.detail_code {
            write!(text, " detail={detail}").unwrap();
        }
        if let Some(line) = self.line {
            write!(text, " line={line}").unwrap();
        }
        if let Some(offset) = self.byte_offset {
            write!(text, " byte={offset}").unwrap();
        }
        if let Some(phase) = &self.phase {
            write!(text, " phase={phase}").unwrap();
        }
        if let Some(n) = self.occurrences {
            write!(text, " occurrences={n}").unwrap();
        }
        if let Some(source) = &self.source {
            write!(text, " source={source}").unwrap();
        }
        write!(text, ": {}", self.message).unwrap();
        text
    }
}

fn describe_expected(want: &ExpectedIssue) -> String {
    let mut text = format!("{} {}", want.severity, want.code);
    if let Some(detail) = &want.detail_code {
        write!(text, " detail={detail}").unwrap();
    }
    if let Some(line) = want.line {
        write!(text, " line={line}").unwrap();
    }
    if let Some(offset) = want.byte_offset {
        write!(text, " byte={offset}").unwrap();
    }
    if let Some(phase) = &want.phase {
        write!(text, " phase={phase}").unwrap();
    }
    if let Some(n) = want.occurrences {
        write!(text, " occurrences={n}").unwrap();
    }
    if let Some(source) = &want.source {
        write!(text, " source={source}").unwrap();
    }
    if want.untraced {
        text.push_str(" untraced");
    }
    text
}

fn compare(case: &Case, report: &Value, exit_ok: bool, outcome: &mut Outcome) {
    let ok = report.get("ok").and_then(Value::as_bool);
    let issues: Vec<ActualIssue> = report
        .get("issues")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(ActualIssue::from_json).collect())
        .unwrap_or_default();
    // `deadline-extended` notes depend on the machine's load, not on the server: compared only
    // when the case expects one.
    let expects_extension = case
        .expect
        .issues
        .iter()
        .any(|e| e.code == "deadline-extended");
    let issues: Vec<ActualIssue> = issues
        .into_iter()
        .filter(|i| expects_extension || i.code != "deadline-extended")
        .collect();
    let codes: Vec<&str> = issues.iter().map(|i| i.code.as_str()).collect();
    let process = &report["process"];
    outcome.summary = format!(
        "ok={} issues={codes:?} outcome={} shutdown={} eof→exit={}ms",
        ok.map_or("?".into(), |o| o.to_string()),
        process["outcome"].as_str().unwrap_or("?"),
        process["shutdown"]["stage"].as_str().unwrap_or("?"),
        process["shutdown"]["stdinEofToExitMs"]
    );

    let mismatches = &mut outcome.mismatches;
    if ok != Some(case.expect.ok) {
        mismatches.push(format!("ok: expected {}, got {ok:?}", case.expect.ok));
    }
    if let Some(want) = case.expect.frames_after_stdin_eof {
        let got = process["frames"]["afterStdinEof"].as_u64();
        if got != Some(want) {
            mismatches.push(format!(
                "frames after stdin EOF: expected {want}, got {got:?}"
            ));
        }
    }
    if ok.is_some() && ok != Some(exit_ok) {
        mismatches.push(format!(
            "exit status {} disagrees with \"ok\": {ok:?}",
            if exit_ok { 0 } else { 1 }
        ));
    }
    // Pair each expected issue with the first unclaimed actual issue it matches; what is left on
    // either side is the diff.
    let mut claimed = vec![false; issues.len()];
    for want in &case.expect.issues {
        let found = (0..issues.len()).find(|&i| !claimed[i] && issues[i].matches(want));
        match found {
            Some(i) => claimed[i] = true,
            None => mismatches.push(format!("- missing:    {}", describe_expected(want))),
        }
    }
    for (issue, _) in issues.iter().zip(&claimed).filter(|(_, c)| !**c) {
        mismatches.push(format!("+ unexpected: {}", issue.describe()));
    }
}

fn jobs() -> usize {
    std::env::var("MCP_GUARD_SDK_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .filter(|&j| j > 0)
        .unwrap_or(DEFAULT_JOBS)
}

/// Rough cost of a case, to start the slow ones first: a Python SDK server needs far more CPU
/// than a Node one, a case with extra flags (adversarial probes, a rerun) starts more
/// processes, and a long quiet window keeps a worker busy.
fn cost(case: &Case, defaults: &Defaults) -> u64 {
    let python = case.command.iter().any(|a| a.contains("{python}"));
    let has = |flag: &str| case.args.iter().any(|a| a == flag);
    let processes = if has("--adversarial-probes") {
        10
    } else if has("--unbuffered-rerun") {
        2
    } else {
        1
    };
    u64::from(python) * 10_000 * processes
        + (processes - 1) * 1_000
        + case.quiet_ms.unwrap_or(defaults.quiet_ms)
}

/// Runs `work` over `items` on `jobs` threads, taking them in `order`; results come back in
/// `items` order.
fn parallel<T: Sync, R: Send>(
    items: &[T],
    order: &[usize],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = Mutex::new(order.iter());
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(items.len()) {
            scope.spawn(|| {
                loop {
                    let Some(&index) = next.lock().unwrap().next() else {
                        break;
                    };
                    let result = work(&items[index]);
                    results.lock().unwrap()[index] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every item was processed"))
        .collect()
}

// ---------------------------------------------------------------------------------------- tests

#[test]
fn sdk_servers_get_exactly_the_expected_verdict() {
    let Some(deps) = test_deps("sdk_servers_get_exactly_the_expected_verdict") else {
        return;
    };
    let mut file = load_cases();
    // `MCP_GUARD_SDK_CASES=trace,banner`: only the cases whose name contains one of the words
    // (while working on a few; said loudly, since the rest is then not run).
    if let Ok(only) = std::env::var("MCP_GUARD_SDK_CASES") {
        let words: Vec<&str> = only.split(',').filter(|w| !w.is_empty()).collect();
        file.cases
            .retain(|c| words.iter().any(|w| c.name.contains(w)));
        loud(&format!(
            "\n**** MCP_GUARD_SDK_CASES={only}: only {} SDK cases run ****\n",
            file.cases.len()
        ));
    }
    let _turn = one_at_a_time();
    let started = Instant::now();
    let mut order: Vec<usize> = (0..file.cases.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cost(&file.cases[i], &file.defaults)));
    let outcomes = parallel(&file.cases, &order, jobs(), |case| {
        let outcome = run_case(case, &file.defaults, &deps);
        eprintln!(
            "sdk case {:<28} {:>5.1}s {} {}",
            outcome.name,
            outcome.elapsed.as_secs_f64(),
            if outcome.mismatches.is_empty() {
                "as expected"
            } else {
                "MISMATCH"
            },
            outcome.summary
        );
        outcome
    });

    let failed: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| !o.mismatches.is_empty())
        .collect();
    loud(&format!(
        "sdk cases: {} of {} as expected in {:.1}s ({} jobs)",
        outcomes.len() - failed.len(),
        outcomes.len(),
        started.elapsed().as_secs_f64(),
        jobs()
    ));
    if !failed.is_empty() {
        let mut report = String::new();
        for outcome in &failed {
            writeln!(report, "\ncase {} ({})", outcome.name, outcome.summary).unwrap();
            for line in &outcome.mismatches {
                writeln!(report, "    {line}").unwrap();
            }
            writeln!(report, "    reproduce: {}", outcome.repro).unwrap();
        }
        panic!(
            "{} of {} SDK server cases did not get the expected verdict (tests/sdk/cases.json):{report}",
            failed.len(),
            outcomes.len()
        );
    }
}

/// Every frame the passing SDK servers send, replayed by a scripted client, validates against
/// the official MCP schema of the negotiated revision (`tests/schemas/mcp/<revision>/schema.json`,
/// vendored): the servers the guard passes really are clean.
#[test]
fn sdk_server_frames_validate_against_the_mcp_schema() {
    let Some(deps) = test_deps("sdk_server_frames_validate_against_the_mcp_schema") else {
        return;
    };
    // The official MCP schemas, vendored (tests/schemas/mcp/README.md: origin and licence).
    let schema_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/mcp");
    let _turn = one_at_a_time();
    let output = Command::new(&deps.python)
        .current_dir(sdk_dir())
        .arg("validate_frames.py")
        .arg("--schemas")
        .arg(&schema_dir)
        .arg("--jobs")
        .arg(jobs().to_string())
        .env("MCP_GUARD_TEST_DEPS", &deps.root)
        .output()
        .expect("run tests/sdk/validate_frames.py");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprint!("{stderr}");
    assert!(
        output.status.success(),
        "frames of SDK servers do not validate against {}:\n{stdout}",
        schema_dir.display()
    );
    assert!(
        stdout.contains(" frames valid"),
        "validate_frames.py validated nothing:\n{stdout}"
    );
    eprint!("{stdout}");
    if let Some(total) = stdout.lines().find(|l| l.starts_with("validate_frames:")) {
        loud(total);
    }
}
