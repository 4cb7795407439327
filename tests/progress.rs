//! The progress display of a run of several servers: drawn on stderr when stderr is a terminal (a
//! real pseudo-terminal here, from `openpty`), ending with one line per server, failures first;
//! absent when stderr is a pipe or `CI` is set, where stderr gets nothing of it.
// Unix: pseudo-terminals and the fixture servers.
#![cfg(unix)]

mod support;

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::*;

fn registry() -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("mcp-guard-progress-{}.jsonl", std::process::id()));
    let line = |name: &str, script: &str| {
        serde_json::json!({
            "name": name,
            "command": ["python3", repo().join(script).display().to_string()],
            "timeoutMs": 20000,
            "quietMs": 200,
        })
        .to_string()
    };
    let text = [
        line("hello", "examples/hello-server/server.py"),
        line("banner", "tests/fixtures/servers/banner.py"),
        line("clean", "tests/fixtures/servers/clean.py"),
    ]
    .join("\n");
    std::fs::write(&path, text + "\n").unwrap();
    path
}

/// Runs the guard over the registry with stderr on `stderr` and returns what it wrote there
/// (read from `read`, the terminal's master side or the pipe) and its exit code.
fn run(stderr: Stdio, mut read: impl Read + Send + 'static, ci: bool) -> (String, Option<i32>) {
    let reg = registry();
    let mut cmd = Command::new(GUARD);
    cmd.args(["--registry", reg.to_str().unwrap(), "--jobs", "2"])
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .env("COLUMNS", "100");
    for k in ["CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"] {
        cmd.env_remove(k);
    }
    if ci {
        cmd.env("CI", "true");
    }
    let mut child = cmd.spawn().expect("spawn the guard");
    drop(cmd); // the parent's copy of the terminal's slave side: EOF once the guard exits
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        // A terminal's master side ends with EIO when the last slave closes.
        while let Ok(n) = read.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&out).into_owned()
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the guard hangs"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = std::fs::remove_file(&reg);
    (reader.join().unwrap(), status.code())
}

fn on_terminal(ci: bool) -> (String, Option<i32>) {
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let master: OwnedFd = pty.master;
    let slave: OwnedFd = pty.slave;
    assert!(nix::unistd::isatty(&slave).unwrap());
    run(Stdio::from(slave), std::fs::File::from(master), ci)
}

#[test]
fn progress_is_drawn_on_a_terminal_and_ends_with_one_line_per_server() {
    let (text, code) = on_terminal(false);
    assert_eq!(code, Some(1), "{text}");
    // The status line, redrawn in place.
    assert!(
        text.contains("\r[0/3]") || text.contains("\r[1/3]"),
        "no status line: {text:?}"
    );
    assert!(text.contains("running"), "{text:?}");
    assert!(
        text.contains("\x1b[K"),
        "the line is cleared as it is redrawn"
    );
    // The table: failures first, then the others in registry order.
    let table: Vec<&str> = text
        .lines()
        .map(|l| l.trim_start_matches('\r').trim_end_matches('\r'))
        .map(|l| l.rsplit('\r').next().unwrap())
        .map(|l| l.trim_start_matches("\x1b[K"))
        .filter(|l| l.starts_with("FAIL  ") || l.starts_with("PASS  ") || l.starts_with("WARN  "))
        .collect();
    assert_eq!(table.len(), 3, "{text:?}");
    assert!(table[0].starts_with("FAIL  banner: 1 error"), "{table:?}");
    assert!(
        table[1].starts_with("PASS  hello") && table[2].starts_with("PASS  clean"),
        "{table:?}"
    );
    assert!(text.contains("3 servers: 1 failed, 2 passed"), "{text:?}");
}

#[test]
fn no_progress_when_piped_or_under_ci() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    let (text, code) = run(Stdio::from(writer), reader, false);
    assert_eq!(code, Some(1));
    assert!(
        !text.contains("running") && !text.contains('\r'),
        "progress on a pipe: {text:?}"
    );
    assert!(!text.contains("3 servers"), "{text:?}");
    let (text, code) = on_terminal(true);
    assert_eq!(code, Some(1));
    assert!(
        !text.contains("running") && !text.contains("3 servers"),
        "progress under CI: {text:?}"
    );
}
