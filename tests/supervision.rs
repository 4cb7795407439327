//! The guard as a supervisor: interrupted itself, it kills everything of the server under test
//! and writes no half report.
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
    assert!(out.stdout.is_empty(), "no half report on stdout");
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
