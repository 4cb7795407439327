//! The client side of one MCP stdio session.
//!
//! The session sends requests and notifications, consumes every [`Event`] from the server,
//! judges each stdout frame (framing → JSON → JSON-RPC), pairs responses with requests by id,
//! answers the server's own requests (`ping` → `{}`, anything else → -32601), and records issues
//! with the phase they happened in. Probes drive it through [`Session::request`],
//! [`Session::notify`], [`Session::send_raw`] and [`Session::observe`].
//!
//! It never waits out a timeout whose outcome is already known: a reply that arrived corrupted,
//! a misaddressed reply, the process exiting or stdout closing all end the wait at once.

use super::frame;
use super::framing::RawFrame;
use super::issues::IssueSink;
use super::jsonrpc::{Id, Message, RpcError};
use super::judge::{FrameJudge, Judged, Pos};
use super::transport::{Event, ExitInfo, Link};
use crate::catalog::runtime as rules;
use crate::issue::{Issue, Phase};
use crate::protocol;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

/// How long to keep reading stdout after the process exited, for its last frames and EOF.
const EXIT_DRAIN: Duration = Duration::from_millis(300);
/// How long to wait for more after an LSP header before calling the reply unreadable.
const LSP_GRACE: Duration = Duration::from_millis(300);
use super::load::{self, Decision, Grace, GraceEnd, STEP as BUSY_STEP};
/// How many server messages (and unpaired errors) are kept in full: a flood of valid
/// notifications must not grow the guard's memory (the first ones are what checks need).
const MESSAGES_CAP: usize = 1_000;
/// How many timeline entries are kept in full.
const TIMELINE_CAP: usize = 2_000;
/// How many received values the tap keeps.
const TAP_CAP: usize = 256;
/// Events taken past a deadline, per wait: what was already queued when the deadline passed is
/// still read (as much as the event channel holds), but a continuous flood cannot hold a wait open.
const OVERRUN_CAP: usize = 256;
/// Bytes of replies to server requests that may wait for a server that is not reading its stdin;
/// past this, replies are dropped (counted), so a server that sends requests without reading the
/// answers cannot grow the guard's memory.
const STDIN_BACKLOG_CAP: u64 = 1 << 20;
/// Bytes of a server's method name quoted back in a `Method not found` reply.
const METHOD_ECHO_BYTES: usize = 128;

#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The revision the guard asks for.
    pub protocol: String,
    pub timeout: Duration,
    pub max_line_bytes: u64,
    /// Occurrences of one issue code kept in full.
    pub issue_cap: usize,
}

/// Reads what the server's process group is doing (CPU used, runnable).
pub type CpuProbe = load::ActivityProbe;

/// One look at the server's activity: `/proc` reads are blocking I/O, done off the async
/// workers.
async fn look(probe: &CpuProbe) -> Option<load::Activity> {
    let probe = probe.clone();
    tokio::task::spawn_blocking(move || probe())
        .await
        .unwrap_or(None)
}

/// A load-aware deadline with its probe: extended in steps while the server is active.
struct BusyClock {
    probe: CpuProbe,
    grace: Grace,
}

impl BusyClock {
    fn new(probe: CpuProbe, budget: Duration) -> BusyClock {
        BusyClock {
            probe,
            grace: Grace::new(budget),
        }
    }

    /// The first look, one step before the deadline.
    async fn mark(&mut self) {
        let now = look(&self.probe).await;
        self.grace.mark(now);
    }

    /// At a deadline: how much longer to wait, if any.
    /// `unread`: the server has not read what it was sent, or is still writing output: active
    /// whatever its CPU clock says.
    async fn extend(&mut self, unread: bool) -> Option<Duration> {
        let now = look(&self.probe).await;
        match self.grace.decide(now, unread) {
            Decision::Extend(step) => Some(step),
            Decision::Idle | Decision::Capped => None,
        }
    }
}

/// A reply to one of the guard's requests.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A result. `damaged` when the frame carrying it broke a framing rule (the issue is recorded)
    /// but the message itself could be read.
    Result {
        value: Value,
        at: Duration,
        damaged: bool,
    },
    Error {
        error: RpcError,
        at: Duration,
        damaged: bool,
    },
    /// The reply arrived but its envelope is broken (id type, grammar): recorded, not usable.
    Broken { at: Duration },
}

impl Reply {
    pub fn at(&self) -> Duration {
        match self {
            Reply::Result { at, .. } | Reply::Error { at, .. } | Reply::Broken { at } => *at,
        }
    }
}

/// How waiting for a reply ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    Reply(Reply),
    Timeout,
    /// The process exited before replying.
    Exited(ExitInfo),
    /// stdout closed while the process kept running.
    StdoutClosed,
    /// The server answered with an id the guard never sent (recorded as `response-id-mismatch`).
    Misaddressed,
    /// The total stdout limit stopped the run.
    OutputLimit,
}

/// What [`Session::next_event`] got.
enum Next {
    Event(Event),
    /// The deadline passed (and nothing was left to take past it).
    Elapsed,
    /// Every sender is gone.
    Closed,
}

/// One line of the session's timeline.
#[derive(Debug, Clone)]
pub struct TimelineEntry {
    pub at: Duration,
    pub phase: Phase,
    pub direction: Direction,
    /// `request initialize #1`, `result #1`, `notification notifications/message`, `invalid line 3`.
    pub summary: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    ToServer,
    FromServer,
    Process,
}

/// Frame and message counts.
#[derive(Debug, Clone, Default)]
pub struct FrameStats {
    pub frames: u64,
    pub invalid_frames: u64,
    pub responses: u64,
    pub server_requests: u64,
    pub server_notifications: u64,
    /// Frames that arrived after stdin was closed.
    pub after_stdin_eof: u64,
    /// Replies to server requests dropped because the server was not reading its stdin.
    pub replies_dropped: u64,
}

/// A message the server sent on its own (its params are not kept: they can be megabytes, and
/// the checks only need the method).
#[derive(Debug, Clone)]
pub struct ServerMessage {
    pub at: Duration,
    pub phase: Phase,
    pub method: String,
    pub is_request: bool,
}

/// A JSON value the server sent, as received (the adversarial verdicts read replies by their raw
/// id: `true`, an id inside a batch, an id the guard sent in a raw frame).
#[derive(Debug, Clone)]
pub struct Tapped {
    pub at: Duration,
    /// The stdout line it came on, and the byte offset of that line.
    pub line: u64,
    pub offset: u64,
    pub value: Value,
}

struct Pending {
    method: String,
    /// When the request was sent.
    sent_at: Duration,
}

