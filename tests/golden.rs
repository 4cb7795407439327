//! Golden files for the text and JSON reports of a few representative runs, and for the
//! generated docs/rules.md. `UPDATE_GOLDEN=1 cargo test --test golden` regenerates them.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use std::time::Duration;
use support::*;

/// (golden name, guard args before `--`, server command relative to the repo)
const CASES: &[(&str, &[&str], &[&str])] = &[
    (
        "hello-server",
        &["--request", "tools/list"],
        &["python3", "examples/hello-server/server.py"],
    ),
    (
        "noisy-server",
        &["--request", "tools/list"],
        &["python3", "examples/noisy-server/server.py"],
    ),
    (
        // The crash races the first capability probe; without probes the verdict is exact. A
        // long quiet window costs nothing (it ends at the exit) and keeps a loaded machine from
        // closing stdin before the crash.
        "crash-after-initialized",
        &["--no-capability-probes", "--quiet-ms", "5000"],
        &[
            "python3",
            "tests/fixtures/servers/crash_after_initialized.py",
        ],
    ),
    (
        "ignores-eof",
        &[],
        &["python3", "tests/fixtures/servers/ignores_eof.py"],
    ),
    (
        "pretty-printed",
        &[],
        &["python3", "tests/fixtures/servers/pretty_printed.py"],
    ),
    (
        "invalid-utf8",
        &[],
        &["python3", "tests/fixtures/servers/invalid_utf8.py"],
    ),
    (
        "bad-interpreter",
        &[],
        &["tests/fixtures/servers/bad_interpreter.py"],
    ),
    (
        // The adversarial block and its text lines: a server that prints its parse errors.
        "adversarial-pollute",
        &[
            "--no-capability-probes",
            "--adversarial-probes",
            "invalid-method,malformed-json,boolean-id,crlf",
        ],
        &["python3", "tests/fixtures/servers/hostile.py", "pollute"],
    ),
];

#[test]
fn reports_match_their_golden_files() {
    let handles: Vec<_> = CASES
        .iter()
        .flat_map(|(name, args, command)| {
            ["text", "json"].into_iter().map(move |format| {
                std::thread::spawn(move || {
                    // A long timeout: a slow start on a loaded machine must not change the report.
                    let mut full: Vec<String> = [
                        "--timeout",
                        "20000",
                        "--quiet-ms",
                        "300",
                        "--shutdown-grace",
                        "1000",
                        "--format",
                        format,
                    ]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                    full.extend(args.iter().map(|s| s.to_string()));
                    full.push("--".into());
                    full.extend(command.iter().map(|s| s.to_string()));
                    let run = guard(&full, &repo(), &[], &[], Duration::from_secs(60));
                    let actual = if format == "json" {
                        let mut v = run.json();
                        normalize_json(&mut v);
                        serde_json::to_string_pretty(&v).unwrap() + "\n"
                    } else {
                        normalize_text(&run.stdout)
                    };
                    let ext = if format == "json" { "json" } else { "txt" };
                    check_golden(
                        &repo().join(format!("tests/golden/runtime/{name}.{ext}")),
                        &actual,
                    )
                })
            })
        })
        .collect();
    let failures: Vec<String> = handles
        .into_iter()
        .filter_map(|h| h.join().unwrap().err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn docs_rules_md_is_generated_from_the_catalogue() {
    let actual = mcp_stdio_guard::report::explain::rules_markdown();
    if let Err(e) = check_golden(&repo().join("docs/rules.md"), &actual) {
        panic!("docs/rules.md is stale: {e}");
    }
}

#[test]
fn explain_prints_every_code_and_rejects_unknown_ones() {
    for rule in mcp_stdio_guard::catalog::all() {
        let run = guard(
            &["explain".into(), rule.code.into()],
            &repo(),
            &[],
            &[],
            Duration::from_secs(10),
        );
        assert_eq!(run.status, Some(0), "{}", rule.code);
        for section in ["What it catches:", "Why it matters:", "Example:", "Fix:"] {
            assert!(run.stdout.contains(section), "{}: no {section}", rule.code);
        }
    }
    let run = guard(
        &["explain".into(), "no-such-code".into()],
        &repo(),
        &[],
        &[],
        Duration::from_secs(10),
    );
    assert_eq!(run.status, Some(2));
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}
