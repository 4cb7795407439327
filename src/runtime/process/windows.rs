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

use super::{GroupSignal, ProcInfo};
use std::sync::Mutex;
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
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
    PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_TERMINATE, ResumeThread, THREAD_SUSPEND_RESUME,
    TerminateProcess,
};

/// The exit code of a process the guard terminates.
const KILLED_EXIT_CODE: u32 = 1;
/// `STILL_ACTIVE`: what `GetExitCodeProcess` says of a running process.
const STILL_ACTIVE: u32 = 259;

/// The job of each live run, by server pid (a `HANDLE` kept as an address: handles are not
/// `Send`, but a job handle may be used from any thread).
fn jobs() -> std::sync::MutexGuard<'static, Vec<(u32, usize)>> {
    static JOBS: Mutex<Vec<(u32, usize)>> = Mutex::new(Vec::new());
    JOBS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn job_of(pid: u32) -> Option<HANDLE> {
    jobs()
        .iter()
        .find(|(p, _)| *p == pid)
        .map(|(_, job)| *job as HANDLE)
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
    if let Some(process) = child.raw_handle() {
        put_in_job(process as HANDLE, pid);
    }
    match resume_threads(pid) {
        0 => Err(format!(
            "the server (pid {pid}) was created suspended and could not be resumed"
        )),
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

fn put_in_job(process: HANDLE, pid: u32) {
    // Windows reuses pids soon: a job still filed under this pid belongs to a finished run.
    release(pid);
    // SAFETY: plain Win32 calls on handles this function owns (`job`) or borrows for the call
    // (`process`, the caller's live child); the limit structure is fully initialised.
    unsafe {
        let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
        if job.is_null() {
            return;
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
            return;
        }
        jobs().push((pid, job as usize));
    }
}

/// Closes the run's job (kill-on-close ends whatever of it is left).
pub(super) fn release(pid: u32) {
    let job = {
        let mut jobs = jobs();
        let Some(at) = jobs.iter().position(|(p, _)| *p == pid) else {
            return;
        };
        jobs.remove(at).1
    };
    // SAFETY: the handle came from CreateJobObjectW and was removed from the table: closed once.
    unsafe {
        CloseHandle(job as HANDLE);
    }
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

/// `Terminate`: CTRL_BREAK to the server's process group (false when the guard has no console to
/// send it through). `Continue`: nothing to do. `Kill`: terminates the whole job.
pub(super) fn signal_group(pid: u32, signal: GroupSignal) -> bool {
    match signal {
        // SAFETY: no pointers; fails cleanly without a console.
        GroupSignal::Terminate => unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid) != 0 },
        GroupSignal::Continue => true,
        GroupSignal::Kill => match job_of(pid) {
            // SAFETY: a live job handle from the table.
            Some(job) => unsafe { TerminateJobObject(job, KILLED_EXIT_CODE) != 0 },
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
    let pids = match job_of(server_pid) {
        Some(job) => job_pids(job),
        None if alive(server_pid) => vec![server_pid],
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
pub fn group_cpu_ticks(pgid: u32) -> Option<u64> {
    let job = job_of(pgid)?;
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
