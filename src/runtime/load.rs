//! Verdicts that do not depend on the machine's load: a busy server is slow, not broken.
//!
//! Every deadline that decides a verdict (a request's timeout, the shutdown grace after stdin
//! EOF, the grace after SIGTERM, the late-output window) is extended in [`STEP`]s while the
//! server's process group is *active*: it used CPU since the last look, or one of its processes
//! is runnable (state `R`: running, or waiting for a CPU on a saturated machine), or it has not
//! even read what the guard sent. Only a server that sat idle through the deadline missed it. The
//! extension stops at a cap; a deadline that reached its cap on a saturated machine ([`Machine`])
//! is reported as such (a warning, with the load), never as the server's fault.
//!
//! [`Grace`] is the decision, pure (readings in, decisions out), so it is tested with fake
//! readings; the readings come from `/proc` (`process::group_activity`, [`Machine::read`]).
//! [`pace`] keeps a run from starving itself: while the guard checks several servers and has
//! [`PACE_PER_CORE`] live server processes per core or more, no new server starts while the
//! machine has more runnable processes than that (at most [`PACE_MAX_WAIT`] per start).

use std::time::Duration;

/// The step by which a deadline is extended while the server is active.
pub const STEP: Duration = Duration::from_millis(500);
/// Clock ticks (1/100 s) a server must use within one step to count as busy on CPU.
pub const BUSY_TICKS: u64 = 2;
/// No new server starts while more than this many processes per core are runnable.
pub const PACE_PER_CORE: u64 = 2;
/// The longest one start waits for the machine to calm down (other load is not ours to wait out).
pub const PACE_MAX_WAIT: Duration = Duration::from_secs(5);

/// What a server's process group was doing at one look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activity {
    /// CPU time used so far by the group's live processes, in clock ticks.
    pub cpu_ticks: u64,
    /// One of its processes is runnable (running, or waiting for a CPU).
    pub runnable: bool,
}

/// Reads the server's activity (`None` where it cannot be read).
pub type ActivityProbe = std::sync::Arc<dyn Fn() -> Option<Activity> + Send + Sync>;

/// The machine's load at one look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Machine {
    /// Runnable processes right now (`procs_running` of `/proc/stat`).
    pub procs_running: u64,
    /// The one-minute load average.
    pub load1: f64,
    pub cores: u64,
}

impl Machine {
    /// The machine's load, where the system says it (Linux); `None` elsewhere.
    pub fn read() -> Option<Machine> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let procs_running = stat
            .lines()
            .find_map(|l| l.strip_prefix("procs_running "))?
            .trim()
            .parse()
            .ok()?;
        let load1 = std::fs::read_to_string("/proc/loadavg")
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        Some(Machine {
            procs_running,
            load1,
            cores,
        })
    }

    /// More work than cores: a process may wait for a CPU for a long time.
    pub fn saturated(&self) -> bool {
        self.procs_running > self.cores || self.load1 >= self.cores as f64
    }
}

/// How a load-aware deadline decides at each look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The server is active: wait this much longer.
    Extend(Duration),
    /// The server sat idle since the last look: the deadline stands.
    Idle,
    /// Still active, but the extension reached its cap.
    Capped,
}

/// One load-aware deadline: extensions granted so far, up to a cap.
#[derive(Debug, Clone)]
pub struct Grace {
    last: Option<u64>,
    first: Option<u64>,
    /// How much longer than the deadline the server was given.
    pub extended: Duration,
    cap: Duration,
    /// The last decision was [`Decision::Capped`].
    pub capped: bool,
}

impl Grace {
    pub fn new(cap: Duration) -> Grace {
        Grace {
            last: None,
            first: None,
            extended: Duration::ZERO,
            cap,
            capped: false,
        }
    }

    /// A first look (one step before the deadline): only what the server does from now on
    /// counts, not the start-up before the wait.
    pub fn mark(&mut self, now: Option<Activity>) {
        self.last = now.map(|a| a.cpu_ticks);
        if self.first.is_none() {
            self.first = self.last;
        }
    }

