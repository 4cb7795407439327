//! The runtime guard: spawn the server as a client would, speak MCP as a strict client, judge
//! every byte of stdout, and end the process through the shutdown ladder. The only async code of
//! the crate lives here.
//!
//! Data flows one way: `RunSpec → process → RawFrame → Message → Session → probes/checks →
//! Issue → RunRecord`.

pub mod checks;
pub mod effects;
pub mod frame;
pub mod framing;
pub mod issues;
pub mod json_text;
pub mod jsonrpc;
pub mod judge;
pub mod load;
pub mod probes;
pub mod process;
pub mod record;
pub mod session;
pub mod transcript;
pub mod transport;

use crate::catalog::{
    Check, adversarial as adversarial_rules, protocol as protocol_rules, runtime as rules,
};
use crate::issue::{Issue, Phase};
use probes::ProbeSpec;
use probes::requests::{OperationSpec, Policy};
use probes::shutdown::LadderConfig;
use record::{
    DiscoverAnswer, DiscoverRecord, Era, OperationRecord, OperationStatus, OutputRecord,
    ProcessOutcome, ProcessRecord, RunRecord, ShutdownRecord, ShutdownStage, Timings,
};
use serde_json::Value;
use session::{Session, SessionConfig};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Everything one run needs.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub spawn: process::SpawnSpec,
    pub session: SessionConfig,
    pub operations: Vec<OperationSpec>,
    pub ladder: LadderConfig,
    pub allow_operation_errors: bool,
    pub probes: ProbeSpec,
    /// Adversarial probes and tool calls (run once per target, after the main runs).
    pub adversarial: probes::adversarial::AdversarialSpec,
    /// The no-effect proof (`--effects`): observe every process of the target.
    pub effects: Option<effects::EffectsSpec>,
    /// Run the server a second time in the other stdio buffering mode (`--unbuffered-rerun`).
    pub unbuffered_rerun: bool,
    /// The server's start-up is known to be CPU-heavy (its main run said so): this run's process
    /// starts through [`load::heavy_start`].
    pub heavy_start: bool,
}

/// Runs the server once, start to finish. Never panics on server behaviour; always returns a
/// record, with every process of the run gone.
///
/// A server that dies on the `server/discover` probe is checked again in a fresh process
/// without it: the probe must never cost a legacy server its verdict. The crash is reported
/// (a warning) only when the second process shows the server works without the probe.
pub async fn run_server(spec: &RunSpec, run: u32) -> RunRecord {
    run_server_ready(spec, run, None).await
}

/// [`run_server`], telling `ready` what the adversarial probes need as soon as a legacy-era
/// handshake and its lists are done (the server's only process, or the legacy process of a
/// dual-era server), while the late-output window and shutdown go on. Dropped unsent otherwise
/// (a stateless-only server, no handshake): the probes then wait for the whole run.
pub async fn run_server_ready(
    spec: &RunSpec,
    run: u32,
    ready: Option<tokio::sync::oneshot::Sender<probes::adversarial::Ready>>,
) -> RunRecord {
    // Told by whichever process first completes a legacy-era handshake and its lists: the only
    // one of a legacy server, the legacy one of a dual-era server.
    let ready: ReadySlot = std::sync::Arc::new(std::sync::Mutex::new(ready));
    let speculate = if spec.probes.discover {
        load::speculation()
    } else {
        None
    };
    let (mut first, mut legacy, early) = eras(spec, run, &ready, speculate).await;
    // Two instances of a single-instance server (a fixed port, a lock file) must not fail it: a
    // first process that exited before its handshake, beside a legacy process started early and
    // never used, is checked again with no process beside it.
    if early && legacy.is_none() && exited_before_handshake(&first) {
        (first, legacy, _) = eras(spec, run, &ready, None).await;
    }
    if first.era == Era::Stateless {
        return legacy_too(spec, run, first, legacy).await;
    }
    if !discover_may_be_to_blame(&first) {
        return first;
    }
    let mut second = run_once(spec, run, false, Ops::Run, None, None).await;
    if second.initialized {
        let how = if first.discover.answer == Some(DiscoverAnswer::Crashed) {
            "exited or closed stdout when sent server/discover"
        } else {
            "answered server/discover, then never completed the initialize handshake"
        };
        let issue = Issue::new(
            &protocol_rules::DISCOVER_CRASHED,
            format!(
                "the server {how}, the first request of dual-era clients; without it the handshake works"
            ),
        )
        .phase(Phase::Initialize);
        second.discover = first.discover;
        second.issues.insert(0, issue);
    }
    second
}

