//! The seccomp filter of the system-call observer: a classic-BPF program that hands the guard
//! only the calls that are effects, and lets every other call run at full speed. Pure (the
//! program is data; `mod.rs` installs it).
//!
//! Trapped (`SECCOMP_RET_USER_NOTIF`), native ABI:
//! - `connect`: every outgoing connection (and a UDP socket's fixed peer), any family;
//! - `sendto` with a destination address (`args[4] != NULL`): datagrams to an address. Without
//!   one it is `send()` on a connected socket, whose peer `connect` already showed — not trapped,
//!   so a server's data plane costs nothing;
//! - `sendmsg`: BPF cannot read `msg_name` (it sees registers, not memory), so every call is
//!   trapped and the supervisor looks; rare outside UDP and local IPC;
//! - `sendmmsg`: glibc's resolver sends its A and AAAA questions in one `sendmmsg` on a UDP
//!   socket connected to the name server: trapping it is what names the lookup;
//! - `execve`, `execveat`: every program started, before it runs.
//!
//! On x86-64 the other ABIs a process can call through are trapped too (their numbers, not
//! decoded): x32 (`nr | 0x40000000`) and i386 (`int 0x80`, where sockets go through
//! `socketcall`). An unknown architecture is allowed (aarch64 runs no other ABI here).

/// `struct sock_filter` as the kernel reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

pub const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
pub const AUDIT_ARCH_I386: u32 = 0x4000_0003;
pub const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;
pub const X32_SYSCALL_BIT: u32 = 0x4000_0000;

pub const RET_ALLOW: u32 = 0x7fff_0000;
pub const RET_USER_NOTIF: u32 = 0x7fc0_0000;

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const AND_K: u16 = 0x54;
const RET_K: u16 = 0x06;

/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
const fn arg_lo(i: u32) -> u32 {
    16 + 8 * i
}
const fn arg_hi(i: u32) -> u32 {
    20 + 8 * i
}

/// The calls of the native ABI the filter traps, by number.
#[derive(Debug, Clone, Copy)]
pub struct Native {
    pub arch: u32,
    pub connect: u32,
    pub sendto: u32,
    pub sendmsg: u32,
    pub sendmmsg: u32,
    pub execve: u32,
    pub execveat: u32,
}

impl Native {
    /// This build's architecture; `None` where the observer is not built.
    pub fn this() -> Option<Native> {
        #[cfg(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        {
            Some(Native {
                arch: if cfg!(target_arch = "x86_64") {
                    AUDIT_ARCH_X86_64
                } else {
                    AUDIT_ARCH_AARCH64
                },
                connect: libc::SYS_connect as u32,
                sendto: libc::SYS_sendto as u32,
                sendmsg: libc::SYS_sendmsg as u32,
                sendmmsg: libc::SYS_sendmmsg as u32,
                execve: libc::SYS_execve as u32,
                execveat: libc::SYS_execveat as u32,
            })
        }
        #[cfg(not(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        {
            None
        }
    }
}

/// The i386 calls trapped under `AUDIT_ARCH_I386` (x86-64 kernels run 32-bit programs):
/// execve, socketcall, sendmmsg, execveat, connect, sendto, sendmsg.
pub const I386_TRAPPED: [u32; 7] = [11, 102, 345, 358, 362, 369, 370];
/// The x32 calls (number without the x32 bit): connect, sendto, sendmsg, sendmmsg, execve,
/// execveat under their x86-64 numbers, and x32's own sendmsg (518), execve (520), sendmmsg
/// (538), execveat (545).
pub const X32_TRAPPED: [u32; 10] = [42, 44, 46, 307, 59, 322, 518, 520, 538, 545];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Native,
    X32,
    I386,
    SendtoAddr,
    Notify,
    Allow,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Ld(u32),
    And(u32),
    /// if A == k goto t else goto f (`None`: the next instruction).
    Jeq(u32, Option<Label>, Option<Label>),
    Jge(u32, Option<Label>, Option<Label>),
    Ret(u32),
    At(Label),
}

