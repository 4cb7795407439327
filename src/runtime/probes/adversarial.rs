//! The adversarial probes: each in a fresh server process, several at once (bounded).
//!
//! A probe's process goes through the handshake of the era the main run found, then the session
//! turns hostile: the probe's frame goes out (a well-formed request through the session, or raw
//! bytes), the guard watches a short window (silence is an answer), sends a valid request to see
//! whether the session is still usable, watches the same window for late replies, pollution and
//! effects, and ends the process through the shutdown ladder. `truncated-eof` closes stdin right
//! after its frame: the end of the session is what it tests. The verdict is pure
//! (`checks/adversarial.rs`); this module only observes.
//!
//! Why a fresh process per probe: a frame that corrupts the server's state must not be blamed on
//! the next probe, and a crash must not hide the probes after it.

use super::corpus::{self, CallRecipe, Context, Delivery, Probe};
use super::shutdown::GRACE_CAP_FACTOR;
use crate::catalog::Check;
use crate::issue::{Issue, Phase, escape_bytes};
use crate::runtime::checks::adversarial::{
    self as verdicts, Baseline, FollowUp, Observation, RequestReply,
};
use crate::runtime::effects::Instruments;
use crate::runtime::jsonrpc::Id;
use crate::runtime::record::{
    AdversarialRecord, Era, ProbeRecord, ProbeStatus, RunRecord, SessionState, ShutdownStage,
};
use crate::runtime::session::{Outcome, Reply, Session};
use crate::runtime::{RunSpec, load, process};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The hostile-input settings of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AdversarialSpec {
    /// Built-in probe names (validated against [`corpus::PROBES`]).
    pub probes: Vec<String>,
    /// Config `adversarialToolCalls`.
    pub tool_calls: Vec<CallRecipe>,
    /// The first safe tool call: the payload of frames a lenient reader could execute.
    pub payload: Option<CallRecipe>,
    /// Probe processes at once.
    pub jobs: usize,
}

impl AdversarialSpec {
    pub fn enabled(&self) -> bool {
        !self.probes.is_empty() || !self.tool_calls.is_empty()
    }
}

/// How long a frame the server has read gets before the follow-up is sent.
const FRAME_SETTLE: Duration = Duration::from_millis(50);

/// How long the guard watches after a probe's follow-up request was answered, for what the frame
/// caused late (a reply, pollution, an effect): a quarter of the quiet window, between 100 and
/// 250 ms.
pub fn window(spec: &RunSpec) -> Duration {
    (spec.ladder.quiet / 4).clamp(Duration::from_millis(100), Duration::from_millis(250))
}

/// What the probes need from the main run before they start, known as soon as its handshake and
/// lists are done (the rest of the main run — its late-output window, its shutdown — goes on
/// beside them): the era, the negotiated revision, the safe tools' schemas, the start-up's cost.
#[derive(Debug, Clone)]
pub struct Ready {
    pub initialized: bool,
    pub stateless: bool,
    pub negotiated: Option<String>,
    pub safe_tool_schemas: Vec<(String, Option<Value>)>,
    pub startup_cpu: Option<Duration>,
}

impl Ready {
    pub fn of(first: &RunRecord) -> Ready {
        Ready {
            initialized: first.initialized,
            stateless: first.era == Era::Stateless,
            negotiated: first.negotiated_protocol.clone(),
            safe_tool_schemas: first.safe_tool_schemas.clone(),
            startup_cpu: first.timings.startup_cpu,
        }
    }
}

/// The main run's [`Baseline`], which a probe's verdict needs: sent when the main run ends
/// (probes may start before).
pub type LaterBaseline = tokio::sync::watch::Receiver<Option<Arc<Baseline>>>;

/// A [`LaterBaseline`] already known.
pub fn baseline_now(first: &RunRecord) -> LaterBaseline {
    tokio::sync::watch::channel(Some(Arc::new(baseline(first)))).1
}