/// The first process of a run (the era probe, then the handshake of the era it found) and, when
/// it finds a stateless server, the legacy process beside it. `speculate`: when `server/discover`
/// is not answered within that time and the machine has a core to spare, the legacy process
/// starts then, held unsent to until the era is known ([`run_server_ready`]); the third value
/// tells whether it did.
async fn eras(
    spec: &RunSpec,
    run: u32,
    ready: &ReadySlot,
    speculate: Option<std::time::Duration>,
) -> (RunRecord, Option<RunRecord>, bool) {
    // Eras side by side: the moment `server/discover` shows a stateless server, its legacy
    // handshake starts in a second process while the first goes on with its stateless checks.
    let (stateless_tx, stateless_rx) = tokio::sync::oneshot::channel();
    // Set when the first process's run is over: a discarded early process is not waited for
    // past it.
    let (first_done, first_over) = tokio::sync::watch::channel(false);
    let first = async {
        let record = run_once(
            spec,
            run,
            spec.probes.discover,
            Ops::DeferIfStateless,
            Some(stateless_tx),
            Some(ready.clone()),
        )
        .await;
        let _ = first_done.send(true);
        record
    };
    let legacy = async {
        // A slow starter on a machine with room to spare: the legacy process starts beside the
        // era probe and waits; its start-up (the costly part of a slow server) overlaps the first
        // process's. Its late-output window runs from its own handshake, like every run's: the
        // era's `notifications/initialized` may be what makes a server write.
        let mut stateless_rx = stateless_rx;
        let mut shown = None;
        let mut early = None;
        if let Some(after) = speculate {
            tokio::select! {
                answer = &mut stateless_rx => shown = Some(answer.is_ok()),
                _ = tokio::time::sleep(after) => {
                    if load::room_to_spare() {
                        early = Some(start_run(spec, run, false, true).await);
                    }
                }
            }
        }
        let speculated = early.is_some();
        let held = Instant::now();
        let shown = match shown {
            Some(shown) => shown,
            None => stateless_rx.await.is_ok(),
        };
        let record = match (shown, early) {
            (true, Some(Ok(mut started))) => {
                started.held = held.elapsed();
                Some(
                    finish_run(
                        spec,
                        run,
                        started,
                        false,
                        Ops::Run,
                        None,
                        Some(ready.clone()),
                    )
                    .await,
                )
            }
            (true, Some(Err(failed))) => Some(*failed),
            (true, None) => {
                Some(run_once(spec, run, false, Ops::Run, None, Some(ready.clone())).await)
            }
            // A legacy-only server: the process started early was never needed (nothing was
            // sent to it); it is told EOF, then killed with its whole group (at the latest when
            // the first process's run is over).
            (false, Some(Ok(started))) => {
                discard(spec, started, first_over).await;
                None
            }
            (false, _) => None,
        };
        (record, speculated)
    };
    let (first, (legacy, speculated)) = tokio::join!(first, legacy);
    (first, legacy, speculated)
}

/// The first process exited on its own before its handshake was done.
fn exited_before_handshake(first: &RunRecord) -> bool {
    !first.initialized && first.process.started && first.process.outcome == ProcessOutcome::Exited
}

/// Ends a process started for a run that turned out not to be needed, before anything was sent
/// to it: stdin EOF first, as a client that changed its mind would (a server that cleans up on
/// exit, a pid or lock file, gets to), then its whole group is killed and reaped once the stdin
/// grace is over or the run it was started for is (a slow starter still starting does not hold
/// the verdict back); its effects observer is stopped and nothing of it is reported.
async fn discard(
    spec: &RunSpec,
    started: Started,
    mut run_over: tokio::sync::watch::Receiver<bool>,
) {
    let Started {
        mut s,
        mut server,
        instruments,
        slot,
        ..
    } = started;
    drop(slot);
    s.link.close_stdin(std::time::Duration::ZERO).await;
    let grace = tokio::time::Instant::now() + spec.ladder.stdin_grace;
    tokio::select! {
        _ = s.wait_exit(grace) => {}
        _ = run_over.wait_for(|over| *over) => {}
    }
    server.signal_group(process::GroupSignal::Kill);
    reap_killed(&mut s, &mut server).await;
    if let Some(i) = instruments {
        i.finish().await;
    }
}

/// After the guard sent SIGKILL to a process's group it does not judge (a discarded early
/// process, a probe process whose verdicts are in): waits for the exit (bounded), kills what is
/// left of its run, forgets the run and stops reading its pipes.
pub(crate) async fn reap_killed(s: &mut Session, server: &mut process::ServerProcess) {
    s.wait_exit(tokio::time::Instant::now() + std::time::Duration::from_secs(2))
        .await;
    let left = server.descendants().await;
    process::kill_all(&left);
    server.signal_group(process::GroupSignal::Kill);
    process::forget_run(server.pid);
    s.link.stop_reading();
    server
        .finish_stderr(std::time::Duration::from_millis(200))
        .await;
}

