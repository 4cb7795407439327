//! The no-effect proof: instruments that observe what a server *does*, not what it answers.
//!
//! For one server process (`--effects`), the guard sets up independent observers before it
//! spawns the process and stops them after the shutdown ladder:
//!
//! - the **system-call observer** ([`syscalls`], Linux): a seccomp filter inherited by every
//!   process of the run hands the guard each `connect`, send to an address, DNS question and
//!   `execve` before it happens; under policy `contain` a network call made while the process
//!   handles hostile input is refused. It needs no cooperation from the server; where it cannot
//!   run, the report says why and the others still do;
//! - a loopback **canary** ([`canary`]): an HTTP(S) proxy on 127.0.0.1, exported through
//!   `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` (both cases), `NODE_USE_ENV_PROXY=1`, and any env names
//!   the user lists (an API base URL pointed at the canary). Every connection is recorded and
//!   answered with an error; nothing is ever forwarded;
//! - the **effects log** ([`log`]): the guard exports `MCP_STDIO_GUARD_EFFECTS`, a file path; a
//!   server whose executor follows the recorder pattern appends one JSON line per action;
//! - a **process watch** ([`watch`]): new descendants of the server, with their argv (Linux
//!   `/proc`, polled; Windows: the job). Not needed (and off) while the system-call observer
//!   sees every exec.
//!
//! Every effect is stamped with the time it was observed and with the [`Recorder`]'s tag: the
//! phase of the session and the last message the guard sent. The session updates the tag on each
//! send, so an effect is attributed to the request (or hostile frame) that preceded it.

pub mod canary;
pub mod dns;
pub mod log;
pub mod syscalls;
pub mod watch;

use crate::issue::Phase;
use serde_json::Value;
use std::ffi::OsString;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch as signal;
use tokio::task::JoinHandle;

/// The environment variable naming the effects-log file.
pub const EFFECTS_LOG_ENV: &str = "MCP_STDIO_GUARD_EFFECTS";

/// The proxy variables the canary is exported through (both cases: curl and Python read the
/// lower-case ones, many tools the upper-case ones).
pub const PROXY_ENV: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// How often the process watch and the log tail look.
const POLL: Duration = Duration::from_millis(10);
/// Effects kept per process (a launcher such as `npx` can start hundreds of processes); more are
/// counted, not kept.
const MAX_EFFECTS: usize = 1000;

/// What the no-effect proof observes, resolved from `--effects`/`--effects-env` and config
/// `effects`.
#[derive(Debug, Clone, PartialEq)]
pub struct EffectsSpec {
    /// Export the canary as the proxy (`HTTP_PROXY`, ...). The canary also runs without it when
    /// `env` names variables to point at it.
    pub proxy: bool,
    /// Export `MCP_STDIO_GUARD_EFFECTS` and read the log.
    pub log: bool,
    /// Watch new descendant processes.
    pub watch: bool,
    /// Observe system calls (Linux seccomp user notification).
    pub syscalls: bool,
    /// What a network call made during hostile input gets (`--effects-policy`).
    pub policy: syscalls::Policy,
    /// Extra variables pointed at the canary: the name and an optional template in which
    /// `{canary}` stands for `127.0.0.1:PORT` (default `http://{canary}`).
    pub env: Vec<(String, Option<String>)>,
}

impl Default for EffectsSpec {
    fn default() -> Self {
        EffectsSpec {
            proxy: true,
            log: true,
            watch: true,
            syscalls: true,
            policy: syscalls::Policy::default(),
            env: Vec::new(),
        }
    }
}

impl EffectsSpec {
    /// The names of every variable the guard sets for the server.
    pub fn env_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        if self.proxy {
            names.extend(PROXY_ENV.iter().map(|s| s.to_string()));
            names.extend(["NO_PROXY", "no_proxy", "NODE_USE_ENV_PROXY"].map(String::from));
        }
        names.extend(self.env.iter().map(|(n, _)| n.clone()));
        if self.log {
            names.push(EFFECTS_LOG_ENV.to_string());
        }
        names
    }
}