/// The filter program for `native`.
pub fn program(native: &Native) -> Vec<Insn> {
    use Label::*;
    use Op::*;
    let mut ops = vec![Ld(ARCH), Jeq(native.arch, Some(Native), None)];
    if native.arch == AUDIT_ARCH_X86_64 {
        ops.push(Jeq(AUDIT_ARCH_I386, Some(I386), Some(Allow)));
    } else {
        ops.push(Ret(RET_ALLOW));
    }
    ops.push(At(Native));
    ops.push(Ld(NR));
    if native.arch == AUDIT_ARCH_X86_64 {
        ops.push(Jge(X32_SYSCALL_BIT, Some(X32), None));
    }
    for nr in [
        native.connect,
        native.execve,
        native.execveat,
        native.sendmsg,
        native.sendmmsg,
    ] {
        ops.push(Jeq(nr, Some(Notify), None));
    }
    ops.push(Jeq(native.sendto, Some(SendtoAddr), Some(Allow)));
    ops.push(At(SendtoAddr));
    ops.push(Ld(arg_lo(4)));
    ops.push(Jeq(0, None, Some(Notify)));
    ops.push(Ld(arg_hi(4)));
    ops.push(Jeq(0, Some(Allow), Some(Notify)));
    if native.arch == AUDIT_ARCH_X86_64 {
        ops.push(At(X32));
        ops.push(And(!X32_SYSCALL_BIT));
        for nr in X32_TRAPPED {
            ops.push(Jeq(nr, Some(Notify), None));
        }
        ops.push(Ret(RET_ALLOW));
        ops.push(At(I386));
        ops.push(Ld(NR));
        for nr in I386_TRAPPED {
            ops.push(Jeq(nr, Some(Notify), None));
        }
        ops.push(Ret(RET_ALLOW));
    }
    ops.push(At(Notify));
    ops.push(Ret(RET_USER_NOTIF));
    ops.push(At(Allow));
    ops.push(Ret(RET_ALLOW));
    assemble(&ops)
}

/// Resolves labels into the forward jump offsets classic BPF uses.
fn assemble(ops: &[Op]) -> Vec<Insn> {
    let mut at = Vec::new();
    let mut n = 0usize;
    for op in ops {
        match op {
            Op::At(l) => at.push((*l, n)),
            _ => n += 1,
        }
    }
    let target = |l: Option<Label>, here: usize| -> u8 {
        match l {
            None => 0,
            Some(l) => {
                let (_, to) = at.iter().find(|(x, _)| *x == l).expect("label defined");
                let off = to.checked_sub(here + 1).expect("BPF jumps only forward");
                u8::try_from(off).expect("a jump within 255 instructions")
            }
        }
    };
    let mut out = Vec::new();
    for op in ops {
        let here = out.len();
        let insn = match *op {
            Op::At(_) => continue,
            Op::Ld(k) => Insn {
                code: LD_W_ABS,
                jt: 0,
                jf: 0,
                k,
            },
            Op::And(k) => Insn {
                code: AND_K,
                jt: 0,
                jf: 0,
                k,
            },
            Op::Jeq(k, t, f) => Insn {
                code: JEQ_K,
                jt: target(t, here),
                jf: target(f, here),
                k,
            },
            Op::Jge(k, t, f) => Insn {
                code: JGE_K,
                jt: target(t, here),
                jf: target(f, here),
                k,
            },
            Op::Ret(k) => Insn {
                code: RET_K,
                jt: 0,
                jf: 0,
                k,
            },
        };
        out.push(insn);
    }
    out
}

