//! Many servers in one run (`--registry`, several `--config`/`--mcp-config`, `--jobs`), end to
//! end through the binary: every server gets its own section in one combined report, a hang or a
//! flood in one server never leaks into another's section, names stay distinct, and every bad
//! input is a one-line usage error (exit 2) before anything is spawned.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::*;

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("guard-scale-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, rel: &str, text: &str) -> String {
        let path = self.0.join(rel);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
    let s = Scratch::new("registry");
    let registry = s.write(
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

#[test]
fn several_config_files_are_several_servers_with_distinct_names() {
    let s = Scratch::new("configs");
    let hello = json!({"command": ["python3", script("examples/hello-server/server.py")]});
    let a = s.write("a.json", &hello.to_string());
    let b = s.write("b.json", &hello.to_string());
    let c = s.write(
        "c.json",
        &json!({"command": ["python3", script("examples/noisy-server/server.py")], "profile": "smoke"})
            .to_string(),
    );
    let r = run(&["--config", &a, "--config", &b, "--config", &c, "--json"]);
    assert_eq!(r.status, Some(1), "{}", r.stderr);
    let v = r.json();
    let names: Vec<String> = sections(&v).into_iter().map(|s| s.0).collect();
    assert_eq!(names, [a.clone(), b.clone(), c.clone()]);
    assert_eq!(v["servers"][2]["fingerprint"]["profile"], json!("smoke"));
    assert_eq!(v["servers"][0]["fingerprint"]["profile"], json!("custom"));

    // The same client config twice: duplicate names are numbered, never merged.
    let mcp = s.write(
        "mcp.json",
        &json!({"mcpServers": {"hello": {"command": "python3", "args": [script("examples/hello-server/server.py")]}}})
            .to_string(),
    );
    let r = run(&[
        "--mcp-config",
        &mcp,
        "--mcp-config",
        &mcp,
        "--json",
        "--jobs",
        "2",
    ]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    let names: Vec<String> = sections(&r.json()).into_iter().map(|s| s.0).collect();
    assert_eq!(names, ["hello #1", "hello #2"]);
}

#[test]
fn bad_registry_input_is_a_one_line_error_and_nothing_is_spawned() {
    let s = Scratch::new("bad");
    let marker = s.0.join("spawned");
    let touch = json!(["sh", "-c", format!("touch {}", marker.display())]);
    let good = json!({"name": "t", "command": touch}).to_string();
    let cases: [(&str, String, &str); 6] = [
        (
            "broken.jsonl",
            format!("{good}\n{{\"command\": [\n"),
            "broken.jsonl:2: not valid JSON",
        ),
        (
            "array.jsonl",
            format!("{good}\n[1]\n"),
            "array.jsonl:2: each line must be a JSON object",
        ),
        (
            "nocmd.jsonl",
            "{\"timeoutMs\": 100}\n".into(),
            "nocmd.jsonl:1: no \"command\"",
        ),
        (
            "typo.jsonl",
            format!("{good}\n{{\"comand\": [\"x\"]}}\n"),
            "unknown key \"comand\"",
        ),
        ("empty.jsonl", "\n\n".into(), "has no entries"),
        (
            "name.jsonl",
            "{\"name\": 5, \"command\": [\"sh\"]}\n".into(),
            "\"name\" must be a non-empty string",
        ),
    ];
    for (file, text, needle) in &cases {
        let path = s.write(file, text);
        usage_error(&["--registry", &path], needle);
        assert!(!marker.exists(), "{file}: the command ran");
    }
    let path = s.write("ok.jsonl", &format!("{good}\n"));
    usage_error(
        &["--registry", "no-such-list.jsonl"],
        "cannot read registry list",
    );
    usage_error(
        &["--registry", &path, "--jobs", "0"],
        "--jobs 0 is out of range",
    );
    usage_error(
        &["--registry", &path, "--", "python3", "x.py"],
        "do not combine it with several",
    );
    std::fs::write(s.0.join("latin1.jsonl"), b"{\"name\": \"caf\xe9\"}\n").unwrap();
    usage_error(
        &[
            "--registry",
            &s.0.join("latin1.jsonl").display().to_string(),
        ],
        "is not UTF-8",
    );
    assert!(!marker.exists());
    let _ = Path::new(&path);
}
