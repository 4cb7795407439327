//! What one run of a server produced: the data every report format renders. Plain data.

use super::checks::lists::ListKind;
use super::checks::tools::ToolSummary;
use crate::issue::{Issue, Phase};
use serde_json::Value;
use std::time::Duration;

/// The reference's `process.outcome`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessOutcome {
    SpawnFailed,
    /// The process exited on its own (before or after the guard closed stdin).
    Exited,
    /// The guard gave up waiting for a reply (the run then ended through the shutdown ladder).
    Timeout,
    /// The guard ended the process with a signal.
    GuardTerminated,
}

impl ProcessOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ProcessOutcome::SpawnFailed => "spawn-failed",
            ProcessOutcome::Exited => "exited",
            ProcessOutcome::Timeout => "timeout",
            ProcessOutcome::GuardTerminated => "guard-terminated",
        }
    }
}

/// The signal the guard ended a process with (the reference's `process.killSignal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillSignal {
    Sigterm,
    Sigkill,
}

impl KillSignal {
    pub fn as_str(self) -> &'static str {
        match self {
            KillSignal::Sigterm => "SIGTERM",
            KillSignal::Sigkill => "SIGKILL",
        }
    }
}

/// Why the guard ended a process (the reference's `process.killReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillReason {
    /// A request went unanswered.
    Timeout,
    /// The check was over and the server did not exit on stdin EOF.
    GuardFinished,
}

impl KillReason {
    pub fn as_str(self) -> &'static str {
        match self {
            KillReason::Timeout => "timeout",
            KillReason::GuardFinished => "guard-finished",
        }
    }
}

/// What became of a probe's session (`adversarial.probes[].session`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    /// The valid request after the frame succeeded and inherited nothing.
    Usable,
    /// The server exited cleanly (status 0).
    Closed,
    /// The server exited otherwise, or closed stdout and ran on.
    Crashed,
    /// A request got no reply while the server ran on, or it no longer exited on EOF.
    Hung,
    /// The valid request failed or was answered under the rejected frame's id.
    Broken,
    /// The probe could not be sent (no handshake in its process).
    NotRun,
    /// Not applicable here.
    Skipped,
}

impl SessionState {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Usable => "usable",
            SessionState::Closed => "closed",
            SessionState::Crashed => "crashed",
            SessionState::Hung => "hung",
            SessionState::Broken => "broken",
            SessionState::NotRun => "not-run",
            SessionState::Skipped => "skipped",
        }
    }
}

/// What the `server/discover` probe got (`discover.answer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoverAnswer {
    /// A stateless-era result.
    Result,
    /// A JSON-RPC error (a legacy server).
    Error,
    /// Nothing within the window.
    Silence,
    /// The process exited or closed stdout.
    Crashed,
    /// A result that is not a discover result.
    UnexpectedResult,
    /// An unreadable reply.
    Broken,
}

impl DiscoverAnswer {
    pub fn as_str(self) -> &'static str {
        match self {
            DiscoverAnswer::Result => "result",
            DiscoverAnswer::Error => "error",
            DiscoverAnswer::Silence => "silence",
            DiscoverAnswer::Crashed => "crashed",
            DiscoverAnswer::UnexpectedResult => "unexpected-result",
            DiscoverAnswer::Broken => "broken",
        }
    }
}

/// How the shutdown ladder ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownStage {
    /// The process was never started.
    NotStarted,
    /// It exited on its own before the guard began shutting it down.
    ExitedEarly,
    /// It exited after stdin EOF, within the grace (the good case).
    StdinEof,
    /// It needed SIGTERM.
    Sigterm,
    /// It needed SIGKILL.
    Sigkill,
    /// It survived even SIGKILL within the wait (uninterruptible sleep, or stopped).
    Unkillable,
}

