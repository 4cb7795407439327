//! The Linux parts of the system-call observer: installing the filter on the spawning thread,
//! and the supervisor thread that answers every trapped call.

use super::decode::{self, Destination, UnixName};
use super::filter::{self, Native};
use super::{Policy, Status, Summary};
use crate::runtime::effects::dns;
use crate::runtime::effects::{EffectKind, Recorder};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fs::File;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

/// The most bytes of one string (a path, an argument) read out of a process.
const MAX_STRING: usize = 4096;
/// The most arguments of one exec kept, and their total size.
const MAX_ARGS: usize = 256;
const MAX_ARGV_BYTES: usize = 32 * 1024;
/// The most of a datagram read to find a DNS question.
const MAX_DNS_READ: usize = 512;
/// Sockets remembered as connected to port 53, waiting for their question.
const MAX_DNS_SOCKETS: usize = 1024;

/// `USER_NOTIF` needs Linux 5.0, `SECCOMP_USER_NOTIF_FLAG_CONTINUE` 5.5.
const MIN_KERNEL: (u32, u32) = (5, 5);

/// Why this kernel cannot run the observer, if it cannot.
pub(super) fn kernel_problem() -> Option<String> {
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname fills the struct it is given.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return Some("uname failed: the kernel version is unknown".into());
    }
    let release: Vec<u8> = uts
        .release
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    let release = String::from_utf8_lossy(&release).into_owned();
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse::<u32>().ok());
    let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (version < MIN_KERNEL).then(|| {
        format!(
            "Linux {release} has no seccomp user notification with CONTINUE (needs {}.{}+)",
            MIN_KERNEL.0, MIN_KERNEL.1
        )
    })
}

/// Counters of one supervisor.
#[derive(Debug, Default)]
struct Counters {
    trapped: AtomicU64,
    contained: AtomicU64,
}

/// The system-call observer of one server process.
pub struct Observer {
    status: Mutex<Status>,
    handoff: Mutex<Option<mpsc::SyncSender<OwnedFd>>>,
    stop: Option<OwnedFd>,
    thread: Option<std::thread::JoinHandle<()>>,
    counters: Arc<Counters>,
}

