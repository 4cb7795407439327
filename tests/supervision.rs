//! The guard as a supervisor: interrupted itself, it kills everything of the server under test
//! and reports what it had judged, marked partial, instead of a half report or nothing.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

/// The guard on a fixture server, held in its 60 s quiet window so a test can interrupt it; the
/// server carries `marker` in its environment.
fn guard_held_open(extra: &[&str], marker: &str, server: &str) -> std::process::Child {
    Command::new(GUARD)
        .args(extra)
        .args(["--quiet-ms", "60000", "--env", marker, "--", "python3"])
        .arg(format!("tests/fixtures/servers/{server}"))
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn sigterm_to_the_guard_kills_the_server_and_its_children() {
    let marker = format!("GUARD_CASE=interrupted-{}", std::process::id());
    let child = guard_held_open(&[], &marker, "child_holds_stdout.py");
    // Wait until the server and its `sleep` child are up.
    let start = Instant::now();
    while processes_with_env(&marker).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the server never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    nix_kill(child.id(), 15);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143));
    // No half report: the server was not judged, and the report says so.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        "INTERRUPTED interrupted by signal 15: 0 of 1 server judged, this report is partial\n  not judged: python3 tests/fixtures/servers/child_holds_stdout.py",
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted by signal 15"));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        processes_with_env(&marker),
        vec![],
        "processes survived the guard"
    );
}

fn nix_kill(pid: u32, sig: i32) {
    let status = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn sigterm_to_the_guard_deletes_the_effects_log_of_the_run() {
    let marker = format!("GUARD_CASE=interrupted-effects-{}", std::process::id());
    let child = guard_held_open(&["--effects"], &marker, "clean.py");
    let start = Instant::now();
    let log = loop {
        let found = processes_with_env(&marker)
            .into_iter()
            .find_map(|(pid, _)| {
                let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
                env.split(|b| *b == 0).find_map(|kv| {
                    let kv = String::from_utf8_lossy(kv);
                    kv.strip_prefix("MCP_STDIO_GUARD_EFFECTS=")
                        .map(std::path::PathBuf::from)
                })
            });
        if let Some(path) = found {
            break path;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the server never started with an effects log"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(log.exists(), "{} was not created", log.display());
    nix_kill(child.id(), 15);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted by signal 15"));
    assert!(!log.exists(), "{} survived the guard", log.display());
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(processes_with_env(&marker), vec![]);
}

/// A registry run interrupted part-way: the servers judged before the signal are reported (in
/// every report file), marked partial, with the names of the others; nothing is left running.
#[test]
fn an_interrupted_registry_run_reports_the_servers_already_judged() {
    let pid = std::process::id();
    let dir = std::env::temp_dir().join(format!("guard-partial-{pid}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fast = [
        format!("GUARD_PARTIAL_FIRST={pid}"),
        format!("GUARD_PARTIAL_SECOND={pid}"),
    ];
    let held = format!("GUARD_PARTIAL_HELD={pid}");
    let clean = repo().join("examples/hello-server/server.py");
    let entry = |name: &str, marker: &str, quiet: u64| {
        let (key, value) = marker.split_once('=').unwrap();
        serde_json::json!({"name": name, "command": ["python3", clean.display().to_string()],
            "env": {key: value}, "quietMs": quiet})
        .to_string()
    };
    let registry = dir.join("servers.jsonl");
    std::fs::write(
        &registry,
        [
            entry("first", &fast[0], 1),
            entry("held", &held, 60_000),
            entry("second", &fast[1], 1),
        ]
        .join("\n"),
    )
    .unwrap();
    let (json, sarif, junit) = (
        dir.join("report.json"),
        dir.join("report.sarif"),
        dir.join("report.xml"),
    );
    let child = Command::new(GUARD)
        .args(["--jobs", "3", "--json", "--registry"])
        .arg(&registry)
        .arg("--sarif")
        .arg(&sarif)
        .arg("--junit")
        .arg(&junit)
        .arg("--json-file")
        .arg(&json)
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The held server is in its quiet window and both fast ones came and went: judged. (Starts
    // are paced on a busy machine, so the fast ones may start before or after the held one.)
    let servers = |marker: &str| -> Vec<i32> {
        processes_with_env(marker)
            .into_iter()
            .filter(|(_, argv)| argv.contains("server.py"))
            .map(|(pid, _)| pid)
            .collect()
    };
    let start = Instant::now();
    // Each fast server's process (the pyenv shim forks copies of its argv: seen is per server).
    let mut fast_seen = [false, false];
    loop {
        let mut fast_alive = false;
        for (n, marker) in fast.iter().enumerate() {
            let alive = !servers(marker).is_empty();
            fast_seen[n] |= alive;
            fast_alive |= alive;
        }
        let done = !servers(&held).is_empty() && !fast_alive && fast_seen == [true, true];
        if done {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the servers never reached the held state"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Their reports are built within milliseconds of their exit; leave room for a loaded machine.
    std::thread::sleep(Duration::from_secs(3));
    nix_kill(child.id(), 2);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(
        report["partial"],
        serde_json::json!({"signal": 2, "exitCode": 130, "total": 3, "judged": 2, "notJudged": ["held"]}),
        "seen {fast_seen:?}; stderr {}; report {report}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report["ok"], false);
    // The partial report honours the JSON contract users validate against.
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("docs/report.schema.json")).unwrap(),
    )
    .unwrap();
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(&report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let names: Vec<&str> = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["first", "second"], "in the order of the list");
    for s in report["servers"].as_array().unwrap() {
        assert_eq!(s["ok"], true, "{s}");
    }
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(file["partial"], report["partial"]);
    let sarif: serde_json::Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert_eq!(invocation["exitCode"], 130);
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(
        junit.contains("name=\"held\"") && junit.contains("type=\"interrupted\""),
        "{junit}"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        processes_with_env(&held),
        vec![],
        "the held server survived"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
