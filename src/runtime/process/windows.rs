//! The Windows supervisor: a new process group and a Job object per run.
//!
//! Every server is assigned, right after it starts, to a Job object created for its run; whatever
//! it starts later joins the same job (breakaway is not allowed), including processes that leave
//! its console or process group. The job is the run's process list (`descendants`), its CPU clock
//! (`group_cpu_ticks`) and its kill switch (`TerminateJobObject`); it is created with
//! kill-on-close, so if the guard itself dies every process of the run dies with it.
//!
//! The server is created suspended, assigned to its job, then its (only) thread is resumed: it
//! cannot start a process before it belongs to the job.

#[cfg(not(target_pointer_width = "64"))]
compile_error!("the job's process list is read as 64-bit ids: only 64-bit Windows is supported");

use super::{GroupSignal, ProcInfo};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE, WAIT_TIMEOUT};
use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
    TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicAccountingInformation, JobObjectBasicProcessIdList,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED, GetExitCodeProcess, OpenProcess, OpenThread,
    PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE, PROCESS_TERMINATE, ResumeThread,
    THREAD_SUSPEND_RESUME, TerminateProcess, WaitForSingleObject,
};

/// The exit code of a process the guard terminates.
const KILLED_EXIT_CODE: u32 = 1;
/// `STILL_ACTIVE`: what `GetExitCodeProcess` says of a running process.
const STILL_ACTIVE: u32 = 259;

/// A run's kernel objects: its job (null when none could be made) and a handle to its server
/// process, held so that the server's pid is not reused while the run is filed under it (a pid
/// stays reserved while any handle to the process is open). Both are closed when the last user
/// lets go: a poller holding a clone never uses a closed handle.
struct RunHandles {
    job: HANDLE,
    process: HANDLE,
}

// SAFETY: kernel handles may be used from any thread; these are only closed in `drop`.
unsafe impl Send for RunHandles {}
unsafe impl Sync for RunHandles {}

impl Drop for RunHandles {
    fn drop(&mut self) {
        // SAFETY: each handle was opened for this value and is closed once, here.
        unsafe {
            if !self.job.is_null() {
                CloseHandle(self.job);
            }
            if !self.process.is_null() {
                CloseHandle(self.process);
            }
        }
    }
}

impl RunHandles {
    /// True while the server process itself runs.
    fn server_alive(&self) -> bool {
        // SAFETY: a live process handle with SYNCHRONIZE access.
        !self.process.is_null() && unsafe { WaitForSingleObject(self.process, 0) } == WAIT_TIMEOUT
    }
}

/// The live runs, by server pid.
fn runs() -> std::sync::MutexGuard<'static, Vec<(u32, Arc<RunHandles>)>> {
    static RUNS: Mutex<Vec<(u32, Arc<RunHandles>)>> = Mutex::new(Vec::new());
    RUNS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn run_of(pid: u32) -> Option<Arc<RunHandles>> {
    runs()
        .iter()
        .find(|(p, _)| *p == pid)
        .map(|(_, run)| run.clone())
}

fn job_of(run: &RunHandles) -> Option<HANDLE> {
    (!run.job.is_null()).then_some(run.job)
}

/// When the guard last sent a CTRL_BREAK. Windows delivers a CTRL_BREAK aimed at a process group
/// that no longer exists to every process on the console, the guard included; the guard's
/// handler ignores a break that follows its own this closely.
static BREAK_SENT: Mutex<Option<Instant>> = Mutex::new(None);

pub(super) fn sent_break_recently() -> bool {
    BREAK_SENT
        .lock()
        .map(|at| at.is_some_and(|at| at.elapsed() < Duration::from_secs(2)))
        .unwrap_or(false)
}

/// The server leads a new process group: a Ctrl-C in the guard's console is the guard's to
/// handle, and a CTRL_BREAK can be sent to the server's group alone. It starts suspended, until
/// [`adopt`] has put it in its job.
pub(super) fn configure(cmd: &mut tokio::process::Command) {
    cmd.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_SUSPENDED);
}

/// Puts the new (suspended) server in a fresh kill-on-close Job object, then lets it run.
/// Without a job (the guard's own job forbids nesting on old Windows) only the server itself is
/// supervised. An error: the server could not be resumed (the caller kills it).
pub(super) fn adopt(child: &tokio::process::Child, pid: u32) -> Result<(), String> {
    let job = child
        .raw_handle()
        .map_or(std::ptr::null_mut(), |process| new_job(process as HANDLE));
    // SAFETY: opening a handle to our own suspended child; null on failure.
    let process = unsafe { OpenProcess(PROCESS_SYNCHRONIZE | PROCESS_TERMINATE, 0, pid) };
    runs().push((pid, Arc::new(RunHandles { job, process })));
    match resume_threads(pid) {
        0 => {
            release(pid);
            Err(format!(
                "the server (pid {pid}) was created suspended and could not be resumed"
            ))
        }
        _ => Ok(()),
    }
}