/// The channel an effect was observed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EffectKind {
    /// A connection to the canary.
    Http,
    /// A new descendant process (the process watch).
    Process,
    /// A line of the effects log.
    Logged,
    /// A `connect` or a send to an IP address (the system-call observer).
    Network,
    /// Traffic to port 53: a name lookup, with its question when it was seen.
    Dns,
    /// An `execve`: a program started, with its argv.
    Exec,
    /// A Unix socket: local IPC, listed but never a network effect.
    Ipc,
}

impl EffectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EffectKind::Http => "http",
            EffectKind::Process => "process",
            EffectKind::Logged => "logged",
            EffectKind::Network => "network",
            EffectKind::Dns => "dns",
            EffectKind::Exec => "exec",
            EffectKind::Ipc => "ipc",
        }
    }

    /// Whether the effect acts outside the machine or starts a program (IPC does neither).
    pub fn is_action(self) -> bool {
        self != EffectKind::Ipc
    }
}

/// One observed effect.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub kind: EffectKind,
    /// When it was observed, from the start of the run.
    pub at: Duration,
    /// The session's phase then.
    pub phase: Phase,
    /// The last thing the guard had sent (`request tools/call #4`, `raw banner-same-line`).
    pub after: String,
    /// One line: `POST http://127.0.0.1/deploy`, `` `ssh deploy@host uptime` ``, the log entry.
    pub summary: String,
    /// Structured facts (method/target, argv, the log entry).
    pub detail: Value,
}

#[derive(Debug)]
struct State {
    phase: Phase,
    after: String,
    /// The process has been sent hostile input (a tag in phase `adversarial`): from then on
    /// `contain` refuses its network calls.
    hostile: bool,
    effects: Vec<Effect>,
    dropped: u64,
}

/// The polled observers (the log tail and the process watch).
#[derive(Default)]
struct Observers {
    log: Option<log::EffectsLog>,
    watch: Option<watch::Watch>,
}

/// The shared tag ("what the guard did last") and the sink every observer writes to.
#[derive(Clone)]
pub struct Recorder {
    state: Arc<Mutex<State>>,
    observers: Arc<Mutex<Observers>>,
    start: Instant,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new(Instant::now())
    }
}

