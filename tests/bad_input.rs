//! Bad input to the guard itself, through the binary: a config or client-config file that is a
//! FIFO, a device, a folder, unreadable or not UTF-8; a server command that does not exist or is a
//! folder; a missing or unusable working directory; a `--scan` or `scan` path that is missing, a
//! FIFO, a device or a symlink loop; paths with non-UTF-8 bytes. Each is exactly one line on
//! stderr naming the problem, exit 2, nothing on stdout (no partial report), nothing spawned, and
//! never a hang (a FIFO opened for reading blocks forever) or a panic. Also: a symlink loop inside
//! a scanned tree and non-UTF-8 file names are scanned normally.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::GUARD;

/// A scratch folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("guard-bad-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, rel: impl AsRef<OsStr>) -> PathBuf {
        self.0.join(rel.as_ref())
    }

    fn write(&self, rel: impl AsRef<OsStr>, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn fifo(&self, rel: &str) -> PathBuf {
        let path = self.path(rel);
        let ok = Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mkfifo {}", path.display());
        path
    }

    fn symlink(&self, target: &str, rel: &str) -> PathBuf {
        let path = self.path(rel);
        std::os::unix::fs::symlink(target, &path).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
fn bad_files_named_on_the_command_line_are_one_line_errors() {
    let s = Scratch::new("files");
    let marker = s.path("spawned");
    let touch = format!("touch {}", marker.display());
    let server: [&[u8]; 4] = [b"--", b"sh", b"-c", touch.as_bytes()];
    let fifo = s.fifo("fifo.json");
    let fifo_arg = fifo.as_os_str().as_bytes();
    let folder = s.path("folder");
    std::fs::create_dir_all(&folder).unwrap();
    let latin1 = s.write("latin1.json", b"{\"command\": [\"caf\xe9\"]}");
    let not_dir = s.write("file.json", "{}");
    let below_file = not_dir.join("config.json");
    let mut bad_name = s.0.as_os_str().as_bytes().to_vec();
    bad_name.extend_from_slice(b"/no-such-\xff.json");
    let loop_a = s.symlink("loop-b", "loop-a");
    s.symlink("loop-a", "loop-b");
    let cwd = &s.0;

    // Config and client-config files.
    for flag in [&b"--config"[..], b"--mcp-config"] {
        usage_error(cwd, &[flag, fifo_arg], &["fifo.json", "FIFO"], &marker);
        usage_error(
            cwd,
            &[flag, b"/dev/zero"],
            &["/dev/zero", "device"],
            &marker,
        );
        usage_error(
            cwd,
            &[flag, folder.as_os_str().as_bytes()],
            &["folder"],
            &marker,
        );
        usage_error(
            cwd,
            &[flag, latin1.as_os_str().as_bytes()],
            &["latin1.json", "not UTF-8"],
            &marker,
        );
        usage_error(
            cwd,
            &[flag, below_file.as_os_str().as_bytes()],
            &["file.json/config.json", "Not a directory"],
            &marker,
        );
        usage_error(
            cwd,
            &[flag, &bad_name],
            &["no-such-", "No such file"],
            &marker,
        );
        usage_error(
            cwd,
            &[flag, loop_a.as_os_str().as_bytes()],
            &["loop-a", "symbolic links"],
            &marker,
        );
    }
    let malformed = s.write("malformed.json", "{\"command\": [\"sh\",");
    usage_error(
        cwd,
        &[b"--config", malformed.as_os_str().as_bytes()],
        &["malformed.json", "not valid JSON"],
        &marker,
    );
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

    // The server command and its working directory.
    usage_error(
        cwd,
        &[b"--", b"definitely-not-a-command-xyz"],
        &["command not found", "definitely-not-a-command-xyz"],
        &marker,
    );
    usage_error(
        cwd,
        &[b"--", folder.as_os_str().as_bytes()],
        &["folder", "is a directory"],
        &marker,
    );
    usage_error(
        cwd,
        &[b"--", b"./no-such-\xff-server"],
        &["no-such-", "does not exist"],
        &marker,
    );
    usage_error(
        cwd,
        &with(&server, &[b"--cwd", b"missing-dir"]),
        &["--cwd missing-dir", "No such file"],
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
        &with(&server, &[b"--cwd", fifo_arg]),
        &["fifo.json", "not a directory"],
        &marker,
    );

    // `--scan` in a runtime run: checked before anything is spawned.
    usage_error(
        cwd,
        &with(&server, &[b"--scan", b"no-such-src"]),
        &["--scan no-such-src", "no such file"],
        &marker,
    );
    usage_error(
        cwd,
        &with(&server, &[b"--scan", fifo_arg]),
        &["fifo.json", "FIFO"],
        &marker,
    );
    usage_error(
        cwd,
        &with(&server, &[b"--scan", b"/dev/null"]),
        &["/dev/null", "character device"],
        &marker,
    );
    usage_error(
        cwd,
        &with(&server, &[b"--scan", b"loop-a"]),
        &["loop-a", "symbolic links"],
        &marker,
    );
    assert!(!marker.exists());
}

#[test]
fn bad_scan_paths_are_one_line_errors() {
    let s = Scratch::new("scan");
    let marker = s.path("never");
    let fifo = s.fifo("server.py");
    s.symlink("loop-b", "loop-a");
    s.symlink("loop-a", "loop-b");
    let cwd = &s.0;
    usage_error(
        cwd,
        &[b"scan", fifo.as_os_str().as_bytes()],
        &["server.py", "FIFO"],
        &marker,
    );
    usage_error(
        cwd,
        &[b"scan", b"/dev/zero"],
        &["/dev/zero", "character device"],
        &marker,
    );
    usage_error(
        cwd,
        &[b"scan", b"loop-a"],
        &["loop-a", "symbolic links"],
        &marker,
    );
    usage_error(
        cwd,
        &[b"scan", b"missing-\xff.py"],
        &["missing-", "no such file"],
        &marker,
    );
}

#[test]
fn loops_fifos_and_non_utf8_names_inside_a_scanned_tree_are_handled() {
    let s = Scratch::new("tree");
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
