//! The Unix supervisor: process groups, signals, `/proc` (Linux) and the child-subreaper flag.

#[cfg(target_os = "linux")]
use super::RUN_MARKER_ENV;
use super::{GroupSignal, ProcInfo};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The server leads a new process group: signals reach everything it starts in that group.
pub(super) fn configure(cmd: &mut tokio::process::Command) {
    cmd.process_group(0);
}

/// Spawns `cmd`; with a hook, from a fresh thread the hook ran on first (it ends right after, so
/// whatever the hook set on it — no_new_privs, a seccomp filter — stays with the server only).
pub(super) fn spawn_child(
    cmd: &mut tokio::process::Command,
    spec: &super::SpawnSpec,
    hook: Option<&dyn super::SpawnHook>,
) -> std::io::Result<tokio::process::Child> {
    let Some(hook) = hook else {
        return cmd.spawn();
    };
    let program = resolve_program(spec);
    // tokio registers the child with the runtime of the caller.
    let runtime = tokio::runtime::Handle::try_current().ok();
    let on_thread = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let _entered = runtime.as_ref().map(|r| r.enter());
            hook.on_spawn_thread(&program).ok().map(|()| cmd.spawn())
        });
        match worker.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    match on_thread {
        Some(result) => result,
        None => cmd.spawn(),
    }
}

/// The program a spawn runs: a path with a `/` (against the server's `cwd`), else the first
/// executable match in the server's PATH (the guard's when the spec sets none).
fn resolve_program(spec: &super::SpawnSpec) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let program = std::path::Path::new(&spec.program);
    if super::has_separator(&spec.program) {
        return match &spec.cwd {
            Some(cwd) if program.is_relative() => cwd.join(program),
            _ => program.to_path_buf(),
        };
    }
    let path = spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|c| {
            std::fs::metadata(c).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| program.to_path_buf())
}

/// Nothing to set up once the process runs (the group exists from the start).
pub(super) fn adopt(_child: &tokio::process::Child, _pid: u32) -> Result<(), String> {
    Ok(())
}

/// Only Windows broadcasts a stray CTRL_BREAK back to the guard.
pub(super) fn sent_break_recently() -> bool {
    false
}

/// Nothing to release when a run is forgotten.
pub(super) fn release(_pid: u32) {}

/// The signal that ended the process, if any.
pub(super) fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// `ENOENT` for an OS error number.
pub(super) fn error_name(raw: i32) -> String {
    format!("{:?}", nix::errno::Errno::from_raw(raw))
}

/// Sends a signal to the server's whole process group; false when it could not be delivered.
pub(super) fn signal_group(pid: u32, signal: GroupSignal) -> bool {
    let signal = match signal {
        GroupSignal::Terminate => Signal::SIGTERM,
        GroupSignal::Continue => Signal::SIGCONT,
        GroupSignal::Kill => Signal::SIGKILL,
    };
    killpg(Pid::from_raw(pid as i32), signal).is_ok()
}

/// A pidfd for the server process (Linux 5.3+; `None` elsewhere, on older kernels, or once the
/// process was reaped). Opened before the group is signalled, while the pid is surely the
/// server's: it stays bound to that process, and is readable once the process has exited.
#[cfg(target_os = "linux")]
pub(super) fn pidfd(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a non-negative result is a descriptor this process now owns.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Blocks until the pidfd's process has exited (true) or `limit` passed (false).
#[cfg(target_os = "linux")]
pub(super) fn wait_pidfd(fd: &std::os::fd::OwnedFd, limit: std::time::Duration) -> bool {
    use std::os::fd::AsRawFd;
    let deadline = std::time::Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let mut poll = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd, its count, and a timeout.
        let n = unsafe { libc::poll(&mut poll, 1, ms) };
        if n > 0 {
            return true;
        }
        let interrupted =
            n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
        if !interrupted || left.is_zero() {
            return false;
        }
    }
}

/// Kills every process of one run (the guard is interrupted).
pub(super) fn kill_run(pid: u32, marker: &str) {
    let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
    kill_all(&descendants(pid, marker));
}

/// Makes this process a child subreaper (Linux): orphans of the servers it starts are re-parented
/// to it, so they stay visible and killable. Harmless to call more than once.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        let _ = nix::sys::prctl::set_child_subreaper(true);
    }
}

/// Live (non-zombie) processes of a run: those in the server's process group, and those carrying
/// the run marker in their environment (descendants that left the group). Linux only; elsewhere
/// the process group is probed with signal 0 and reported as one entry.
pub fn descendants(server_pid: u32, marker: &str) -> Vec<ProcInfo> {
    #[cfg(target_os = "linux")]
    {
        linux_descendants(server_pid as i32, marker)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = marker;
        if killpg(Pid::from_raw(server_pid as i32), None).is_ok() {
            vec![ProcInfo {
                pid: server_pid as i32,
                ppid: 0,
                pgid: server_pid as i32,
                argv: Vec::new(),
            }]
        } else {
            Vec::new()
        }
    }
}