/// Resumes every thread of a process (a process created suspended has one); how many were.
fn resume_threads(pid: u32) -> usize {
    let mut resumed = 0;
    // SAFETY: the snapshot and thread handles are closed here; the entry is initialised with
    // its size.
    unsafe {
        let snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
        if snap == INVALID_HANDLE_VALUE || snap.is_null() {
            return 0;
        }
        let mut entry: THREADENTRY32 = std::mem::zeroed();
        entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
        let mut more = Thread32First(snap, &mut entry) != 0;
        while more {
            if entry.th32OwnerProcessID == pid {
                let thread = OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID);
                if !thread.is_null() {
                    if ResumeThread(thread) != u32::MAX {
                        resumed += 1;
                    }
                    CloseHandle(thread);
                }
            }
            more = Thread32Next(snap, &mut entry) != 0;
        }
        CloseHandle(snap);
    }
    resumed
}

/// A fresh kill-on-close job holding `process`; null when it cannot be made.
fn new_job(process: HANDLE) -> HANDLE {
    // SAFETY: plain Win32 calls on handles this function owns (`job`) or borrows for the call
    // (`process`, the caller's live child); the limit structure is fully initialised.
    unsafe {
        let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
        if job.is_null() {
            return job;
        }
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        let set = SetInformationJobObject(
            job,
            JobObjectExtendedLimitInformation,
            (&raw const limits).cast(),
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        );
        if set == 0 || AssignProcessToJobObject(job, process) == 0 {
            CloseHandle(job);
            return std::ptr::null_mut();
        }
        job
    }
}

/// Forgets the run: its job is closed (kill-on-close ends whatever of it is left) and its pid
/// freed once no poller holds it any more.
pub(super) fn release(pid: u32) {
    runs().retain(|(p, _)| *p != pid);
}

/// Windows processes do not end on signals.
pub(super) fn exit_signal(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// The POSIX name clients report for the common spawn failures (Node says `ENOENT` on Windows
/// too); other errors keep their Windows number.
pub(super) fn error_name(raw: i32) -> String {
    match raw {
        2 | 3 => "ENOENT".into(),
        5 => "EACCES".into(),
        193 => "ENOEXEC".into(),
        n => format!("WIN{n}"),
    }
}

/// `Terminate`: CTRL_BREAK to the server's process group, only while the server (the group's
/// leader, whose pid is the group id) runs; false when it is gone or the guard has no console to
/// send it through. `Continue`: nothing to do. `Kill`: terminates the whole job.
pub(super) fn signal_group(pid: u32, signal: GroupSignal) -> bool {
    let run = run_of(pid);
    match signal {
        GroupSignal::Terminate => {
            if !run.as_ref().is_some_and(|r| r.server_alive()) {
                return false;
            }
            if let Ok(mut at) = BREAK_SENT.lock() {
                *at = Some(Instant::now());
            }
            // SAFETY: no pointers; fails cleanly without a console.
            unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid) != 0 }
        }
        GroupSignal::Continue => true,
        GroupSignal::Kill => match run {
            Some(run) => match job_of(&run) {
                // SAFETY: a live job handle (`run` holds it open).
                Some(job) => unsafe { TerminateJobObject(job, KILLED_EXIT_CODE) != 0 },
                // SAFETY: a live process handle with PROCESS_TERMINATE (null is refused).
                None => {
                    !run.process.is_null()
                        && unsafe { TerminateProcess(run.process, KILLED_EXIT_CODE) } != 0
                }
            },
            None => terminate(pid),
        },
    }
}

/// Kills every process of one run (the guard is interrupted).
pub(super) fn kill_run(pid: u32, _marker: &str) {
    signal_group(pid, GroupSignal::Kill);
}

/// Nothing to do: orphans on Windows are not re-parented, the job keeps them.
pub fn become_subreaper() {}

