//! The guard as a supervisor: interrupted itself, it kills everything of the server under test
//! and writes no half report.

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

#[test]
fn sigterm_to_the_guard_kills_the_server_and_its_children() {
    let marker = format!("GUARD_CASE=interrupted-{}", std::process::id());
    let child = Command::new(GUARD)
        .args([
            "--quiet-ms",
            "60000",
            "--env",
            &marker,
            "--",
            "python3",
            "tests/fixtures/servers/child_holds_stdout.py",
        ])
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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