/// Runs the program on one call, as the kernel would (the tests' interpreter).
#[cfg(test)]
pub fn run(prog: &[Insn], nr: u32, arch: u32, args: [u64; 6]) -> u32 {
    let word = |off: u32| -> u32 {
        match off {
            NR => nr,
            ARCH => arch,
            o if (16..64).contains(&o) => {
                let i = ((o - 16) / 8) as usize;
                if (o - 16) % 8 == 0 {
                    args[i] as u32
                } else {
                    (args[i] >> 32) as u32
                }
            }
            _ => 0,
        }
    };
    let (mut pc, mut a) = (0usize, 0u32);
    loop {
        let i = prog[pc];
        pc += 1;
        match i.code {
            LD_W_ABS => a = word(i.k),
            AND_K => a &= i.k,
            JEQ_K => pc += if a == i.k { i.jt } else { i.jf } as usize,
            JGE_K => pc += if a >= i.k { i.jt } else { i.jf } as usize,
            RET_K => return i.k,
            other => panic!("unknown opcode {other:#x}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86: Native = Native {
        arch: AUDIT_ARCH_X86_64,
        connect: 42,
        sendto: 44,
        sendmsg: 46,
        sendmmsg: 307,
        execve: 59,
        execveat: 322,
    };

    #[test]
    fn only_effect_calls_are_trapped() {
        let p = program(&X86);
        let call = |nr: u32, args: [u64; 6]| run(&p, nr, AUDIT_ARCH_X86_64, args);
        for nr in [42, 46, 307, 59, 322] {
            assert_eq!(call(nr, [0; 6]), RET_USER_NOTIF, "nr {nr}");
        }
        // read, write, openat, socket, recvfrom, close: allowed.
        for nr in [0, 1, 257, 41, 45, 3] {
            assert_eq!(call(nr, [0; 6]), RET_ALLOW, "nr {nr}");
        }
    }

    #[test]
    fn sendto_is_trapped_only_with_a_destination() {
        let p = program(&X86);
        let sendto = |addr: u64| run(&p, 44, AUDIT_ARCH_X86_64, [3, 0x1000, 10, 0, addr, 16]);
        assert_eq!(sendto(0), RET_ALLOW, "send() on a connected socket");
        assert_eq!(sendto(0x7ffd_0000_1000), RET_USER_NOTIF);
        assert_eq!(sendto(0x1_0000_0000), RET_USER_NOTIF, "a high-only pointer");
        assert_eq!(sendto(0x1000), RET_USER_NOTIF, "a low-only pointer");
    }

    #[test]
    fn the_other_abis_of_x86_64_are_trapped_by_their_own_numbers() {
        let p = program(&X86);
        assert_eq!(
            run(&p, 102, AUDIT_ARCH_I386, [0; 6]),
            RET_USER_NOTIF,
            "socketcall"
        );
        assert_eq!(
            run(&p, 11, AUDIT_ARCH_I386, [0; 6]),
            RET_USER_NOTIF,
            "execve"
        );
        assert_eq!(run(&p, 4, AUDIT_ARCH_I386, [0; 6]), RET_ALLOW, "write");
        let x32 = |nr: u32| run(&p, nr | X32_SYSCALL_BIT, AUDIT_ARCH_X86_64, [0; 6]);
        assert_eq!(x32(520), RET_USER_NOTIF, "x32 execve");
        assert_eq!(x32(42), RET_USER_NOTIF, "x32 connect");
        assert_eq!(x32(1), RET_ALLOW, "x32 write");
        assert_eq!(run(&p, 42, 0x1234, [0; 6]), RET_ALLOW, "an unknown arch");
    }

    #[test]
    fn aarch64_has_no_other_abi() {
        let arm = Native {
            arch: AUDIT_ARCH_AARCH64,
            connect: 203,
            sendto: 206,
            sendmsg: 211,
            sendmmsg: 269,
            execve: 221,
            execveat: 281,
        };
        let p = program(&arm);
        assert_eq!(run(&p, 203, AUDIT_ARCH_AARCH64, [0; 6]), RET_USER_NOTIF);
        assert_eq!(run(&p, 64, AUDIT_ARCH_AARCH64, [0; 6]), RET_ALLOW);
        assert_eq!(run(&p, 203, 0x28, [0; 6]), RET_ALLOW);
    }
}