pub struct Session {
    pub link: Link,
    /// CPU usage of the server, to tell a slow server from a hung one (none in tests).
    pub busy_probe: Option<CpuProbe>,
    /// Deadline extensions granted because the server was busy: (phase, how long).
    pub extensions: Vec<(Phase, Duration)>,
    pub cfg: SessionConfig,
    pub phase: Phase,
    pub issues: IssueSink,
    pub stats: FrameStats,
    pub timeline: Vec<TimelineEntry>,
    pub server_messages: Vec<ServerMessage>,
    /// Error responses with `id: null` (replies to frames the server could not read).
    pub unpaired_errors: Vec<(Duration, RpcError)>,
    pub negotiated: Option<String>,
    /// The session is ready for normal requests: `notifications/initialized` was sent (legacy
    /// era) or `server/discover` proved a stateless server.
    pub initialized: bool,
    /// Stateless era: the `_meta` every request carries (protocol version, client info and
    /// capabilities), merged into the request's params.
    pub request_meta: Option<Value>,
    /// Replies that arrived after their wait had ended (timeout), by request id.
    pub late_replies: HashMap<Id, Reply>,
    pub exited: Option<(Duration, ExitInfo)>,
    pub stdout_eof: Option<Duration>,
    pub stdout_limit: Option<(Duration, u64)>,
    pub stdin_error: Option<(Duration, String)>,
    pub stdin_closed_at: Option<Duration>,
    /// When the session became ready for requests (`notifications/initialized` sent, or a
    /// stateless server's discover answered): the late-output window starts here.
    pub initialized_at: Option<Duration>,
    /// When the last response of the server arrived (the window ends a settle after it).
    pub last_reply_at: Option<Duration>,
    /// Methods whose request went unanswered (timeout): the request's id and when it was sent.
    /// A later request of the same method in this process is not waited for again.
    timed_out: HashMap<String, (Id, Duration)>,
    /// The partial stdout line (number, length) judged early as a stalled reply: when the framer
    /// gives that line later, it is not judged twice.
    stalled: Option<(u64, u64)>,
    /// A stalled line is being judged: the replies on it are unusable (no newline).
    judging_stalled: bool,
    next_id: i64,
    pending: HashMap<Id, Pending>,
    answered: HashSet<Id>,
    replies: HashMap<Id, Reply>,
    misaddressed: bool,
    /// Ids whose wait ended without a usable reply (timeout, broken, misaddressed): a late
    /// response to one of them is already accounted for.
    settled: HashSet<Id>,
    /// When an LSP `Content-Length` header was seen: replies will not come as lines.
    lsp_framing: Option<Instant>,
    /// The pure frame judge (framing, JSON, JSON-RPC grammar; rejoins pretty-printed lines).
    judge: FrameJudge,
    /// The last thing the guard sent was a notification (for `notification-response`).
    last_sent_notification: bool,
    /// Raw (possibly unparseable) bytes were sent since the last request.
    raw_sent: bool,
    /// Hostile input was sent on this session (adversarial probes): an error with `id: null` is
    /// never paired with a pending request (it may answer a rejected frame), and replies to the
    /// ids of raw frames ([`Session::raw_ids`]) are expected, not misaddressed.
    pub hostile: bool,
    /// The ids (as sent, any JSON type) carried by raw frames.
    pub raw_ids: Vec<Value>,
    /// Every JSON value received, when set (bounded).
    pub tap: Option<Vec<Tapped>>,
    /// The no-effect proof's recorder: tagged with each message the guard sends.
    pub effects: Option<crate::runtime::effects::Recorder>,
}

impl Session {
    pub fn new(link: Link, cfg: SessionConfig) -> Session {
        Session {
            link,
            busy_probe: None,
            extensions: Vec::new(),
            phase: Phase::Startup,
            issues: IssueSink::new(cfg.issue_cap),
            cfg,
            stats: FrameStats::default(),
            timeline: Vec::new(),
            server_messages: Vec::new(),
            unpaired_errors: Vec::new(),
            negotiated: None,
            initialized: false,
            request_meta: None,
            late_replies: HashMap::new(),
            exited: None,
            stdout_eof: None,
            stdout_limit: None,
            stdin_error: None,
            stdin_closed_at: None,
            initialized_at: None,
            last_reply_at: None,
            timed_out: HashMap::new(),
            stalled: None,
            judging_stalled: false,
            next_id: 1,
            pending: HashMap::new(),
            answered: HashSet::new(),
            replies: HashMap::new(),
            misaddressed: false,
            settled: HashSet::new(),
            lsp_framing: None,
            judge: FrameJudge::default(),
            last_sent_notification: false,
            raw_sent: false,
            hostile: false,
            raw_ids: Vec::new(),
            tap: None,
            effects: None,
        }
    }

    /// Attributes effects observed from now on to `label` (the message about to be sent).
    fn tag_effects(&self, label: &str) {
        if let Some(r) = &self.effects {
            r.tag(self.phase, label);
        }
    }

    pub fn now(&self) -> Duration {
        self.link.now()
    }

    pub fn record(&mut self, issue: Issue) {
        self.issues.push(issue, self.phase);
    }

    /// The session is ready for normal requests from now on (the late-output window starts).
    pub fn mark_initialized(&mut self) {
        self.initialized = true;
        self.initialized_at.get_or_insert(self.link.now());
    }

    /// The earlier request of `method` that went unanswered in this process, if one did: its id
    /// and when it was sent.
    pub fn unanswered_before(&self, method: &str) -> Option<(Id, Duration)> {
        self.timed_out.get(method).cloned()
    }

    /// The session cannot carry more requests: the process exited, stdout closed or hit its limit.
    pub fn is_dead(&self) -> bool {
        self.exited.is_some() || self.stdout_eof.is_some() || self.stdout_limit.is_some()
    }

    /// Adds a timeline entry; the summary is only formatted while the timeline has room.
    fn note(&mut self, direction: Direction, summary: impl FnOnce() -> String) {
        if self.timeline.len() < TIMELINE_CAP {
            let summary = summary();
            self.timeline.push(TimelineEntry {
                at: self.now(),
                phase: self.phase,
                direction,
                summary,
            });
        }
    }

    fn send_message(&mut self, value: &Value) -> bool {
        let mut bytes = serde_json::to_vec(value).expect("a JSON value serializes");
        bytes.push(b'\n');
        self.link.send(bytes)
    }

    /// Sends a request and waits for its outcome (at most the configured timeout).
    pub async fn request(&mut self, method: &str, params: Option<Value>) -> Outcome {
        let timeout = self.cfg.timeout;
        self.request_with_timeout(method, params, timeout).await
    }