/// Waits for the main run's baseline (an empty one if the main run was dropped without one).
async fn base_of(later: &LaterBaseline) -> Arc<Baseline> {
    let mut rx = later.clone();
    match rx.wait_for(Option::is_some).await {
        Ok(b) => b.clone().unwrap_or_default(),
        Err(_) => Arc::default(),
    }
}

/// Runs every probe of `spec` against the server the main run described (`ready`); returns the
/// records and the findings (tagged with their probe). A verdict waits for the main run's
/// `base`, the probes themselves do not.
///
/// The probes are dealt round-robin into lanes (at most `jobs`, run concurrently). A lane runs
/// its probes one after another in one server process while the session stays usable: each
/// probe is fenced by a barrier `ping` before its frame and the follow-up request after it, so
/// its findings are exactly its own, and a session a probe closed, crashed, hung or broke is
/// never handed to the next probe (a fresh process starts). A probe that ends with stdin EOF
/// always gets a process of its own. `MCP_GUARD_PROBES_ALONE=1` gives every probe its own
/// process (the tests compare both ways).
pub async fn run(
    spec: &RunSpec,
    ready: &Ready,
    base: LaterBaseline,
) -> (AdversarialRecord, Vec<Issue>) {
    let ctx = Context {
        stateless: ready.stateless,
        negotiated: ready.negotiated.clone(),
        payload: spec.adversarial.payload.clone(),
        safe_tools: safe_tools(spec, ready),
    };
    let plan = corpus::plan(&spec.adversarial.probes, &spec.adversarial.tool_calls, &ctx);
    if !ready.initialized {
        let probes = plan
            .iter()
            .map(|p| {
                skipped(
                    p,
                    "the server never completed the handshake in the main run".into(),
                )
            })
            .collect();
        return (AdversarialRecord { probes }, Vec::new());
    }
    let alone = std::env::var_os(ALONE_ENV).is_some_and(|v| !v.is_empty() && v != "0");
    let mut spec = spec.clone();
    spec.heavy_start = load::is_heavy(ready.startup_cpu);
    let spec = Arc::new(spec);
    let ctx = Arc::new(ctx);
    let order: Vec<String> = plan.iter().map(|p| p.name.clone()).collect();
    // A probe that ends its process with stdin EOF is a lane of its own, started with the
    // others (in a shared lane it would make the next probe pay a fresh start); the rest are
    // dealt round-robin into the lanes.
    let (eof, shared): (Vec<Probe>, Vec<Probe>) = plan
        .into_iter()
        .partition(|p| matches!(p.delivery, Delivery::RawThenEof(_)));
    let lanes = lanes_for(spec.adversarial.jobs, ready).min(shared.len().max(1));
    let mut dealt: Vec<Vec<Probe>> = vec![Vec::new(); lanes];
    for (i, probe) in shared.into_iter().enumerate() {
        dealt[i % lanes].push(probe);
    }
    dealt.extend(eof.into_iter().map(|p| vec![p]));
    let tasks: Vec<_> = dealt
        .into_iter()
        .map(|probes| {
            let (spec, base, ctx) = (spec.clone(), base.clone(), ctx.clone());
            tokio::spawn(async move { run_lane(&spec, &base, &ctx, probes, alone).await })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        match task.await {
            Ok(found) => results.extend(found),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    // Reported in the plan's order, whatever lane ran them.
    results
        .sort_by_key(|(r, _): &(ProbeRecord, Vec<Issue>)| order.iter().position(|n| *n == r.name));
    let mut record = AdversarialRecord::default();
    let mut issues = Vec::new();
    for (probe, found) in results {
        record.probes.push(probe);
        issues.extend(found);
    }
    (record, merge_across_probes(issues))
}

/// How many lanes the probes of a server get: `jobs` (two per core), three quarters of them when
/// its start-up (the CPU its process group used to the handshake's answer, in the main run) is
/// CPU-heavy ([`load::HEAVY_START_CPU`]): each lane pays one start-up, and a handful of probes per
/// process cost far less than another start.
fn lanes_for(jobs: usize, ready: &Ready) -> usize {
    if load::is_heavy(ready.startup_cpu) {
        (jobs * 3 / 4).max(1)
    } else {
        jobs.max(1)
    }
}

/// The environment switch that gives every probe a process of its own (tests).
pub const ALONE_ENV: &str = "MCP_GUARD_PROBES_ALONE";

/// Each safe tool call of the spec with its tool's `inputSchema` from the main run.
fn safe_tools(spec: &RunSpec, ready: &Ready) -> Vec<(CallRecipe, Option<Value>)> {
    ready
        .safe_tool_schemas
        .iter()
        .filter_map(|(name, schema)| {
            let op = spec
                .operations
                .iter()
                .find(|o| o.safe_tool_call_name.as_deref() == Some(name.as_str()))?;
            let arguments = op
                .params
                .as_ref()
                .and_then(|p| p.get("arguments"))
                .cloned()
                .unwrap_or_else(|| serde_json::json!({}));
            Some((
                CallRecipe {
                    name: name.clone(),
                    arguments,
                },
                schema.clone(),
            ))
        })
        .collect()
}

/// What the main run established.
pub fn baseline(first: &RunRecord) -> Baseline {
    let stage = first.process.shutdown.stage;
    Baseline {
        stdout_evidence: first
            .issues
            .iter()
            .filter(|i| matches!(i.rule.check, Check::Stdout | Check::JsonRpc))
            .filter_map(|i| i.evidence.clone())
            .collect(),
        shutdown_clean: stage == ShutdownStage::StdinEof,
        eof_exit_clean: stage == ShutdownStage::StdinEof && first.process.exit_code == Some(0),
        codes: first.issues.iter().map(Issue::code).collect(),
        habits: first.issues.iter().map(Issue::habit).collect(),
    }
}

/// One root cause, one finding: the same defect seen in several probe processes (the same
/// offending bytes, the same descendant left behind) is reported once, with the probes that
/// showed it in `probes` and their number in `occurrences`. A probe's own verdict (its reply,
/// its session, its effects) names its frame, so it never merges with another probe's.
fn merge_across_probes(issues: Vec<Issue>) -> Vec<Issue> {
    let mut out: Vec<Issue> = Vec::new();
    for issue in issues {
        let probe = issue.fields.get("probe").cloned().unwrap_or(Value::Null);
        let key = across_key(&issue);
        let same = key.as_ref().and_then(|k| {
            out.iter_mut()
                .find(|o| o.code() == issue.code() && across_key(o).as_ref() == Some(k))
        });
        match same {
            Some(first) => {
                let mut probes = first
                    .fields
                    .get("probes")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_else(|| {
                        vec![first.fields.get("probe").cloned().unwrap_or(Value::Null)]
                    });
                if !probes.contains(&probe) {
                    probes.push(probe);
                }
                let n = probes.len() as u64;
                first.fields.insert("probes".into(), probes.into());
                first.fields.insert("occurrences".into(), n.into());
            }
            None => out.push(issue),
        }
    }
    out
}

/// What identifies a defect independent of the probe: the offending bytes of pollution, or the
/// message of a lifecycle finding with the probe's name taken out. `None` for a probe's verdict.
fn across_key(issue: &Issue) -> Option<String> {
    use crate::catalog::adversarial as rules;
    if issue.rule == &rules::ADVERSARIAL_PROBE_INVALID_STDOUT {
        return issue.evidence.clone().or_else(|| {
            issue
                .message
                .split_once(": ")
                .map(|(_, rest)| crate::issue::mask_positions(rest))
        });
    }
    if matches!(issue.rule.check, Check::Process) {
        return issue
            .message
            .split_once(": ")
            .map(|(_, rest)| crate::issue::mask_positions(rest));
    }
    None
}

fn skipped(probe: &Probe, why: String) -> ProbeRecord {
    ProbeRecord {
        name: probe.name.clone(),
        origin: probe.origin,
        risk: probe.risk,
        status: ProbeStatus::Skipped,
        skip_reason: Some(why),
        frame: frame_text(probe),
        reply: "not sent".into(),
        session: SessionState::Skipped,
        issue_codes: Vec::new(),
        effects_observed: false,
        effects: Vec::new(),
        duration: Duration::ZERO,
        process_ended_ms: None,
    }
}

fn frame_text(probe: &Probe) -> String {
    match &probe.delivery {
        Delivery::Request { method, params } => {
            let msg = serde_json::json!({"jsonrpc": "2.0", "id": "<n>", "method": method, "params": params});
            escape_bytes(&serde_json::to_vec(&msg).unwrap_or_default(), 120)
        }
        Delivery::Raw(bytes) | Delivery::RawThenEof(bytes) => escape_bytes(bytes, 120),
    }
}

/// One server process of a lane, ready for probes (its handshake done).
struct ProbeProcess {
    s: Session,
    server: process::ServerProcess,
    instruments: Option<Instruments>,
    /// The probes observed in it so far, judged once the process's effects are in.
    pending: Vec<(Probe, Observation, Duration)>,
}

/// Runs a lane's probes, sharing a process while its session stays usable.
async fn run_lane(
    spec: &RunSpec,
    base: &LaterBaseline,
    ctx: &Context,
    probes: Vec<Probe>,
    alone: bool,
) -> Vec<(ProbeRecord, Vec<Issue>)> {
    let mut out = Vec::new();
    let mut live: Option<ProbeProcess> = None;
    for probe in probes {
        if let Some(why) = &probe.skip {
            out.push((skipped(&probe, why.clone()), Vec::new()));
            continue;
        }
        let eof_probe = matches!(probe.delivery, Delivery::RawThenEof(_));
        if eof_probe && let Some(p) = live.take() {
            out.extend(end_process(p, base).await);
        }
        let started = Instant::now();
        let mut proc = match live.take() {
            Some(p) => p,
            None => match start_process(spec, ctx, &probe.name).await {
                Ok(p) => p,
                Err(not_run) => {
                    let obs = Observation {
                        not_run: Some(not_run),
                        ..observation(spec, ctx)
                    };
                    let verdict = verdicts::judge(&probe, &obs, &*base_of(base).await);
                    let issues = verdict.issues.clone();
                    out.push((record(&probe, &obs, verdict, started.elapsed()), issues));
                    continue;
                }
            },
        };
        let obs = probe_in(&mut proc, &probe, ctx, spec).await;
        let usable = !eof_probe
            && !alone
            && !proc.s.is_dead()
            && verdicts::judge(&probe, &obs, &*base_of(base).await).session == SessionState::Usable;
        proc.pending.push((probe, obs, started.elapsed()));
        if usable {
            live = Some(proc);
        } else {
            out.extend(end_process(proc, base).await);
        }
    }
    if let Some(p) = live {
        out.extend(end_process(p, base).await);
    }
    out
}

/// An observation before anything was seen.
fn observation(spec: &RunSpec, ctx: &Context) -> Observation {
    Observation {
        sent_at: None,
        not_run: None,
        reply: None,
        follow_up: FollowUp::NotSent,
        exit: None,
        stdout_eof: None,
        stdin_closed_at: None,
        window_end: None,
        shutdown: ShutdownStage::NotStarted,
        tapped: Vec::new(),
        issues: Vec::new(),
        effects: None,
        stderr_tail: Vec::new(),
        timeout: spec.session.timeout,
        follow_up_method: ctx.ping_method(),
        follow_up_baseline: None,
    }
}

/// Starts a probe process and completes the handshake of the main run's era; else why not.
async fn start_process(
    spec: &RunSpec,
    ctx: &Context,
    first_probe: &str,
) -> Result<ProbeProcess, String> {
    // A CPU-heavy start-up waits for a slot, held until the handshake is answered.
    let slot = load::heavy_start(spec.heavy_start).await;
    let start = std::time::Instant::now();
    let mut instruments = match &spec.effects {
        Some(e) => Some(Instruments::start(e, start).await),
        None => None,
    };
    let mut spawn = spec.spawn.clone();
    spawn.tap = spawn
        .tap
        .map(|t| t.role(format!("probes from {first_probe}")));
    if let Some(i) = &instruments {
        spawn.env.extend(i.env.iter().cloned());
    }
    let hook = instruments.as_ref().and_then(Instruments::spawn_hook);
    let gate = load::pace().await;
    let spawned = process::spawn_with(&spawn, start, hook);
    drop(gate);
    let (link, server) = match spawned {
        Ok(pair) => pair,
        Err(e) => {
            if let Some(i) = instruments.take() {
                i.finish().await;
            }
            return Err(format!("the server could not start: {}", e.message));
        }
    };
    if let Some(i) = instruments.as_mut() {
        i.attach(server.pid, &server.marker);
    }
    let mut s = Session::new(link, spec.session.clone());
    let pgid = server.pid;
    s.busy_probe = Some(Arc::new(move || process::group_activity(pgid)));
    s.effects = instruments.as_ref().map(|i| i.recorder.clone());
    // The main run proved the handshake works: a probe's process gets twice the timeout for
    // it, so that a loaded machine (several probe processes start at once) does not turn into
    // inconclusive probes.
    s.cfg.timeout = spec.session.timeout * 2;
    let ready = handshake(&mut s, ctx, spec).await;
    drop(slot);
    s.cfg.timeout = spec.session.timeout;
    let proc = ProbeProcess {
        s,
        server,
        instruments,
        pending: Vec::new(),
    };
    if ready {
        Ok(proc)
    } else {
        let why = why_not_ready(&proc.s);
        let _ = kill_and_collect(proc).await;
        Err(why)
    }
}

/// One probe on a ready process: the barrier, the frame, the follow-up, the window.
async fn probe_in(
    proc: &mut ProbeProcess,
    probe: &Probe,
    ctx: &Context,
    spec: &RunSpec,
) -> Observation {
    let s = &mut proc.s;
    let window = window(spec);
    let mut obs = observation(spec, ctx);
    // The barrier: whatever the handshake or the previous probe still had in flight (a reply to
    // `initialized`, a late log, an unsolicited server request) arrives before this reply, in
    // the previous phase, so it is not blamed on this probe. Its answer is also what the
    // follow-up is compared with.
    s.phase = Phase::PostInitialize;
    match s.request(ctx.ping_method(), None).await {
        Outcome::Reply(Reply::Error { error, .. }) => obs.follow_up_baseline = Some(error.code),
        Outcome::Timeout => {
            obs.not_run = Some(format!(
                "the server did not answer {} before the probe's frame was sent",
                ctx.ping_method()
            ));
            return obs;
        }
        outcome if super::is_fatal(&outcome) => {
            obs.not_run = Some(why_not_ready(s));
            return obs;
        }
        _ => {}
    }
    s.phase = Phase::Adversarial;
    s.hostile = true;
    // Replies to earlier probes' frames stay recognised (never misaddressed).
    s.raw_ids
        .extend(probe.frame_ids.iter().chain(&probe.coerced_ids).cloned());
    s.tap = Some(Vec::new());
    let mark = s.issues.len();
    obs.sent_at = Some(s.now());
    drive(s, probe, ctx, window, &mut obs).await;
    if matches!(probe.delivery, Delivery::RawThenEof(_)) {
        // The end of the session is this probe's subject: the server must exit on EOF as it did
        // in the main run (a busy server gets the grace extended).
        let grace = spec.ladder.stdin_grace;
        obs.shutdown = if s.wait_exit_busy(grace, grace * GRACE_CAP_FACTOR).await
            == crate::runtime::load::GraceEnd::Exited
        {
            ShutdownStage::StdinEof
        } else {
            ShutdownStage::Sigkill
        };
    } else if !s.is_dead() {
        // Late replies, pollution and effects of the frame.
        let until = tokio::time::Instant::now() + window;
        s.observe_until(until, Session::is_dead).await;
    }
    if s.stdout_eof.is_some() && s.exited.is_none() {
        // stdout closed: the exit usually follows at once; a server that keeps running with
        // its stdout closed is told apart by the wait (see the verdict's 250 ms).
        s.wait_exit(tokio::time::Instant::now() + Duration::from_millis(500))
            .await;
    }
    obs.window_end = Some(s.now());
    obs.exit = s.exited;
    obs.stdout_eof = s.stdout_eof;
    if obs.stdin_closed_at.is_none() {
        obs.stdin_closed_at = s.stdin_closed_at;
    }
    obs.tapped = s.tap.take().unwrap_or_default();
    obs.issues = s.issues.since(mark).cloned().collect();
    obs.stderr_tail = proc.server.stderr.lock().expect("stderr lock").tail();
    obs
}

/// Ends a lane's process as soon as its probes' verdicts are in (its whole group is killed:
/// the shutdown behaviour is judged once, in the main run), then judges them with the effects
/// the process showed.
async fn end_process(
    mut proc: ProbeProcess,
    base: &LaterBaseline,
) -> Vec<(ProbeRecord, Vec<Issue>)> {
    let verdict_at = proc.s.now();
    let pending = std::mem::take(&mut proc.pending);
    let (effects, ended) = kill_and_collect(proc).await;
    let base = &*base_of(base).await;
    let n = pending.len();
    pending
        .into_iter()
        .enumerate()
        .map(|(i, (probe, mut obs, took))| {
            obs.effects = effects.clone();
            let verdict = verdicts::judge(&probe, &obs, base);
            let issues = verdict.issues.clone();
            let mut rec = record(&probe, &obs, verdict, took);
            if i + 1 == n {
                rec.process_ended_ms =
                    ended.map(|e| e.saturating_sub(verdict_at).as_millis() as u64);
            }
            (rec, issues)
        })
        .collect()
}

/// Kills a probe process's group now; its effects, and when it was seen gone.
async fn kill_and_collect(
    proc: ProbeProcess,
) -> (
    Option<Vec<crate::runtime::effects::Effect>>,
    Option<Duration>,
) {
    let ProbeProcess {
        mut s,
        mut server,
        instruments,
        ..
    } = proc;
    let killed_at = s.now();
    // When the kernel has it dead (measured, not slept).
    let ended = match s.exited.filter(|(at, _)| *at <= killed_at) {
        Some((at, _)) => {
            server.signal_group(process::GroupSignal::Kill);
            Some(at)
        }
        None => server
            .kill_group_and_watch(Duration::from_secs(2))
            .await
            .map(|seen| s.now().saturating_sub(seen.elapsed())),
    };
    crate::runtime::reap_killed(&mut s, &mut server).await;
    let effects = match instruments {
        Some(i) => Some(i.finish().await.effects),
        None => None,
    };
    (effects, ended)
}

fn record(
    probe: &Probe,
    obs: &Observation,
    verdict: verdicts::Verdict,
    took: Duration,
) -> ProbeRecord {
    let status = if verdict.issues.iter().any(Issue::is_error) {
        ProbeStatus::Fail
    } else if verdict
        .issues
        .iter()
        .any(|i| i.severity == crate::catalog::Severity::Warning)
    {
        ProbeStatus::Warning
    } else {
        ProbeStatus::Pass
    };
    let mut issue_codes: Vec<&'static str> = Vec::new();
    for i in &verdict.issues {
        if !issue_codes.contains(&i.code()) {
            issue_codes.push(i.code());
        }
    }
    ProbeRecord {
        name: probe.name.clone(),
        origin: probe.origin,
        risk: probe.risk,
        status,
        skip_reason: None,
        frame: frame_text(probe),
        reply: verdict.reply,
        session: verdict.session,
        issue_codes,
        effects_observed: obs.effects.is_some(),
        effects: verdict.side_effects,
        duration: took,
        process_ended_ms: None,
    }
}

/// The handshake of the main run's era. True when the session is ready for requests.
async fn handshake(s: &mut Session, ctx: &Context, spec: &RunSpec) -> bool {
    if ctx.stateless {
        let (era, _) = super::discover::run(s, spec.session.timeout * 2).await;
        matches!(era, super::discover::Era::Stateless { usable: true, .. })
    } else {
        super::handshake::run(s).await.ok
    }
}

fn why_not_ready(s: &Session) -> String {
    match s.issues.iter().find(|i| i.is_error()) {
        Some(i) => format!(
            "the handshake failed in the probe's fresh process ({}: {})",
            i.code(),
            i.message
        ),
        None => "the handshake did not complete in the probe's fresh process".into(),
    }
}

/// Sends the frame and the valid request after it, recording what came back.
async fn drive(
    s: &mut Session,
    probe: &Probe,
    ctx: &Context,
    window: Duration,
    obs: &mut Observation,
) {
    match &probe.delivery {
        Delivery::Request { method, params } => {
            let outcome = s.request(method, Some(params.clone())).await;
            let reply = match outcome {
                Outcome::Reply(Reply::Result { value, .. }) => RequestReply::Result(value),
                Outcome::Reply(Reply::Error { error, .. }) => RequestReply::Error {
                    code: error.code,
                    message: error.message,
                },
                Outcome::Reply(Reply::Broken { .. })
                | Outcome::Misaddressed
                | Outcome::OutputLimit => RequestReply::Broken,
                Outcome::Timeout => RequestReply::Timeout,
                Outcome::Exited(_) | Outcome::StdoutClosed => RequestReply::Gone,
            };
            let stop = matches!(reply, RequestReply::Timeout | RequestReply::Gone);
            obs.reply = Some(reply);
            if stop {
                return;
            }
        }
        Delivery::Raw(bytes) => {
            // The follow-up goes out once the server has read the frame (and had a moment to
            // handle it), never in the same read: a reader that drops a bad chunk must not drop
            // the follow-up with it. Silence to the frame itself is an answer; what it causes
            // later is watched in the window after the follow-up.
            s.send_raw(bytes.clone(), &probe.name);
            s.wait_read(tokio::time::Instant::now() + window).await;
            let settle = tokio::time::Instant::now() + FRAME_SETTLE.min(window);
            s.observe_until(settle, Session::is_dead).await;
        }
        Delivery::RawThenEof(bytes) => {
            s.send_raw(bytes.clone(), &probe.name);
            s.link.close_stdin(Duration::from_millis(500)).await;
            s.mark_stdin_closed();
            obs.stdin_closed_at = s.stdin_closed_at;
            return;
        }
    }
    if s.is_dead() {
        obs.follow_up = FollowUp::Gone;
        return;
    }
    let sent = s.now();
    let outcome = s.request(ctx.ping_method(), None).await;
    let id = s.last_request_id();
    obs.follow_up = match outcome {
        Outcome::Reply(Reply::Result { .. }) => FollowUp::Result,
        Outcome::Reply(Reply::Error { error, .. }) => FollowUp::Error {
            code: error.code,
            message: error.message,
        },
        // An unreadable reply is reported as pollution; it says nothing about state.
        Outcome::Reply(Reply::Broken { .. }) | Outcome::Misaddressed => FollowUp::NotSent,
        Outcome::Timeout => match answered_under_rejected_id(s, probe, sent, &id) {
            Some(raw) => FollowUp::WrongId(raw),
            None => FollowUp::Timeout,
        },
        Outcome::Exited(_) | Outcome::StdoutClosed | Outcome::OutputLimit => FollowUp::Gone,
    };
}

/// After the valid request went unanswered: did a reply come under a rejected frame's id instead?
fn answered_under_rejected_id(
    s: &Session,
    probe: &Probe,
    sent: Duration,
    id: &Id,
) -> Option<Value> {
    let tap = s.tap.as_ref()?;
    if tap
        .iter()
        .any(|t| t.value.get("id") == Some(&id.to_value()))
    {
        return None;
    }
    tap.iter()
        .filter(|t| t.at >= sent)
        .filter_map(|t| t.value.get("id"))
        .find(|raw| probe.frame_ids.contains(raw) || probe.coerced_ids.contains(raw))
        .cloned()
}