impl Observer {
    /// Starts the supervisor thread; it waits for the listener of [`Observer::install`].
    pub fn start(
        recorder: Recorder,
        policy: Policy,
        canary: Option<SocketAddr>,
    ) -> std::io::Result<Observer> {
        let native = Native::this().ok_or_else(|| std::io::Error::other("no native ABI"))?;
        let (stop_r, stop_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let (tx, rx) = mpsc::sync_channel::<OwnedFd>(1);
        let counters = Arc::new(Counters::default());
        let mut sup = Supervisor {
            native,
            recorder,
            policy,
            canary,
            counters: counters.clone(),
            startup_exec_seen: false,
            dns_sockets: HashMap::new(),
        };
        let thread = std::thread::Builder::new()
            .name("mcp-guard-seccomp".into())
            .spawn(move || {
                if let Ok(listener) = rx.recv() {
                    sup.serve(&listener, &stop_r);
                }
            })?;
        Ok(Observer {
            status: Mutex::new(Status::Pending),
            handoff: Mutex::new(Some(tx)),
            stop: Some(stop_w),
            thread: Some(thread),
            counters,
        })
    }

    /// Installs the filter on the calling thread (a fresh thread that spawns the server next
    /// and then ends). `Err` leaves the thread as it was only when no_new_privs was not set:
    /// the caller spawns from another thread on any error.
    pub fn install(&self, program: &Path) -> Result<(), String> {
        let result = install_here(program, &self.handoff);
        *self.status.lock().unwrap_or_else(|p| p.into_inner()) = match &result {
            Ok(()) => Status::Installed,
            Err(why) => Status::Failed(why.clone()),
        };
        result
    }

    pub fn installed(&self) -> bool {
        *self.status.lock().unwrap_or_else(|p| p.into_inner()) == Status::Installed
    }

    /// Stops the supervisor (the run's processes are gone) and says what it did.
    pub fn finish(mut self) -> Summary {
        self.handoff
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(stop) = self.stop.take() {
            let _ = nix::unistd::write(&stop, b"x");
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        Summary {
            status: self
                .status
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            trapped: self.counters.trapped.load(Ordering::Relaxed),
            contained: self.counters.contained.load(Ordering::Relaxed),
        }
    }
}

impl crate::runtime::process::SpawnHook for Observer {
    fn on_spawn_thread(&self, program: &Path) -> Result<(), String> {
        self.install(program)
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        self.handoff
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(stop) = self.stop.take() {
            let _ = nix::unistd::write(&stop, b"x");
        }
    }
}

fn install_here(
    program: &Path,
    handoff: &Mutex<Option<mpsc::SyncSender<OwnedFd>>>,
) -> Result<(), String> {
    if let Some(why) = privileged(program) {
        return Err(why);
    }
    let native = Native::this().ok_or("no native ABI")?;
    let insns = filter::program(&native);
    let mut prog: Vec<libc::sock_filter> = insns
        .iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect();
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_mut_ptr(),
    };
    // SAFETY: prctl with integer arguments; affects only this thread (and what it spawns).
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(format!(
            "PR_SET_NO_NEW_PRIVS was refused: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: the program outlives the call; the kernel copies it.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &fprog as *const libc::sock_fprog,
        )
    };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        return Err(match err.raw_os_error() {
            Some(libc::EINVAL) => format!(
                "the kernel refused a seccomp listener ({err}): no user notification on this kernel"
            ),
            Some(libc::EBUSY) => format!(
                "the guard already runs under a seccomp listener (nested supervision): {err}"
            ),
            Some(libc::EACCES | libc::EPERM) => {
                format!(
                    "a security policy forbids seccomp filters here (a container profile?): {err}"
                )
            }
            Some(libc::ENOSYS) => format!("this kernel has no seccomp: {err}"),
            _ => format!("seccomp(SECCOMP_SET_MODE_FILTER) failed: {err}"),
        });
    }
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    let listener = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
    // The listener must not leak into the server: it is close-on-exec from the kernel, and the
    // spawn closes every other descriptor it does not pass.
    let sender = handoff.lock().unwrap_or_else(|p| p.into_inner()).take();
    match sender {
        Some(tx) if tx.send(listener).is_ok() => Ok(()),
        // The supervisor is gone: no one would answer the trapped calls. The filter is on this
        // thread now; the caller must not spawn from it.
        _ => Err("the supervisor thread is gone".into()),
    }
}

/// Why a program must not run with no_new_privs (it is setuid, setgid or has file
/// capabilities: it would run without them), or `None`.
fn privileged(program: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(program).ok()?;
    if meta.mode() & (libc::S_ISUID | libc::S_ISGID) != 0 {
        return Some(format!(
            "{} is setuid/setgid: under the filter (no_new_privs) it would run without its privileges",
            program.display()
        ));
    }
    let name = c"security.capability";
    let path = std::ffi::CString::new(program.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: a size query (null buffer) on NUL-terminated strings.
    let n = unsafe { libc::getxattr(path.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) };
    (n > 0).then(|| {
        format!(
            "{} has file capabilities: under the filter (no_new_privs) it would run without them",
            program.display()
        )
    })
}

/// The answer to one trapped call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Continue,
    /// Fail with this errno.
    Refuse(i32),
    /// Return this value without running the call.
    Pretend(i64),
}

struct Supervisor {
    native: Native,
    recorder: Recorder,
    policy: Policy,
    canary: Option<SocketAddr>,
    counters: Arc<Counters>,
    /// The server's own first exec (the spawn) is start-up, not an effect.
    startup_exec_seen: bool,
    /// (tid, fd) of sockets connected to port 53 → the effect their question completes.
    dns_sockets: HashMap<(u32, u64), usize>,
}

/// The sizes the kernel uses for the notification structures (it may be newer than libc).
struct Sizes {
    notif: usize,
    resp: usize,
}