    pub async fn request_with_timeout(
        &mut self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Outcome {
        // One wait per unanswered method and process: the server already showed it does not
        // answer this method; waiting again would only repeat the timeout.
        if self.timed_out.contains_key(method) {
            return Outcome::Timeout;
        }
        let id = Id::Int(self.next_id);
        self.next_id += 1;
        let mut msg = json!({"jsonrpc": "2.0", "id": id.to_value(), "method": method});
        let params = match (&self.request_meta, params) {
            (Some(meta), Some(Value::Object(mut p))) => {
                let entry = p
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Default::default()));
                if let (Value::Object(m), Value::Object(add)) = (entry, meta) {
                    for (k, v) in add {
                        m.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                Some(Value::Object(p))
            }
            (Some(meta), None) => Some(json!({"_meta": meta})),
            (_, params) => params,
        };
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.pending.insert(
            id.clone(),
            Pending {
                method: method.to_string(),
                sent_at: self.now(),
            },
        );
        self.last_sent_notification = false;
        self.raw_sent = false;
        self.misaddressed = false;
        self.note(Direction::ToServer, || format!("request {method} #{id}"));
        self.tag_effects(&format!("request {method} #{id}"));
        self.send_message(&msg);
        self.wait_for(&id, timeout).await
    }

    /// The id of the last request sent.
    pub fn last_request_id(&self) -> Id {
        Id::Int(self.next_id - 1)
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Option<Value>) {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.last_sent_notification = true;
        self.note(Direction::ToServer, || format!("notification {method}"));
        self.tag_effects(&format!("notification {method}"));
        self.send_message(&msg);
    }

    /// Sends arbitrary bytes (adversarial probes). The caller owns the framing.
    pub fn send_raw(&mut self, bytes: Vec<u8>, label: &str) -> bool {
        self.raw_sent = true;
        self.last_sent_notification = false;
        self.note(Direction::ToServer, || {
            format!("raw {label} ({} bytes)", bytes.len())
        });
        self.tag_effects(&format!("raw {label}"));
        self.link.send(bytes)
    }

    /// Processes events for `duration` (or until the session dies).
    pub async fn observe(&mut self, duration: Duration) {
        let deadline = Instant::now() + duration;
        self.observe_until(deadline, |_| false).await;
    }

    /// Processes events until `done` holds or the deadline passes. Returns whether `done` held.
    pub async fn observe_until(
        &mut self,
        deadline: Instant,
        done: impl Fn(&Session) -> bool,
    ) -> bool {
        let mut overrun = 0;
        loop {
            if done(self) {
                return true;
            }
            if self.stdout_eof.is_some() && self.exited.is_some() {
                return done(self);
            }
            match self.next_event(deadline, &mut overrun).await {
                Next::Event(event) => self.handle(event),
                Next::Closed | Next::Elapsed => return done(self),
            }
        }
    }

    /// The next event, or [`Next::Elapsed`] once `until` has passed. A timer alone is not enough:
    /// tokio's `timeout_at` returns the inner future's value whenever it is ready, so a server
    /// that floods stdout without pause would never let a deadline fire. Past `until`, events
    /// already queued are still taken, at most [`OVERRUN_CAP`] per `overrun` counter.
    async fn next_event(&mut self, until: Instant, overrun: &mut usize) -> Next {
        use tokio::sync::mpsc::error::TryRecvError;
        if Instant::now() >= until {
            if *overrun >= OVERRUN_CAP {
                return Next::Elapsed;
            }
            *overrun += 1;
            return match self.link.events.try_recv() {
                Ok(event) => Next::Event(event),
                Err(TryRecvError::Empty) => Next::Elapsed,
                Err(TryRecvError::Disconnected) => Next::Closed,
            };
        }
        match tokio::time::timeout_at(until, self.link.events.recv()).await {
            Ok(Some(event)) => Next::Event(event),
            Ok(None) => Next::Closed,
            Err(_) => Next::Elapsed,
        }
    }

    /// Processes events until the server has read everything sent to it (the stdin pipe is
    /// empty), the session dies, or the deadline passes. Where unread bytes cannot be counted
    /// (no pipe descriptor, Windows), until the deadline.
    pub async fn wait_read(&mut self, deadline: Instant) {
        const LOOK: Duration = Duration::from_millis(5);
        loop {
            let unread = self.link.stdin_unread();
            if unread == Some(0) || self.is_dead() || Instant::now() >= deadline {
                return;
            }
            let step = if unread.is_some() {
                (Instant::now() + LOOK).min(deadline)
            } else {
                deadline
            };
            self.observe_until(step, Session::is_dead).await;
        }
    }

    /// Like [`Session::wait_exit`] with `grace`, extended in steps while the server is active
    /// (busy on CPU, or runnable on a saturated machine), by at most `cap` in all.
    pub async fn wait_exit_busy(&mut self, grace: Duration, cap: Duration) -> GraceEnd {
        let started = Instant::now();
        let mut clock = self.busy_probe.clone().map(|p| BusyClock::new(p, cap));
        let mut deadline = Instant::now() + grace;
        if let Some(c) = clock.as_mut() {
            if self.wait_exit(deadline - BUSY_STEP.min(grace)).await {
                return GraceEnd::Exited;
            }
            c.mark().await;
        }
        // A server still writing stdout is working, not ignoring EOF: when the guard reads
        // slower than it writes (a loaded machine), it sits blocked on a full pipe, idle by its
        // CPU clock, and gets to stdin EOF only once its output is read.
        let written = |s: &Session| s.link.counters.stdout_bytes.load(Ordering::Relaxed);
        let mut seen = written(self);
        let exited = loop {
            if self.wait_exit(deadline).await {
                break true;
            }
            let now = written(self);
            let writing = now > seen;
            seen = now;
            let step = match clock.as_mut() {
                Some(c) => c.extend(writing).await,
                None => None,
            };
            match step {
                Some(step) => deadline = Instant::now() + step,
                None => break false,
            }
        };
        if let Some(c) = clock.as_ref().filter(|c| !c.grace.extended.is_zero()) {
            self.extensions.push((self.phase, c.grace.extended));
        }
        if exited {
            return GraceEnd::Exited;
        }
        match clock {
            Some(c) if c.grace.capped => {
                let waited = started.elapsed();
                GraceEnd::Capped {
                    waited,
                    // Clock ticks are 1/100 s.
                    cpu_share: c.grace.ticks_used() as f64
                        / 100.0
                        / waited.as_secs_f64().max(0.001),
                    machine: load::Machine::read(),
                }
            }
            _ => GraceEnd::Idle,
        }
    }

    /// Extends a watch that ended (the late-output window) while the server is runnable, that
    /// is waiting for a CPU: its late line may simply not have been scheduled yet. At most `cap`.
    pub async fn observe_while_runnable(&mut self, cap: Duration) {
        let Some(probe) = self.busy_probe.clone() else {
            return;
        };
        let mut extended = Duration::ZERO;
        while extended < cap && !self.is_dead() && look(&probe).await.is_some_and(|a| a.runnable) {
            let step = BUSY_STEP.min(cap - extended);
            self.observe_until(Instant::now() + step, Session::is_dead)
                .await;
            extended += step;
        }
    }

    /// Waits until the process exits (and stdout reaches EOF, bounded), or the deadline passes.
    pub async fn wait_exit(&mut self, deadline: Instant) -> bool {
        self.observe_until(deadline, |s| s.exited.is_some()).await;
        if self.exited.is_some() && self.stdout_eof.is_none() {
            let drain = Instant::now() + EXIT_DRAIN;
            self.observe_until(drain.min(deadline.max(drain)), |s| s.stdout_eof.is_some())
                .await;
        }
        self.exited.is_some()
    }

    async fn wait_for(&mut self, id: &Id, timeout: Duration) -> Outcome {
        // A short window (the discover probe) may stretch up to the session timeout while the
        // server is busy or has not read the request yet; a timeout up to its own length again.
        let budget = timeout.max(self.cfg.timeout.min(timeout * 5));
        let mut clock = self.busy_probe.clone().map(|p| BusyClock::new(p, budget));
        let outcome = self
            .wait_inner(id, Instant::now() + timeout, clock.as_mut())
            .await;
        if let Some(c) = clock.filter(|c| !c.grace.extended.is_zero()) {
            self.extensions.push((self.phase, c.grace.extended));
        }
        if let (Outcome::Timeout, Some(p)) = (&outcome, self.pending.get(id)) {
            self.timed_out
                .insert(p.method.clone(), (id.clone(), p.sent_at));
        }
        self.pending.remove(id);
        match &outcome {
            Outcome::Reply(Reply::Result { .. } | Reply::Error { .. }) => {
                self.answered.insert(id.clone());
            }
            _ => {
                self.settled.insert(id.clone());
            }
        }
        outcome
    }

    async fn wait_inner(
        &mut self,
        id: &Id,
        deadline: Instant,
        mut clock: Option<&mut BusyClock>,
    ) -> Outcome {
        let mut deadline = deadline;
        // One step before the deadline the busy clock takes its first look.
        let look = BUSY_STEP.min(deadline.saturating_duration_since(Instant::now()) / 2);
        let mut checkpoint = clock.as_ref().and_then(|_| deadline.checked_sub(look));
        let mut overrun = 0;
        loop {
            if let Some(reply) = self.replies.remove(id) {
                return Outcome::Reply(reply);
            }
            if self.misaddressed {
                self.misaddressed = false;
                return Outcome::Misaddressed;
            }
            if self.stdout_limit.is_some() {
                return Outcome::OutputLimit;
            }
            if self.stdout_eof.is_some() {
                self.flush_joiner();
                if let Some(reply) = self.replies.remove(id) {
                    return Outcome::Reply(reply);
                }
                // EOF and exit usually come together; give the exit event a moment to arrive.
                if self.exited.is_none() {
                    let grace = Instant::now() + EXIT_DRAIN;
                    self.observe_until(grace, |s| s.exited.is_some()).await;
                }
                return match self.exited {
                    Some((_, exit)) => Outcome::Exited(exit),
                    None => Outcome::StdoutClosed,
                };
            }
            if let Some((at, exit)) = self.exited {
                // Keep reading the last frames until stdout closes, briefly.
                let drain_end =
                    Instant::now() + EXIT_DRAIN.saturating_sub(self.now().saturating_sub(at));
                if drain_end < deadline {
                    deadline = drain_end;
                }
                if Instant::now() >= deadline {
                    self.flush_joiner();
                    return Outcome::Exited(exit);
                }
            }
            if let Some(seen) = self.lsp_framing {
                // The reply is coming as an LSP body without a newline: it will never be a line.
                deadline = deadline.min(seen + LSP_GRACE);
            }
            let until = checkpoint.filter(|c| *c < deadline).unwrap_or(deadline);
            match self.next_event(until, &mut overrun).await {
                Next::Event(event) => self.handle(event),
                Next::Elapsed if until < deadline => {
                    checkpoint = None;
                    overrun = 0;
                    if let Some(c) = clock.as_deref_mut() {
                        c.mark().await;
                    }
                }
                Next::Closed | Next::Elapsed => {
                    self.flush_joiner();
                    if let Some(reply) = self.replies.remove(id) {
                        return Outcome::Reply(reply);
                    }
                    if let Some((_, exit)) = self.exited {
                        return Outcome::Exited(exit);
                    }
                    if self.lsp_framing.is_some() {
                        return Outcome::Reply(Reply::Broken { at: self.now() });
                    }
                    let unread = self.link.stdin_unread().is_some_and(|n| n > 0);
                    let step = match clock.as_deref_mut() {
                        Some(c) => c.extend(unread).await,
                        None => None,
                    };
                    if let Some(step) = step {
                        deadline = Instant::now() + step;
                        overrun = 0;
                        continue;
                    }
                    return Outcome::Timeout;
                }
            }
        }
    }

    /// Handles one event from the server.
    pub fn handle(&mut self, event: Event) {
        match event {
            Event::Frame(frame) => self.on_frame(frame),
            Event::Stalled(frame) => self.on_stalled(frame),
            Event::StdoutEof { at } => {
                self.stdout_eof = Some(at);
                self.flush_joiner();
                self.note(Direction::Process, || "stdout closed".into());
            }
            Event::StdoutLimit { at, total } => {
                self.stdout_limit = Some((at, total));
                self.flush_joiner();
                self.record(Issue::new(
                    &rules::STDOUT_OUTPUT_LIMIT_EXCEEDED,
                    format!(
                        "stdout exceeded the {total}-byte output limit after {} ms; the guard stopped reading and ended the server",
                        at.as_millis()
                    ),
                ).help("Find what floods stdout. If the output is legitimate, raise `--max-stdout-bytes`."));
                self.link.stop_reading();
                self.note(Direction::Process, || "stdout limit reached".into());
            }
            Event::Exited { at, exit } => {
                self.exited = Some((at, exit));
                self.note(Direction::Process, || {
                    format!("exited with {}", exit.describe())
                });
            }
            Event::StdinError { at, error } => {
                self.note(Direction::Process, || {
                    format!("stdin write failed: {error}")
                });
                self.stdin_error = Some((at, error));
            }
        }
    }

    /// A partial line no byte followed for [`super::transport::STALL`]: when it is a complete JSON
    /// message answering a request the guard waits for, it is judged now (unterminated), so the
    /// request settles now rather than at its timeout.
    fn on_stalled(&mut self, frame: RawFrame) {
        if frame.truncated || self.judge.is_holding() {
            return;
        }
        let mut inspected = frame::inspect(&frame);
        let answers_pending = inspected.values.iter().any(|v| {
            v.get("id")
                .and_then(Id::from_value)
                .is_some_and(|id| self.pending.contains_key(&id))
                && (v.get("result").is_some() || v.get("error").is_some())
        });
        let only_unterminated = inspected
            .problems
            .iter()
            .all(|p| p.rule == &rules::STDOUT_WITHOUT_NEWLINE);
        if !answers_pending || !only_unterminated {
            return;
        }
        for p in &mut inspected.problems {
            p.message = format!(
                "{} holds a complete JSON message but no newline followed it for {} ms: {}",
                frame::position(&frame),
                super::transport::STALL.as_millis(),
                frame::evidence(&frame)
            );
        }
        self.stalled = Some((frame.line, frame.len));
        self.stats.frames += 1;
        // A line reader never gets this reply: it answers its request, but unusably.
        self.judging_stalled = true;
        let issues = &self.issues;
        let judged = super::judge::judge(&frame, inspected, self.negotiated.as_deref(), &|rule| {
            issues.would_keep(rule)
        });
        self.apply(judged);
        self.judging_stalled = false;
    }

    fn on_frame(&mut self, frame: RawFrame) {
        if let Some((line, len)) = self.stalled
            && line == frame.line
        {
            // Judged already, when it stalled. Bytes written after the stall, before the
            // newline, are text after the message.
            self.stalled = None;
            let rest = frame.bytes.get(len as usize..).unwrap_or_default();
            let rest = super::json_text::trim_ws(rest);
            if !rest.is_empty() {
                self.record(
                    Issue::new(
                        &rules::STDOUT_TRAILING_TEXT,
                        format!(
                            "{} has text after its JSON message: {}",
                            frame::position(&frame),
                            crate::issue::escape_bytes(rest, frame::EVIDENCE_BYTES)
                        ),
                    )
                    .at_stdout(frame.line, frame.byte_offset)
                    .evidence(frame::evidence(&frame)),
                );
            }
            return;
        }
        self.stats.frames += 1;
        if self.stdin_closed_at.is_some() {
            self.stats.after_stdin_eof += 1;
        }
        let issues = &self.issues;
        let judged = self.judge.offer(
            frame,
            self.cfg.max_line_bytes,
            self.negotiated.as_deref(),
            &|rule| issues.would_keep(rule),
        );
        for j in judged {
            self.apply(j);
        }
    }

    /// Gives back held lines as non-JSON (the multi-line message never completed).
    fn flush_joiner(&mut self) {
        let issues = &self.issues;
        let judged = self
            .judge
            .flush(self.negotiated.as_deref(), &|rule| issues.would_keep(rule));
        for j in judged {
            self.apply(j);
        }
    }

    /// Takes in what the frame judge found: its findings, the values (for the tap), the
    /// messages to pair, broken or corrupted replies.
    fn apply(&mut self, j: Judged) {
        if j.lsp && self.lsp_framing.is_none() {
            self.lsp_framing = Some(Instant::now());
        }
        for issue in j.issues {
            self.record(issue);
        }
        for rule in j.counted {
            self.issues.count_more(rule);
        }
        let at = self.now();
        if let Some(tap) = self.tap.as_mut() {
            for (value, pos) in &j.values {
                if tap.len() < TAP_CAP {
                    tap.push(Tapped {
                        at,
                        line: pos.line,
                        offset: pos.offset,
                        value: value.clone(),
                    });
                }
            }
        }
        for raw in &j.broken_ids {
            self.on_broken_response(raw);
        }
        for (msg, damaged, pos) in j.messages {
            self.on_message(msg, damaged, pos);
        }
        if !j.corrupted_ids.is_empty() {
            self.correlate_corrupted(&j.corrupted_ids);
        }
        if j.invalid {
            self.stats.invalid_frames += j.invalid_frames;
            let (first, last) = j.lines;
            self.note(Direction::FromServer, || {
                if first == last {
                    format!("invalid line {first}")
                } else {
                    format!("invalid lines {first}-{last}")
                }
            });
        }
    }

    /// A line that is not JSON at all (invalid UTF-8 in the middle, text before the message)
    /// may still carry a reply: when it names a pending id as a response (read lossily by the
    /// judge), that request is answered — corrupted. Only correlation; nothing is accepted.
    fn correlate_corrupted(&mut self, ids: &[Value]) {
        let at = self.now();
        let found = ids
            .iter()
            .find_map(|raw| Id::from_value(raw).filter(|id| self.pending.contains_key(id)));
        if let Some(id) = found {
            self.note(Direction::FromServer, || format!("corrupted reply #{id}"));
            self.replies.entry(id).or_insert(Reply::Broken { at });
        }
    }

    fn on_broken_response(&mut self, raw: &Value) {
        // A reply to a rejected frame, or an id-less answer to anything (never paired on a
        // hostile session: it may answer a frame the guard sent raw).
        if self.hostile && (raw.is_null() || self.raw_ids.contains(raw)) {
            return;
        }
        let at = self.now();
        let id = Id::from_value(raw);
        let target = id
            .clone()
            .filter(|id| self.pending.contains_key(id))
            .or_else(|| {
                // `"1"` for `1`, `true` for `1`: pair it with the only pending request.
                (self.pending.len() == 1)
                    .then(|| self.pending.keys().next().cloned())
                    .flatten()
            });
        if let Some(target) = target {
            self.replies.insert(target, Reply::Broken { at });
        }
    }

    fn on_message(&mut self, msg: Message, damaged: bool, pos: Pos) {
        let line = pos.line;
        let at = self.now();
        match msg {
            Message::Result { id, result } => {
                self.stats.responses += 1;
                self.note(Direction::FromServer, || format!("result #{id}"));
                self.on_response(id, pos, |at| Reply::Result {
                    value: result,
                    at,
                    damaged,
                });
            }
            Message::Error {
                id: Some(id),
                error,
            } => {
                self.stats.responses += 1;
                self.note(Direction::FromServer, || {
                    format!("error #{id} ({})", error.code)
                });
                self.on_response(id, pos, |at| Reply::Error { error, at, damaged });
            }
            Message::Error { id: None, error } => {
                self.stats.responses += 1;
                self.note(Direction::FromServer, || {
                    format!("error #null ({})", error.code)
                });
                // A reply to a frame the server could not read. When the guard sent only a
                // well-formed request, that request is the one the server failed to read.
                if !self.raw_sent && !self.hostile && self.pending.len() == 1 {
                    let id = self.pending.keys().next().cloned().expect("one pending");
                    self.replies.insert(
                        id,
                        Reply::Error {
                            error: error.clone(),
                            at,
                            damaged,
                        },
                    );
                } else if self.pending.is_empty()
                    && self.last_sent_notification
                    && !self.raw_sent
                    && !self.hostile
                {
                    self.record(
                        Issue::new(
                            &rules::NOTIFICATION_RESPONSE,
                            format!(
                                "stdout line {line} answers a notification with an error ({}: {:?})",
                                error.code, error.message
                            ),
                        )
                        .at_stdout(pos.line, pos.offset),
                    );
                }
                if self.unpaired_errors.len() < MESSAGES_CAP {
                    self.unpaired_errors.push((at, error));
                }
            }
            Message::Request { id, method, .. } => {
                self.stats.server_requests += 1;
                self.note(Direction::FromServer, || {
                    format!("server request {method} #{id}")
                });
                self.on_server_request(id, method, pos);
            }
            Message::Notification { method, .. } => {
                self.stats.server_notifications += 1;
                self.note(Direction::FromServer, || format!("notification {method}"));
                // Notifications before `initialized` are legal (the lifecycle restricts requests
                // only; the TypeScript SDK sends list_changed this early): never a finding.
                self.remember(ServerMessage {
                    at,
                    phase: self.phase,
                    method,
                    is_request: false,
                });
            }
        }
    }

    fn on_response(&mut self, id: Id, pos: Pos, reply: impl FnOnce(Duration) -> Reply) {
        let line = pos.line;
        let at = self.now();
        self.last_reply_at = Some(at);
        if self.pending.contains_key(&id) {
            if self.judging_stalled {
                self.replies.entry(id).or_insert(Reply::Broken { at });
            } else {
                self.replies.entry(id).or_insert_with(|| reply(at));
            }
            return;
        }
        if self.hostile && self.raw_ids.contains(&id.to_value()) {
            self.note(Direction::FromServer, || {
                format!("reply to raw frame #{id}")
            });
            return;
        }
        if let Some(swapped) = id.swapped_type().filter(|s| self.pending.contains_key(s)) {
            let method = self.pending[&swapped].method.clone();
            self.record(
                Issue::new(
                    &rules::RESPONSE_ID_TYPE_MISMATCH,
                    format!("stdout line {line} answers {method} #{swapped} with id {id}: same value, different type"),
                )
                .at_stdout(pos.line, pos.offset),
            );
            self.replies.insert(swapped, Reply::Broken { at });
            return;
        }
        if self.settled.contains(&id) {
            // A late or repeated reply to a request already reported (timeout, broken reply).
            self.note(Direction::FromServer, || format!("late reply #{id}"));
            self.late_replies.entry(id).or_insert_with(|| reply(at));
            return;
        }
        if self.answered.contains(&id) || self.replies.contains_key(&id) {
            self.record(
                Issue::new(
                    &rules::STDOUT_UNEXPECTED_REQUEST_ID,
                    format!("stdout line {line} is a second response to request #{id}, which was already answered"),
                )
                .detail("already-answered")
                .at_stdout(pos.line, pos.offset),
            );
            return;
        }
        if !self.pending.is_empty() {
            let waiting: Vec<String> = self
                .pending
                .iter()
                .map(|(pid, p)| format!("{} #{pid}", p.method))
                .collect();
            self.record(
                Issue::new(
                    &rules::RESPONSE_ID_MISMATCH,
                    format!(
                        "stdout line {line} is a response with id {id}, which the guard never sent, while {} was waiting",
                        waiting.join(", ")
                    ),
                )
                .at_stdout(pos.line, pos.offset),
            );
            self.misaddressed = true;
            return;
        }
        if self.last_sent_notification && !self.raw_sent {
            self.record(
                Issue::new(
                    &rules::NOTIFICATION_RESPONSE,
                    format!("stdout line {line} is a response (id {id}) although the guard last sent a notification and no request was pending"),
                )
                .at_stdout(pos.line, pos.offset),
            );
            return;
        }
        if !self.raw_sent {
            self.record(
                Issue::new(
                    &rules::STDOUT_UNEXPECTED_REQUEST_ID,
                    format!(
                        "stdout line {line} is a response with id {id}, which the guard never sent"
                    ),
                )
                .detail("never-sent")
                .at_stdout(pos.line, pos.offset),
            );
        }
    }

    fn on_server_request(&mut self, id: Id, method: String, pos: Pos) {
        let line = pos.line;
        let at = self.now();
        if !self.initialized && method != "ping" {
            self.record(
                Issue::new(
                    &rules::SERVER_REQUEST_BEFORE_INITIALIZED,
                    format!("stdout line {line} is a {method:?} request sent before notifications/initialized"),
                )
                .at_stdout(pos.line, pos.offset),
            );
        }
        if let Some((_, capability)) = protocol::CLIENT_CAPABILITY_REQUESTS
            .iter()
            .find(|(m, _)| *m == method)
        {
            let revision = self
                .negotiated
                .clone()
                .unwrap_or_else(|| self.cfg.protocol.clone());
            let severity = if protocol::forbids_undeclared_client_requests(&revision) {
                crate::catalog::Severity::Error
            } else {
                crate::catalog::Severity::Warning
            };
            self.record(
                Issue::new(
                    &rules::SERVER_REQUEST_UNDECLARED_CAPABILITY,
                    format!(
                        "stdout line {line} is a {method:?} request, but the guard declared no {capability:?} client capability (negotiated {revision})"
                    ),
                )
                .severity(severity)
                .at_stdout(pos.line, pos.offset),
            );
        }
        let backlog = self.link.counters.stdin_queued.load(Ordering::Relaxed);
        if backlog > STDIN_BACKLOG_CAP {
            // The server is not reading its stdin: what is queued already waits for it.
            if self.stats.replies_dropped == 0 {
                self.note(Direction::Process, || {
                    format!("stdin backlog over {STDIN_BACKLOG_CAP} bytes: replies to server requests dropped")
                });
            }
            self.stats.replies_dropped += 1;
        } else {
            let reply = if method == "ping" {
                json!({"jsonrpc": "2.0", "id": id.to_value(), "result": {}})
            } else {
                let mut shown = method.as_str();
                if shown.len() > METHOD_ECHO_BYTES {
                    let mut end = METHOD_ECHO_BYTES;
                    while !shown.is_char_boundary(end) {
                        end -= 1;
                    }
                    shown = &shown[..end];
                }
                json!({"jsonrpc": "2.0", "id": id.to_value(), "error": {"code": -32601, "message": format!("Method not found: {shown} (mcp-stdio-guard declares no client capabilities)")}})
            };
            self.note(Direction::ToServer, || {
                format!("reply to server request {method} #{id}")
            });
            self.send_message(&reply);
        }
        self.remember(ServerMessage {
            at,
            phase: self.phase,
            method,
            is_request: true,
        });
    }

    /// Keeps a server message for the checks, up to [`MESSAGES_CAP`]; the rest are only counted
    /// (in `stats`).
    fn remember(&mut self, message: ServerMessage) {
        if self.server_messages.len() < MESSAGES_CAP {
            self.server_messages.push(message);
        }
    }

    /// Marks stdin as closed (the shutdown ladder closes it through the link).
    pub fn mark_stdin_closed(&mut self) {
        self.stdin_closed_at = Some(self.now());
        self.note(Direction::Process, || "stdin closed".into());
        self.tag_effects("stdin closed");
    }
}

#[cfg(test)]
mod tests {
    //! The protocol logic in-process: a fake server on the other end of `tokio::io::duplex`.
    use super::*;
    use crate::runtime::framing::FramerLimits;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