impl ShutdownStage {
    pub fn as_str(self) -> &'static str {
        match self {
            ShutdownStage::NotStarted => "not-started",
            ShutdownStage::ExitedEarly => "exited-early",
            ShutdownStage::StdinEof => "stdin-eof",
            ShutdownStage::Sigterm => "sigterm",
            ShutdownStage::Sigkill => "sigkill",
            ShutdownStage::Unkillable => "unkillable",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ShutdownRecord {
    pub stage: ShutdownStage,
    /// From closing stdin to the process exit.
    pub stdin_eof_to_exit: Option<Duration>,
    pub stdout_held_open: bool,
    /// Descendants found alive after the server exited (killed by the guard).
    pub descendants_killed: Vec<(i32, Vec<String>)>,
}

#[derive(Debug, Clone)]
pub struct ProcessRecord {
    pub started: bool,
    pub pid: Option<u32>,
    pub outcome: ProcessOutcome,
    /// The phase the run was in when it ended (or when the process exited).
    pub phase: Phase,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub timeout_code: Option<&'static str>,
    pub killed_by_guard: bool,
    pub kill_signal: Option<KillSignal>,
    pub kill_reason: Option<KillReason>,
    pub spawn_error: Option<(String, String)>,
    pub shutdown: ShutdownRecord,
    pub output: OutputRecord,
}

#[derive(Debug, Clone, Default)]
pub struct OutputRecord {
    pub stdout_bytes: u64,
    pub stdout_lines: u64,
    pub stderr_bytes: u64,
    pub stderr_lines: u64,
    pub stdin_bytes: u64,
    pub max_stdout_bytes: u64,
    pub max_stdout_line_bytes: u64,
    pub max_stderr_bytes: u64,
    pub stderr_truncated: bool,
    /// The code of the limit that stopped the run, if one did.
    pub limit_code: Option<&'static str>,
}

/// Status of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationStatus {
    Responded,
    Error,
    Invalid,
    Timeout,
    MissingResponse,
    Skipped,
}

impl OperationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OperationStatus::Responded => "responded",
            OperationStatus::Error => "error",
            OperationStatus::Invalid => "invalid",
            OperationStatus::Timeout => "timeout",
            OperationStatus::MissingResponse => "missing-response",
            OperationStatus::Skipped => "skipped",
        }
    }
}

#[derive(Debug, Clone)]
pub struct OperationRecord {
    pub method: String,
    pub has_params: bool,
    pub source: crate::runtime::probes::requests::OperationSource,
    pub safe_tool_call_name: Option<String>,
    pub status: OperationStatus,
    pub duration: Option<Duration>,
    pub error: Option<(i64, String)>,
    pub result: Option<Value>,
    /// The id of the request, once sent (effects are attributed to it).
    pub request_id: Option<super::jsonrpc::Id>,
}

impl OperationRecord {
    /// The tag effects observed after this operation's request carry.
    pub fn effects_tag(&self) -> Option<String> {
        self.request_id
            .as_ref()
            .map(|id| format!("request {} #{id}", self.method))
    }
}

#[derive(Debug, Clone, Default)]
pub struct Timings {
    pub spawn: Option<Duration>,
    pub initialize: Option<Duration>,
    pub operations: Option<Duration>,
    pub shutdown: Option<Duration>,
    pub total: Duration,
    /// CPU time the server's process group used up to the handshake's answer: what one more
    /// start of it costs (steadier under load than wall time).
    pub startup_cpu: Option<Duration>,
}

/// The protocol era the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Era {
    /// `initialize` handshake (2024-11-05 to 2025-11-25).
    #[default]
    Legacy,
    /// No handshake; `server/discover` (2026-07-28).
    Stateless,
}

impl Era {
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Stateless => "stateless",
        }
    }
}

/// What the `server/discover` probe saw.
#[derive(Debug, Clone, Default)]
pub struct DiscoverRecord {
    pub probed: bool,
    pub answer: Option<DiscoverAnswer>,
    pub supported_versions: Vec<String>,
    pub duration: Option<Duration>,
    /// The id of the discover request (to pick up a reply that came after the window).
    pub request_id: Option<super::jsonrpc::Id>,
}

/// How the probe of one advertised list went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapabilityStatus {
    /// The capability is not advertised: skipped, not failed.
    NotAdvertised,
    /// Advertised, but probes were off (`smoke`) or the session ended first.
    NotProbed,
    Responded,
    Unsupported,
    Error,
    Timeout,
    MissingResponse,
    /// The reply arrived but was unusable (broken envelope or result shape).
    Invalid,
}

impl CapabilityStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CapabilityStatus::NotAdvertised => "not-advertised",
            CapabilityStatus::NotProbed => "not-probed",
            CapabilityStatus::Responded => "responded",
            CapabilityStatus::Unsupported => "unsupported",
            CapabilityStatus::Error => "error",
            CapabilityStatus::Timeout => "timeout",
            CapabilityStatus::MissingResponse => "missing-response",
            CapabilityStatus::Invalid => "invalid",
        }
    }
}

/// The probe of one advertised list method.
#[derive(Debug, Clone)]
pub struct CapabilityCheck {
    pub kind: ListKind,
    pub advertised: bool,
    pub status: CapabilityStatus,
    /// Items over all pages (repeats across pages counted once).
    pub item_count: Option<usize>,
    pub pages: usize,
    /// Item identifiers (names, URIs), for drift.
    pub item_ids: Vec<String>,
    pub error: Option<(i64, String)>,
}

