//! The report model and its renderers. `Report` knows nothing about any wire format; each
//! renderer (text, JSON, ...) owns its own output shape and returns a `String`. Nothing here
//! writes to the terminal: `main.rs` does.
//!
//! Redaction happens once, when the report is built: every message, evidence string, stderr tail
//! and recorded result is scrubbed of secret values before any renderer sees it.

pub mod ci;
pub mod explain;
pub mod github;
pub mod json;
pub mod junit;
pub mod linehash;
pub mod locate;
pub mod merge;
pub mod outputs;
pub mod sarif;
pub mod source;
pub mod status;
pub mod text;

pub use ci::{CiContext, Invocation, utc_timestamp};
pub use outputs::{Format, Outputs};

use crate::catalog::{Rule, Severity};
use crate::exit::Exit;
use crate::fingerprint::{PackageInfo, RuntimeVersion};
use crate::issue::Issue;
use crate::redact::{self, Redactor};
use crate::runtime::checks::drift::{self, Drift};
use crate::runtime::record::RunRecord;
use std::path::PathBuf;

/// What the config file contributed, for the report's `config` block (the reference's shape).
#[derive(Debug, Clone, Default)]
pub struct ConfigInfo {
    pub enabled: bool,
    pub path: String,
    pub resolved_path: String,
    /// The config names the server's command (CI reports anchor findings in the file).
    pub command: bool,
    /// The `config.checks` block, in order: what the file set (`true`) or the names it listed.
    /// Keys are the table's names; a merged report keeps the names its shards wrote.
    pub checks: Vec<(std::borrow::Cow<'static, str>, serde_json::Value)>,
}

/// What was run, as reports show it (already redacted).
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The `mcpServers` key (or `command @ revision` for `--protocol all`); empty for a command.
    pub name: String,
    /// Redacted argv, program first.
    pub argv: Vec<String>,
    pub cwd_requested: Option<PathBuf>,
    pub cwd_resolved: PathBuf,
    pub protocol: String,
    pub timeout_ms: u64,
    pub repeat: u32,
    pub profile: String,
    pub env_names: Vec<String>,
    /// (method, hasParams, source, safeToolCallName)
    pub operations: Vec<(String, bool, String, String)>,
    pub config: ConfigInfo,
    pub capability_probes: bool,
    pub adversarial_probes: Vec<String>,
    pub scan: Option<PathBuf>,
    pub fail_on_static: bool,
    pub runtimes: Vec<RuntimeVersion>,
    pub package: Option<PackageInfo>,
    /// The `--mcp-config` file and this server's key in it, when the server came from one.
    pub mcp_server: Option<(PathBuf, String)>,
    /// `--effects` was asked for.
    pub effects: bool,
    /// Adversarial probes or tool calls were asked for.
    pub adversarial: bool,
    /// The wall time of the whole check of this server (runs, probes and reruns, side by side).
    pub duration: std::time::Duration,
}

/// One checked server.
#[derive(Debug, Clone)]
pub struct Target {
    /// A display name: the `mcpServers` key, or the redacted command line.
    pub name: String,
    pub context: Context,
    pub runs: Vec<RunRecord>,
    /// Every finding of the target: the runs' (tagged with `run` when there are several; one
    /// defect seen in several runs is one finding with `runs` and `occurrences`), the
    /// once-per-target checks' (probes, buffering rerun), then cross-run ones (drift).
    pub issues: Vec<Issue>,
    /// The findings that count for each run's checks, in run order: the run's own, and for the
    /// first run also the once-per-target checks' (they are judged with it).
    pub run_issues: Vec<Vec<Issue>>,
    /// Drift between runs, when there were several.
    pub drift: Option<Drift>,
    /// The check verdicts a JSON report recorded, for a target rebuilt from one (`merge`):
    /// the verdicts are taken as they were, not judged again from runs it no longer has.
    pub recorded_checks: Option<Vec<merge::RecordedCheck>>,
}

/// A whole report: checked servers, and the static scan when one ran.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub targets: Vec<Target>,
    pub scan: Option<ScanSection>,
    /// The `--transcript` file of the run, when one was written.
    pub transcript: Option<PathBuf>,
    /// `--shard K/N`: this report holds one shard of the servers (their positions in the whole
    /// list), to be joined by `merge`.
    pub shard: Option<(crate::shard::Shard, Vec<usize>)>,
    /// A report joined by `merge` from JSON reports: its JSON is that JSON, as it was written.
    pub recorded_json: Option<serde_json::Value>,
    /// Set when the guard was interrupted (SIGINT/SIGTERM/SIGHUP, Ctrl-C): `targets` then holds
    /// only the servers judged before the signal, and the report is partial.
    pub interrupted: Option<Interruption>,
}