    /// At a deadline: extend while the server is active (`unread`: it has not read what it was
    /// sent yet — still starting, not ignoring it).
    pub fn decide(&mut self, now: Option<Activity>, unread: bool) -> Decision {
        let burned =
            matches!((self.last, now), (Some(last), Some(a)) if a.cpu_ticks >= last + BUSY_TICKS);
        let active = unread || burned || now.is_some_and(|a| a.runnable);
        self.last = now.map(|a| a.cpu_ticks);
        if self.first.is_none() {
            self.first = self.last;
        }
        if !active {
            self.capped = false;
            Decision::Idle
        } else if self.extended < self.cap {
            self.extended += STEP;
            Decision::Extend(STEP)
        } else {
            self.capped = true;
            Decision::Capped
        }
    }

    /// CPU ticks the server used since the first look.
    pub fn ticks_used(&self) -> u64 {
        match (self.first, self.last) {
            (Some(f), Some(l)) => l.saturating_sub(f),
            _ => 0,
        }
    }
}

/// What a load-aware wait for the exit ended with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GraceEnd {
    Exited,
    /// The deadline passed with the server idle: it really did not exit.
    Idle,
    /// The server was active to the end of the extensions, `waited` in all, using `cpu_share`
    /// of one core; `machine` is the load then (when readable).
    Capped {
        waited: Duration,
        cpu_share: f64,
        machine: Option<Machine>,
    },
}

impl GraceEnd {
    /// The machine was saturated when the extended deadline ran out: a slow server, not a
    /// broken one.
    pub fn saturated(&self) -> Option<(Machine, f64)> {
        match self {
            GraceEnd::Capped {
                machine: Some(m),
                cpu_share,
                ..
            } if m.saturated() => Some((*m, *cpu_share)),
            _ => None,
        }
    }
}

/// Waits (briefly, bounded by [`PACE_MAX_WAIT`]) until the machine has at most
/// [`PACE_PER_CORE`] runnable processes per core, then lets one server start: starts are the
/// CPU-heavy part of a check, and a run with `--jobs` far above the cores must not starve its own
/// servers of the CPU they need to answer in time. Only a guard that is itself the crowd waits:
/// while it has fewer than [`PACE_PER_CORE`] live servers per core, a start goes through at once
/// (the load of other programs is not ours to wait out, and a single check, even a strict one,
/// must not pay seconds per process on a busy machine). Starts go through the gate one at a time;
/// the returned guard is dropped once the server is spawned.
pub async fn pace() -> tokio::sync::MutexGuard<'static, ()> {
    static GATE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let gate = GATE.lock().await;
    let started = tokio::time::Instant::now();
    while started.elapsed() < PACE_MAX_WAIT {
        match Machine::read() {
            Some(m)
                if must_wait(
                    &m,
                    crate::runtime::process::live_run_count(),
                    TARGETS_IN_FLIGHT.load(std::sync::atomic::Ordering::Relaxed),
                ) =>
            {
                tokio::time::sleep(Duration::from_millis(10)).await
            }
            _ => break,
        }
    }
    gate
}

/// A start-up that used more CPU than this (to the handshake's answer, in the main run) is
/// CPU-heavy: the later processes of that check start through [`heavy_start`].
pub const HEAVY_START_CPU: Duration = Duration::from_millis(300);

/// Whether a start-up that used `cpu` is CPU-heavy ([`HEAVY_START_CPU`]).
pub fn is_heavy(cpu: Option<Duration>) -> bool {
    cpu.is_some_and(|c| c > HEAVY_START_CPU)
}

/// A slot to start a process of a server whose start-up is CPU-heavy, held until its handshake
/// is answered: at most one such start per core at a time. The later processes of one check
/// (probe lanes, the buffering rerun, the repeated runs) would otherwise all start at once and
/// share the cores, each start stretched by their number, past the timeouts on a machine that
/// has other work too; through the slots each gets a core, and the total work is the same. A
/// start-up that sleeps rather than computes (`heavy: false`) takes no slot. `None`: no slot
/// was needed.
pub async fn heavy_start(heavy: bool) -> Option<tokio::sync::SemaphorePermit<'static>> {
    static SLOTS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    if !heavy {
        return None;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    SLOTS
        .get_or_init(|| tokio::sync::Semaphore::new(cores))
        .acquire()
        .await
        .ok()
}

