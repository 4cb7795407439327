//! Config files (`--config`), client configs (`--mcp-config`), profiles and `--protocol all`,
//! end to end through the binary: every field reaches the run, every bad input is a one-line
//! usage error (exit 2) before anything is spawned, and a client config with several servers
//! gives one report with a section per server.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::*;

/// A scratch folder for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("guard-cfg-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn hello() -> String {
    repo()
        .join("examples/hello-server/server.py")
        .display()
        .to_string()
}

fn fixture(name: &str) -> String {
    repo()
        .join("tests/fixtures/servers")
        .join(name)
        .display()
        .to_string()
}

/// Fast windows for every run of this file.
fn fast(args: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = ["--quiet-ms", "200", "--shutdown-grace", "1000"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.extend(args.iter().map(|s| s.to_string()));
    all
}

fn run(args: &[&str], cwd: &Path) -> Run {
    guard(&fast(args), cwd, &[], &[], Duration::from_secs(90))
}

fn usage_error(args: &[&str], cwd: &Path, needle: &str) {
    let r = run(args, cwd);
    assert_eq!(r.status, Some(2), "{args:?}: {}", r.stderr);
    assert_eq!(r.stdout, "", "nothing on stdout for a usage error");
    assert_eq!(r.stderr.lines().count(), 1, "one line: {}", r.stderr);
    assert!(r.stderr.contains(needle), "{:?} lacks {needle:?}", r.stderr);
}

#[test]
fn bad_config_files_are_one_line_errors_and_nothing_is_spawned() {
    let s = Scratch::new("bad");
    let marker = s.0.join("spawned");
    let touch = json!(["sh", "-c", format!("touch {}", marker.display())]);
    let cases = [
        (
            json!({"command": touch, "comand": ["node"]}),
            "unknown key \"comand\"",
        ),
        (
            json!({"command": ["definitely-not-a-command-xyz"]}),
            "command not found",
        ),
        (
            json!({"command": touch, "cwd": "missing-dir"}),
            "config cwd",
        ),
        (
            json!({"command": touch, "protocol": "1999-01-01"}),
            "not a supported revision",
        ),
        (
            json!({"command": touch, "profile": "fast"}),
            "profile \"fast\" is unknown",
        ),
        (
            json!({"command": touch, "timeoutMs": "5s"}),
            "\"timeoutMs\" is a string",
        ),
        (
            json!({"command": touch, "scan": "no-such-src"}),
            "scan path",
        ),
        (
            json!({"command": touch, "env": {"PORT": 80}}),
            "env\".PORT is a number",
        ),
        (
            json!({"command": touch, "adversarialProbes": ["fuzz"]}),
            "adversarial probe \"fuzz\"",
        ),
        (
            json!({"command": touch, "requests": [{"method": ""}]}),
            "empty method",
        ),
    ];
    for (config, needle) in cases {
        let path = s.write("guard.json", &config.to_string());
        usage_error(&["--config", path.to_str().unwrap()], &repo(), needle);
        assert!(!marker.exists(), "{config}: the command ran");
    }
    usage_error(
        &["--config", "no-such-config.json"],
        &repo(),
        "cannot read config file",
    );
    let path = s.write("broken.json", "{\"command\": [");
    usage_error(
        &["--config", path.to_str().unwrap()],
        &repo(),
        "not valid JSON",
    );
}

#[test]
fn a_relative_cwd_resolves_against_the_config_file() {
    let s = Scratch::new("cwd");
    std::fs::create_dir_all(s.0.join("cfg/srv")).unwrap();
    std::fs::copy(hello(), s.0.join("cfg/srv/server.py")).unwrap();
    let config = s.write(
        "cfg/guard.json",
        &json!({"command": ["python3", "server.py"], "cwd": "srv", "json": true}).to_string(),
    );
    // Run from elsewhere: `server.py` is only found through the config's cwd.
    let r = run(&["--config", config.to_str().unwrap()], &repo());
    assert_eq!(r.status, Some(0), "{}", r.stdout);
    let v = r.json();
    let srv = s.0.join("cfg/srv").display().to_string();
    assert_eq!(v["fingerprint"]["cwd"]["resolved"], json!(srv));
    assert_eq!(v["config"]["enabled"], json!(true));
    assert_eq!(
        v["config"]["resolvedPath"],
        json!(config.display().to_string())
    );
    assert_eq!(v["config"]["checks"]["command"], json!(true));
    assert_eq!(v["config"]["checks"]["cwd"], json!(true));
}

#[test]
fn every_config_field_reaches_the_run() {
    let s = Scratch::new("fields");
    let secret = "s3cret-token-value-4242";
    s.write(
        "server.py",
        &format!(
            "import os, runpy, sys\nprint('token is ' + os.environ['API_TOKEN'], file=sys.stderr)\nsys.argv = ['server.py']\nrunpy.run_path({:?}, run_name='__main__')\n",
            hello()
        ),
    );
    std::fs::create_dir_all(s.0.join("src")).unwrap();
    let config = s.write(
        "guard.json",
        &json!({
            "profile": "registry",
            "command": "python3",
            "args": ["server.py"],
            "cwd": ".",
            "json": true,
            "env": {"API_TOKEN": secret},
            "protocol": "2025-06-18",
            "timeoutMs": 4000,
            "maxStdoutBytes": 5_000_000,
            "maxStdoutLineBytes": 100_000,
            "maxStderrBytes": 50_000,
            "scan": "src",
            "failOnStatic": false,
            "request": {"method": "tools/list"},
            "requests": [{"method": "ping"}],
            "safeToolCalls": [{"name": "echo", "arguments": {"text": "hi"}}],
            "adversarialProbes": ["invalid-method"],
            "adversarialToolCalls": [{"name": "echo", "arguments": {"unexpected": true}}],
            "effects": true
        })
        .to_string(),
    );
    let r = run(&["--config", config.to_str().unwrap()], &repo());
    assert_eq!(r.status, Some(0), "{}", r.stdout);
    assert!(
        !r.stdout.contains(secret),
        "the env value leaked into the report"
    );
    let v = r.json();
    assert_eq!(v["profile"], json!("registry"));
    assert_eq!(
        v["runs"].as_array().map(Vec::len),
        Some(2),
        "registry repeats twice"
    );
    assert_eq!(v["protocol"], json!("2025-06-18"));
    assert_eq!(v["negotiatedProtocol"], json!("2025-06-18"));
    let fp = &v["fingerprint"];
    assert_eq!(fp["timeoutMs"], json!(4000));
    assert_eq!(fp["repeat"], json!(2));
    assert_eq!(fp["env"]["names"], json!(["API_TOKEN"]));
    assert_eq!(fp["env"]["values"]["API_TOKEN"], json!("<redacted>"));
    assert_eq!(fp["command"]["argv"], json!(["python3", "server.py"]));
    assert!(
        fp["runtimes"]["python"]["version"].is_string(),
        "{}",
        fp["runtimes"]
    );
    assert!(
        v["stderr"]
            .as_str()
            .unwrap()
            .contains("token is <redacted>")
    );
    let out = &v["process"]["output"];
    assert_eq!(out["maxStdoutBytes"], json!(5_000_000));
    assert_eq!(out["maxStdoutLineBytes"], json!(100_000));
    assert_eq!(out["maxStderrBytes"], json!(50_000));
    let ops: Vec<(String, String, String)> = v["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["method"].as_str().unwrap().to_string(),
                o["source"].as_str().unwrap().to_string(),
                o["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        ops,
        [
            (
                "tools/list".into(),
                "config-request".into(),
                "responded".into()
            ),
            ("ping".into(), "config-request".into(), "responded".into()),
            (
                "tools/call".into(),
                "safe-tool-call".into(),
                "responded".into()
            ),
        ]
    );
    assert_eq!(v["operations"][2]["safeToolCallName"], json!("echo"));
    let probes: Vec<&str> = v["adversarial"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    // The safe tool `echo` also gets the invalid arguments its inputSchema implies.
    assert_eq!(
        probes,
        [
            "invalid-method",
            "invalid-arguments:echo:missing-text",
            "invalid-arguments:echo:text-wrong-type",
            "tool-call:echo"
        ]
    );
    assert_eq!(v["adversarial"]["status"], json!("pass"));
    assert_eq!(v["effects"]["enabled"], json!(true));
    assert_eq!(v["checks"]["effects"]["status"], json!("pass"));
    let checks = &v["config"]["checks"];
    assert_eq!(checks["envNames"], json!(["API_TOKEN"]));
    assert_eq!(checks["requests"], json!(["tools/list", "ping"]));
    assert_eq!(checks["safeToolCalls"], json!(["echo"]));
    assert_eq!(checks["adversarialProbes"], json!(["invalid-method"]));
    assert_eq!(checks["adversarialToolCalls"], json!(["echo"]));
    assert_eq!(v["staticScan"]["enabled"], json!(true));
    assert_eq!(
        v["staticScan"]["path"],
        json!(s.0.join("src").display().to_string())
    );
    assert_eq!(v["staticScan"]["failOnFindings"], json!(false));
}

#[test]
fn flags_override_the_config_and_the_profile() {
    let s = Scratch::new("override");
    let config = s.write(
        "guard.json",
        &json!({"command": ["python3", hello()], "timeoutMs": 4000, "profile": "strict"})
            .to_string(),
    );
    let cfg = config.to_str().unwrap();
    // strict: JSON, two runs, every adversarial probe, static findings fail.
    let v = run(&["--config", cfg], &repo()).json();
    assert_eq!(v["fingerprint"]["repeat"], json!(2));
    assert_eq!(
        v["adversarial"]["probes"].as_array().map(Vec::len),
        Some(14)
    );
    assert_eq!(v["adversarial"]["status"], json!("pass"), "{}", v["issues"]);
    assert!(v["buffering"]["rerun"]["mode"].is_string());
    assert_eq!(v["staticScan"]["failOnFindings"], json!(true));
    let v = run(
        &[
            "--config",
            cfg,
            "--timeout",
            "2500",
            "--repeat",
            "1",
            "--adversarial-probes",
            "none",
        ],
        &repo(),
    )
    .json();
    assert_eq!(v["fingerprint"]["timeoutMs"], json!(2500));
    assert_eq!(v["fingerprint"]["repeat"], json!(1));
    assert!(v.get("runs").is_none());
    assert_eq!(v["adversarial"]["probes"], json!([]));
    assert_eq!(v["profile"], json!("strict"));
    let r = run(
        &["--config", cfg, "--profile", "smoke", "--format", "text"],
        &repo(),
    );
    assert!(r.stdout.starts_with("PASS MCP stdio guard"), "{}", r.stdout);
    assert!(
        r.stdout.contains("capabilities: tools not probed"),
        "smoke skips the probes: {}",
        r.stdout
    );
    // An explicit flag deepens a profile.
    let v = run(
        &[
            "--config",
            cfg,
            "--profile",
            "smoke",
            "--capability-probes",
            "--json",
        ],
        &repo(),
    )
    .json();
    assert_eq!(v["profile"], json!("smoke"));
    assert_eq!(v["capabilityProbes"], json!(true));
    assert_eq!(v["capabilityChecks"]["tools"]["itemCount"], json!(1));
}

#[test]
fn an_mcp_servers_file_gives_one_report_with_a_section_per_server() {
    let s = Scratch::new("mcp");
    let file = s.write(
        "claude_desktop_config.json",
        &json!({"mcpServers": {
            "hello": {"command": "python3", "args": [hello()]},
            "noisy": {"command": "python3", "args": [repo().join("examples/noisy-server/server.py").display().to_string()]},
            "tools": {"command": "python3", "args": [fixture("tools_variant.py"), "clean"], "env": {"API_KEY": "k-123456789"}},
            "remote": {"url": "https://example.com/mcp"}
        }})
        .to_string(),
    );
    let path = file.to_str().unwrap();
    let r = run(&["--mcp-config", path, "--json"], &repo());
    assert_eq!(r.status, Some(1), "one server is broken: {}", r.stderr);
    assert!(
        r.stderr.contains("skipped server \"remote\""),
        "{}",
        r.stderr
    );
    let v = r.json();
    assert_eq!(v["ok"], json!(false));
    let servers = v["servers"].as_array().expect("servers[]");
    let verdicts: Vec<(String, bool)> = servers
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["ok"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("hello".into(), true),
            ("noisy".into(), false),
            ("tools".into(), true)
        ]
    );
    assert_eq!(
        servers[2]["fingerprint"]["env"]["names"],
        json!(["API_KEY"])
    );
    assert!(!r.stdout.contains("k-123456789"));
    assert_eq!(v["summary"]["status"], json!("fail"));
    assert!(
        v["issues"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["code"] == "stdout-non-json")
    );
    // Text: one section per server, named.
    let text = run(&["--mcp-config", path], &repo()).stdout;
    for header in [
        "PASS MCP stdio guard: hello",
        "FAIL MCP stdio guard: noisy",
        "PASS MCP stdio guard: tools",
    ] {
        assert!(text.contains(header), "{header} missing:\n{text}");
    }
    // One server by name.
    let r = run(
        &["--mcp-config", path, "--server", "hello", "--json"],
        &repo(),
    );
    assert_eq!(r.status, Some(0));
    assert!(r.json().get("servers").is_none());
    usage_error(
        &["--mcp-config", path, "--server", "nope"],
        &repo(),
        "choose one of hello, noisy, tools",
    );
    usage_error(
        &["--mcp-config", path, "--", "python3", "x.py"],
        &repo(),
        "do not also give a command",
    );
}

#[test]
fn a_vscode_mcp_json_resolves_the_workspace_folder() {
    let s = Scratch::new("vscode");
    std::fs::copy(hello(), s.0.join("server.py")).unwrap();
    let file = s.write(
        ".vscode/mcp.json",
        "{\n  // VS Code: JSONC\n  \"servers\": {\n    \"hello\": {\"type\": \"stdio\", \"command\": \"python3\", \"args\": [\"${workspaceFolder}/server.py\"]},\n    \"web\": {\"type\": \"http\", \"url\": \"http://localhost:1/mcp\"},\n  }\n}\n",
    );
    let r = run(&["--mcp-config", file.to_str().unwrap(), "--json"], &repo());
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("skipped server \"web\""), "{}", r.stderr);
    assert_eq!(r.json()["ok"], json!(true));
}

#[test]
fn protocol_all_checks_each_legacy_revision() {
    let r = run(
        &["--protocol", "all", "--json", "--", "python3", &hello()],
        &repo(),
    );
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    let v: Value = r.json();
    let negotiated: Vec<&str> = v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["negotiatedProtocol"].as_str().unwrap())
        .collect();
    assert_eq!(
        negotiated,
        ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    );
    assert!(
        v["servers"][0]["name"]
            .as_str()
            .unwrap()
            .ends_with("@ 2024-11-05")
    );
}
