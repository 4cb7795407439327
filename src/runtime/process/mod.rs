//! Spawning and supervising the server process.
//!
//! The server is started without a shell, in its own process group, with stdin, stdout and stderr
//! piped. stderr is drained into a bounded tail (never judged). The process's exit is reported on
//! the same event stream as its stdout. Every process the server starts carries a per-run marker in
//! its environment, so the guard can find descendants that left the process group (`setsid`,
//! daemonising launchers) and kill them at the end; on Linux the guard is also a child subreaper,
//! so orphans are re-parented to it instead of init.
//!
//! `lookup.rs` finds the program the way the spawn will, so a command that cannot start is a
//! usage error before anything runs.
//!
//! The platform parts live in `unix.rs` (process groups, signals, `/proc`) and `windows.rs` (a new
//! process group and a Job object that holds every descendant: listed, timed and killed as one).

use super::framing::FramerLimits;
use super::transport::{Event, EventSender, ExitInfo, Link};
pub mod lookup;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as sys;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as sys;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;
pub use sys::{become_subreaper, descendants, group_activity, kill_all};
use tokio::io::AsyncReadExt;
use tokio::process::Command;
#[cfg(unix)]
pub(crate) use unix::{carries_marker, read_argv, read_stat};

/// The environment variable that marks every process of one run.
pub const RUN_MARKER_ENV: &str = "MCP_STDIO_GUARD_RUN";

/// What to start, and how.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: Option<PathBuf>,
    /// Variables added to (or overriding) the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// Inherited variables removed from the server's environment (the buffering rerun).
    pub unset: Vec<OsString>,
    pub limits: FramerLimits,
    pub max_stderr_bytes: u64,
    /// Where the process's bytes are recorded (`--transcript`), with its role.
    pub tap: Option<super::transcript::Tap>,
}

/// Why a spawn failed: the short platform code (`ENOENT`) and the OS message.
#[derive(Debug, Clone)]
pub struct SpawnError {
    pub code: String,
    pub message: String,
}

/// The bounded tail of stderr.
#[derive(Debug, Default)]
pub struct StderrTail {
    pub max: u64,
    pub total_bytes: u64,
    pub lines: u64,
    tail: VecDeque<u8>,
    last_byte: Option<u8>,
}

impl StderrTail {
    pub fn new(max: u64) -> StderrTail {
        StderrTail {
            max,
            ..StderrTail::default()
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.total_bytes += bytes.len() as u64;
        self.lines += memchr::memchr_iter(b'\n', bytes).count() as u64;
        if let Some(&b) = bytes.last() {
            self.last_byte = Some(b);
        }
        let max = self.max as usize;
        if bytes.len() >= max {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - max..]);
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(max);
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    /// Lines counted the way people count them: a final line without `\n` counts too.
    pub fn line_count(&self) -> u64 {
        self.lines + u64::from(self.last_byte.is_some_and(|b| b != b'\n'))
    }

    pub fn truncated(&self) -> bool {
        self.total_bytes > self.tail.len() as u64
    }

    pub fn tail(&self) -> Vec<u8> {
        self.tail.iter().copied().collect()
    }
}

/// What the guard asks of the server's process group at shutdown. On Windows, `Terminate` is a
/// CTRL_BREAK to the group (delivered only when the guard has a console), `Continue` does
/// nothing, and `Kill` terminates the Job object that holds every descendant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupSignal {
    Terminate,
    Continue,
    Kill,
}

/// A running (or finished) server process.
pub struct ServerProcess {
    pub pid: u32,
    pub marker: String,
    pub stderr: Arc<Mutex<StderrTail>>,
    stderr_task: tokio::task::JoinHandle<()>,
}

impl ServerProcess {
    /// Sends a signal to the server's whole process group; false when it was not delivered.
    pub fn signal_group(&self, signal: GroupSignal) -> bool {
        sys::signal_group(self.pid, signal)
    }

    /// The processes of this server's run still alive (a `/proc` scan, done off the async
    /// workers).
    pub async fn descendants(&self) -> Vec<ProcInfo> {
        let (pid, marker) = (self.pid, self.marker.clone());
        tokio::task::spawn_blocking(move || descendants(pid, &marker))
            .await
            .unwrap_or_default()
    }

    /// True while any process of the server's process group is alive (zombies excluded).
    pub fn group_alive(&self) -> bool {
        !descendants(self.pid, &self.marker).is_empty()
    }

    /// True once the server process itself is dead (a zombie or reaped), as the kernel says:
    /// not when the exit event reaches the session.
    pub fn is_gone(&self) -> bool {
        #[cfg(unix)]
        {
            read_stat(self.pid as i32).is_none_or(|st| matches!(st.state, 'Z' | 'X'))
        }
        #[cfg(not(unix))]
        {
            !self.group_alive()
        }
    }

