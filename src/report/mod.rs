//! The report model and its renderers. `Report` knows nothing about any wire format; each
//! renderer (text, JSON, ...) owns its own output shape and returns a `String`. Nothing here
//! writes to the terminal: `main.rs` does.
//!
//! Redaction happens once, when the report is built: every message, evidence string, stderr tail
//! and recorded result is scrubbed of secret values before any renderer sees it.

pub mod explain;
pub mod json;
pub mod status;
pub mod text;

use crate::catalog::Severity;
use crate::exit::Exit;
use crate::fingerprint::{PackageInfo, RuntimeVersion};
use crate::issue::Issue;
use crate::redact::{self, Redactor};
use crate::runtime::checks::drift::{self, Drift};
use crate::runtime::record::RunRecord;
use crate::settings::ConfigInfo;
use std::path::PathBuf;

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
}

/// One checked server.
#[derive(Debug, Clone)]
pub struct Target {
    /// A display name: the `mcpServers` key, or the redacted command line.
    pub name: String,
    pub context: Context,
    pub runs: Vec<RunRecord>,
    /// Every issue of every run (tagged with `run` when there are several), then cross-run issues.
    pub issues: Vec<Issue>,
    /// Drift between runs, when there were several.
    pub drift: Option<Drift>,
}

/// A whole report: checked servers, and the static scan when one ran.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub targets: Vec<Target>,
    pub scan: Option<ScanSection>,
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
            issues.extend(run.issues.iter().cloned());
        }
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
            drift,
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
