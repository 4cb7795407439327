//! `mcp-stdio-guard merge`: the JSON reports of `--shard K/N` runs joined into the report one run
//! of every server would have written, from which SARIF, JUnit and the step summary are rendered
//! exactly as that run would render them.
//!
//! Each server's entry of a JSON report is its whole report: `merge` keeps it as it is and puts
//! the servers back in the order of the full list (the `shard.positions` of each report), then
//! computes the aggregate verdict from their findings with the same code a run uses
//! ([`super::json::aggregate_value`]). For the other formats a [`Report`] is rebuilt from the JSON:
//! every finding exactly (code, severity, message, help, place, evidence, fields), each server's
//! name, command, working directory and config (for the SARIF anchors), its check verdicts as
//! recorded (status, codes, reason), its run times and stderr. Pure: the binary reads the files.

use super::{Context, Report, Target};
use crate::catalog::{self, Check, Severity};
use crate::issue::{Issue, Location, Phase, Stream};
use crate::report::ConfigInfo;
use crate::runtime::record::{
    DiscoverRecord, Era, OutputRecord, ProcessOutcome, ProcessRecord, RunRecord, ShutdownRecord,
    ShutdownStage, Timings,
};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::Duration;

/// The joined report: its JSON (what one run's `--json` would be) and the model for the other
/// renderers.
pub struct Merged {
    pub json: Value,
    pub report: Report,
}

/// One check's verdict as a report recorded it.
#[derive(Debug, Clone)]
pub struct RecordedCheck {
    pub check: Check,
    pub status: super::status::Status,
    pub codes: Vec<String>,
    pub reason: Option<&'static str>,
}

/// Joins reports (`(name shown in errors, parsed JSON)`). Errors name the file and the fix.
pub fn merge(inputs: &[(String, Value)]) -> Result<Merged, String> {
    if inputs.is_empty() {
        return Err(
            "merge needs the JSON reports of the shards: mcp-stdio-guard merge shard-*.json".into(),
        );
    }
    let mut servers: Vec<(usize, Value)> = Vec::new();
    let mut shards: Vec<(u32, u32)> = Vec::new();
    // The first report without a `shard` block.
    let mut plain: Option<String> = None;
    for (name, report) in inputs {
        if report.get("schemaVersion").and_then(Value::as_u64) != Some(super::json::SCHEMA_VERSION)
        {
            return Err(format!(
                "{name} is not a JSON report of schemaVersion {} (written by --json or --json-file)",
                super::json::SCHEMA_VERSION
            ));
        }
        if report.get("partial").is_some() {
            return Err(format!(
                "{name} is the partial report of an interrupted run: run that shard again"
            ));
        }
        if report.get("findings").is_some() {
            return Err(format!(
                "{name} is a scan report: merge joins the runtime reports of --shard runs"
            ));
        }
        let list: Vec<Value> = match report.get("servers").and_then(Value::as_array) {
            Some(list) => list.clone(),
            None => {
                // One server's report: its name is its command line, as a run names it.
                let mut one = report.clone();
                let argv = one["command"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_default();
                strip_run_fields(&mut one);
                one["name"] = Value::from(argv);
                vec![one]
            }
        };
        for s in &list {
            if s.get("name").and_then(Value::as_str).is_none() {
                return Err(format!("{name}: a server without its \"name\""));
            }
        }
        match report.get("shard") {
            Some(shard) => {
                let index = shard["index"].as_u64().unwrap_or(0) as u32;
                let count = shard["count"].as_u64().unwrap_or(0) as u32;
                let positions: Vec<usize> = shard["positions"]
                    .as_array()
                    .map(|p| {
                        p.iter()
                            .filter_map(Value::as_u64)
                            .map(|p| p as usize)
                            .collect()
                    })
                    .unwrap_or_default();
                if index == 0 || index > count || positions.len() != list.len() {
                    return Err(format!("{name}: its \"shard\" block is damaged"));
                }
                if let Some((_, c)) = shards.first()
                    && *c != count
                {
                    return Err(format!(
                        "{name} is shard {index}/{count}, another report is of {c} shards: merge the shards of one run"
                    ));
                }
                if shards.iter().any(|(i, _)| *i == index) {
                    return Err(format!(
                        "{name} is shard {index}/{count} again: give each shard's report once"
                    ));
                }
                shards.push((index, count));
                servers.extend(positions.into_iter().zip(list));
            }
            None => {
                plain.get_or_insert(name.clone());
                let base = servers.len();
                servers.extend(list.into_iter().enumerate().map(|(i, s)| (base + i, s)));
            }
        }
    }
    if let Some((_, count)) = shards.first() {
        if let Some(name) = plain {
            return Err(format!(
                "{name} is not a --shard report: merge joins the reports of one sharded run"
            ));
        }
        let missing: Vec<String> = (1..=*count)
            .filter(|k| !shards.iter().any(|(i, _)| i == k))
            .map(|k| format!("{k}/{count}"))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "the report of shard {} is missing: give the report of every shard of the run",
                missing.join(", ")
            ));
        }
    }
    servers.sort_by_key(|(p, _)| *p);
    let mut targets = Vec::with_capacity(servers.len());
    let mut all = Vec::new();
    for (_, s) in &servers {
        let t = target(s)?;
        all.extend(t.issues.iter().cloned());
        targets.push(t);
    }
    let json = if servers.len() == 1 {
        let mut only = servers[0].1.clone();
        if let Some(o) = only.as_object_mut() {
            o.remove("name");
        }
        only
    } else {
        super::json::aggregate_value(&all, servers.into_iter().map(|(_, s)| s).collect())
    };
    Ok(Merged {
        json,
        report: Report {
            targets,
            ..Report::default()
        },
    })
}