/// Where a run's processes tell the once-per-target checks they may start (the first to get
/// there takes the sender).
type ReadySlot = std::sync::Arc<
    std::sync::Mutex<Option<tokio::sync::oneshot::Sender<probes::adversarial::Ready>>>,
>;

/// Tells the once-per-target checks they may start, when this process is the first to have a
/// live legacy-era session with its lists done.
fn tell_ready(
    ready: Option<ReadySlot>,
    s: &Session,
    era: Era,
    safe_tool_schemas: &[(String, Option<serde_json::Value>)],
    startup_cpu: Option<std::time::Duration>,
) {
    if let Some(slot) = ready
        && s.initialized
        && era == Era::Legacy
        && s.exited.is_none()
        && let Some(tx) = slot.lock().unwrap_or_else(|e| e.into_inner()).take()
    {
        let _ = tx.send(probes::adversarial::Ready {
            initialized: true,
            stateless: false,
            negotiated: s.negotiated.clone(),
            safe_tool_schemas: safe_tool_schemas.to_vec(),
            startup_cpu,
        });
    }
}

/// What the once-per-target checks found, to join the first run's record ([`join_extra`]).
#[derive(Debug, Default)]
pub struct Extra {
    probes: Option<(record::AdversarialRecord, Vec<Issue>)>,
    rerun: Option<(checks::buffering::RerunMode, RunRecord, std::time::Duration)>,
}

/// Checks made once per target: the adversarial probes (each in a fresh server process) and the
/// buffering rerun (a whole second run in the other stdio buffering mode), side by side. They
/// need only what `ready` says of the main run, so they may start before it ends; the probes'
/// verdicts wait for its `base`. `one_era`: the server speaks the legacy era (the rerun checks it
/// alone); `started`: the main run's server started.
pub async fn extra_checks_from(
    spec: &RunSpec,
    ready: &probes::adversarial::Ready,
    one_era: bool,
    started: bool,
    base: probes::adversarial::LaterBaseline,
) -> Extra {
    let probes = async {
        if spec.adversarial.enabled() {
            Some(probes::adversarial::run(spec, ready, base).await)
        } else {
            None
        }
    };
    let rerun = async {
        if spec.unbuffered_rerun && started {
            let started = Instant::now();
            let (mode, mut rerun_spec) = buffering_rerun_spec(spec);
            rerun_spec.heavy_start = load::is_heavy(ready.startup_cpu);
            // Pollution does not depend on the era: a server that speaks the legacy era is
            // rerun in it alone (one process, not two).
            if one_era {
                rerun_spec.probes.discover = false;
            }
            let rerun = run_server(&rerun_spec, 1).await;
            Some((mode, rerun, started.elapsed()))
        } else {
            None
        }
    };
    let (probes, rerun) = tokio::join!(probes, rerun);
    Extra { probes, rerun }
}

/// Joins what the once-per-target checks found to the first run's record.
pub fn join_extra(first: &mut RunRecord, extra: Extra) {
    if let Some((record, issues)) = extra.probes {
        first.target_issues.extend(issues);
        first.adversarial = Some(record);
    }
    if let Some((mode, mut rerun, duration)) = extra.rerun {
        rerun.run = first.run;
        let found = checks::buffering::compare(&first.issues, &rerun.issues, mode);
        first.buffering = Some(record::BufferingRecord {
            rerun_mode: mode.as_str(),
            extra_pollution: found.len().saturating_sub(1),
            duration,
        });
        first.target_issues.extend(found);
    }
}

/// [`extra_checks_from`] once the first run is over.
pub async fn extra_checks_after(spec: &RunSpec, first: &RunRecord) -> Extra {
    extra_checks_from(
        spec,
        &probes::adversarial::Ready::of(first),
        first.era == Era::Legacy || first.also_stateless,
        first.process.started,
        probes::adversarial::baseline_now(first),
    )
    .await
}

