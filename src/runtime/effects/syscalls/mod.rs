//! The system-call observer (Linux): effects seen at the boundary no server can bypass.
//!
//! Right before the guard starts a server, a dedicated thread of the guard sets
//! `PR_SET_NO_NEW_PRIVS` on itself and installs a seccomp filter ([`filter`]) with
//! `SECCOMP_FILTER_FLAG_NEW_LISTENER`; then that thread spawns the server. The filter is
//! inherited by the server and every process it starts (fork, `setsid`, daemons alike) and
//! cannot be removed by them; the listener is a file descriptor of the guard, so no descriptor
//! crosses into the server and nothing of the filter remains in the guard once the thread has
//! spawned (it ends right after). Why a thread and not `pre_exec`: the child would have to send
//! the listener back with `sendmsg`, a call its own filter traps and nobody could answer yet.
//!
//! A supervisor thread per server process receives each trapped call
//! (`SECCOMP_IOCTL_NOTIF_RECV`; it is serviced from before the spawn, since the server's own
//! `execve` is trapped and `spawn` waits for it), reads the arguments out of the caller's memory
//! (`/proc/<pid>/mem`, opened and then validated with `SECCOMP_IOCTL_NOTIF_ID_VALID` so a
//! recycled pid is never read), records the effect under the [`Recorder`]'s current tag, and
//! lets the call continue (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`). The caller waits for that answer,
//! so the time is exact and a process that lives for a millisecond is still seen whole.
//!
//! Policy `contain` (the default): once the process has been sent hostile input (the recorder's
//! phase became `adversarial`), a network call is answered `ECONNREFUSED` instead, so nothing
//! leaves the machine; a UDP `connect` to port 53 is answered as if it succeeded (it sends
//! nothing) so the resolver goes on to send its question — which the observer reads, then
//! refuses. Local IPC (AF_UNIX), the canary and execs always continue. Policy `observe` lets
//! everything through.
//!
//! What it does not see: traffic through `io_uring`, `write`/`send` on a socket connected
//! before the filter existed (none: it exists before the first instruction of the server), the
//! question of a lookup sent with `send`/`write` on a connected UDP socket (Go's resolver, musl
//! in some builds, c-ares): the `connect` to port 53 is still recorded, with its address.

pub mod filter;

#[cfg(target_os = "linux")]
pub mod decode;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::Observer;
#[cfg(not(target_os = "linux"))]
pub use stub::Observer;

/// Set (to anything but `0` or empty) to keep the system-call observer off: the other observers
/// run and the report says why this one did not (tests of the fallback path use it).
pub const DISABLE_ENV: &str = "MCP_STDIO_GUARD_NO_SYSCALL_OBSERVER";

/// What a trapped network call made during hostile input gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Recorded and let through.
    Observe,
    /// Recorded and refused (`ECONNREFUSED`) once the process has been sent hostile input.
    #[default]
    Contain,
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Observe => "observe",
            Policy::Contain => "contain",
        }
    }

    pub fn parse(s: &str) -> Option<Policy> {
        match s {
            "observe" => Some(Policy::Observe),
            "contain" => Some(Policy::Contain),
            _ => None,
        }
    }
}

/// Why the observer cannot run here at all (before any spawn); `None` when it may.
pub fn unavailable() -> Option<String> {
    if std::env::var_os(DISABLE_ENV).is_some_and(|v| !v.is_empty() && v != "0") {
        return Some(format!("disabled by {DISABLE_ENV}"));
    }
    if filter::Native::this().is_none() {
        return Some(if cfg!(target_os = "linux") {
            "not built for this CPU architecture (x86-64 and aarch64 only)".into()
        } else {
            "system-call observation needs Linux seccomp user notification".into()
        });
    }
    #[cfg(target_os = "linux")]
    {
        linux::kernel_problem()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// What became of the filter for one server process.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Not installed yet (the server was not spawned).
    Pending,
    Installed,
    /// It could not be installed: why.
    Failed(String),
}

/// What the observer of one process did.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub status: Status,
    /// Calls the filter handed to the guard.
    pub trapped: u64,
    /// Network calls refused under `contain`.
    pub contained: u64,
}

/// Elsewhere the observer never starts ([`unavailable`] says why first).
#[cfg(not(target_os = "linux"))]
mod stub {
    use super::{Policy, Summary};
    use crate::runtime::effects::Recorder;

    pub struct Observer;

    impl Observer {
        pub fn start(
            _recorder: Recorder,
            _policy: Policy,
            _canary: Option<std::net::SocketAddr>,
        ) -> std::io::Result<Observer> {
            Err(std::io::Error::other(
                "no system-call observer on this platform",
            ))
        }

        pub fn installed(&self) -> bool {
            false
        }

        pub fn finish(self) -> Summary {
            Summary {
                status: super::Status::Pending,
                trapped: 0,
                contained: 0,
            }
        }
    }

    impl crate::runtime::process::SpawnHook for Observer {
        fn on_spawn_thread(&self, _program: &std::path::Path) -> Result<(), String> {
            Err("no system-call observer on this platform".into())
        }
    }
}
