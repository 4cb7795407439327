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
use super::shutdown::{self, LadderConfig};
use crate::catalog::Check;
use crate::issue::{Issue, Phase, escape_bytes};
use crate::runtime::checks::adversarial::{
    self as verdicts, Baseline, FollowUp, Observation, RequestReply,
};
use crate::runtime::effects::Instruments;
use crate::runtime::jsonrpc::Id;
use crate::runtime::record::{
    AdversarialRecord, Era, ProbeRecord, ProbeStatus, RunRecord, ShutdownStage,
};
use crate::runtime::session::{Outcome, Reply, Session};
use crate::runtime::{RunSpec, process};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// The hostile-input settings of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AdversarialSpec {
    /// Built-in probe names (validated against [`corpus::NAMES`]).
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

/// How long the guard watches after a frame (and after the valid request that follows it):
/// the quiet window, between 100 and 500 ms.
pub fn window(spec: &RunSpec) -> Duration {
    spec.ladder
        .quiet
        .clamp(Duration::from_millis(100), Duration::from_millis(500))
}

/// Runs every probe of `spec` against the server the main run `first` described; returns the
/// records and the findings (tagged with their probe).
pub async fn run(spec: &RunSpec, first: &RunRecord) -> (AdversarialRecord, Vec<Issue>) {
    let ctx = Context {
        stateless: first.era == Era::Stateless,
        negotiated: first.negotiated_protocol.clone(),
        payload: spec.adversarial.payload.clone(),
        safe_tools: safe_tools(spec, first),
    };
    let plan = corpus::plan(&spec.adversarial.probes, &spec.adversarial.tool_calls, &ctx);
    if !first.initialized {
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
    let base = Arc::new(baseline(first));
    let spec = Arc::new(spec.clone());
    let ctx = Arc::new(ctx);
    let gate = Arc::new(Semaphore::new(spec.adversarial.jobs.max(1)));
    let tasks: Vec<_> = plan
        .into_iter()
        .map(|probe| {
            let (spec, base, ctx, gate) = (spec.clone(), base.clone(), ctx.clone(), gate.clone());
            tokio::spawn(async move {
                let _permit = gate.acquire_owned().await.expect("never closed");
                run_one(&spec, &base, &ctx, &probe).await
            })
        })
        .collect();
    let mut record = AdversarialRecord::default();
    let mut issues = Vec::new();
    for task in tasks {
        match task.await {
            Ok((probe, found)) => {
                record.probes.push(probe);
                issues.extend(found);
            }
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    (record, issues)
}

/// Each safe tool call of the spec with its tool's `inputSchema` from the main run.
fn safe_tools(spec: &RunSpec, first: &RunRecord) -> Vec<(CallRecipe, Option<Value>)> {
    first
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
fn baseline(first: &RunRecord) -> Baseline {
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
    }
}

fn skipped(probe: &Probe, why: String) -> ProbeRecord {
    ProbeRecord {
        name: probe.name.clone(),
        origin: probe.origin.as_str(),
        risk: probe.risk,
        status: ProbeStatus::Skipped,
        skip_reason: Some(why),
        frame: frame_text(probe),
        reply: "not sent".into(),
        session: "skipped",
        issue_codes: Vec::new(),
        effects_observed: false,
        effects: Vec::new(),
        duration: Duration::ZERO,
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

async fn run_one(
    spec: &RunSpec,
    base: &Baseline,
    ctx: &Context,
    probe: &Probe,
) -> (ProbeRecord, Vec<Issue>) {
    if let Some(why) = &probe.skip {
        return (skipped(probe, why.clone()), Vec::new());
    }
    let start = Instant::now();
    let window = window(spec);
    let eof_probe = matches!(probe.delivery, Delivery::RawThenEof(_));
    let mut obs = Observation {
        sent_at: None,
        not_run: None,
        reply: None,
        follow_up: FollowUp::NotSent,
        exit: None,
        stdout_eof: None,
        stdin_closed_at: None,
        shutdown: ShutdownStage::NotStarted,
        tapped: Vec::new(),
        issues: Vec::new(),
        effects: None,
        stderr_tail: Vec::new(),
        timeout: spec.session.timeout,
        follow_up_method: ctx.ping_method(),
        follow_up_baseline: None,
    };
    let mut instruments = match &spec.effects {
        Some(e) => Some(Instruments::start(e, start).await),
        None => None,
    };
    let mut spawn = spec.spawn.clone();
    if let Some(i) = &instruments {
        spawn.env.extend(i.env.iter().cloned());
    }
    let hook = instruments.as_ref().and_then(Instruments::spawn_hook);
    match process::spawn_with(&spawn, start, hook) {
        Err(e) => obs.not_run = Some(format!("the server could not start: {}", e.message)),
        Ok((link, mut server)) => {
            if let Some(i) = instruments.as_mut() {
                i.attach(server.pid, &server.marker);
            }
            let mut s = Session::new(link, spec.session.clone());
            let pgid = server.pid;
            s.busy_probe = Some(Arc::new(move || process::group_cpu_ticks(pgid)));
            s.effects = instruments.as_ref().map(|i| i.recorder.clone());
            // The main run proved the handshake works: a probe's process gets twice the timeout
            // for it, so that a loaded machine (probes start several processes at once) does not
            // turn into inconclusive probes.
            s.cfg.timeout = spec.session.timeout * 2;
            let mut ready = handshake(&mut s, ctx, spec).await;
            s.cfg.timeout = spec.session.timeout;
            if ready {
                s.phase = Phase::Adversarial;
                s.hostile = true;
                // A barrier: whatever the handshake still had in flight (a reply to the
                // `initialized` notification, a late log) arrives before this reply, so it is not
                // blamed on the probe. Its answer is also what the follow-up is compared with.
                match s.request(ctx.ping_method(), None).await {
                    Outcome::Reply(Reply::Error { error, .. }) => {
                        obs.follow_up_baseline = Some(error.code)
                    }
                    Outcome::Timeout => {
                        ready = false;
                        obs.not_run = Some(format!(
                            "the server did not answer {} after the handshake, before the probe's frame was sent",
                            ctx.ping_method()
                        ));
                    }
                    outcome if super::is_fatal(&outcome) => ready = false,
                    _ => {}
                }
            }
            if ready {
                s.raw_ids = probe
                    .frame_ids
                    .iter()
                    .chain(&probe.coerced_ids)
                    .cloned()
                    .collect();
                s.tap = Some(Vec::new());
                obs.sent_at = Some(s.now());
                drive(&mut s, probe, ctx, window, &mut obs).await;
            } else if obs.not_run.is_none() {
                obs.not_run = Some(why_not_ready(&s));
            }
            // The main run proved the server exits on EOF: its probe processes get twice the
            // grace (at least 3 s) before a hang is blamed on the probe.
            let ladder = LadderConfig {
                quiet: if eof_probe { Duration::ZERO } else { window },
                stdin_grace: (spec.ladder.stdin_grace * 2).max(Duration::from_secs(3)),
                ..spec.ladder.clone()
            };
            let sd = shutdown::run(&mut s, &mut server, &ladder).await;
            obs.shutdown = sd.stage;
            obs.exit = s.exited;
            obs.stdout_eof = s.stdout_eof;
            if obs.stdin_closed_at.is_none() {
                obs.stdin_closed_at = s.stdin_closed_at;
            }
            obs.tapped = s.tap.take().unwrap_or_default();
            obs.issues = s
                .issues
                .iter()
                .filter(|i| matches!(i.phase, Some(Phase::Adversarial | Phase::Shutdown)))
                .cloned()
                .collect();
            obs.stderr_tail = server.stderr.lock().expect("stderr lock").tail();
        }
    }
    if let Some(i) = instruments {
        let rec = i.finish().await;
        obs.effects = Some(rec.effects);
    }
    let verdict = verdicts::judge(probe, &obs, base);
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
    let record = ProbeRecord {
        name: probe.name.clone(),
        origin: probe.origin.as_str(),
        risk: probe.risk,
        status,
        skip_reason: None,
        frame: frame_text(probe),
        reply: verdict.reply,
        session: verdict.session,
        issue_codes,
        effects_observed: obs.effects.is_some(),
        effects: verdict.side_effects,
        duration: start.elapsed(),
    };
    (record, verdict.issues)
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
            s.send_raw(bytes.clone(), &probe.name);
            let deadline = tokio::time::Instant::now() + window;
            s.observe_until(deadline, Session::is_dead).await;
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