/// The rerun in the other buffering mode: `PYTHONUNBUFFERED=1` when the main run was
/// block-buffered, `PYTHONUNBUFFERED` removed when it was not. No probes, no effects.
fn buffering_rerun_spec(spec: &RunSpec) -> (checks::buffering::RerunMode, RunSpec) {
    use checks::buffering::RerunMode;
    const KEY: &str = "PYTHONUNBUFFERED";
    let spawn = &spec.spawn;
    let unbuffered = if spawn.unset.iter().any(|k| k == KEY) {
        false
    } else if let Some((_, v)) = spawn.env.iter().rev().find(|(k, _)| k == KEY) {
        !v.is_empty()
    } else {
        std::env::var_os(KEY).is_some_and(|v| !v.is_empty())
    };
    let mut rerun = spec.clone();
    rerun.spawn.tap = rerun.spawn.tap.map(|t| t.role("buffering rerun"));
    rerun.effects = None;
    rerun.adversarial = probes::adversarial::AdversarialSpec::default();
    rerun.unbuffered_rerun = false;
    rerun.spawn.env.retain(|(k, _)| k != KEY);
    rerun.spawn.unset.retain(|k| k != KEY);
    let mode = if unbuffered {
        rerun.spawn.unset.push(KEY.into());
        RerunMode::Buffered
    } else {
        rerun.spawn.env.push((KEY.into(), "1".into()));
        RerunMode::Unbuffered
    };
    (mode, rerun)
}

/// The handshake failed after the era probe in a way the probe could have caused: the server died
/// on it, or it answered the probe and then died or went silent on `initialize`. (A server that
/// was silent from the start, or answered `initialize` with an error, did that on its own.)
fn discover_may_be_to_blame(first: &RunRecord) -> bool {
    if first.initialized || !first.discover.probed {
        return false;
    }
    if first.discover.answer == Some(DiscoverAnswer::Crashed) {
        return true;
    }
    let answered = matches!(
        first.discover.answer,
        Some(DiscoverAnswer::Error | DiscoverAnswer::Broken | DiscoverAnswer::UnexpectedResult)
    );
    answered
        && first.issues.iter().any(|i| {
            [
                &rules::SERVER_EXITED,
                &rules::STDOUT_CLOSED_EARLY,
                &rules::INITIALIZE_TIMEOUT,
            ]
            .iter()
            .any(|r| i.is(r))
        })
}

/// The server answered `server/discover`, which locks that connection into the stateless era.
/// The user asked for a legacy revision (`--protocol`), so the legacy handshake is checked too, in
/// a fresh process without the probe. A dual-era server (it initializes) is reported with the
/// legacy run as the primary one and the stateless run's protocol findings added, tagged
/// `era: stateless`; its explicit operations and process lifecycle are judged once, in the legacy
/// run. A stateless-only server (it refuses `initialize`) is reported from its stateless run.
/// The explicit operations (tool calls among them) run exactly once: the stateless run defers
/// them, and a stateless-only server gets one more stateless run that sends them.
async fn legacy_too(
    spec: &RunSpec,
    run: u32,
    stateless: RunRecord,
    legacy: Option<RunRecord>,
) -> RunRecord {
    // Started beside the stateless run when discover answered in time; else (a discover reply
    // that came after its window) now.
    let mut legacy = match legacy {
        Some(l) => l,
        None => run_once(spec, run, false, Ops::Run, None, None).await,
    };
    // Only an error reply to `initialize` means "no legacy era here"; a timeout, a crash or a
    // broken reply is a finding of the legacy run, reported as such.
    if !legacy.initialized && legacy.issues.iter().any(|i| i.is(&rules::INITIALIZE_ERROR)) {
        let mut only = if spec.operations.is_empty() {
            stateless
        } else {
            run_once(spec, run, true, Ops::Run, None, None).await
        };
        only.legacy_refused = true;
        return only;
    }
    // The same defect seen in both processes (a banner, a bad tool name) is reported once: the
    // offending bytes identify a stdout finding (its line differs), the message any other.
    let key = |i: &Issue| {
        (
            i.code(),
            i.evidence.clone().unwrap_or_else(|| i.message.clone()),
        )
    };
    let seen: BTreeSet<(&'static str, String)> = legacy.issues.iter().map(key).collect();
    let extra: Vec<Issue> = stateless
        .issues
        .into_iter()
        .filter(|i| !matches!(i.rule.check, Check::Operation | Check::Process))
        .filter(|i| !seen.contains(&key(i)))
        .map(|i| {
            let message = format!("stateless era: {}", i.message);
            let mut i = i.field("era", "stateless");
            i.message = message;
            i
        })
        .collect();
    legacy.issues.extend(extra);
    legacy.discover = stateless.discover;
    legacy.also_stateless = true;
    legacy
}

/// Whether a run sends the explicit operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ops {
    Run,
    /// Not if the server turns out stateless: a legacy run follows and sends them.
    DeferIfStateless,
}

/// One process of the server, start to finish. `stateless`, when given, is told the moment
/// `server/discover` shows a stateless server (the caller starts the legacy era beside it).
async fn run_once(
    spec: &RunSpec,
    run: u32,
    discover: bool,
    ops: Ops,
    stateless: Option<tokio::sync::oneshot::Sender<()>>,
    ready: Option<ReadySlot>,
) -> RunRecord {
    match start_run(spec, run, discover, false).await {
        Ok(started) => finish_run(spec, run, started, discover, ops, stateless, ready).await,
        Err(failed) => *failed,
    }
}