#[cfg(target_os = "linux")]
fn linux_descendants(pgid: i32, marker: &str) -> Vec<ProcInfo> {
    let needle = format!("{RUN_MARKER_ENV}={marker}\0");
    let mut out = Vec::new();
    for pid in super::other_pids().unwrap_or_default() {
        let Some(stat) = read_stat(pid) else {
            continue;
        };
        if stat.state == 'Z' || stat.state == 'X' {
            continue;
        }
        let belongs = stat.pgrp == pgid || carries_marker(pid, needle.as_bytes());
        if belongs {
            out.push(ProcInfo {
                pid,
                ppid: stat.ppid,
                pgid: stat.pgrp,
                argv: read_argv(pid),
            });
        }
    }
    out.sort_by_key(|p| p.pid);
    out
}

/// What the live processes of a process group are doing: CPU time (clock ticks, user + system)
/// used so far, and whether one is runnable (state `R`). `None` where it cannot be read
/// (non-Linux).
pub fn group_activity(pgid: u32) -> Option<crate::runtime::load::Activity> {
    #[cfg(target_os = "linux")]
    {
        let mut activity = crate::runtime::load::Activity::default();
        for pid in super::other_pids()? {
            let Some(stat) = read_stat(pid) else {
                continue;
            };
            if i64::from(stat.pgrp) == i64::from(pgid) {
                // `utime`/`stime` of the process count every thread; its state is the main
                // thread's only. A server whose main thread waits for a worker thread that waits
                // for a CPU (the Python SDK reads stdin in a worker thread; Node, the JVM and Go
                // are threaded too) is runnable, not idle.
                activity.cpu_ticks += stat.cpu_ticks;
                activity.runnable |= active_state(stat.state) || any_thread_active(pid);
            }
        }
        Some(activity)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pgid;
        None
    }
}

/// A thread state that means the thread is doing work: running or waiting for a CPU (`R`), or in
/// uninterruptible I/O (`D`, e.g. reading a file on a loaded disk).
#[cfg(target_os = "linux")]
fn active_state(state: char) -> bool {
    matches!(state, 'R' | 'D')
}

/// Whether any thread of `pid` is running, waiting for a CPU or in uninterruptible I/O.
#[cfg(target_os = "linux")]
fn any_thread_active(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("stat"))
            .ok()
            .and_then(|stat| {
                let close = stat.rfind(')')?;
                stat.get(close + 2..)?.chars().next()
            })
            .is_some_and(active_state)
    })
}

/// The fields of `/proc/<pid>/stat` the supervisor and the process watch read.
pub(crate) struct ProcStat {
    /// The command name (`comm`).
    pub name: String,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    /// CPU time used so far, user + system, in clock ticks.
    pub cpu_ticks: u64,
}

/// `/proc/<pid>/stat`, read once; `None` when the process is gone or there is no `/proc`.
pub(crate) fn read_stat(pid: i32) -> Option<ProcStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces and `)`: fields follow the last.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = stat.get(close + 2..)?.split_ascii_whitespace().collect();
    // state(0) ppid(1) pgrp(2) ... utime(11) stime(12).
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Some(ProcStat {
        name,
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        cpu_ticks: ticks(11) + ticks(12),
    })
}

/// Whether a process's environment holds `needle` (`NAME=value\0`: the run marker).
pub(crate) fn carries_marker(pid: i32, needle: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| memchr::memmem::find(&env, needle).is_some())
}

/// A process's argv from `/proc/<pid>/cmdline` (empty when it is gone or a zombie).
pub(crate) fn read_argv(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Kills the given processes (SIGKILL) and reaps any that were re-parented to the guard.
pub fn kill_all(procs: &[ProcInfo]) {
    for p in procs {
        let _ = kill(Pid::from_raw(p.pid), Signal::SIGKILL);
    }
    reap(procs);
}

/// Reaps processes re-parented to the guard (it is their subreaper) so they leave no zombies.
fn reap(procs: &[ProcInfo]) {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    let me = std::process::id() as i32;
    for p in procs {
        if p.ppid == me || read_parent(p.pid) == Some(me) {
            for _ in 0..50 {
                match waitpid(Pid::from_raw(p.pid), Some(WaitPidFlag::WNOHANG)) {
                    Ok(nix::sys::wait::WaitStatus::StillAlive) => {
                        std::thread::sleep(std::time::Duration::from_millis(2))
                    }
                    _ => break,
                }
            }
        }
    }
}

fn read_parent(pid: i32) -> Option<i32> {
    #[cfg(target_os = "linux")]
    {
        read_stat(pid).map(|stat| stat.ppid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    /// The main thread waits (joins) while a worker thread spins: the group is runnable. Reading
    /// only the main thread's state (the process's `stat`) saw it idle.
    #[test]
    fn a_runnable_worker_thread_makes_the_group_runnable() {
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import threading\n\ndef spin():\n    while True:\n        pass\n\nt = threading.Thread(target=spin)\nt.start()\nt.join()",
            ])
            .process_group(0)
            .spawn()
            .expect("python3");
        let pgid = child.id();
        // Until the worker thread exists (the interpreter's start-up is itself runnable).
        let start = std::time::Instant::now();
        while std::fs::read_dir(format!("/proc/{pgid}/task")).map_or(0, |d| d.count()) < 2 {
            assert!(start.elapsed() < std::time::Duration::from_secs(20));
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let looks: Vec<bool> = (0..5)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                group_activity(pgid).is_some_and(|a| a.runnable)
            })
            .collect();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(looks, [true; 5]);
    }
}