/// A run cut short by a signal to the guard: what was and was not judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interruption {
    /// The signal number (Windows: 2 for Ctrl-C, 21 for Ctrl-Break, 1 for the console closing).
    pub signal: i32,
    /// How many servers the run was to check.
    pub total: usize,
    /// The display names of the servers not judged, in the order of the run's targets.
    pub not_judged: Vec<String>,
}

impl Interruption {
    /// The exit code of an interrupted guard: 128 + the signal, as shells report it.
    pub fn exit_code(&self) -> i32 {
        128 + self.signal
    }

    /// One line for people: `interrupted by signal 15: 3 of 10 servers judged`.
    pub fn describe(&self) -> String {
        let judged = self.total - self.not_judged.len();
        format!(
            "interrupted by signal {}: {judged} of {} server{} judged, this report is partial",
            self.signal,
            self.total,
            if self.total == 1 { "" } else { "s" }
        )
    }
}

/// A static scan in a report (`scan`, or `--scan` next to a runtime run). Its issues carry
/// `Location::Source`; in runtime mode they are already lowered to warnings unless
/// `--fail-on-static`.
#[derive(Debug, Clone, Default)]
pub struct ScanSection {
    /// The paths as given on the command line.
    pub paths: Vec<String>,
    pub fail_on_findings: bool,
    pub issues: Vec<Issue>,
    pub stats: crate::scan::ScanStats,
    /// The rules the scan applied (`--select`/`--ignore`); empty means every scan rule.
    pub rules: Vec<&'static Rule>,
}

impl ScanSection {
    /// Wraps a scan result. When findings must not fail the run (runtime `--scan` without
    /// `--fail-on-static`), error-level findings are lowered to warnings, as in the reference.
    pub fn new(
        paths: Vec<String>,
        fail_on_findings: bool,
        result: crate::scan::ScanResult,
    ) -> Self {
        let mut issues = result.issues;
        if !fail_on_findings {
            for issue in &mut issues {
                if issue.severity == Severity::Error {
                    issue.severity = Severity::Warning;
                }
            }
        }
        ScanSection {
            paths,
            fail_on_findings,
            issues,
            stats: result.stats,
            rules: Vec::new(),
        }
    }
}

impl Report {
    /// Error-level findings fail the run.
    pub fn exit(&self) -> Exit {
        if self.issues().any(|i| i.severity == Severity::Error) {
            Exit::Findings
        } else {
            Exit::Clean
        }
    }

    pub fn issues(&self) -> impl Iterator<Item = &Issue> {
        self.targets
            .iter()
            .flat_map(|t| t.issues.iter())
            .chain(self.scan.iter().flat_map(|s| s.issues.iter()))
    }

    /// The scan's issues, for renderers that merge them into a runtime target.
    pub fn scan_issues(&self) -> &[Issue] {
        self.scan.as_ref().map_or(&[], |s| s.issues.as_slice())
    }
}

impl Target {
    /// Builds a target from its runs, redacting everything that could carry a secret.
    pub fn new(mut context: Context, mut runs: Vec<RunRecord>, secrets: &Redactor) -> Target {
        let mut redactor = secrets.clone();
        redactor.add_argv(&context.argv);
        context.argv = redact::argv(&context.argv);
        let several = runs.len() > 1;
        let mut issues = Vec::new();
        for run in &mut runs {
            for issue in &mut run.issues {
                scrub_issue(issue, &redactor);
                if several {
                    issue.run = Some(run.run);
                }
            }
            run.stderr_tail = scrub_bytes(&run.stderr_tail, &redactor);
            // Everything else the server chose: names, keys, versions, error messages.
            let scrub_all = |items: &mut Vec<String>| {
                for item in items.iter_mut() {
                    *item = redactor.scrub(item);
                }
            };
            if let Some(ts) = run.tool_schema.as_mut() {
                scrub_all(&mut ts.tool_names);
                scrub_all(&mut ts.duplicate_names);
            }
            for c in &mut run.capability_checks {
                scrub_all(&mut c.item_ids);
                if let Some((_, msg)) = c.error.as_mut() {
                    *msg = redactor.scrub(msg);
                }
            }
            scrub_all(&mut run.capability_keys);
            scrub_all(&mut run.discover.supported_versions);
            if let Some(p) = run.negotiated_protocol.as_mut() {
                *p = redactor.scrub(p);
            }
            if let Some(v) = run.initialize_result.as_mut() {
                redactor.scrub_json(v);
            }
            for op in &mut run.operations {
                if let Some(v) = op.result.as_mut() {
                    redactor.scrub_json(v);
                }
                if let Some((_, msg)) = op.error.as_mut() {
                    *msg = redactor.scrub(msg);
                }
            }
            for (_, argv) in &mut run.process.shutdown.descendants_killed {
                *argv = redact::argv(argv)
                    .iter()
                    .map(|a| redactor.scrub(a))
                    .collect();
            }
            scrub_hostile(run, &redactor);
            merge_root_causes(&mut issues, &run.issues);
        }
        // Findings of the checks made once per target (adversarial probes, buffering rerun).
        for run in &runs {
            issues.extend(run.target_issues.iter().cloned());
        }
        let run_issues = runs
            .iter()
            .enumerate()
            .map(|(n, run)| {
                let mut all = run.issues.clone();
                if n == 0 {
                    all.extend(run.target_issues.iter().cloned());
                }
                all
            })
            .collect();
        let drift = several.then(|| {
            let (drift, found) = drift::compare(&runs);
            for mut issue in found {
                scrub_issue(&mut issue, &redactor);
                issues.push(issue);
            }
            drift
        });
        let name = if context.name.is_empty() {
            context.argv.join(" ")
        } else {
            redactor.scrub(&context.name)
        };
        Target {
            name,
            context,
            runs,
            issues,
            run_issues,
            drift,
            recorded_checks: None,
        }
    }