/// What belongs to one run, not to a server: its transcript file, its shard.
fn strip_run_fields(v: &mut Value) {
    if let Some(o) = v.as_object_mut() {
        o.remove("transcript");
        o.remove("shard");
    }
}

/// A server's report → the model the SARIF, JUnit and GitHub renderers read.
fn target(s: &Value) -> Result<Target, String> {
    let name = s["name"].as_str().unwrap_or_default().to_string();
    let issues = s
        .get("issues")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(issue_from_json)
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()
        .map_err(|e| format!("server {name:?}: {e}"))?
        .unwrap_or_default();
    let fp = &s["fingerprint"];
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let ms = |v: &Value| v.as_u64().map(Duration::from_millis);
    let config = &s["config"];
    let context = Context {
        name: name.clone(),
        argv: strings(&s["command"]),
        cwd_requested: fp["cwd"]["requested"].as_str().map(PathBuf::from),
        cwd_resolved: PathBuf::from(fp["cwd"]["resolved"].as_str().unwrap_or(".")),
        protocol: s["protocol"].as_str().unwrap_or_default().to_string(),
        timeout_ms: fp["timeoutMs"].as_u64().unwrap_or(0),
        repeat: s["repeat"].as_u64().unwrap_or(1) as u32,
        profile: s["profile"].as_str().unwrap_or_default().to_string(),
        env_names: strings(&fp["env"]["names"]),
        config: ConfigInfo {
            enabled: config["enabled"].as_bool().unwrap_or(false),
            path: config["path"].as_str().unwrap_or_default().to_string(),
            resolved_path: config["resolvedPath"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            command: config["checks"]["command"].as_bool().unwrap_or(false),
            checks: config["checks"]
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| (k.clone().into(), v.clone()))
                        .collect()
                })
                .unwrap_or_default(),
        },
        capability_probes: s["capabilityProbes"].as_bool().unwrap_or(false),
        mcp_server: s["mcpServer"].as_object().map(|m| {
            (
                PathBuf::from(m.get("file").and_then(Value::as_str).unwrap_or_default()),
                m.get("key")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            )
        }),
        effects: s["effects"]["enabled"].as_bool().unwrap_or(false),
        adversarial: s["adversarial"]["enabled"].as_bool().unwrap_or(false),
        duration: ms(&s["durationMs"]).unwrap_or_default(),
        ..Context::default()
    };
    let timings = &fp["timings"];
    let per_run: Vec<&Value> = s
        .get("runs")
        .and_then(Value::as_array)
        .map(|r| r.iter().collect())
        .unwrap_or_default();
    let runs: Vec<RunRecord> = fp["runs"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let stderr = if i == 0 {
                s["stderr"].as_str()
            } else {
                per_run.get(i).and_then(|p| p["stderr"].as_str())
            };
            let mut record = placeholder_run(r["run"].as_u64().unwrap_or(i as u64 + 1) as u32);
            record.timings.total = ms(&r["totalMs"]).unwrap_or_default();
            if i == 0 {
                record.timings.initialize = ms(&timings["initializeMs"]);
                record.timings.operations = ms(&timings["operationsMs"]);
            }
            record.stderr_tail = stderr.unwrap_or_default().as_bytes().to_vec();
            record
        })
        .collect();
    if runs.is_empty() {
        return Err(format!("server {name:?}: no \"fingerprint.runs\""));
    }
    let mut checks = Vec::new();
    if let Some(map) = s["checks"].as_object() {
        for (key, v) in map {
            let Some(check) = Check::ALL.into_iter().find(|c| c.as_str() == key) else {
                continue;
            };
            let status = match v["status"].as_str() {
                Some("pass") => super::status::Status::Pass,
                Some("warning") => super::status::Status::Warning,
                Some("fail") => super::status::Status::Fail,
                _ => super::status::Status::Skipped,
            };
            checks.push(RecordedCheck {
                check,
                status,
                codes: strings(&v["issueCodes"]),
                reason: v["reason"].as_str().map(intern),
            });
        }
    }
    Ok(Target {
        name,
        context,
        runs,
        issues,
        run_issues: Vec::new(),
        drift: None,
        recorded_checks: Some(checks),
    })
}