    /// Kills the server's whole group now and waits, at most `limit`, until the kernel has the
    /// server process dead; when that was seen (`None`: still alive at `limit`). On Linux the
    /// death wakes a thread of its own through a pidfd (one wake-up, not a poll loop on the async
    /// workers, whose timers run late on a saturated machine); elsewhere `is_gone` is asked every
    /// millisecond.
    pub async fn kill_group_and_watch(&self, limit: std::time::Duration) -> Option<Instant> {
        #[cfg(target_os = "linux")]
        let pidfd = sys::pidfd(self.pid);
        self.signal_group(GroupSignal::Kill);
        #[cfg(target_os = "linux")]
        if let Some(fd) = pidfd {
            return tokio::task::spawn_blocking(move || {
                sys::wait_pidfd(&fd, limit).then(Instant::now)
            })
            .await
            .ok()
            .flatten();
        }
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.is_gone() {
                return Some(Instant::now());
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        None
    }

    /// Waits (bounded) for the stderr reader to drain what is left in the pipe.
    pub async fn finish_stderr(&mut self, grace: std::time::Duration) {
        if tokio::time::timeout(grace, &mut self.stderr_task)
            .await
            .is_err()
        {
            self.stderr_task.abort();
        }
    }
}

/// Something that must happen on the thread that spawns the server, right before it does (the
/// system-call observer installs its seccomp filter there: the filter is per thread and
/// inherited by what the thread starts).
pub trait SpawnHook: Sync {
    /// Runs on a fresh thread that spawns the server next and then ends; `program` is what the
    /// spawn will run. `Err`: the server is spawned from the caller's thread instead, untouched
    /// by the hook.
    fn on_spawn_thread(&self, program: &std::path::Path) -> Result<(), String>;
}

/// Starts the server. On success returns the event link and the process handle.
pub fn spawn(spec: &SpawnSpec, start: Instant) -> Result<(Link, ServerProcess), SpawnError> {
    spawn_with(spec, start, None)
}

/// [`spawn`], with a hook run on the spawning thread (Unix; ignored elsewhere).
pub fn spawn_with(
    spec: &SpawnSpec,
    start: Instant,
    hook: Option<&dyn SpawnHook>,
) -> Result<(Link, ServerProcess), SpawnError> {
    let marker = format!("{}-{}", std::process::id(), next_run_number());
    // Windows resolves a relative program against the guard's folder, not the server's: joined
    // here, so it runs what `check_program` checked (`cwd` + program), as on Unix.
    let program = match &spec.cwd {
        Some(cwd) if cfg!(windows) && has_separator(&spec.program) => cwd.join(&spec.program),
        _ => PathBuf::from(&spec.program),
    };
    let mut cmd = Command::new(&program);
    for name in &spec.unset {
        cmd.env_remove(name);
    }
    cmd.args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(RUN_MARKER_ENV, &marker)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(false);
    sys::configure(&mut cmd);
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    // Spawned and registered under the lock of the live runs: once the guard is interrupted no
    // server starts (a retry or a probe racing the exit would survive it).
    let mut live = live_runs();
    if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(SpawnError {
            code: "EINTR".into(),
            message: "the guard was interrupted".into(),
        });
    }
    #[cfg(unix)]
    let spawned = unix::spawn_child(&mut cmd, spec, hook);
    #[cfg(not(unix))]
    let spawned = {
        let _ = hook;
        cmd.spawn()
    };
    let argv = || {
        std::iter::once(&spec.program)
            .chain(&spec.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
    };
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => {
            let failure = spawn_error(spec, &err);
            if let Some(tap) = &spec.tap {
                tap.spawn_failed(&argv(), &failure.message);
            }
            return Err(failure);
        }
    };
    let pid = child.id().unwrap_or_default();
    if let Err(message) = sys::adopt(&child, pid) {
        let _ = child.start_kill();
        return Err(SpawnError {
            code: "ESTART".into(),
            message,
        });
    }
    live.push((pid, marker.clone()));
    drop(live);
    let stdout = child.stdout.take().expect("stdout is piped");
    let stdin = child.stdin.take().expect("stdin is piped");
    let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
    #[cfg(unix)]
    let stdin_fd = Some(std::os::fd::AsRawFd::as_raw_fd(&stdin));
    // Windows cannot ask the write end of a pipe for unread bytes.
    #[cfg(not(unix))]
    let stdin_fd = None;
    let tap = spec
        .tap
        .as_ref()
        .map(|t| t.spawned(pid, &argv(), spec.max_stderr_bytes));
    let (link, tx) = Link::with_tap(stdout, stdin, stdin_fd, spec.limits, start, tap.clone());

