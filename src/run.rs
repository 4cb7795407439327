//! One invocation, start to finish: every target (server) of the settings, each run `repeat`
//! times in fresh processes, targets checked concurrently with bounded parallelism, then one
//! [`Report`] with a section per target. Async; `main.rs` owns the runtime and the output.

use crate::fingerprint;
use crate::redact::{self, Redactor};
use crate::report::{Context, Interruption, Report, Target};
use crate::runtime;
use crate::runtime::transcript::{Tap, Transcript};
use crate::settings::{Settings, TargetSettings};
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

/// The servers judged so far, in the order of the run's targets: what an interrupted run still
/// reports ([`Judged::partial`]) instead of nothing.
#[derive(Debug)]
pub struct Judged {
    /// Each target's display name, as its report section would show it (redacted).
    names: Vec<String>,
    slots: Mutex<Vec<Option<Target>>>,
}

impl Judged {
    pub fn new(settings: &Settings) -> Judged {
        Judged {
            names: settings.targets.iter().map(display_name).collect(),
            slots: Mutex::new(vec![None; settings.targets.len()]),
        }
    }

    fn record(&self, index: usize, target: &Target) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots[index] = Some(target.clone());
    }

    /// The report of an interrupted run: the servers judged before `signal`, marked partial
    /// with the names of the others.
    pub fn partial(&self, signal: i32) -> Report {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let mut targets = Vec::new();
        let mut not_judged = Vec::new();
        for (slot, name) in slots.iter().zip(&self.names) {
            match slot {
                Some(t) => targets.push(t.clone()),
                None => not_judged.push(name.clone()),
            }
        }
        Report {
            targets,
            interrupted: Some(Interruption {
                signal,
                total: self.names.len(),
                not_judged,
            }),
            ..Report::default()
        }
    }
}

/// A target's name as its report section shows it (see [`Target::new`]).
fn display_name(t: &TargetSettings) -> String {
    let mut secrets = secrets(t);
    secrets.add_argv(&t.argv);
    if t.name.is_empty() {
        redact::argv(&t.argv).join(" ")
    } else {
        secrets.scrub(&t.name)
    }
}

/// The values a target's report must never show: its environment's.
fn secrets(t: &TargetSettings) -> Redactor {
    let mut secrets = Redactor::new();
    for value in &t.env_values {
        secrets.add(value);
    }
    secrets
}

/// Checks every target of the settings; each judged target is also recorded in `judged` the
/// moment its verdict is in.
pub async fn check(settings: Arc<Settings>, judged: &Arc<Judged>) -> Report {
    check_with(settings, judged, Hooks::default()).await
}

/// Who watches a run's progress: told when each server's check starts and ends (the binary's
/// progress display on a terminal). Called from the run's tasks; must not block.
pub trait Observer: Send + Sync {
    fn started(&self, name: &str);
    fn finished(&self, name: &str, failed: bool);
}

/// What a run reports to besides its [`Report`].
#[derive(Default, Clone)]
pub struct Hooks {
    /// `--transcript`: every process's bytes.
    pub transcript: Option<Arc<Transcript>>,
    pub observer: Option<Arc<dyn Observer>>,
}