/// A server process of a run, spawned, its session open and nothing sent yet.
struct Started {
    /// The run's clock (the start-up is part of its time).
    start: Instant,
    spawn_time: std::time::Duration,
    /// How long the process was held before its session began ([`eras`]): not part of
    /// the handshake's time.
    held: std::time::Duration,
    s: Session,
    server: process::ServerProcess,
    instruments: Option<effects::Instruments>,
    output_limits: OutputRecord,
    /// The start slot of a CPU-heavy start-up, given back once the handshake is answered.
    slot: Option<tokio::sync::SemaphorePermit<'static>>,
}

/// Spawns the server process of a run; the record of the run when it could not start. `early`:
/// the legacy process of a dual-era check started before the era is known.
async fn start_run(
    spec: &RunSpec,
    run: u32,
    discover: bool,
    early: bool,
) -> Result<Started, Box<RunRecord>> {
    // A CPU-heavy start-up waits for a slot first: the run's clock starts after (the wait is
    // the guard's, not the server's).
    let slot = load::heavy_start(spec.heavy_start).await;
    let start = Instant::now();
    let output_limits = OutputRecord {
        max_stdout_bytes: spec.spawn.limits.max_total_bytes,
        max_stdout_line_bytes: spec.spawn.limits.max_line_bytes,
        max_stderr_bytes: spec.spawn.max_stderr_bytes,
        ..OutputRecord::default()
    };
    let mut instruments = match &spec.effects {
        Some(e) => Some(effects::Instruments::start(e, start).await),
        None => None,
    };
    // Starts are paced on a saturated machine (the run's clock starts before the wait: the
    // start-up is part of its time).
    let gate = load::pace().await;
    let mut spawn = spec.spawn.clone();
    // The process's role in the transcript: `run 2`, `run 1 (legacy era)`, `buffering rerun`,
    // `run 1 (legacy era, started early)` (sent nothing at all when the server is legacy-only).
    spawn.tap = spawn.tap.map(|t| {
        let era = if early {
            " (legacy era, started early)"
        } else if discover {
            ""
        } else if spec.probes.discover {
            " (legacy era)"
        } else {
            ""
        };
        let role = match t.role_name() {
            "" => format!("run {run}{era}"),
            base => format!("{base}{era}"),
        };
        t.role(role)
    });
    let spawned = match &instruments {
        Some(i) => {
            spawn.env.extend(i.env.iter().cloned());
            process::spawn_with(&spawn, start, i.spawn_hook())
        }
        None => process::spawn(&spawn, start),
    };
    drop(gate);
    let (link, server) = match spawned {
        Ok(pair) => pair,
        Err(err) => {
            if let Some(i) = instruments.take() {
                i.finish().await;
            }
            return Err(Box::new(spawn_failed(spec, run, start, err, output_limits)));
        }
    };
    let spawn_time = start.elapsed();
    let mut s = Session::new(link, spec.session.clone());
    let pgid = server.pid;
    s.busy_probe = Some(std::sync::Arc::new(move || process::group_activity(pgid)));
    if let Some(i) = instruments.as_mut() {
        i.attach(server.pid, &server.marker);
        s.effects = Some(i.recorder.clone());
    }
    Ok(Started {
        start,
        spawn_time,
        held: std::time::Duration::ZERO,
        s,
        server,
        instruments,
        output_limits,
        slot,
    })
}