    type Lines = tokio::io::Lines<BufReader<DuplexStream>>;

    /// A session wired to a fake server task that gets the server's ends of the pipes.
    fn session<F, Fut>(server: F) -> Session
    where
        F: FnOnce(Lines, DuplexStream) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        session_and_events(server).0
    }

    /// [`session`], with the sender of process events (a test tells the session the process
    /// exited).
    fn session_and_events<F, Fut>(server: F) -> (Session, crate::runtime::transport::EventSender)
    where
        F: FnOnce(Lines, DuplexStream) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let (client_stdin, server_stdin) = tokio::io::duplex(1 << 16);
        let (server_stdout, client_stdout) = tokio::io::duplex(1 << 16);
        tokio::spawn(server(BufReader::new(server_stdin).lines(), server_stdout));
        let limits = FramerLimits {
            max_line_bytes: 1 << 20,
            max_total_bytes: 1 << 24,
        };
        let (link, tx) = Link::new(
            client_stdout,
            client_stdin,
            limits,
            std::time::Instant::now(),
        );
        let s = Session::new(
            link,
            SessionConfig {
                protocol: "2025-11-25".into(),
                timeout: Duration::from_secs(30),
                max_line_bytes: 1 << 20,
                issue_cap: 5,
            },
        );
        (s, tx)
    }

    /// A server blocked on a full stdout pipe sits idle by its CPU clock: while new stdout
    /// bytes keep arriving, the shutdown grace is extended (up to its cap); a server idle and
    /// silent gets the grace as it stands. The process "exits" 1.6 s in, well past the 600 ms
    /// grace; its CPU clock never moves.
    async fn grace_end_when_exiting_late(writing: bool) -> GraceEnd {
        let (mut s, tx) = session_and_events(move |_lines, mut out| async move {
            for i in 0..16 {
                if writing {
                    out.write_all(format!("{{\"line\":{i}}}\n").as_bytes())
                        .await
                        .unwrap();
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            std::future::pending::<()>().await;
        });
        let idle = crate::runtime::load::Activity {
            cpu_ticks: 7,
            runnable: false,
        };
        s.busy_probe = Some(std::sync::Arc::new(move || Some(idle)));
        let exits = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1600)).await;
            let exit = crate::runtime::transport::ExitInfo {
                code: Some(0),
                signal: None,
            };
            let at = Duration::from_millis(1600);
            let _ = tx.send(Event::Exited { at, exit }).await;
        });
        let end = s
            .wait_exit_busy(Duration::from_millis(600), Duration::from_secs(3))
            .await;
        exits.abort();
        end
    }

    #[tokio::test]
    async fn a_server_still_writing_stdout_gets_the_shutdown_grace_extended() {
        assert_eq!(grace_end_when_exiting_late(true).await, GraceEnd::Exited);
    }

    #[tokio::test]
    async fn a_silent_idle_server_gets_the_shutdown_grace_as_it_stands() {
        assert_eq!(grace_end_when_exiting_late(false).await, GraceEnd::Idle);
    }

    async fn write(out: &mut DuplexStream, v: Value) {
        out.write_all(format!("{v}\n").as_bytes()).await.unwrap();
    }

    fn codes(s: &Session) -> Vec<&'static str> {
        s.issues.iter().map(|i| i.code()).collect()
    }

    #[tokio::test]
    async fn a_misaddressed_reply_ends_the_wait_at_once() {
        let mut s = session(|mut lines, mut out| async move {
            let line = lines.next_line().await.unwrap().unwrap();
            let req: Value = serde_json::from_str(&line).unwrap();
            let wrong = req["id"].as_i64().unwrap() + 41;
            write(&mut out, json!({"jsonrpc":"2.0","id":wrong,"result":{}})).await;
            std::future::pending::<()>().await;
        });
        // A 30 s timeout: the test would hang if the session waited it out.
        let outcome = s.request("tools/list", None).await;
        assert!(matches!(outcome, Outcome::Misaddressed), "{outcome:?}");
        assert_eq!(codes(&s), ["response-id-mismatch"]);
    }

    #[tokio::test]
    async fn server_pings_are_answered_with_an_empty_result() {
        let mut s = session(|mut lines, mut out| async move {
            let req: Value =
                serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
            write(&mut out, json!({"jsonrpc":"2.0","id":"p1","method":"ping"})).await;
            let pong: Value =
                serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
            assert_eq!(pong, json!({"jsonrpc":"2.0","id":"p1","result":{}}));
            write(
                &mut out,
                json!({"jsonrpc":"2.0","id":"x","method":"custom/thing"}),
            )
            .await;
            let err: Value =
                serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
            assert_eq!(err["error"]["code"], -32601);
            write(
                &mut out,
                json!({"jsonrpc":"2.0","id":req["id"],"result":{"ok":true}}),
            )
            .await;
            std::future::pending::<()>().await;
        });
        s.mark_initialized();
        let outcome = s.request("tools/list", None).await;
        match outcome {
            Outcome::Reply(Reply::Result {
                value,
                damaged: false,
                ..
            }) => assert_eq!(value["ok"], true),
            other => panic!("{other:?}"),
        }
        assert!(codes(&s).is_empty(), "{:?}", codes(&s));
        assert_eq!(s.stats.server_requests, 2);
    }

    #[tokio::test]
    async fn a_server_that_never_reads_stdin_cannot_grow_the_reply_backlog() {
        const PINGS: u64 = 4000;
        let mut s = session(|lines, mut out| async move {
            let _unread = lines; // stdin stays open and is never read
            let pad = "p".repeat(1000);
            for n in 0..PINGS {
                let id = format!("{pad}-{n}");
                write(&mut out, json!({"jsonrpc":"2.0","id":id,"method":"ping"})).await;
            }
            std::future::pending::<()>().await;
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        assert!(
            s.observe_until(deadline, |s| s.stats.server_requests == PINGS)
                .await
        );
        // About 4 MB of replies were due: 64 KiB fit in the pipe, the cap holds back the rest.
        let queued = s.link.counters.stdin_queued.load(Ordering::Relaxed);
        assert!(queued <= STDIN_BACKLOG_CAP + 2048, "{queued} bytes queued");
        assert!(
            s.stats.replies_dropped > 2000,
            "{}",
            s.stats.replies_dropped
        );
        assert!(codes(&s).is_empty(), "{:?}", codes(&s));
    }

    #[tokio::test]
    async fn an_unknown_server_method_is_quoted_back_shortened() {
        let mut s = session(|mut lines, mut out| async move {
            let method = "x".repeat(100_000);
            write(&mut out, json!({"jsonrpc":"2.0","id":1,"method":method})).await;
            let reply: Value =
                serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
            let message = reply["error"]["message"].as_str().unwrap().to_string();
            assert!(message.len() < 256, "{} bytes", message.len());
            write(&mut out, json!({"jsonrpc":"2.0","method":"done"})).await;
            std::future::pending::<()>().await;
        });
        s.mark_initialized();
        let deadline = Instant::now() + Duration::from_secs(30);
        assert!(
            s.observe_until(deadline, |s| s.stats.server_notifications == 1)
                .await
        );
    }

    /// The session's 30 s timeout must never be what ends these waits: each is bounded at 10 s
    /// here, so a wait that ran into its timeout fails the test instead of passing slowly.
    async fn settles<F: std::future::Future<Output = Outcome>>(wait: F) -> Outcome {
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .expect("the wait ran into its timeout although the evidence was in")
    }

    /// The server's end: reads one request, writes `bytes` for it (the request's id spliced in
    /// for `{id}`), then keeps both pipes open.
    fn answering(
        bytes: &'static [u8],
    ) -> impl FnOnce(
        Lines,
        DuplexStream,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        move |mut lines, mut out| {
            Box::pin(async move {
                let req: Value =
                    serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
                let text = String::from_utf8_lossy(bytes).replace("{id}", &req["id"].to_string());
                let mut raw = text.into_bytes();
                // `~` in the template is the byte 0xff (invalid UTF-8).
                for b in raw.iter_mut() {
                    if *b == b'~' {
                        *b = 0xff;
                    }
                }
                out.write_all(&raw).await.unwrap();
                std::future::pending::<()>().await;
            })
        }
    }

    #[tokio::test]
    async fn a_reply_without_its_newline_settles_after_the_stall_window() {
        let mut s = session(answering(br#"{"jsonrpc":"2.0","id":{id},"result":{}}"#));
        match settles(s.request("ping", None)).await {
            Outcome::Reply(Reply::Broken { at }) => assert!(at >= super::super::transport::STALL),
            other => panic!("{other:?}"),
        }
        assert_eq!(codes(&s), ["stdout-without-newline"]);
        assert!(
            s.issues
                .iter()
                .next()
                .unwrap()
                .message
                .contains("no newline followed")
        );
    }

    #[tokio::test]
    async fn a_reply_with_invalid_utf8_inside_is_answered_corrupted_at_once() {
        let mut s = session(answering(
            b"{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{\"text\":\"caf~\"}}\n",
        ));
        assert!(matches!(
            settles(s.request("ping", None)).await,
            Outcome::Reply(Reply::Broken { .. })
        ));
        assert_eq!(codes(&s), ["stdout-invalid-utf8"]);
    }

    #[tokio::test]
    async fn a_reply_behind_a_banner_on_its_line_is_answered_corrupted_at_once() {
        let mut s = session(answering(
            b"ready> {\"jsonrpc\":\"2.0\",\"id\" : {id},\"result\":{}}\n",
        ));
        assert!(matches!(
            settles(s.request("ping", None)).await,
            Outcome::Reply(Reply::Broken { .. })
        ));
        assert_eq!(codes(&s), ["stdout-non-json"]);
    }

    #[tokio::test]
    async fn a_partial_line_that_is_not_a_reply_settles_nothing() {
        let mut s = session(answering(b"loading {id}"));
        s.cfg.timeout = Duration::from_millis(800);
        assert!(matches!(
            settles(s.request("ping", None)).await,
            Outcome::Timeout
        ));
        assert!(codes(&s).is_empty(), "{:?}", codes(&s));
    }

    #[tokio::test]
    async fn an_unanswered_method_is_waited_for_once_per_process() {
        let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let mut s = session(move |mut lines, out| async move {
            let _open = out; // stdout stays open, silent
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = seen_tx.send(line);
            }
        });
        s.cfg.timeout = Duration::from_millis(300);
        assert!(matches!(
            s.request("tools/list", None).await,
            Outcome::Timeout
        ));
        let first = s.unanswered_before("tools/list").expect("remembered");
        // Not sent, not waited for: the outcome is already known.
        assert!(matches!(
            tokio::time::timeout(Duration::from_millis(100), s.request("tools/list", None)).await,
            Ok(Outcome::Timeout)
        ));
        assert_eq!(s.unanswered_before("tools/list").unwrap().0, first.0);
        assert!(matches!(s.request("ping", None).await, Outcome::Timeout));
        let mut methods = Vec::new();
        while let Ok(line) = seen_rx.try_recv() {
            let v: Value = serde_json::from_str(&line).unwrap();
            methods.push(v["method"].as_str().unwrap().to_string());
        }
        assert_eq!(methods, ["tools/list", "ping"]);
    }

    #[tokio::test]
    async fn a_corrupted_reply_still_ends_the_wait() {
        let mut s = session(|mut lines, mut out| async move {
            let req: Value =
                serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
            let reply = json!({"jsonrpc":"2.0","id":req["id"],"result":{}});
            out.write_all(format!("{reply} server ready\n").as_bytes())
                .await
                .unwrap();
            std::future::pending::<()>().await;
        });
        match s.request("ping", None).await {
            Outcome::Reply(Reply::Result { damaged: true, .. }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(codes(&s), ["stdout-trailing-text"]);
    }

    #[tokio::test]
    async fn closing_stdout_ends_the_wait() {
        let mut s = session(|_lines, out| async move {
            drop(out);
            std::future::pending::<()>().await;
        });
        assert!(matches!(
            s.request("ping", None).await,
            Outcome::StdoutClosed
        ));
    }

    #[tokio::test]
    async fn a_hostile_session_never_pairs_replies_to_raw_frames_with_its_requests() {
        let mut s = session(|mut lines, mut out| async move {
            // The raw frame, then the ping: the replies to the raw frame come while the ping waits.
            let _raw = lines.next_line().await.unwrap().unwrap();
            let req: Value =
                serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
            write(
                &mut out,
                json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}),
            )
            .await;
            write(
                &mut out,
                json!({"jsonrpc":"2.0","id":"adv-x","error":{"code":-32600,"message":"no"}}),
            )
            .await;
            write(&mut out, json!({"jsonrpc":"2.0","id":true,"result":{}})).await;
            write(
                &mut out,
                json!({"jsonrpc":"2.0","id":req["id"],"result":{}}),
            )
            .await;
            std::future::pending::<()>().await;
        });
        s.hostile = true;
        s.raw_ids = vec![json!("adv-x"), json!(true)];
        s.tap = Some(Vec::new());
        s.send_raw(b"{\"id\":\"adv-x\" garbage\n".to_vec(), "probe");
        match s.request("ping", None).await {
            Outcome::Reply(Reply::Result { .. }) => {}
            other => panic!("{other:?}"),
        }
        // Only the echoed boolean id is a grammar violation; nothing was misaddressed.
        assert_eq!(codes(&s), ["stdout-invalid-json-rpc"]);
        assert_eq!(s.tap.as_ref().unwrap().len(), 4);
    }

    #[tokio::test]
    async fn a_string_id_for_an_integer_request_is_a_type_mismatch() {
        let mut s = session(|mut lines, mut out| async move {
            let req: Value =
                serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
            let id = req["id"].to_string();
            write(&mut out, json!({"jsonrpc":"2.0","id":id,"result":{}})).await;
            std::future::pending::<()>().await;
        });
        assert!(matches!(
            s.request("ping", None).await,
            Outcome::Reply(Reply::Broken { .. })
        ));
        assert_eq!(codes(&s), ["response-id-type-mismatch"]);
    }
}