impl Recorder {
    pub fn new(start: Instant) -> Recorder {
        Recorder {
            state: Arc::new(Mutex::new(State {
                phase: Phase::Startup,
                after: "spawn".into(),
                hostile: false,
                effects: Vec::new(),
                dropped: 0,
            })),
            observers: Arc::default(),
            start,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Looks at the polled observers now (the log, the process table).
    pub fn flush(&self) {
        let mut obs = self.observers.lock().unwrap_or_else(|p| p.into_inner());
        // Each observer stamps what it saw with the time after it looked: never earlier than
        // the effect itself, so a log line written after an HTTP call always sorts after it.
        if let Some(w) = obs.watch.as_mut() {
            w.tick(self, self.start);
        }
        if let Some(l) = obs.log.as_mut() {
            l.drain(self, self.start, false);
        }
    }

    /// Sets the tag later effects are attributed to. The polled observers are read first, so a
    /// log line or a process that already exists is attributed to the previous tag (the server
    /// writes its log line before it replies; the guard tags its next message after the reply).
    pub fn tag(&self, phase: Phase, after: impl Into<String>) {
        self.flush();
        let mut st = self.lock();
        st.phase = phase;
        st.hostile |= phase == Phase::Adversarial;
        st.after = after.into();
    }

    /// Whether the process has been sent hostile input.
    pub fn hostile(&self) -> bool {
        self.lock().hostile
    }

    /// The time since the run started (an effect's `at`).
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// One effect recorded earlier, by the index `push` returned.
    pub fn effect(&self, index: usize) -> Option<Effect> {
        self.lock().effects.get(index).cloned()
    }

    /// The current tag.
    pub fn current(&self) -> (Phase, String) {
        let st = self.lock();
        (st.phase, st.after.clone())
    }

    /// Records an effect under the current tag; returns its index.
    pub fn push(&self, kind: EffectKind, at: Duration, summary: String, detail: Value) -> usize {
        let tag = self.current();
        self.push_tagged(tag, kind, at, summary, detail)
    }

    /// Records an effect under a tag taken earlier (a connection accepted before it was read).
    pub fn push_tagged(
        &self,
        (phase, after): (Phase, String),
        kind: EffectKind,
        at: Duration,
        summary: String,
        detail: Value,
    ) -> usize {
        let mut st = self.lock();
        if st.effects.len() >= MAX_EFFECTS {
            st.dropped += 1;
            return usize::MAX;
        }
        st.effects.push(Effect {
            kind,
            at,
            phase,
            after,
            summary,
            detail,
        });
        st.effects.len() - 1
    }

    /// Rewrites an effect already recorded (a process that exec'd a new program).
    pub fn update(&self, index: usize, summary: String, detail: Value) {
        if let Some(e) = self.lock().effects.get_mut(index) {
            e.summary = summary;
            e.detail = detail;
        }
    }

    /// Effects observed beyond the cap (counted, not kept).
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// Every effect so far, in the order observed.
    pub fn effects(&self) -> Vec<Effect> {
        let mut out = self.lock().effects.clone();
        out.sort_by_key(|e| e.at);
        out
    }
}

/// What the instruments of one process observed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EffectsRecord {
    pub effects: Vec<Effect>,
    /// Effects observed beyond the cap of 1000 (counted, not kept).
    pub dropped: u64,
    /// Why an observer could not be set up (`effects-unavailable`).
    pub problems: Vec<String>,
    /// Whether the canary listened.
    pub canary: bool,
    /// Whether the effects log was exported.
    pub logged: bool,
    /// Whether descendant processes were watched (Linux only).
    pub watched: bool,
    /// Every observer asked for, and whether it ran (`effects.observers`).
    pub observers: Vec<ObserverStatus>,
    /// Why the system-call observer was asked for and did not run
    /// (`effects-syscall-observer-unavailable`).
    pub syscalls_unavailable: Option<String>,
}

/// One observer of the no-effect proof, as the report lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ObserverStatus {
    /// `syscalls`, `canary`, `effectsLog`, `processWatch`.
    pub name: &'static str,
    pub ran: bool,
    /// Why it did not run; or what it did.
    pub note: Option<String>,
}

impl ObserverStatus {
    fn new(name: &'static str, ran: bool, note: Option<String>) -> ObserverStatus {
        ObserverStatus { name, ran, note }
    }
}

/// The observers that ran besides the system-call observer, in words (`the canary proxy, the
/// effects log`), or `no other observer` when none did.
pub fn fallback_observers(rec: &EffectsRecord) -> String {
    observers_that_ran(rec, false)
}

/// Every observer that ran, in words.
pub fn observers_that_ran(rec: &EffectsRecord, with_syscalls: bool) -> String {
    let names: Vec<&str> = rec
        .observers
        .iter()
        .filter(|o| o.ran && (with_syscalls || o.name != "syscalls"))
        .map(|o| match o.name {
            "syscalls" => "the system-call observer",
            "canary" => "the canary proxy",
            "effectsLog" => "the effects log",
            "processWatch" => "the process watch",
            other => other,
        })
        .collect();
    if names.is_empty() {
        if with_syscalls {
            "no observer ran".into()
        } else {
            "no other observer".into()
        }
    } else {
        names.join(", ")
    }
}

/// The instruments of one server process.
pub struct Instruments {
    pub recorder: Recorder,
    /// Variables to add to the server's environment.
    pub env: Vec<(OsString, OsString)>,
    canary: Option<canary::Canary>,
    log: Option<log::EffectsLog>,
    /// The system-call observer, until the spawn says whether its filter is on.
    syscalls: Option<syscalls::Observer>,
    /// Why the system-call observer is not there, when it was asked for.
    syscalls_problem: Option<String>,
    spec: EffectsSpec,
    has_canary: bool,
    has_log: bool,
    watch: bool,
    watched: bool,
    problems: Vec<String>,
    stop: Option<signal::Sender<bool>>,
    poller: Option<JoinHandle<()>>,
}

