//! Shared helpers for the integration tests: run the guard binary, parse its JSON, project issues
//! to comparable rows, and check that nothing of a server run is left alive.
#![allow(dead_code)]

pub mod cases;
pub mod scratch;

#[allow(unused_imports)]
pub use scratch::Scratch;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const GUARD: &str = env!("CARGO_BIN_EXE_mcp-stdio-guard");

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The official MCP JSON schemas, one folder per revision, vendored into the repository
/// (`tests/schemas/mcp/README.md`: origin, revision, licence): a fresh clone has all it needs.
pub fn mcp_schema_dir() -> PathBuf {
    repo().join("tests/schemas/mcp")
}

/// The result of one guard run.
#[derive(Debug)]
pub struct Run {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    /// Peak resident set of the guard in KiB, an upper bound: `ru_maxrss` from `wait4`, which is
    /// the largest of the guard's own peak and the peaks of the processes it reaped (the server,
    /// its children). `None` if the guard was not reaped by `wait4`.
    pub peak_rss_kib: Option<u64>,
    /// The guard's own `VmHWM` (peak RSS, KiB), last read from /proc while it ran: a lower bound
    /// (the last few milliseconds before exit are not seen), the guard alone.
    pub guard_hwm_kib: Option<u64>,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "guard stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// Runs the guard with `args` in `cwd`, killing it after `watchdog` (a hang is a failure).
// The child is reaped by `wait4` (for its rusage), which clippy cannot see.
#[allow(clippy::zombie_processes)]
pub fn guard(
    args: &[String],
    cwd: &Path,
    envs: &[(String, String)],
    unset: &[String],
    watchdog: Duration,
) -> Run {
    let mut cmd = Command::new(GUARD);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The guard changes its output inside GitHub Actions: tests that want that say so in `envs`.
    for k in ["GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"] {
        cmd.env_remove(k);
    }
    for (k, v) in envs {
        cmd.env(k, v);
    }
    for k in unset {
        cmd.env_remove(k);
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn the guard");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let err_t = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let pid = child.id() as i32;
    let mut guard_hwm_kib = None;
    let (status, peak_rss_kib) = loop {
        if let Some(hwm) = vm_hwm_kib(pid) {
            guard_hwm_kib = Some(hwm);
        }
        if let Some(done) = try_wait4(pid) {
            break done;
        }
        if start.elapsed() > watchdog {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the guard did not finish within {watchdog:?}: args {args:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        status,
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
        elapsed: start.elapsed(),
        peak_rss_kib,
        guard_hwm_kib,
    }
}

/// Reaps `pid` if it has exited: its exit code (None when killed by a signal) and its peak RSS
/// in KiB (`ru_maxrss`, which includes the processes it reaped).
fn try_wait4(pid: i32) -> Option<(Option<i32>, Option<u64>)> {
    use nix::libc;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `status` and `usage` are valid for writes; `pid` is our own child.
    let rc = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
    if rc == 0 {
        return None;
    }
    assert_eq!(rc, pid, "wait4 failed: {}", std::io::Error::last_os_error());
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Some((code, Some(usage.ru_maxrss.max(0) as u64)))
}

/// `VmHWM` (peak resident set, KiB) of a live process, from /proc.
pub fn vm_hwm_kib(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Processes (other than zombies) whose environment contains `needle` (like `pgrep -f` on env).
pub fn processes_with_env(needle: &str) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if !env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) {
            continue;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 2..].chars().next())
            .unwrap_or('?');
        if state == 'Z' || state == 'X' {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        out.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
    }
    out
}

/// An issue projected to the fields a fixture expectation names.
pub fn issue_row(issue: &Value) -> Value {
    let mut row = serde_json::Map::new();
    for key in [
        "code",
        "severity",
        "detailCode",
        "line",
        "byteOffset",
        "run",
    ] {
        match issue.get(key) {
            Some(Value::String(s)) if s.is_empty() => {}
            Some(v) => {
                row.insert(key.to_string(), v.clone());
            }
            None => {}
        }
    }
    Value::Object(row)
}

/// Replaces what changes between runs (durations, pids, the checkout path, the version) so
/// golden files stay stable.
pub fn normalize_text(text: &str) -> String {
    let text = text.replace(repo().to_str().unwrap(), "<repo>");
    let text = text.replace(env!("CARGO_PKG_VERSION"), "<version>");
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_ascii_alphanumeric()) {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            let after: String = chars[i..(i + 3).min(chars.len())].iter().collect();
            let before: String = chars[start.saturating_sub(4)..start].iter().collect();
            if after == " ms" || before == "pid " {
                out.push('N');
            } else {
                out.push_str(&digits);
            }
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Normalizes a JSON report: timings, pids and machine facts become placeholders.
pub fn normalize_json(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                // Runtime versions (python, node) differ between machines.
                // How `server/discover` ended depends on load for a slow starter (an error
                // reply, or silence past the window): both mean legacy.
                let volatile = k == "pid"
                    || k == "osRelease"
                    || k == "runtimes"
                    || k == "answer"
                    || (k.ends_with("Ms") && k != "timeoutMs");
                if volatile && !v.is_null() {
                    *v = Value::from("<N>");
                } else {
                    normalize_json(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_json),
        Value::String(s) => *s = normalize_text(s),
        _ => {}
    }
}

/// Compares `actual` with the golden file at `path`, or rewrites it when UPDATE_GOLDEN=1.
pub fn check_golden(path: &Path, actual: &str) -> Result<(), String> {
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, actual).unwrap();
        return Ok(());
    }
    let expected = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    })?;
    if expected == actual {
        return Ok(());
    }
    let diff: Vec<String> = expected
        .lines()
        .zip(actual.lines())
        .enumerate()
        .filter(|(_, (e, a))| e != a)
        .take(8)
        .map(|(n, (e, a))| format!("  line {}:\n    golden: {e}\n    actual: {a}", n + 1))
        .collect();
    Err(format!(
        "{} differs ({} vs {} lines; UPDATE_GOLDEN=1 regenerates):\n{}",
        path.display(),
        expected.lines().count(),
        actual.lines().count(),
        diff.join("\n")
    ))
}