/// [`check`], recording into the hooks' transcript and telling their observer.
pub async fn check_with(settings: Arc<Settings>, judged: &Arc<Judged>, hooks: Hooks) -> Report {
    let Hooks {
        transcript,
        observer,
    } = hooks;
    let gate = Arc::new(Semaphore::new(settings.jobs.max(1)));
    let tasks: Vec<_> = settings
        .targets
        .iter()
        .cloned()
        .enumerate()
        .map(|(index, mut t)| {
            if let Some(tr) = &transcript {
                // Named as the report names it: the server's key, else its command line.
                let name = if t.name.is_empty() {
                    t.argv.join(" ")
                } else {
                    t.name.clone()
                };
                t.spec.spawn.tap = Some(Tap::new(tr.clone(), &name, secrets_of(&t)));
            }
            let gate = gate.clone();
            let shared = settings.clone();
            let judged = judged.clone();
            let observer = observer.clone();
            tokio::spawn(async move {
                let _permit = gate
                    .acquire_owned()
                    .await
                    .expect("the semaphore is never closed");
                if let Some(o) = &observer {
                    o.started(&t.name);
                }
                let name = t.name.clone();
                let target = check_target(&shared, t).await;
                judged.record(index, &target);
                if let Some(o) = &observer {
                    o.finished(
                        &name,
                        target.issues.iter().any(crate::issue::Issue::is_error),
                    );
                }
                target
            })
        })
        .collect();
    let mut targets = Vec::new();
    for task in tasks {
        match task.await {
            Ok(t) => targets.push(t),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    Report {
        targets,
        transcript: transcript.map(|t| t.path().to_path_buf()),
        shard: settings.shard.clone(),
        ..Report::default()
    }
}

/// The values no output may show for a target: its env values and secret-looking arguments.
fn secrets_of(t: &TargetSettings) -> Redactor {
    let mut all = secrets(t);
    all.add_argv(&t.argv);
    all
}

async fn check_target(settings: &Settings, t: TargetSettings) -> Target {
    let _in_flight = runtime::load::target_in_flight();
    // The fingerprint's version probes (`npm --version` alone takes a few hundred ms) run beside
    // the server's runs, not after them.
    let (argv, cwd, env) = (
        t.argv.clone(),
        t.cwd_resolved.clone(),
        t.spec.spawn.env.clone(),
    );
    let facts = tokio::task::spawn_blocking(move || {
        (
            fingerprint::runtimes(&argv, &cwd, &env),
            fingerprint::package(&argv, &cwd),
        )
    });
    let started = std::time::Instant::now();
    // The once-per-target checks (adversarial probes, the buffering rerun) need only what the
    // main run learnt by the end of its lists: they start then, beside its late-output window
    // and shutdown, and their verdicts wait for its record (`main_tx`). A server whose main run
    // could not say so early (a stateless-only server, no handshake) has them start when it ends.
    // The repeated runs start when the main run ends. A dual-era server's later runs check its
    // legacy era only: drift is judged on the legacy record, and the stateless era was checked
    // once, in the first run.
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let (base_tx, base_rx) = tokio::sync::watch::channel(None);
    let (main_tx, mut main_rx) = tokio::sync::watch::channel(None);
    let extra = async {
        match ready_rx.await {
            Ok(ready) => runtime::extra_checks_from(&t.spec, &ready, true, true, base_rx).await,
            Err(_) => {
                let first = match main_rx.wait_for(Option::is_some).await {
                    Ok(r) => r.clone(),
                    Err(_) => None,
                };
                match first {
                    Some(first) => runtime::extra_checks_after(&t.spec, &first).await,
                    None => runtime::Extra::default(),
                }
            }
        }
    };
    let main_then_repeats = async {
        let first = runtime::run_server_ready(&t.spec, 1, Some(ready_tx)).await;
        let _ = base_tx.send(Some(std::sync::Arc::new(
            runtime::probes::adversarial::baseline(&first),
        )));
        let _ = main_tx.send(Some(first.clone()));
        let mut repeat_spec = t.spec.clone();
        if first.also_stateless {
            repeat_spec.probes.discover = false;
        }
        repeat_spec.heavy_start = runtime::load::is_heavy(first.timings.startup_cpu);
        let mut more = Vec::new();
        for n in 2..=t.repeat {
            more.push(runtime::run_server(&repeat_spec, n).await);
        }
        (first, more)
    };
    let ((mut first, mut runs), extra) = tokio::join!(main_then_repeats, extra);
    runtime::join_extra(&mut first, extra);
    runs.insert(0, first);
    let duration = started.elapsed();
    let facts = facts.await.unwrap_or_default();
    let secrets = secrets(&t);
    let context = Context {
        name: t.name.clone(),
        argv: t.argv.clone(),
        cwd_requested: t.cwd_requested.clone(),
        cwd_resolved: t.cwd_resolved.clone(),
        protocol: t.spec.session.protocol.clone(),
        timeout_ms: t.spec.session.timeout.as_millis() as u64,
        repeat: t.repeat,
        profile: t.profile.as_str().to_string(),
        env_names: t.env_names.clone(),
        operations: t
            .spec
            .operations
            .iter()
            .map(|o| {
                (
                    o.method.clone(),
                    o.params.is_some(),
                    o.source.as_str().to_string(),
                    o.safe_tool_call_name.clone().unwrap_or_default(),
                )
            })
            .collect(),
        config: t.config.clone(),
        capability_probes: t.spec.probes.capabilities,
        adversarial_probes: t.adversarial_probes.clone(),
        scan: settings.scan.clone(),
        fail_on_static: settings.fail_on_static,
        runtimes: facts.0,
        package: facts.1,
        mcp_server: t.mcp_server.clone(),
        effects: t.spec.effects.is_some(),
        adversarial: t.spec.adversarial.enabled(),
        duration,
    };
    Target::new(context, runs, &secrets)
}