    let stderr = Arc::new(Mutex::new(StderrTail::new(spec.max_stderr_bytes)));
    let sink = stderr.clone();
    let stderr_tap = tap.clone();
    let stderr_task = tokio::spawn(async move {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match stderr_pipe.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if let Some(t) = &stderr_tap {
                        t.bytes(super::transcript::Dir::Err, &buf[..n]);
                    }
                    sink.lock().expect("stderr lock").push(&buf[..n]);
                }
            }
        }
        if let Some(t) = &stderr_tap {
            t.stderr_done();
        }
    });
    tokio::spawn(watch_exit(child, tx, start, tap));
    Ok((
        link,
        ServerProcess {
            pid,
            marker,
            stderr,
            stderr_task,
        },
    ))
}

/// Whether a program names a path (`/`; on Windows also `\\` or a drive's `:`) rather than a
/// name to look up.
pub fn has_separator(program: &std::ffi::OsStr) -> bool {
    let separators: &[u8] = if cfg!(windows) { b"/\\:" } else { b"/" };
    program
        .as_encoded_bytes()
        .iter()
        .any(|b| separators.contains(b))
}

fn spawn_error(spec: &SpawnSpec, err: &std::io::Error) -> SpawnError {
    let code = err
        .raw_os_error()
        .map(sys::error_name)
        .unwrap_or_else(|| format!("{:?}", err.kind()));
    let program = spec.program.to_string_lossy();
    let mut message = format!("spawn {program}: {err}");
    // ENOENT for a file that exists: the interpreter named by its `#!` line is missing.
    if err.kind() == std::io::ErrorKind::NotFound {
        let path = match &spec.cwd {
            Some(cwd) => cwd.join(&spec.program),
            None => PathBuf::from(&spec.program),
        };
        if let Some(interpreter) = shebang(&path) {
            message = format!(
                "spawn {program}: its interpreter {interpreter:?} (from the #! line) does not exist"
            );
        }
    }
    SpawnError { code, message }
}

/// The interpreter of a script's `#!` line, if the file exists and has one.
fn shebang(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let end = line.iter().position(|b| *b == b'\n').unwrap_or(line.len());
    let text = String::from_utf8_lossy(&line[..end]);
    text.split_whitespace().next().map(str::to_string)
}

async fn watch_exit(
    mut child: tokio::process::Child,
    tx: EventSender,
    start: Instant,
    tap: Option<super::transcript::ProcTap>,
) {
    let exit = match child.wait().await {
        Ok(status) => ExitInfo {
            code: status.code(),
            signal: sys::exit_signal(&status),
        },
        Err(_) => ExitInfo {
            code: None,
            signal: None,
        },
    };
    if let Some(t) = &tap {
        t.exited(exit.code, exit.signal);
    }
    let _ = tx
        .send(Event::Exited {
            at: start.elapsed(),
            exit,
        })
        .await;
}

/// Set when the guard is interrupted: no server is started after that.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Runs whose processes may still be alive: what the guard kills if it is itself interrupted.
fn live_runs() -> std::sync::MutexGuard<'static, Vec<(u32, String)>> {
    static LIVE: Mutex<Vec<(u32, String)>> = Mutex::new(Vec::new());
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How many server runs of this guard have processes that may still be alive.
pub fn live_run_count() -> usize {
    live_runs().len()
}

/// True just after the guard sent a CTRL_BREAK (Windows), which may come back to the guard
/// itself: its handler ignores it.
pub fn guard_sent_break_recently() -> bool {
    sys::sent_break_recently()
}

/// Forgets a run whose processes are all gone.
pub fn forget_run(pid: u32) {
    live_runs().retain(|(p, _)| *p != pid);
    sys::release(pid);
}

/// Kills every process of every live run (the guard got SIGINT/SIGTERM: leave nothing behind),
/// and deletes their effects logs.
pub fn kill_live_runs() {
    let runs: Vec<(u32, String)> = {
        let live = live_runs();
        INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
        live.clone()
    };
    for (pid, marker) in runs {
        sys::kill_run(pid, &marker);
    }
    super::effects::log::remove_live_logs();
}

fn next_run_number() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A live process that belongs to a server run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub argv: Vec<String>,
}

/// The pids in `/proc`, the guard's own left out; `None` where `/proc` cannot be read (macOS).
#[cfg(unix)]
pub(crate) fn other_pids() -> Option<Vec<i32>> {
    let dir = std::fs::read_dir("/proc").ok()?;
    let me = std::process::id() as i32;
    Some(
        dir.flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
            .filter(|&pid| pid != me)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_the_last_bytes_and_counts_everything() {
        let mut t = StderrTail::new(8);
        t.push(b"line one\n");
        t.push(b"line two\npartial");
        assert_eq!(t.total_bytes, 25);
        assert_eq!(t.line_count(), 3);
        assert!(t.truncated());
        assert_eq!(t.tail(), b"\npartial");
        t.push(b"0123456789abc");
        assert_eq!(t.tail(), b"56789abc");
    }
}