/// When the guard starts a process it may not need (the legacy process of a server that may turn
/// out to speak only the legacy era, [`super::run_server_ready`]): `None`, never; else after how
/// long without an answer to `server/discover`. A server that answers within
/// [`SPECULATE_AFTER`] gains little from a second start beside its first and would pay for one
/// (two start-ups share the cores: measured +50–120 ms on a 300 ms TypeScript SDK start on two
/// cores); a slow starter gains its start-up less that wait. Only when the guard checks one
/// server (a registry's run never pays for a process it may throw away).
pub fn speculation() -> Option<std::time::Duration> {
    if let Some(forced) = early_forced() {
        return forced.then_some(std::time::Duration::ZERO);
    }
    (TARGETS_IN_FLIGHT.load(std::sync::atomic::Ordering::Relaxed) <= 1).then_some(SPECULATE_AFTER)
}

/// How long the first process may take to answer `server/discover` before the legacy process
/// is started beside it on speculation (see [`speculation`]).
pub const SPECULATE_AFTER: std::time::Duration = std::time::Duration::from_millis(150);

/// Whether the machine has a core to spare for a process the guard may throw away, right now
/// (the speculation's second condition; forced by [`EARLY_ENV`] like [`speculation`]). A busy
/// machine never pays for one.
pub fn room_to_spare() -> bool {
    if let Some(forced) = early_forced() {
        return forced;
    }
    spare(
        Machine::read(),
        TARGETS_IN_FLIGHT.load(std::sync::atomic::Ordering::Relaxed),
    )
}

/// The environment switch that decides [`speculation`] and [`room_to_spare`] (tests): `1`
/// always and at once, `0` never.
pub const EARLY_ENV: &str = "MCP_GUARD_EARLY_LEGACY";

/// What [`EARLY_ENV`] forces: `Some(true)` for `1`, `Some(false)` for `0`, else `None`.
fn early_forced() -> Option<bool> {
    match std::env::var(EARLY_ENV).as_deref() {
        Ok("1") => Some(true),
        Ok("0") => Some(false),
        _ => None,
    }
}

/// One server in flight, and no more runnable processes than cores right now (the count includes
/// the guard's own thread that reads it, and the version probe of the fingerprint that starts
/// with the check). The instant count, not the load average: the average lags by a minute,
/// long after the guard's own previous check ended.
fn spare(m: Option<Machine>, targets: usize) -> bool {
    targets <= 1 && m.is_some_and(|m| m.cores >= 2 && m.procs_running <= m.cores)
}

/// Whether a new server waits: the guard checks several servers at once (`targets`), already
/// runs [`PACE_PER_CORE`] server processes per core or more (`ours`), and the machine has more
/// runnable processes than that. The processes of one server's check (its runs, probe lanes and
/// rerun) are that check: pacing them against each other would only put its verdict off.
fn must_wait(m: &Machine, ours: usize, targets: usize) -> bool {
    let limit = m.cores * PACE_PER_CORE;
    targets > 1 && ours as u64 >= limit && m.procs_running > limit
}

static TARGETS_IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A server whose check is under way, for [`pace`]: counted while this lives.
#[derive(Debug)]
pub struct InFlight(());