    /// What this target asked for (`scan`: a static scan is merged into its report).
    pub fn asked(&self, scan: bool) -> status::Asked {
        let c = &self.context;
        status::Asked {
            operations: !c.operations.is_empty(),
            capabilities: c.capability_probes,
            adversarial: c.adversarial,
            effects: c.effects,
            scan,
            repeat: self.runs.len() > 1,
        }
    }

    /// Every check of this target, with the scan's when one is merged into its report.
    pub fn checks<'a>(&'a self, scan: Option<&'a ScanSection>) -> Vec<status::CheckVerdict<'a>> {
        match &self.recorded_checks {
            Some(recorded) => recorded
                .iter()
                .map(|r| status::CheckVerdict {
                    check: r.check,
                    status: r.status,
                    issues: self
                        .issues
                        .iter()
                        .filter(|i| r.codes.iter().any(|c| c == i.code()))
                        .collect(),
                    reason: r.reason,
                })
                .collect(),
            None => status::target_checks(self, scan),
        }
    }
}

/// Adds a run's findings to the target's: a defect already reported by an earlier run (same
/// code, same cause) is not repeated; the first report gains the run in `runs` and a count in
/// `occurrences`.
fn merge_root_causes(target: &mut Vec<Issue>, run: &[Issue]) {
    for issue in run {
        let key = issue.cause();
        match target
            .iter_mut()
            .find(|t| t.run.is_some() && t.run != issue.run && t.cause() == key)
        {
            Some(first) => {
                let mut runs: Vec<serde_json::Value> = first
                    .fields
                    .get("runs")
                    .and_then(serde_json::Value::as_array)
                    .cloned()
                    .unwrap_or_else(|| vec![first.run.into()]);
                if !runs.contains(&issue.run.into()) {
                    runs.push(issue.run.into());
                }
                let n = runs.len() as u64;
                first.fields.insert("runs".into(), runs.into());
                first.fields.insert("occurrences".into(), n.into());
            }
            None => target.push(issue.clone()),
        }
    }
}

/// Scrubs what the adversarial probes and the no-effect proof recorded: replies, frames (they
/// carry the safe tool call's arguments), effects (argv, URLs, log entries) and their findings.
fn scrub_hostile(run: &mut RunRecord, r: &Redactor) {
    for issue in &mut run.target_issues {
        scrub_issue(issue, r);
    }
    if r.is_empty() {
        return;
    }
    let scrub_effect = |e: &mut crate::runtime::effects::Effect| {
        e.summary = r.scrub(&e.summary);
        r.scrub_json(&mut e.detail);
    };
    if let Some(rec) = run.effects.as_mut() {
        rec.effects.iter_mut().for_each(scrub_effect);
    }
    if let Some(adv) = run.adversarial.as_mut() {
        for p in &mut adv.probes {
            p.reply = r.scrub(&p.reply);
            p.frame = r.scrub(&p.frame);
            p.effects.iter_mut().for_each(scrub_effect);
        }
    }
}

fn scrub_issue(issue: &mut Issue, r: &Redactor) {
    if r.is_empty() {
        return;
    }
    issue.message = r.scrub(&issue.message);
    issue.help = r.scrub(&issue.help);
    if let Some(e) = issue.evidence.as_mut() {
        *e = r.scrub(e);
    }
    for v in issue.fields.values_mut() {
        r.scrub_json(v);
    }
}

/// Scrubs secrets from bytes that may not be UTF-8 (stderr), leaving other bytes untouched.
fn scrub_bytes(bytes: &[u8], r: &Redactor) -> Vec<u8> {
    if r.is_empty() {
        return bytes.to_vec();
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => r.scrub(text).into_bytes(),
        Err(_) => r.scrub(&String::from_utf8_lossy(bytes)).into_bytes(),
    }
}
