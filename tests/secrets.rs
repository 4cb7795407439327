//! Secret hygiene, end to end: a server that echoes every secret it was given (argv and env)
//! into stderr, stdout pollution, serverInfo, tool metadata, error messages and notifications is
//! checked in every output format at once; no byte of any canary may appear in any output, the
//! guard's own stderr, the `--transcript` and its replay included.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::json;
use std::time::Duration;
use support::*;

/// Every canary shares this prefix, so a truncated or partly redacted secret is caught too.
const PREFIX: &str = "cnry";

const ENV_FLAG: &str = "cnry-env-flag-5f1e9a";
const ENV_CONFIG: &str = "cnry-env-config-77b2c4";
const ARGV: [&str; 5] = [
    "--token",
    "cnry-argv-token-0c3d1e",
    "API_KEY=cnry-argv-kv-9a8b7c",
    "https://deploy:cnry-url-pass-4d5e6f@example.invalid/mcp",
    "--password=cnry-argv-eq-1a2b3c",
];

/// Every place a canary could leak: (what, text). Each run also writes the SARIF, JUnit and
/// JSON files and, as under GitHub Actions, annotations and the step summary.
fn outputs(format: &str, dir: &std::path::Path) -> Vec<(String, String)> {
    let file = |ext: &str| dir.join(format!("{format}.{ext}"));
    let leaky = repo().join("tests/fixtures/servers/leaky.py");
    let mut command = vec![json!("python3"), json!(leaky.display().to_string())];
    command.extend(ARGV.iter().map(|a| json!(a)));
    let config = dir.join(format!("{format}.guard.json"));
    std::fs::write(
        &config,
        json!({"command": command, "env": {"CANARY_CFG": ENV_CONFIG}}).to_string(),
    )
    .unwrap();
    let args: Vec<String> = [
        "--config",
        config.to_str().unwrap(),
        "--env",
        &format!("CANARY_FLAG={ENV_FLAG}"),
        "--format",
        format,
        "--request",
        "ping",
        "--request",
        "tools/call",
        "--params",
        r#"{"name": "x", "arguments": {}}"#,
        "--adversarial-probes",
        "invalid-method,malformed-json,debug-line",
        "--unbuffered-rerun",
        "--quiet-ms",
        "300",
        "--shutdown-grace",
        "1000",
        "--sarif",
        file("sarif").to_str().unwrap(),
        "--junit",
        file("xml").to_str().unwrap(),
        "--json-file",
        file("json").to_str().unwrap(),
        "--transcript",
        file("jsonl").to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let summary = file("summary.md");
    let github = [
        ("GITHUB_ACTIONS".to_string(), "true".to_string()),
        (
            "GITHUB_STEP_SUMMARY".to_string(),
            summary.display().to_string(),
        ),
    ];
    let r = guard(&args, &repo(), &github, &[], Duration::from_secs(180));
    assert_eq!(
        r.status,
        Some(1),
        "{format}: the leaky server fails: {}",
        r.stderr
    );
    let mut out = vec![
        (format!("{format} stdout"), r.stdout),
        (format!("{format} stderr"), r.stderr),
    ];
    for path in [
        file("sarif"),
        file("xml"),
        file("json"),
        file("jsonl"),
        summary,
    ] {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{format}: {} was not written: {e}", path.display()));
        out.push((path.display().to_string(), text));
    }
    // The transcript holds the server's own bytes (it echoes its secrets); so does its replay.
    let replay = guard(
        &["replay".to_string(), file("jsonl").display().to_string()],
        &repo(),
        &[],
        &[],
        Duration::from_secs(60),
    );
    out.push((format!("{format} replay"), replay.stdout));
    out
}

#[test]
fn no_canary_secret_reaches_any_output() {
    let scratch = Scratch::new("secrets");
    let dir = scratch.0.clone();
    let all: Vec<(String, String)> = std::thread::scope(|s| {
        let runs: Vec<_> = ["text", "json", "sarif", "junit", "github"]
            .map(|format| {
                let dir = &dir;
                s.spawn(move || outputs(format, dir))
            })
            .into_iter()
            .collect();
        runs.into_iter()
            .flat_map(|r| r.join().expect("a run panicked"))
            .collect()
    });
    assert_eq!(all.len(), 5 * 8);
    // The run really saw the secrets: the server echoed them, so the report quotes its output.
    let text = &all[0].1;
    assert!(text.contains("<redacted>"), "nothing was redacted:\n{text}");
    for (what, out) in &all {
        assert!(
            !out.is_empty() || what.ends_with("stderr"),
            "{what} is empty"
        );
        if let Some(at) = out.find(PREFIX) {
            let from = at.saturating_sub(120);
            panic!(
                "{what} leaks a canary secret: …{}…",
                &out[from..(at + 60).min(out.len())]
            );
        }
    }
}