/// A started run, from its first frame to the end of its process.
async fn finish_run(
    spec: &RunSpec,
    run: u32,
    started: Started,
    discover: bool,
    ops: Ops,
    stateless: Option<tokio::sync::oneshot::Sender<()>>,
    ready: Option<ReadySlot>,
) -> RunRecord {
    let Started {
        start,
        spawn_time,
        held,
        mut s,
        mut server,
        instruments,
        output_limits,
        slot,
    } = started;
    let neg = negotiate(&mut s, spec, discover, stateless).await;
    drop(slot);
    let init_time = start.elapsed();
    let startup_cpu = s
        .busy_probe
        .as_ref()
        .and_then(|p| p())
        .map(|a| std::time::Duration::from_millis(a.cpu_ticks * 10));
    let work = operate(&mut s, spec, &neg, ops).await;
    let ops_time = start.elapsed();
    tell_ready(ready, &s, neg.era, &work.safe_tool_schemas, startup_cpu);
    let exit_phase_before = s.exited.map(|_| s.phase);
    let shutdown = probes::shutdown::run(&mut s, &mut server, &spec.ladder).await;
    let total = start.elapsed();
    let (stderr, effects) =
        after_shutdown(&mut s, spec, &neg, &work.operations, &server, instruments).await;
    let process = process_record(
        &s,
        server.pid,
        shutdown,
        exit_phase_before,
        output_limits,
        &stderr,
    );
    let capability_keys = neg
        .capabilities
        .as_object()
        .map(|c| {
            let mut keys: Vec<String> = c.keys().cloned().collect();
            keys.sort();
            keys
        })
        .unwrap_or_default();
    let stats = s.stats.clone();
    RunRecord {
        run,
        process,
        initialized: s.initialized,
        negotiated_protocol: s.negotiated.clone(),
        initialize_result: neg.hs.result,
        capability_keys,
        era: neg.era,
        also_stateless: false,
        legacy_refused: false,
        discover: neg.discover,
        capability_probes: spec.probes.capabilities,
        capability_checks: work.lists.checks,
        tool_schema: work.tool_schema,
        safe_tool_schemas: work.safe_tool_schemas,
        operations: work.operations,
        frames: stats.frames,
        invalid_frames: stats.invalid_frames,
        frames_after_stdin_eof: stats.after_stdin_eof,
        server_requests: stats.server_requests,
        server_notifications: stats.server_notifications,
        stderr_tail: stderr.tail,
        timings: Timings {
            spawn: Some(spawn_time),
            initialize: Some(init_time.saturating_sub(spawn_time + held)),
            operations: Some(ops_time.saturating_sub(init_time)),
            shutdown: Some(total.saturating_sub(ops_time)),
            total,
            startup_cpu,
        },
        issues: s.issues.into_vec(),
        effects,
        adversarial: None,
        buffering: None,
        target_issues: Vec::new(),
    }
}

/// The record of a run whose server could not be started.
fn spawn_failed(
    spec: &RunSpec,
    run: u32,
    start: Instant,
    err: process::SpawnError,
    output_limits: OutputRecord,
) -> RunRecord {
    let issue = Issue::new(
        &rules::SPAWN_FAILED,
        format!("could not start the server: {} ({})", err.message, err.code),
    )
    .detail("spawn-failed-before-startup")
    .phase(Phase::Startup)
    .field("spawnErrorCode", err.code.clone());
    RunRecord {
        run,
        issues: vec![issue],
        process: ProcessRecord {
            started: false,
            pid: None,
            outcome: ProcessOutcome::SpawnFailed,
            phase: Phase::Startup,
            exit_code: None,
            signal: None,
            timed_out: false,
            timeout_code: None,
            killed_by_guard: false,
            kill_signal: None,
            kill_reason: None,
            spawn_error: Some((err.code, err.message)),
            shutdown: ShutdownRecord {
                stage: ShutdownStage::NotStarted,
                stdin_eof_to_exit: None,
                stdout_held_open: false,
                descendants_killed: Vec::new(),
            },
            output: output_limits,
        },
        initialized: false,
        negotiated_protocol: None,
        initialize_result: None,
        capability_keys: Vec::new(),
        era: Era::Legacy,
        also_stateless: false,
        legacy_refused: false,
        discover: DiscoverRecord::default(),
        capability_probes: spec.probes.capabilities,
        capability_checks: probes::lists::unprobed(&Value::Null).checks,
        tool_schema: None,
        safe_tool_schemas: Vec::new(),
        operations: skipped(&spec.operations),
        frames: 0,
        invalid_frames: 0,
        frames_after_stdin_eof: 0,
        server_requests: 0,
        server_notifications: 0,
        stderr_tail: Vec::new(),
        timings: Timings {
            total: start.elapsed(),
            ..Timings::default()
        },
        effects: None,
        adversarial: None,
        buffering: None,
        target_issues: Vec::new(),
    }
}

/// What the start of a session established: the era, the capabilities, the handshake.
struct Negotiated {
    era: Era,
    capabilities: Value,
    hs: probes::handshake::Handshake,
    discover: DiscoverRecord,
}