impl CapabilityCheck {
    pub fn new(kind: ListKind, advertised: bool) -> CapabilityCheck {
        CapabilityCheck {
            kind,
            advertised,
            status: if advertised {
                CapabilityStatus::NotProbed
            } else {
                CapabilityStatus::NotAdvertised
            },
            item_count: None,
            pages: 0,
            item_ids: Vec::new(),
            error: None,
        }
    }
}

/// Everything one run produced.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// 1-based run number.
    pub run: u32,
    pub issues: Vec<Issue>,
    pub process: ProcessRecord,
    pub initialized: bool,
    pub negotiated_protocol: Option<String>,
    pub initialize_result: Option<Value>,
    pub capability_keys: Vec<String>,
    pub era: Era,
    /// A dual-era server: this legacy record also carries the findings of a stateless run.
    pub also_stateless: bool,
    /// A stateless server that refused the legacy `initialize` handshake in a fresh process.
    pub legacy_refused: bool,
    pub discover: DiscoverRecord,
    /// Whether advertised list methods were probed in this run.
    pub capability_probes: bool,
    /// One entry per list method, advertised or not.
    pub capability_checks: Vec<CapabilityCheck>,
    /// The `toolSchema` summary when a tools list was checked.
    pub tool_schema: Option<ToolSummary>,
    /// The `inputSchema` of each safe tool call's tool, from `tools/list` (`None`: not listed):
    /// what the invalid-arguments probes are derived from.
    pub safe_tool_schemas: Vec<(String, Option<Value>)>,
    pub operations: Vec<OperationRecord>,
    pub frames: u64,
    pub invalid_frames: u64,
    pub frames_after_stdin_eof: u64,
    pub server_requests: u64,
    pub server_notifications: u64,
    pub stderr_tail: Vec<u8>,
    pub timings: Timings,
    /// What the no-effect proof observed in this run (`--effects`).
    pub effects: Option<super::effects::EffectsRecord>,
    /// The adversarial probes (on the first run of a target).
    pub adversarial: Option<AdversarialRecord>,
    /// The buffering rerun (on the first run of a target).
    pub buffering: Option<BufferingRecord>,
    /// Findings of the checks made once per target (adversarial probes, the buffering rerun),
    /// carried by its first run but not part of that run's own verdict (nor of repeat drift).
    pub target_issues: Vec<Issue>,
}

impl RunRecord {
    pub fn has_errors(&self) -> bool {
        self.issues.iter().any(Issue::is_error)
    }

    /// The probe of one list, if the run has it.
    pub fn capability(&self, kind: ListKind) -> Option<&CapabilityCheck> {
        self.capability_checks.iter().find(|c| c.kind == kind)
    }
}

/// The verdict of one adversarial probe, as reports show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeStatus {
    Pass,
    Warning,
    Fail,
    /// Not applicable (a batch where batches are legal) or not run (no handshake in the main run).
    Skipped,
}

impl ProbeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeStatus::Pass => "pass",
            ProbeStatus::Warning => "warning",
            ProbeStatus::Fail => "fail",
            ProbeStatus::Skipped => "skipped",
        }
    }
}

/// One adversarial probe, run in its own server process.
#[derive(Debug, Clone)]
pub struct ProbeRecord {
    pub name: String,
    pub origin: super::probes::corpus::Origin,
    pub risk: &'static str,
    pub status: ProbeStatus,
    pub skip_reason: Option<String>,
    /// The bytes sent, escaped and cut.
    pub frame: String,
    /// What the frame got back, in words (`silence`, `error -32601 (Method not found)`).
    pub reply: String,
    pub session: SessionState,
    pub issue_codes: Vec<&'static str>,
    /// Whether effects were observed for this probe's process (`--effects`).
    pub effects_observed: bool,
    /// The effects attributed to the probe (side effects).
    pub effects: Vec<super::effects::Effect>,
    pub duration: Duration,
    /// On the last probe of a probe process: how long after the verdicts were in the process
    /// was seen gone (killed with its group at once).
    pub process_ended_ms: Option<u64>,
}

/// Every adversarial probe of a target.
#[derive(Debug, Clone, Default)]
pub struct AdversarialRecord {
    pub probes: Vec<ProbeRecord>,
}

/// The buffering rerun (`--unbuffered-rerun`).
#[derive(Debug, Clone)]
pub struct BufferingRecord {
    /// `unbuffered` (`PYTHONUNBUFFERED=1`) or `buffered` (`PYTHONUNBUFFERED` removed).
    pub rerun_mode: &'static str,
    /// Pollution of the rerun the main run did not show.
    pub extra_pollution: usize,
    pub duration: Duration,
}