/// Live processes of a run: every process in its job (the server and all it started, wherever
/// they went), with their parent and program name. Without a job: the server alone, while alive.
pub fn descendants(server_pid: u32, _marker: &str) -> Vec<ProcInfo> {
    let run = run_of(server_pid);
    let pids = match run.as_deref().and_then(job_of) {
        Some(job) => job_pids(job),
        None if run
            .as_ref()
            .map_or_else(|| alive(server_pid), |r| r.server_alive()) =>
        {
            vec![server_pid]
        }
        None => Vec::new(),
    };
    if pids.is_empty() {
        return Vec::new();
    }
    let table = process_table();
    let mut out: Vec<ProcInfo> = pids
        .iter()
        .map(|&pid| {
            let (ppid, exe) = table
                .iter()
                .find(|(p, _, _)| *p == pid)
                .map(|(_, ppid, exe)| (*ppid, exe.clone()))
                .unwrap_or((0, String::new()));
            ProcInfo {
                pid: pid as i32,
                ppid: ppid as i32,
                pgid: server_pid as i32,
                argv: if exe.is_empty() {
                    Vec::new()
                } else {
                    vec![exe]
                },
            }
        })
        .collect();
    out.sort_by_key(|p| p.pid);
    out
}

/// The pids of the job's live processes.
fn job_pids(job: HANDLE) -> Vec<u32> {
    let mut slots = 256usize;
    loop {
        // Two u32 counters then `slots` pointer-sized ids, in a u64 buffer for alignment.
        let mut buf = vec![0u64; 1 + slots];
        let bytes = (buf.len() * 8) as u32;
        // SAFETY: `buf` is writable for `bytes` bytes and aligned for the structure.
        let ok = unsafe {
            QueryInformationJobObject(
                job,
                JobObjectBasicProcessIdList,
                buf.as_mut_ptr().cast(),
                bytes,
                std::ptr::null_mut(),
            )
        };
        let assigned = (buf[0] & 0xffff_ffff) as usize;
        let listed = (buf[0] >> 32) as usize;
        if ok == 0 && assigned <= slots {
            return Vec::new();
        }
        if assigned > slots && slots < 1 << 16 {
            slots = assigned.next_power_of_two();
            continue;
        }
        return buf[1..=listed.min(slots)]
            .iter()
            .map(|&id| id as u32)
            .collect();
    }
}

/// (pid, parent pid, program name) of every process on the machine.
fn process_table() -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    // SAFETY: the snapshot handle is closed below; the entry is initialised with its size.
    unsafe {
        let snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
        if snap == INVALID_HANDLE_VALUE || snap.is_null() {
            return out;
        }
        let mut entry: PROCESSENTRY32W = std::mem::zeroed();
        entry.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
        let mut more = Process32FirstW(snap, &mut entry) != 0;
        while more {
            let len = entry
                .szExeFile
                .iter()
                .position(|c| *c == 0)
                .unwrap_or(entry.szExeFile.len());
            out.push((
                entry.th32ProcessID,
                entry.th32ParentProcessID,
                String::from_utf16_lossy(&entry.szExeFile[..len]),
            ));
            more = Process32NextW(snap, &mut entry) != 0;
        }
        CloseHandle(snap);
    }
    out
}

fn alive(pid: u32) -> bool {
    // SAFETY: the handle is closed before returning.
    unsafe {
        let h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if h.is_null() {
            return false;
        }
        let mut code = 0u32;
        let ok = GetExitCodeProcess(h, &mut code) != 0;
        CloseHandle(h);
        ok && code == STILL_ACTIVE
    }
}

fn terminate(pid: u32) -> bool {
    // SAFETY: the handle is closed before returning.
    unsafe {
        let h = OpenProcess(PROCESS_TERMINATE, 0, pid);
        if h.is_null() {
            return false;
        }
        let ok = TerminateProcess(h, KILLED_EXIT_CODE) != 0;
        CloseHandle(h);
        ok
    }
}

/// CPU time used so far by every process of the run's job, in 10 ms ticks (the unit of Linux's
/// clock ticks, so the busy threshold means the same). `None` without a job.
/// The job's CPU time, in clock ticks (Windows keeps no cheap per-process run state: never
/// `runnable`).
pub fn group_activity(pgid: u32) -> Option<crate::runtime::load::Activity> {
    group_cpu_ticks(pgid).map(|cpu_ticks| crate::runtime::load::Activity {
        cpu_ticks,
        runnable: false,
    })
}

fn group_cpu_ticks(pgid: u32) -> Option<u64> {
    let run = run_of(pgid)?;
    let job = job_of(&run)?;
    // SAFETY: the structure is plain data, written by the call for its full size.
    unsafe {
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = std::mem::zeroed();
        let ok = QueryInformationJobObject(
            job,
            JobObjectBasicAccountingInformation,
            (&raw mut info).cast(),
            std::mem::size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
            std::ptr::null_mut(),
        );
        if ok == 0 {
            return None;
        }
        // 100 ns units.
        Some((info.TotalUserTime + info.TotalKernelTime).max(0) as u64 / 100_000)
    }
}

/// Terminates the given processes.
pub fn kill_all(procs: &[ProcInfo]) {
    for p in procs {
        terminate(p.pid as u32);
    }
}