/// The era probe (`server/discover`, when `discover`), then the legacy handshake unless the
/// server is stateless; `stateless` is told the moment it is.
async fn negotiate(
    s: &mut Session,
    spec: &RunSpec,
    discover: bool,
    stateless: Option<tokio::sync::oneshot::Sender<()>>,
) -> Negotiated {
    // Era: a stateless server answers `server/discover`; anything else goes on with `initialize`.
    let (era, mut discover_rec) = if discover {
        probes::discover::run(s, spec.probes.discover_window).await
    } else {
        (probes::discover::Era::Legacy, DiscoverRecord::default())
    };
    if let (probes::discover::Era::Stateless { .. }, Some(tx)) = (&era, stateless) {
        let _ = tx.send(());
    }
    let mut hs = probes::handshake::Handshake::default();
    let (era, capabilities) = match era {
        probes::discover::Era::Stateless {
            capabilities,
            usable,
        } => {
            hs.ok = usable;
            (Era::Stateless, capabilities)
        }
        probes::discover::Era::Legacy => {
            hs = probes::handshake::run(s).await;
            let late = if hs.ok {
                None
            } else {
                probes::discover::late(s, &mut discover_rec)
            };
            if let Some(probes::discover::Era::Stateless {
                capabilities,
                usable,
            }) = late
            {
                hs = probes::handshake::Handshake {
                    ok: usable,
                    ..Default::default()
                };
                (Era::Stateless, capabilities)
            } else {
                let caps = hs
                    .result
                    .as_ref()
                    .and_then(|r| r.get("capabilities"))
                    .filter(|c| c.is_object())
                    .cloned()
                    .unwrap_or(Value::Null);
                (Era::Legacy, caps)
            }
        }
        probes::discover::Era::Crashed => (Era::Legacy, Value::Null),
    };
    Negotiated {
        era,
        capabilities,
        hs,
        discover: discover_rec,
    }
}

/// What the work after the handshake produced.
struct Work {
    lists: probes::lists::Lists,
    tool_schema: Option<checks::tools::ToolSummary>,
    safe_tool_schemas: Vec<(String, Option<Value>)>,
    operations: Vec<OperationRecord>,
}

/// The capability probes and the explicit operations.
async fn operate(s: &mut Session, spec: &RunSpec, neg: &Negotiated, ops: Ops) -> Work {
    let (hs, capabilities, era) = (&neg.hs, &neg.capabilities, neg.era);
    let lists = if hs.ok && spec.probes.capabilities {
        probes::lists::run(
            s,
            capabilities,
            &probes::lists::ListsConfig {
                max_pages: spec.probes.max_pages,
                name_rule: spec.probes.name_rule,
            },
        )
        .await
    } else {
        probes::lists::unprobed(capabilities)
    };
    let mut tool_schema = lists.tool_schema.clone();
    let safe_tool_schemas = probes::invalid_args::safe_tool_schemas(
        spec.operations
            .iter()
            .filter_map(|op| op.safe_tool_call_name.as_deref()),
        lists.tools.as_deref(),
    );
    let run_ops = !(ops == Ops::DeferIfStateless && era == Era::Stateless);
    let operations = if hs.ok && run_ops {
        let mut policy = Policy {
            allow_errors: spec.allow_operation_errors,
            tools: lists.tools.clone(),
            name_rule: spec.probes.name_rule,
            capabilities: capabilities.clone(),
        };
        let (ops, extra) = probes::requests::run(s, &spec.operations, &mut policy).await;
        if tool_schema.is_none() {
            tool_schema = extra.tool_schema;
        }
        ops
    } else {
        skipped(&spec.operations)
    };
    Work {
        lists,
        tool_schema,
        safe_tool_schemas,
        operations,
    }
}

/// The findings made once the process is gone: deadline extensions, undeclared notifications,
/// buffering at exit, the effects record, the stderr limit. Returns the stderr facts and the
/// effects.
async fn after_shutdown(
    s: &mut Session,
    spec: &RunSpec,
    neg: &Negotiated,
    operations: &[OperationRecord],
    server: &process::ServerProcess,
    instruments: Option<effects::Instruments>,
) -> (Stderr, Option<effects::EffectsRecord>) {
    let (hs, capabilities) = (&neg.hs, &neg.capabilities);
    for (phase, extra) in std::mem::take(&mut s.extensions) {
        let what = match phase {
            Phase::Initialize => "the initialize timeout",
            Phase::Shutdown => "the shutdown grace after stdin EOF",
            _ => "a request timeout",
        };
        s.issues.push(
            Issue::new(
                &rules::DEADLINE_EXTENDED,
                format!(
                    "the server was still busy on CPU when {what} expired; the guard waited {} ms more",
                    extra.as_millis()
                ),
            )
            .field("extendedMs", extra.as_millis() as u64),
            phase,
        );
    }
    let (stderr_tail, stderr_bytes, stderr_lines, stderr_truncated) = {
        let tail = server.stderr.lock().expect("stderr lock");
        (
            tail.tail(),
            tail.total_bytes,
            tail.line_count(),
            tail.truncated(),
        )
    };
    if hs.ok {
        let messages = s.server_messages.clone();
        for issue in checks::notifications::undeclared(&messages, capabilities) {
            s.record(issue);
        }
    }
    let stdin_closed = s.stdin_closed_at;
    let replies_after_eof = s
        .late_replies
        .values()
        .filter(|r| stdin_closed.is_some_and(|c| r.at() >= c))
        .count();
    let buffering = checks::buffering::at_exit(
        &s.issues.iter().cloned().collect::<Vec<_>>(),
        replies_after_eof,
    );
    for issue in buffering {
        s.record(issue);
    }
    let effects = match instruments {
        Some(i) => {
            let rec = i.finish().await;
            for problem in &rec.problems {
                s.record(Issue::new(
                    &adversarial_rules::EFFECTS_UNAVAILABLE,
                    format!("the no-effect proof is incomplete: {problem}"),
                ));
            }
            if let Some(why) = &rec.syscalls_unavailable {
                s.record(Issue::new(
                    &adversarial_rules::EFFECTS_SYSCALL_OBSERVER_UNAVAILABLE,
                    format!(
                        "the system-call observer did not run ({why}); effects were observed through {}",
                        effects::fallback_observers(&rec)
                    ),
                ));
            }
            Some(rec)
        }
        None => None,
    };
    if let Some(rec) = &effects
        && let Some(issue) = checks::effects::unproven(
            operations,
            &rec.effects,
            &effects::observers_that_ran(rec, true),
        )
    {
        s.record(issue);
    }
    if stderr_truncated {
        s.record(Issue::new(
            &rules::STDERR_OUTPUT_LIMIT_EXCEEDED,
            format!(
                "stderr carried {stderr_bytes} bytes; only the last {} were kept for this report",
                spec.spawn.max_stderr_bytes
            ),
        ));
    }
    (
        Stderr {
            tail: stderr_tail,
            bytes: stderr_bytes,
            lines: stderr_lines,
            truncated: stderr_truncated,
        },
        effects,
    )
}

