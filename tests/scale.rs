//! Many servers in one run (`--registry`, `--jobs`), end to end through the binary: every server
//! gets its own section in one combined report, and a hang or a flood in one server never leaks
//! into another's section. Distinct names and the one-line errors of bad registry lists are case
//! files (`tests/cli/several_servers.json`, `tests/cli/registry_errors.json`).
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::*;

fn script(rel: &str) -> String {
    repo().join(rel).display().to_string()
}

fn fixture(name: &str) -> String {
    script(&format!("tests/fixtures/servers/{name}"))
}

fn lines(entries: &[Value]) -> String {
    entries
        .iter()
        .map(|e| e.to_string() + "\n")
        .collect::<String>()
}

fn run(args: &[&str]) -> Run {
    let mut all: Vec<String> = ["--quiet-ms", "200", "--shutdown-grace", "1000"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.extend(args.iter().map(|s| s.to_string()));
    guard(&all, &repo(), &[], &[], Duration::from_secs(180))
}

fn usage_error(args: &[&str], needle: &str) {
    let r = run(args);
    assert_eq!(r.status, Some(2), "{args:?}: {}", r.stderr);
    assert_eq!(r.stdout, "", "nothing on stdout for a usage error");
    assert_eq!(r.stderr.lines().count(), 1, "one line: {}", r.stderr);
    assert!(r.stderr.contains(needle), "{:?} lacks {needle:?}", r.stderr);
}

/// (name, ok, codes) of every server section, in report order.
fn sections(v: &Value) -> Vec<(String, bool, Vec<String>)> {
    v["servers"]
        .as_array()
        .unwrap_or_else(|| panic!("servers[] missing: {v}"))
        .iter()
        .map(|s| {
            let mut codes: Vec<String> = s["issues"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["severity"] != "note")
                .map(|i| i["code"].as_str().unwrap().to_string())
                .collect();
            codes.sort();
            codes.dedup();
            (
                s["name"].as_str().unwrap().to_string(),
                s["ok"].as_bool().unwrap(),
                codes,
            )
        })
        .collect()
}

#[test]
fn a_registry_list_gives_one_report_with_every_server_isolated() {
    let s = Scratch::new("scale-registry");
    let registry = s.file(
        "servers.jsonl",
        &(lines(&[
            json!({"name": "hello", "command": ["python3", script("examples/hello-server/server.py")]}),
            json!({"name": "hang", "command": ["python3", fixture("never_answers.py")], "timeoutMs": 2000}),
            json!({"name": "flood", "command": ["python3", fixture("flood.py")], "maxStdoutBytes": 100000}),
            json!({"command": ["python3", script("examples/noisy-server/server.py")]}),
            json!({"name": "missing", "command": ["definitely-not-a-command-xyz"]}),
            json!({"mcpServers": {
                "tools": {"command": "python3", "args": [fixture("tools_variant.py"), "clean"], "env": {"API_KEY": "k-registry-secret-1"}},
                "remote": {"url": "https://example.com/mcp"}
            }}),
        ]) + "\n"),
    );
    let r = run(&["--registry", &registry, "--jobs", "3", "--json"]);
    assert_eq!(r.status, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("skipped server \"remote\""),
        "{}",
        r.stderr
    );
    let v = r.json();
    let got = sections(&v);
    let noisy_label = format!("{registry}:4");
    let want: Vec<(String, bool, Vec<String>)> = vec![
        ("hello".into(), true, vec![]),
        ("hang".into(), false, vec!["initialize-timeout".into()]),
        (
            "flood".into(),
            false,
            vec![
                "stdout-non-json".into(),
                "stdout-output-limit-exceeded".into(),
            ],
        ),
        (noisy_label.clone(), false, vec!["stdout-non-json".into()]),
        ("missing".into(), false, vec!["spawn-failed".into()]),
        ("tools".into(), true, vec![]),
    ];
    assert_eq!(got, want, "{}", r.stdout);
    // Isolation: the flood's bytes appear only in its own section; the hang's timeout only in its.
    let servers = v["servers"].as_array().unwrap();
    for s in servers {
        let text = s.to_string();
        let name = s["name"].as_str().unwrap();
        assert_eq!(
            text.contains("progress 0123456789"),
            name == "flood",
            "{name}"
        );
        assert_eq!(
            text.contains("initialize-timeout"),
            name == "hang",
            "{name}"
        );
    }
    // Each server keeps its own settings (the hang's timeout, not the default).
    assert_eq!(
        servers[1]["fingerprint"]["timeoutMs"],
        json!(2000),
        "{}",
        servers[1]
    );
    assert!(!r.stdout.contains("k-registry-secret-1"));
    assert_eq!(v["summary"]["status"], json!("fail"));

    // --server picks by name across the list; the text report has a section per server.
    let r = run(&["--registry", &registry, "--server", "hello"]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("PASS MCP stdio guard"), "{}", r.stdout);
    assert!(!r.stdout.contains("noisy"), "{}", r.stdout);
    usage_error(
        &["--registry", &registry, "--server", "nope"],
        "--server \"nope\" names no server",
    );
}