/// A recorded check's reason as the `&'static str` a verdict carries: the few distinct reasons
/// of a merge are kept for the life of the process (a short-lived command).
fn intern(text: &str) -> &'static str {
    use std::sync::Mutex;
    static SEEN: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(s) = seen.iter().find(|s| **s == text) {
        return s;
    }
    let leaked: &'static str = Box::leak(text.to_string().into_boxed_str());
    seen.push(leaked);
    leaked
}

/// A run as far as a report recorded it: its number, times and stderr are filled in by the
/// caller; nothing else is read when the verdicts are recorded.
fn placeholder_run(run: u32) -> RunRecord {
    RunRecord {
        run,
        issues: Vec::new(),
        process: ProcessRecord {
            started: true,
            pid: None,
            outcome: ProcessOutcome::Exited,
            phase: Phase::PostInitialize,
            exit_code: None,
            signal: None,
            timed_out: false,
            timeout_code: None,
            killed_by_guard: false,
            kill_signal: None,
            kill_reason: None,
            spawn_error: None,
            shutdown: ShutdownRecord {
                stage: ShutdownStage::StdinEof,
                stdin_eof_to_exit: None,
                stdout_held_open: false,
                descendants_killed: Vec::new(),
            },
            output: OutputRecord::default(),
        },
        initialized: true,
        negotiated_protocol: None,
        initialize_result: None,
        capability_keys: Vec::new(),
        era: Era::Legacy,
        also_stateless: false,
        legacy_refused: false,
        discover: DiscoverRecord::default(),
        capability_probes: false,
        capability_checks: Vec::new(),
        tool_schema: None,
        safe_tool_schemas: Vec::new(),
        operations: Vec::new(),
        frames: 0,
        invalid_frames: 0,
        frames_after_stdin_eof: 0,
        server_requests: 0,
        server_notifications: 0,
        stderr_tail: Vec::new(),
        timings: Timings::default(),
        effects: None,
        adversarial: None,
        buffering: None,
        target_issues: Vec::new(),
    }
}