impl Drop for InFlight {
    fn drop(&mut self) {
        TARGETS_IN_FLIGHT.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Counts one server's check as under way until the returned value is dropped.
pub fn target_in_flight() -> InFlight {
    TARGETS_IN_FLIGHT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    InFlight(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ticks: u64, runnable: bool) -> Option<Activity> {
        Some(Activity {
            cpu_ticks: ticks,
            runnable,
        })
    }

    fn machine(cores: u64, procs_running: u64, load1: f64) -> Option<Machine> {
        Some(Machine {
            procs_running,
            load1,
            cores,
        })
    }

    #[tokio::test]
    async fn cpu_heavy_starts_take_one_slot_per_core() {
        assert!(!is_heavy(None));
        assert!(!is_heavy(Some(HEAVY_START_CPU)));
        assert!(is_heavy(Some(HEAVY_START_CPU + Duration::from_millis(10))));
        // A start-up that sleeps takes no slot, however many there are.
        assert!(heavy_start(false).await.is_none());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut held = Vec::new();
        for _ in 0..cores {
            held.push(heavy_start(true).await.expect("a slot"));
        }
        let next = tokio::time::timeout(Duration::from_millis(50), heavy_start(true)).await;
        assert!(next.is_err(), "a start beyond one per core went through");
        held.pop();
        let next = tokio::time::timeout(Duration::from_secs(5), heavy_start(true)).await;
        assert!(
            next.is_ok_and(|slot| slot.is_some()),
            "a freed slot was not given"
        );
    }

    #[test]
    fn a_process_that_may_be_thrown_away_starts_only_with_room_to_spare() {
        // One server, no more runnable than cores now (the guard's reader and its version
        // probe): yes, whatever the lagging load average says of a check that just ended.
        assert!(spare(machine(2, 1, 0.3), 1));
        assert!(spare(machine(2, 2, 2.5), 1));
        assert!(spare(machine(8, 3, 2.0), 0));
        // Several servers in flight (a registry's run): never, however idle the machine.
        assert!(!spare(machine(8, 1, 0.0), 2));
        // One core, more runnable than cores now, or a load that cannot be read: no.
        assert!(!spare(machine(1, 0, 0.0), 1));
        assert!(!spare(machine(2, 3, 0.5), 1));
        assert!(!spare(machine(2, 5, 0.5), 1));
        assert!(!spare(None, 1));
    }

    #[test]
    fn a_server_runnable_all_along_gets_the_deadline_extended() {
        // Waiting for a CPU: no tick used, but runnable at every look.
        let mut g = Grace::new(Duration::from_secs(2));
        g.mark(at(100, true));
        for _ in 0..4 {
            assert_eq!(g.decide(at(100, true), false), Decision::Extend(STEP));
        }
        assert_eq!(g.extended, Duration::from_secs(2));
    }

    #[test]
    fn a_server_burning_cpu_gets_the_deadline_extended() {
        let mut g = Grace::new(Duration::from_secs(1));
        g.mark(at(100, false));
        assert_eq!(g.decide(at(110, false), false), Decision::Extend(STEP));
        assert_eq!(g.decide(at(125, false), false), Decision::Extend(STEP));
        assert_eq!(g.ticks_used(), 25);
    }

    #[test]
    fn an_idle_server_is_not_extended() {
        let mut g = Grace::new(Duration::from_secs(5));
        g.mark(at(100, false));
        assert_eq!(g.decide(at(101, false), false), Decision::Idle);
        assert_eq!(g.extended, Duration::ZERO);
        // Unreadable activity is idle too (no evidence of work).
        assert_eq!(Grace::new(STEP).decide(None, false), Decision::Idle);
        // A server that has not read what it was sent is still starting.
        assert_eq!(Grace::new(STEP).decide(None, true), Decision::Extend(STEP));
    }

    #[test]
    fn the_cap_is_reached_and_said() {
        let mut g = Grace::new(Duration::from_secs(1));
        g.mark(at(0, true));
        assert_eq!(g.decide(at(0, true), false), Decision::Extend(STEP));
        assert_eq!(g.decide(at(0, true), false), Decision::Extend(STEP));
        assert_eq!(g.decide(at(0, true), false), Decision::Capped);
        assert!(g.capped);
        let machine = Machine {
            procs_running: 40,
            load1: 17.5,
            cores: 2,
        };
        let end = GraceEnd::Capped {
            waited: Duration::from_secs(4),
            cpu_share: 0.01,
            machine: Some(machine),
        };
        assert_eq!(end.saturated(), Some((machine, 0.01)));
        let calm = GraceEnd::Capped {
            waited: Duration::from_secs(4),
            cpu_share: 0.9,
            machine: Some(Machine {
                procs_running: 1,
                load1: 0.9,
                cores: 2,
            }),
        };
        // A server spinning on an idle machine is not excused by the load.
        assert_eq!(calm.saturated(), None);
    }

    #[test]
    fn only_a_guard_that_is_the_crowd_waits_to_start_a_server() {
        let busy = Machine {
            procs_running: 9,
            load1: 8.0,
            cores: 2,
        };
        let calm = Machine {
            procs_running: 2,
            load1: 0.5,
            cores: 2,
        };
        // Other programs' load alone never delays a start.
        assert!(!must_wait(&busy, 0, 8));
        assert!(!must_wait(&busy, 3, 8));
        // Four servers of ours on two cores, and the machine crowded: wait.
        assert!(must_wait(&busy, 4, 2));
        assert!(must_wait(&busy, 64, 64));
        // Ours are many but the machine keeps up: start.
        assert!(!must_wait(&calm, 64, 64));
        // One server's check (a strict one runs six processes at once) is never paced against
        // itself: all of them are its verdict.
        assert!(!must_wait(&busy, 6, 1));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_machine_load_is_readable() {
        let m = Machine::read().expect("/proc/stat and /proc/loadavg");
        assert!(m.cores >= 1 && m.procs_running >= 1, "{m:?}");
    }
}