impl Instruments {
    /// Sets up the observers (before the spawn: the environment carries their addresses).
    pub async fn start(spec: &EffectsSpec, start: Instant) -> Instruments {
        let recorder = Recorder::new(start);
        let mut env: Vec<(OsString, OsString)> = Vec::new();
        let mut problems = Vec::new();
        let canary = if spec.proxy || !spec.env.is_empty() {
            match canary::Canary::start(recorder.clone(), start).await {
                Ok(c) => {
                    let url = format!("http://{}", c.authority());
                    if spec.proxy {
                        for name in PROXY_ENV {
                            env.push((name.into(), url.clone().into()));
                        }
                        // Nothing bypasses the canary, loopback included.
                        env.push(("NO_PROXY".into(), "".into()));
                        env.push(("no_proxy".into(), "".into()));
                        env.push(("NODE_USE_ENV_PROXY".into(), "1".into()));
                    }
                    for (name, template) in &spec.env {
                        let value = template
                            .as_deref()
                            .unwrap_or("http://{canary}")
                            .replace("{canary}", &c.authority());
                        env.push((name.into(), value.into()));
                    }
                    Some(c)
                }
                Err(e) => {
                    problems.push(format!("the canary cannot listen on 127.0.0.1: {e}"));
                    None
                }
            }
        } else {
            None
        };
        let log = if spec.log {
            match log::EffectsLog::create() {
                Ok(l) => {
                    env.push((EFFECTS_LOG_ENV.into(), l.path().as_os_str().to_owned()));
                    Some(l)
                }
                Err(e) => {
                    problems.push(format!("the effects log cannot be created: {e}"));
                    None
                }
            }
        } else {
            None
        };
        let (syscalls, syscalls_problem) = if spec.syscalls {
            match syscalls::unavailable() {
                Some(why) => (None, Some(why)),
                None => {
                    let canary_addr = canary.as_ref().map(|c| c.addr());
                    match syscalls::Observer::start(recorder.clone(), spec.policy, canary_addr) {
                        Ok(o) => (Some(o), None),
                        Err(e) => (
                            None,
                            Some(format!("the supervisor thread could not start: {e}")),
                        ),
                    }
                }
            }
        } else {
            (None, None)
        };
        Instruments {
            recorder,
            env,
            syscalls,
            syscalls_problem,
            spec: spec.clone(),
            has_canary: canary.is_some(),
            has_log: log.is_some(),
            canary,
            log,
            watch: spec.watch && watch::available(),
            watched: false,
            problems,
            stop: None,
            poller: None,
        }
    }

    /// What must run on the thread that spawns the server (the system-call observer's filter).
    pub fn spawn_hook(&self) -> Option<&dyn crate::runtime::process::SpawnHook> {
        self.syscalls
            .as_ref()
            .map(|o| o as &dyn crate::runtime::process::SpawnHook)
    }

    /// Starts polling the process tree of the spawned server and the effects log.
    pub fn attach(&mut self, pid: u32, marker: &str) {
        // Every exec is seen at the system call: the polled watch would only see them again.
        if self.syscalls.as_ref().is_some_and(|o| o.installed()) {
            self.watch = false;
        }
        {
            let mut obs = self
                .recorder
                .observers
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            obs.log = self.log.take();
            if self.watch {
                obs.watch = Some(watch::Watch::new(pid as i32, marker.to_string()));
                self.watched = true;
            }
        }
        let (tx, mut rx) = signal::channel(false);
        let recorder = self.recorder.clone();
        self.stop = Some(tx);
        self.poller = Some(tokio::spawn(async move {
            loop {
                recorder.flush();
                tokio::select! {
                    _ = tokio::time::sleep(POLL) => {}
                    _ = rx.changed() => break,
                }
            }
        }));
    }