fn sizes() -> Sizes {
    let mut s = libc::seccomp_notif_sizes {
        seccomp_notif: 0,
        seccomp_notif_resp: 0,
        seccomp_data: 0,
    };
    // SAFETY: the kernel fills the struct.
    let ok = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_NOTIF_SIZES,
            0,
            &mut s as *mut libc::seccomp_notif_sizes,
        )
    } == 0;
    let notif = std::mem::size_of::<libc::seccomp_notif>();
    let resp = std::mem::size_of::<libc::seccomp_notif_resp>();
    if ok {
        Sizes {
            notif: notif.max(s.seccomp_notif as usize),
            resp: resp.max(s.seccomp_notif_resp as usize),
        }
    } else {
        Sizes { notif, resp }
    }
}

impl Supervisor {
    fn serve(&mut self, listener: &OwnedFd, stop: &OwnedFd) {
        let sizes = sizes();
        // u64 words: the kernel structures are 8-byte aligned.
        let mut req = vec![0u64; sizes.notif.div_ceil(8)];
        let mut resp = vec![0u64; sizes.resp.div_ceil(8)];
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: listener.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: stop.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: two valid pollfds.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if n < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return;
            }
            if fds[1].revents != 0 {
                return;
            }
            if fds[0].revents & libc::POLLIN == 0 {
                // POLLHUP: every process under the filter is gone.
                if fds[0].revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                    return;
                }
                continue;
            }
            req.fill(0);
            // SAFETY: a zeroed buffer of the kernel's notification size.
            let got = unsafe {
                libc::ioctl(
                    listener.as_raw_fd(),
                    libc::SECCOMP_IOCTL_NOTIF_RECV,
                    req.as_mut_ptr(),
                )
            };
            if got != 0 {
                // ENOENT: the caller died before we read it; EINTR: try again.
                continue;
            }
            // SAFETY: the buffer holds at least a `seccomp_notif` and is aligned for it.
            let notif: libc::seccomp_notif =
                unsafe { std::ptr::read(req.as_ptr() as *const libc::seccomp_notif) };
            self.counters.trapped.fetch_add(1, Ordering::Relaxed);
            let answer = self.handle(listener, &notif);
            resp.fill(0);
            let r = libc::seccomp_notif_resp {
                id: notif.id,
                val: match answer {
                    Answer::Pretend(v) => v,
                    _ => 0,
                },
                error: match answer {
                    Answer::Refuse(errno) => -errno,
                    _ => 0,
                },
                flags: match answer {
                    Answer::Continue => libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
                    _ => 0,
                },
            };
            // SAFETY: the response buffer is at least a `seccomp_notif_resp`, aligned.
            unsafe {
                std::ptr::write(resp.as_mut_ptr() as *mut libc::seccomp_notif_resp, r);
                // ENOENT: the caller is gone (killed); nothing to answer.
                libc::ioctl(
                    listener.as_raw_fd(),
                    libc::SECCOMP_IOCTL_NOTIF_SEND,
                    resp.as_mut_ptr(),
                );
            }
        }
    }

    fn handle(&mut self, listener: &OwnedFd, n: &libc::seccomp_notif) -> Answer {
        let nr = n.data.nr as u32;
        let args = n.data.args;
        let tid = n.pid;
        let native = self.native;
        if n.data.arch != native.arch || nr & filter::X32_SYSCALL_BIT != 0 {
            return self.foreign(n);
        }
        let mem = match Mem::open(tid, listener, n.id) {
            Ok(mem) => mem,
            Err(Gone::Yes) => return Answer::Continue,
            Err(Gone::Unreadable(why)) => return self.unreadable(n, &why),
        };
        if nr == native.execve || nr == native.execveat {
            let (dirfd, path, argv, flags) = if nr == native.execve {
                (libc::AT_FDCWD, args[0], args[1], 0)
            } else {
                (args[0] as i32, args[1], args[2], args[4] as i32)
            };
            self.exec(&mem, tid, nr == native.execveat, dirfd, path, argv, flags);
            return Answer::Continue;
        }
        let fd = args[0];
        if nr == native.connect {
            let Some(raw) = mem.read(args[1], (args[2] as usize).min(128)) else {
                return Answer::Continue;
            };
            return match decode::sockaddr(&raw) {
                Some(dest) => self.destination(tid, fd, "connect", dest, None),
                None => Answer::Continue,
            };
        }
        if nr == native.sendto {
            let Some(raw) = mem.read(args[4], (args[5] as usize).min(128)) else {
                return Answer::Continue;
            };
            let payload = (args[1], args[2]);
            return match decode::sockaddr(&raw) {
                Some(dest) => {
                    self.destination(tid, fd, "sendto", dest, Some((&mem, vec![payload])))
                }
                None => Answer::Continue,
            };
        }
        if nr == native.sendmsg || nr == native.sendmmsg {
            let (name, count) = if nr == native.sendmsg {
                ("sendmsg", 1)
            } else {
                ("sendmmsg", (args[2] as usize).clamp(0, 2))
            };
            let stride = if nr == native.sendmsg {
                decode::MSGHDR_SIZE
            } else {
                decode::MMSGHDR_SIZE
            };
            return self.messages(&mem, tid, fd, name, args[1], count, stride);
        }
        Answer::Continue
    }

    /// A call through another ABI (i386, x32): recorded by number, refused under `contain`
    /// unless it is an exec.
    fn foreign(&mut self, n: &libc::seccomp_notif) -> Answer {
        let nr = n.data.nr as u32;
        let x32 = n.data.arch == self.native.arch;
        let abi = if x32 { "x32" } else { "i386" };
        let plain = nr & !filter::X32_SYSCALL_BIT;
        let exec = if x32 {
            [59, 322, 520, 545].contains(&plain)
        } else {
            [11, 358].contains(&nr)
        };
        let contain = !exec && self.containing();
        let (kind, what) = if exec {
            (EffectKind::Exec, "exec")
        } else {
            (EffectKind::Network, "socket call")
        };
        let summary = format!(
            "an {abi} {what} (system call {plain}), not decoded{}",
            if contain {
                " (refused by the guard)"
            } else {
                ""
            }
        );
        self.push(
            kind,
            summary,
            json!({"observer": "syscall", "abi": abi, "nr": plain, "pid": n.pid, "contained": contain}),
        );
        if contain {
            self.counters.contained.fetch_add(1, Ordering::Relaxed);
            Answer::Refuse(libc::ECONNREFUSED)
        } else {
            Answer::Continue
        }
    }

    /// A live caller whose memory the guard cannot read (a process that made itself
    /// non-dumpable, a ptrace policy): the call is recorded without its arguments.
    fn unreadable(&mut self, n: &libc::seccomp_notif, why: &str) -> Answer {
        let nr = n.data.nr as u32;
        let native = self.native;
        let exec = nr == native.execve || nr == native.execveat;
        let call = match nr {
            x if x == native.connect => "connect",
            x if x == native.sendto => "sendto",
            x if x == native.sendmsg => "sendmsg",
            x if x == native.sendmmsg => "sendmmsg",
            x if x == native.execveat => "execveat",
            _ => "execve",
        };
        // Without its arguments a sendmsg may be a plain send on a connected socket: refused
        // only when it is a connect or a sendto with an address.
        let contain = !exec && call != "sendmsg" && call != "sendmmsg" && self.containing();
        self.push(
            if exec {
                EffectKind::Exec
            } else {
                EffectKind::Network
            },
            format!(
                "{call} by pid {}, arguments unreadable ({why}){}",
                n.pid,
                if contain { " (refused by the guard)" } else { "" }
            ),
            json!({"observer": "syscall", "syscall": call, "pid": n.pid, "unreadable": why, "contained": contain}),
        );
        self.refuse_if(contain)
    }

    fn containing(&self) -> bool {
        self.policy == Policy::Contain && self.recorder.hostile()
    }

    fn push(&self, kind: EffectKind, summary: String, detail: Value) -> usize {
        self.recorder
            .push(kind, self.recorder.elapsed(), summary, detail)
    }

    /// A `connect` or a send to `dest`. `payload`: where the data is, for a DNS question.
    fn destination(
        &mut self,
        tid: u32,
        fd: u64,
        call: &str,
        dest: Destination,
        payload: Option<(&Mem, Vec<(u64, u64)>)>,
    ) -> Answer {
        let addr = match dest {
            Destination::Ip(addr) => addr,
            Destination::Unix(name) => {
                let summary = format!("{call} unix {name}");
                let kind = match name {
                    UnixName::Path(_) => "path",
                    UnixName::Abstract(_) => "abstract",
                    UnixName::Unnamed => "unnamed",
                };
                self.push(
                    EffectKind::Ipc,
                    summary,
                    json!({"observer": "syscall", "syscall": call, "pid": tid, "family": "unix", "path": name.to_string(), "name": kind}),
                );
                return Answer::Continue;
            }
            // Kernel queries and dissolving a UDP association: not effects.
            Destination::Netlink | Destination::Unspec => return Answer::Continue,
            Destination::Other(family) => {
                let contain = self.containing();
                self.push(
                    EffectKind::Network,
                    format!(
                        "{call} to an address of family {family}{}",
                        if contain { " (refused by the guard)" } else { "" }
                    ),
                    json!({"observer": "syscall", "syscall": call, "pid": tid, "family": family, "contained": contain}),
                );
                return self.refuse_if(contain);
            }
        };
        // The canary records its own connections, with the URL.
        if self.canary == Some(addr) {
            return Answer::Continue;
        }
        let protocol = socket_protocol(tid, fd);
        let family = if addr.is_ipv4() { "ipv4" } else { "ipv6" };
        let contain = self.containing();
        let questions = payload.and_then(|(mem, iovs)| question(mem, &iovs));
        let udp = protocol.as_deref() == Some("udp");
        // A UDP connect to a name server, contained: pretend it worked (it sends nothing), so
        // the resolver sends its question through a trapped call — then that is refused.
        let pretend = contain && call == "connect" && udp && addr.port() == 53;
        let proto = protocol.as_deref().unwrap_or("?");
        let refused = if contain && !pretend {
            " (refused by the guard)"
        } else {
            ""
        };
        let mut detail = json!({
            "observer": "syscall",
            "syscall": call,
            "pid": tid,
            "family": family,
            "protocol": proto,
            "address": addr.ip().to_string(),
            "port": addr.port(),
            "endpoint": format!("{addr}/{proto}"),
            "contained": contain,
        });
        let (kind, summary) = if addr.port() == 53 {
            match &questions {
                Some(q) => {
                    detail["question"] = question_value(q);
                    (
                        EffectKind::Dns,
                        format!(
                            "DNS lookup of {} to {addr}/{proto}{refused}",
                            describe_questions(q)
                        ),
                    )
                }
                None => (
                    EffectKind::Dns,
                    format!("DNS {call} to {addr}/{proto}, question not seen{refused}"),
                ),
            }
        } else {
            (
                EffectKind::Network,
                format!("{call} {proto} {addr}{refused}"),
            )
        };
        let index = self.push(kind, summary, detail);
        if addr.port() == 53 && questions.is_none() && call == "connect" {
            if self.dns_sockets.len() >= MAX_DNS_SOCKETS {
                self.dns_sockets.clear();
            }
            self.dns_sockets.insert((tid, fd), index);
        }
        if pretend {
            self.counters.contained.fetch_add(1, Ordering::Relaxed);
            return Answer::Pretend(0);
        }
        self.refuse_if(contain)
    }

    fn refuse_if(&self, contain: bool) -> Answer {
        if contain {
            self.counters.contained.fetch_add(1, Ordering::Relaxed);
            Answer::Refuse(libc::ECONNREFUSED)
        } else {
            Answer::Continue
        }
    }

    /// `sendmsg`/`sendmmsg`: the first message(s) say where they go (or, without an address,
    /// complete the question of a socket connected to port 53).
    #[allow(clippy::too_many_arguments)]
    fn messages(
        &mut self,
        mem: &Mem,
        tid: u32,
        fd: u64,
        call: &str,
        at: u64,
        count: usize,
        stride: usize,
    ) -> Answer {
        let mut payloads = Vec::new();
        let mut name = None;
        for i in 0..count.max(1) {
            let Some(raw) = mem.read(at + (i * stride) as u64, decode::MSGHDR_SIZE) else {
                break;
            };
            let Some(h) = decode::msghdr(&raw) else { break };
            if i == 0 && h.name != 0 && h.name_len > 0 {
                name = mem.read(h.name, (h.name_len as usize).min(128));
            }
            if h.iov != 0
                && h.iov_len > 0
                && let Some((base, len)) = mem.read(h.iov, 16).as_deref().and_then(decode::iovec)
            {
                payloads.push((base, len));
            }
        }
        if let Some(raw) = name {
            return match decode::sockaddr(&raw) {
                Some(dest) => self.destination(tid, fd, call, dest, Some((mem, payloads))),
                None => Answer::Continue,
            };
        }
        // No address: a connected socket. Only a name server's question is of interest.
        let Some(&index) = self.dns_sockets.get(&(tid, fd)) else {
            return Answer::Continue;
        };
        self.dns_sockets.remove(&(tid, fd));
        let Some(q) = question(mem, &payloads) else {
            return if self.containing() {
                self.refuse_if(true)
            } else {
                Answer::Continue
            };
        };
        let contain = self.containing();
        if let Some(effect) = self.recorder.effect(index) {
            let mut detail = effect.detail.clone();
            detail["question"] = question_value(&q);
            detail["contained"] = Value::from(contain);
            let summary = format!(
                "DNS lookup of {} to {}{}",
                describe_questions(&q),
                detail["endpoint"].as_str().unwrap_or("?"),
                if contain {
                    " (refused by the guard)"
                } else {
                    ""
                }
            );
            self.recorder.update(index, summary, detail);
        }
        self.refuse_if(contain)
    }

    #[allow(clippy::too_many_arguments)]
    fn exec(
        &mut self,
        mem: &Mem,
        tid: u32,
        at: bool,
        dirfd: i32,
        path: u64,
        argv: u64,
        flags: i32,
    ) {
        let given = mem
            .cstr(path, MAX_STRING)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let program = if at && given.is_empty() && flags & libc::AT_EMPTY_PATH != 0 {
            read_link(&format!("/proc/{tid}/fd/{dirfd}"))
        } else if given.starts_with('/') {
            given.clone()
        } else if dirfd == libc::AT_FDCWD {
            decode::absolute(&given, &read_link(&format!("/proc/{tid}/cwd")))
        } else {
            decode::absolute(&given, &read_link(&format!("/proc/{tid}/fd/{dirfd}")))
        };
        // Seen from the caller's root (a chroot or a mount namespace of its own).
        let mut seen = format!("/proc/{tid}/root{program}");
        if std::fs::metadata(&seen).is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
        {
            seen = program.clone();
        }
        if !executable(Path::new(&seen)) {
            // `execvp` tries each PATH folder: the attempts that cannot succeed are not effects.
            return;
        }
        if !self.startup_exec_seen {
            self.startup_exec_seen = true;
            return;
        }
        let resolved = std::fs::canonicalize(&seen)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| program.clone());
        let (args, truncated) = mem.argv(argv);
        let shown = crate::redact::argv(&args);
        let interpreter = read_head(Path::new(&seen)).and_then(|h| decode::shebang(&h));
        let mut detail = json!({
            "observer": "syscall",
            "syscall": if at { "execveat" } else { "execve" },
            "pid": tid,
            "program": program,
            "resolved": resolved,
            "argv": shown,
        });
        if truncated {
            detail["argvTruncated"] = Value::from(true);
        }
        if let Some(i) = &interpreter {
            detail["interpreter"] = Value::from(i.as_str());
        }
        let line = if shown.is_empty() {
            program.clone()
        } else {
            shown.join(" ")
        };
        let summary = format!("`{line}` ({resolved})");
        self.push(EffectKind::Exec, summary, detail);
    }
}

fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn read_head(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = File::open(path).ok()?.read(&mut head).ok()?;
    Some(head[..n].to_vec())
}

fn read_link(path: &str) -> String {
    std::fs::read_link(path)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `tcp`, `udp`, … for a socket of another process, from its `system.sockprotoname` xattr.
fn socket_protocol(tid: u32, fd: u64) -> Option<String> {
    let path = std::ffi::CString::new(format!("/proc/{tid}/fd/{fd}")).ok()?;
    let mut buf = [0u8; 32];
    // SAFETY: NUL-terminated strings and a buffer of the size given.
    let n = unsafe {
        libc::getxattr(
            path.as_ptr(),
            c"system.sockprotoname".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n <= 0 {
        return None;
    }
    let name = String::from_utf8_lossy(&buf[..n as usize])
        .trim_end_matches('\0')
        .to_ascii_lowercase();
    // TCPv6 → tcp: the family is said separately.
    Some(name.trim_end_matches("v6").to_string())
}

fn question(mem: &Mem, iovs: &[(u64, u64)]) -> Option<Vec<dns::Question>> {
    let mut out: Vec<dns::Question> = Vec::new();
    for &(base, len) in iovs {
        let Some(bytes) = mem.read(base, (len as usize).min(MAX_DNS_READ)) else {
            continue;
        };
        for q in dns::questions(&bytes).unwrap_or_default() {
            if !out.contains(&q) {
                out.push(q);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// `api.example.com (A, AAAA)`.
fn describe_questions(q: &[dns::Question]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for x in q {
        if !names.contains(&x.name.as_str()) {
            names.push(&x.name);
        }
    }
    let types: Vec<String> = q.iter().map(dns::Question::type_name).collect();
    format!("{} ({})", names.join(", "), types.join(", "))
}

fn question_value(q: &[dns::Question]) -> Value {
    Value::from(
        q.iter()
            .map(|x| json!({"name": x.name, "type": x.type_name()}))
            .collect::<Vec<_>>(),
    )
}

/// Why a caller's memory could not be opened.
enum Gone {
    /// The call is no longer pending (the caller died).
    Yes,
    Unreadable(String),
}

/// The memory of a process stopped in a trapped call.
struct Mem {
    file: File,
}

impl Mem {
    /// Opens `/proc/<tid>/mem`, then checks the notification is still live: only then is the
    /// file known to be the caller's (the pid was not recycled in between).
    fn open(tid: u32, listener: &OwnedFd, id: u64) -> Result<Mem, Gone> {
        let file = File::open(format!("/proc/{tid}/mem"));
        let mut id = id;
        // SAFETY: the ioctl reads one u64.
        let valid = unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
                &mut id as *mut u64,
            )
        } == 0;
        match (valid, file) {
            (false, _) => Err(Gone::Yes),
            (true, Ok(file)) => Ok(Mem { file }),
            (true, Err(e)) => Err(Gone::Unreadable(e.to_string())),
        }
    }

    fn read(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        if addr == 0 || len == 0 {
            return None;
        }
        let mut buf = vec![0u8; len];
        let mut got = 0;
        while got < len {
            match self.file.read_at(&mut buf[got..], addr + got as u64) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        (got > 0).then(|| {
            buf.truncate(got);
            buf
        })
    }

    /// A NUL-terminated string, read a page at a time (never past a mapping it does not need).
    fn cstr(&self, addr: u64, max: usize) -> Option<Vec<u8>> {
        if addr == 0 {
            return None;
        }
        let mut out = Vec::new();
        let mut at = addr;
        while out.len() < max {
            let to_page = 4096 - (at % 4096) as usize;
            let chunk = self.read(at, to_page.min(max - out.len()))?;
            if let Some(end) = chunk.iter().position(|b| *b == 0) {
                out.extend_from_slice(&chunk[..end]);
                return Some(out);
            }
            at += chunk.len() as u64;
            out.extend(chunk);
        }
        Some(out)
    }

    /// The argv of an exec: the strings, and whether it was cut at the caps.
    fn argv(&self, at: u64) -> (Vec<String>, bool) {
        let mut out = Vec::new();
        let mut total = 0usize;
        for i in 0..MAX_ARGS {
            let Some(ptr) = self.read(at + 8 * i as u64, 8) else {
                return (out, false);
            };
            if ptr.len() < 8 {
                return (out, false);
            }
            let p = decode::u64_at(&ptr, 0);
            if p == 0 {
                return (out, false);
            }
            let s = self.cstr(p, MAX_STRING).unwrap_or_default();
            total += s.len();
            out.push(String::from_utf8_lossy(&s).into_owned());
            if total > MAX_ARGV_BYTES {
                return (out, true);
            }
        }
        (out, true)
    }
}