/// The stderr facts of a run.
struct Stderr {
    tail: Vec<u8>,
    bytes: u64,
    lines: u64,
    truncated: bool,
}

/// The `process` record: outcome, exit, how the guard ended it, output counters.
fn process_record(
    s: &Session,
    pid: u32,
    shutdown: ShutdownRecord,
    exit_phase_before: Option<Phase>,
    output_limits: OutputRecord,
    stderr: &Stderr,
) -> ProcessRecord {
    let timed_out = s
        .issues
        .iter()
        .find(|i| i.is(&rules::INITIALIZE_TIMEOUT) || i.is(&rules::OPERATION_TIMEOUT))
        .map(|i| i.rule.code);
    let (exit_code, signal) = match s.exited {
        Some((_, exit)) => (exit.code, exit.signal),
        None => (None, None),
    };
    let killed_by_guard = matches!(
        shutdown.stage,
        ShutdownStage::Sigterm | ShutdownStage::Sigkill | ShutdownStage::Unkillable
    );
    let outcome = if timed_out.is_some() {
        ProcessOutcome::Timeout
    } else if killed_by_guard {
        ProcessOutcome::GuardTerminated
    } else {
        ProcessOutcome::Exited
    };
    let limit_code = s
        .issues
        .iter()
        .find(|i| i.is(&rules::STDOUT_OUTPUT_LIMIT_EXCEEDED))
        .map(|i| i.rule.code);
    let counters = s.link.counters.clone();
    ProcessRecord {
        started: true,
        pid: Some(pid),
        outcome,
        phase: exit_phase_before.unwrap_or(s.phase),
        exit_code,
        signal,
        timed_out: timed_out.is_some(),
        timeout_code: timed_out,
        killed_by_guard,
        kill_signal: match shutdown.stage {
            ShutdownStage::Sigterm => Some(record::KillSignal::Sigterm),
            ShutdownStage::Sigkill | ShutdownStage::Unkillable => Some(record::KillSignal::Sigkill),
            _ => None,
        },
        kill_reason: killed_by_guard.then_some(if timed_out.is_some() {
            record::KillReason::Timeout
        } else {
            record::KillReason::GuardFinished
        }),
        spawn_error: None,
        shutdown,
        output: OutputRecord {
            stdout_bytes: counters.stdout_bytes.load(Ordering::Relaxed),
            stdout_lines: counters.stdout_lines.load(Ordering::Relaxed),
            stdin_bytes: counters.stdin_bytes.load(Ordering::Relaxed),
            stderr_bytes: stderr.bytes,
            stderr_lines: stderr.lines,
            stderr_truncated: stderr.truncated,
            limit_code,
            ..output_limits
        },
    }
}

fn skipped(ops: &[OperationSpec]) -> Vec<OperationRecord> {
    ops.iter()
        .map(|op| OperationRecord {
            method: op.method.clone(),
            has_params: op.params.is_some(),
            source: op.source,
            safe_tool_call_name: op.safe_tool_call_name.clone(),
            status: OperationStatus::Skipped,
            duration: None,
            error: None,
            result: None,
            request_id: None,
        })
        .collect()
}