/// Keys [`super::json::issue_value`] writes from an issue's own members (the rest are `fields`).
const ISSUE_KEYS: [&str; 19] = [
    "class",
    "severity",
    "code",
    "message",
    "help",
    "detailCode",
    "check",
    "phase",
    "phaseDetail",
    "run",
    "stream",
    "line",
    "byteOffset",
    "file",
    "column",
    "endLine",
    "endColumn",
    "evidence",
    "docs",
];

/// An issue of a JSON report back into the model: the inverse of
/// [`super::json::issue_value`] (`issue_value(issue_from_json(v)) == v`).
pub fn issue_from_json(v: &Value) -> Result<Issue, String> {
    let text = |k: &str| v.get(k).and_then(Value::as_str);
    let code = text("code").ok_or("an issue without \"code\"")?;
    let rule = catalog::find(code).ok_or_else(|| {
        format!("unknown issue code {code:?} (a report of another version of mcp-stdio-guard?)")
    })?;
    let mut issue = Issue::new(rule, text("message").unwrap_or_default());
    issue.help = text("help").unwrap_or_default().to_string();
    issue.severity = match text("severity") {
        Some("error") => Severity::Error,
        Some("warning") => Severity::Warning,
        Some("note") => Severity::Note,
        other => return Err(format!("issue {code}: unknown severity {other:?}")),
    };
    if let Some(d) = text("detailCode").filter(|d| !d.is_empty()) {
        issue.detail_code = Some(
            rule.detail_codes
                .iter()
                .copied()
                .find(|c| *c == d)
                .ok_or_else(|| format!("issue {code}: unknown detail code {d:?}"))?,
        );
    }
    if let Some(p) = text("phaseDetail").or_else(|| text("phase")) {
        issue.phase = Some(
            PHASES
                .into_iter()
                .find(|ph| ph.as_str() == p)
                .ok_or_else(|| format!("issue {code}: unknown phase {p:?}"))?,
        );
    }
    issue.run = v.get("run").and_then(Value::as_u64).map(|r| r as u32);
    let n = |k: &str| v.get(k).and_then(Value::as_u64);
    issue.location = match (text("stream"), text("file")) {
        (Some(stream), _) => Some(Location::Stream {
            stream: match stream {
                "stdin" => Stream::Stdin,
                "stderr" => Stream::Stderr,
                _ => Stream::Stdout,
            },
            line: n("line").unwrap_or(0),
            byte_offset: n("byteOffset").unwrap_or(0),
        }),
        (None, Some(file)) => Some(Location::Source {
            file: PathBuf::from(file),
            line: n("line").unwrap_or(0) as u32,
            column: n("column").unwrap_or(0) as u32,
            end_line: n("endLine").unwrap_or(0) as u32,
            end_column: n("endColumn").unwrap_or(0) as u32,
        }),
        _ => None,
    };
    issue.evidence = text("evidence").map(str::to_string);
    let mut fields = Map::new();
    if let Some(o) = v.as_object() {
        for (k, val) in o {
            if !ISSUE_KEYS.contains(&k.as_str()) {
                fields.insert(k.clone(), val.clone());
            }
        }
    }
    issue.fields = fields;
    Ok(issue)
}

const PHASES: [Phase; 7] = [
    Phase::Startup,
    Phase::Initialize,
    Phase::PostInitialize,
    Phase::Capabilities,
    Phase::Operation,
    Phase::Adversarial,
    Phase::Shutdown,
];

/// A report file: a regular file (a FIFO or a device would hang or never end), at most 1 GiB.
pub fn read_report(path: &std::path::Path) -> std::io::Result<String> {
    const MAX: u64 = 1 << 30;
    let meta = std::fs::metadata(path)?;
    if let Some(kind) = crate::input::special_kind(&meta) {
        return Err(std::io::Error::other(format!("it is {kind}, not a file")));
    }
    if meta.len() > MAX {
        return Err(std::io::Error::other("it is larger than 1 GiB"));
    }
    std::fs::read_to_string(path)
}