    /// Stops every observer and returns what they saw. The log is read one last time (a line
    /// written at exit counts), then deleted.
    pub async fn finish(mut self) -> EffectsRecord {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(true);
        }
        if let Some(poller) = self.poller.take() {
            let _ = poller.await;
        }
        let log = {
            let mut obs = self
                .recorder
                .observers
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            obs.watch = None;
            obs.log.take().or(self.log.take())
        };
        if let Some(mut l) = log {
            l.drain(&self.recorder, self.recorder.start, true);
        }
        if let Some(c) = self.canary.take() {
            c.stop().await;
        }
        // Joins a thread told to stop: it never waits on the server, so this is immediate.
        let summary = self.syscalls.take().map(|o| o.finish());
        let mut syscalls_unavailable = self.syscalls_problem.take();
        let syscall_status = match summary {
            Some(s) => match s.status {
                syscalls::Status::Installed => ObserverStatus::new(
                    "syscalls",
                    true,
                    Some(format!(
                        "policy {}: {} calls trapped, {} refused",
                        self.spec.policy.as_str(),
                        s.trapped,
                        s.contained
                    )),
                ),
                syscalls::Status::Failed(why) => {
                    syscalls_unavailable = Some(why.clone());
                    ObserverStatus::new("syscalls", false, Some(why))
                }
                syscalls::Status::Pending => ObserverStatus::new(
                    "syscalls",
                    false,
                    Some("the server was not started".into()),
                ),
            },
            None => ObserverStatus::new(
                "syscalls",
                false,
                Some(
                    syscalls_unavailable
                        .clone()
                        .unwrap_or_else(|| "off (config effects.syscalls: false)".into()),
                ),
            ),
        };
        let off = |what: &str| Some(format!("off (config effects.{what}: false)"));
        let observers = vec![
            syscall_status,
            ObserverStatus::new(
                "canary",
                self.has_canary,
                if self.has_canary {
                    None
                } else if self.spec.proxy || !self.spec.env.is_empty() {
                    Some("could not listen on 127.0.0.1".into())
                } else {
                    off("proxy")
                },
            ),
            ObserverStatus::new(
                "effectsLog",
                self.has_log,
                if self.has_log {
                    None
                } else if self.spec.log {
                    Some("could not be created".into())
                } else {
                    off("log")
                },
            ),
            ObserverStatus::new(
                "processWatch",
                self.watched,
                if self.watched {
                    Some(
                        "/proc polled every 10 ms: a process shorter than that can be missed"
                            .into(),
                    )
                } else if !self.spec.watch {
                    off("processWatch")
                } else if watch::available() {
                    Some("not needed: the system-call observer sees every exec".into())
                } else {
                    Some("unavailable on this platform".into())
                },
            ),
        ];
        EffectsRecord {
            effects: self.recorder.effects(),
            dropped: self.recorder.dropped(),
            problems: self.problems,
            canary: self.has_canary,
            logged: self.has_log,
            watched: self.watched,
            observers,
            syscalls_unavailable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_flood_of_effects_is_counted_not_kept() {
        let r = Recorder::default();
        for i in 0..MAX_EFFECTS + 2 {
            let index = r.push(
                EffectKind::Process,
                Duration::from_millis(i as u64),
                "`npm`".into(),
                json!({}),
            );
            r.update(index, "`node`".into(), json!({}));
        }
        assert_eq!((r.effects().len(), r.dropped()), (MAX_EFFECTS, 2));
    }

    #[test]
    fn a_process_stays_hostile_once_it_was_sent_hostile_input() {
        let r = Recorder::default();
        r.tag(Phase::Initialize, "request initialize #1");
        r.tag(Phase::Operation, "request tools/call #2");
        assert!(!r.hostile(), "start-up and safe calls are never contained");
        r.tag(Phase::Adversarial, "request ping #3");
        r.tag(Phase::Shutdown, "stdin closed");
        assert!(
            r.hostile(),
            "what a probe's frame set off is contained until the end"
        );
    }

    #[test]
    fn effects_carry_the_tag_current_when_they_were_observed() {
        let r = Recorder::default();
        r.tag(Phase::Operation, "request tools/call #4");
        r.push(
            EffectKind::Http,
            Duration::from_millis(20),
            "POST http://x/".into(),
            json!({}),
        );
        let earlier = r.current();
        r.tag(Phase::Adversarial, "raw banner-same-line");
        r.push_tagged(
            earlier,
            EffectKind::Http,
            Duration::from_millis(10),
            "CONNECT a:443".into(),
            json!({}),
        );
        let e = r.effects();
        assert_eq!(e[0].summary, "CONNECT a:443", "sorted by time");
        assert_eq!(e[0].after, "request tools/call #4");
        assert_eq!(e[1].phase, Phase::Operation);
    }
}
