//! Bad input to the guard itself that a case file cannot hold (the rest is `tests/cli/bad_input.json`,
//! run by `tests/cli_cases.rs`): paths with non-UTF-8 bytes and files the test user cannot read.
//! Each is exactly one line on stderr naming the problem, exit 2, nothing on stdout (no partial
//! report), nothing spawned, and never a hang or a panic. Also: a symlink loop, a FIFO and
//! non-UTF-8 file names inside a scanned tree are scanned normally.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{GUARD, Scratch};

struct Out {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs the guard in `cwd` with raw (possibly non-UTF-8) arguments; a hang past 30 s fails.
fn run(cwd: &Path, args: &[OsString]) -> Out {
    let mut child = Command::new(GUARD)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the guard hung on {args:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    Out {
        code: out.status.code(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn os(args: &[&[u8]]) -> Vec<OsString> {
    args.iter()
        .map(|a| OsStr::from_bytes(a).to_os_string())
        .collect()
}

/// Asserts the one-line usage error and that the server command (which touches `marker`) never
/// ran.
fn usage_error(cwd: &Path, args: &[&[u8]], needles: &[&str], marker: &Path) {
    let out = run(cwd, &os(args));
    let shown = String::from_utf8_lossy(&args.join(&b' ')).into_owned();
    assert_eq!(out.code, Some(2), "{shown}: {}", out.stderr);
    assert!(out.stdout.is_empty(), "{shown}: no report on stdout");
    assert_eq!(
        out.stderr.lines().count(),
        1,
        "{shown}: one line: {:?}",
        out.stderr
    );
    assert!(
        out.stderr.starts_with("mcp-stdio-guard: error: "),
        "{shown}: {:?}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{shown}: {}", out.stderr);
    for needle in needles {
        assert!(
            out.stderr.contains(needle),
            "{shown}: {:?} lacks {needle:?}",
            out.stderr
        );
    }
    assert!(!marker.exists(), "{shown}: the server command ran");
}

/// `first`, then the server command.
fn with<'a>(server: &[&'a [u8]], first: &[&'a [u8]]) -> Vec<&'a [u8]> {
    let mut all = first.to_vec();
    all.extend_from_slice(server);
    all
}

#[test]
fn non_utf8_paths_and_unreadable_files_are_one_line_errors() {
    let s = Scratch::new("bad-input");
    let marker = s.path("spawned");
    let touch = format!("touch {}", marker.display());
    let server: [&[u8]; 4] = [b"--", b"sh", b"-c", touch.as_bytes()];
    let mut bad_name = s.0.as_os_str().as_bytes().to_vec();
    bad_name.extend_from_slice(b"/no-such-\xff.json");
    let cwd = &s.0;
    for flag in [&b"--config"[..], b"--mcp-config"] {
        usage_error(
            cwd,
            &[flag, &bad_name],
            &["no-such-", "No such file"],
            &marker,
        );
    }
    // Unreadable: only meaningful when permissions bind (not as root).
    let locked = s.write("locked.json", "{}");
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    if std::fs::read(&locked).is_err() {
        usage_error(
            cwd,
            &[b"--config", locked.as_os_str().as_bytes()],
            &["locked.json", "Permission denied"],
            &marker,
        );
    }
    usage_error(
        cwd,
        &[b"--", b"./no-such-\xff-server"],
        &["no-such-", "does not exist"],
        &marker,
    );
    usage_error(
        cwd,
        &with(&server, &[b"--cwd", b"missing-\xff"]),
        &["--cwd missing-", "No such file"],
        &marker,
    );
    usage_error(
        cwd,
        &[b"scan", b"missing-\xff.py"],
        &["missing-", "no such file"],
        &marker,
    );
    assert!(!marker.exists());
}

#[test]
fn loops_fifos_and_non_utf8_names_inside_a_scanned_tree_are_handled() {
    let s = Scratch::new("bad-input-tree");
    s.write("src/app/server.py", "print('hi')\n");
    s.write(OsStr::from_bytes(b"src/caf\xe9.py"), "print('caf')\n");
    std::os::unix::fs::symlink("..", s.path("src/app/up")).unwrap();
    s.symlink("loop-b", "src/loop-a");
    s.symlink("loop-a", "src/loop-b");
    s.fifo("src/pipe.py");
    let out = run(&s.0, &os(&[b"scan", b"--json", b"src"]));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut files: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["file"].as_str().unwrap_or("?"),
                f["rule"].as_str().unwrap_or("?")
            )
        })
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "src/app/server.py static-print-call",
            "src/caf\u{fffd}.py static-print-call"
        ],
        "{report}"
    );
    // Named explicitly, a file with a non-UTF-8 name is scanned by its extension.
    let out = run(&s.0, &os(&[b"scan", b"src/caf\xe9.py"]));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
}
