//! The JSON report: the reference tool's `schemaVersion: 1` contract, as a compatible superset.
//!
//! With one target the contract's fields sit at the top level exactly as the reference emits
//! them. With several targets (an `mcpServers` file) the top level carries the aggregate `ok`,
//! `summary` and `issues`, and `servers[]` holds one full contract object per server.

use super::status::{self, CONTRACT_CLASSES, CheckVerdict};
use super::{Report, ScanSection, Target};
use crate::catalog::Check;
use crate::issue::{Issue, Location};
use crate::runtime::checks::lists::ListKind;
use crate::runtime::effects::Effect;
use crate::runtime::record::{CapabilityStatus, OperationRecord, RunRecord};
use serde_json::{Map, Value, json};

pub const SCHEMA_VERSION: u64 = 1;

pub fn render(report: &Report) -> String {
    let value = to_value(report);
    let mut text = serde_json::to_string_pretty(&value).expect("JSON values serialize");
    text.push('\n');
    text
}

pub fn to_value(report: &Report) -> Value {
    if let Some(recorded) = &report.recorded_json {
        return recorded.clone();
    }
    let mut v = shape_value(report);
    if let Some(path) = &report.transcript {
        v["transcript"] = Value::from(path.display().to_string());
    }
    if let Some((shard, positions)) = &report.shard {
        v["shard"] = shard.to_json(positions);
    }
    v
}

fn shape_value(report: &Report) -> Value {
    // A shard always has the several-servers shape (with names), whatever its count: `merge`
    // joins shards by their servers. So has an interrupted run.
    if report.interrupted.is_none() && report.shard.is_none() {
        if report.targets.is_empty() {
            return scan_value(report.scan.as_ref());
        }
        if report.targets.len() == 1 {
            return target_value(&report.targets[0], report.scan.as_ref());
        }
    }
    servers_value(report)
}

/// Several servers, a shard, or an interrupted run of any number: the aggregate at the top level
/// and one contract object per judged server in `servers[]`; an interrupted run adds `partial`
/// and is never `ok`.
fn servers_value(report: &Report) -> Value {
    let all: Vec<Issue> = report.issues().cloned().collect();
    let servers: Vec<Value> = report.targets.iter().map(server_value).collect();
    let mut out = aggregate_value(&all, servers);
    if let Some(i) = &report.interrupted {
        out["ok"] = Value::from(false);
        out["partial"] = json!({
            "signal": i.signal,
            "exitCode": i.exit_code(),
            "total": i.total,
            "judged": i.total - i.not_judged.len(),
            "notJudged": i.not_judged,
        });
    }
    out
}

/// One entry of `servers[]`: a server's full report, with its name.
pub fn server_value(t: &Target) -> Value {
    let mut v = target_value(t, None);
    v["name"] = Value::from(t.name.clone());
    v
}

/// The several-servers shape: the aggregate verdict of every finding, then each server's report.
pub fn aggregate_value(all: &[Issue], servers: Vec<Value>) -> Value {
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "ok": !all.iter().any(Issue::is_error),
        "summary": summary_value(all),
        "issueClasses": classes_value(all),
        "issues": all.iter().map(issue_value).collect::<Vec<_>>(),
        "servers": servers,
    })
}

fn target_value(t: &Target, scan: Option<&ScanSection>) -> Value {
    let first = &t.runs[0];
    // `--scan` findings merge into the server's issues, checks and summary (reference contract).
    let merged: Vec<Issue>;
    let issues: &[Issue] = match scan {
        Some(s) => {
            merged = t.issues.iter().chain(&s.issues).cloned().collect();
            &merged
        }
        None => &t.issues,
    };
    let verdicts = t.checks(scan);
    let total_ms = t.context.duration.as_millis() as u64;
    let mut v = json!({
        "schemaVersion": SCHEMA_VERSION,
        "ok": !issues.iter().any(Issue::is_error),
        "config": config_value(t),
        "profile": t.context.profile,
        "command": t.context.argv,
        "protocol": t.context.protocol,
        "negotiatedProtocol": first.negotiated_protocol.clone().unwrap_or_default(),
        "initialized": first.initialized,
        "operation": first.operations.first().map(|o| operation_value(o, run_effects(first))),
        "operations": first.operations.iter().map(|o| operation_value(o, run_effects(first))).collect::<Vec<_>>(),
        "era": first.era.as_str(),
        "eras": eras_value(first),
        "discover": discover_value(first),
        "adversarial": adversarial_value(first, &verdicts),
        "effects": effects_value(first),
        "buffering": buffering_value(first),
        "capabilityProbes": t.context.capability_probes,
        "capabilityKeys": first.capability_keys,
        "capabilityChecks": capability_checks_value(first),
        "toolSchema": tool_schema_value(first),
        "fingerprint": fingerprint_value(t, scan),
        "process": process_value(first, t.context.timeout_ms),
        "issueClasses": classes_value(issues),
        "summary": summary_value(issues),
        "checks": checks_value(&verdicts, Some(first), Some(t)),
        "issues": issues.iter().map(issue_value).collect::<Vec<_>>(),
        "staticScan": static_scan_value(scan, t.context.fail_on_static),
        "staticFindings": scan.map_or_else(Vec::new, |s| s.issues.iter().map(static_finding_value).collect()),
        "stderr": String::from_utf8_lossy(&first.stderr_tail),
        "durationMs": total_ms,
        "repeat": t.context.repeat,
    });
    if let Some((file, key)) = &t.context.mcp_server {
        // Where the server is defined (the SARIF anchor), for `merge`.
        v["mcpServer"] = json!({"file": file.display().to_string(), "key": key});
    }
    if let Some(d) = &t.drift {
        v["drift"] = json!({
            "status": if d.codes.is_empty() { "pass" } else { "warning" },
            "issueCodes": d.codes,
            "baselineRun": d.baseline_run,
            "comparedRuns": d.compared_runs,
            "negotiatedProtocol": {"changedRuns": d.protocol_changed},
            "capabilities": {"changedRuns": d.capabilities_changed},
            "tools": {"changedRuns": d.tools_changed},
            "lists": {
                "resources": {"changedRuns": d.resources_changed},
                "resourceTemplates": {"changedRuns": d.templates_changed},
                "prompts": {"changedRuns": d.prompts_changed},
            },
        });
    }
    if t.runs.len() > 1 {
        v["runs"] = Value::from(
            t.runs
                .iter()
                .zip(&t.run_issues)
                .map(|(r, issues)| run_value(t, r, issues))
                .collect::<Vec<_>>(),
        );
    }
    v
}

fn config_value(t: &Target) -> Value {
    let c = &t.context.config;
    let checks: serde_json::Map<String, Value> = c
        .checks
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    json!({
        "enabled": c.enabled,
        "path": c.path,
        "resolvedPath": c.resolved_path,
        "checks": checks
    })
}

/// Every era the server was seen to speak: a dual-era server speaks both.
fn eras_value(run: &RunRecord) -> Value {
    if run.also_stateless {
        json!(["legacy", "stateless"])
    } else if run.initialized || run.era == crate::runtime::record::Era::Stateless {
        json!([run.era.as_str()])
    } else {
        json!([])
    }
}

fn discover_value(run: &RunRecord) -> Value {
    let d = &run.discover;
    json!({
        "probed": d.probed,
        "answer": d.answer.map(|a| a.as_str()),
        "supportedVersions": d.supported_versions,
        "legacyRefused": run.legacy_refused,
        "durationMs": d.duration.map(|x| x.as_millis() as u64),
    })
}

fn capability_checks_value(run: &RunRecord) -> Value {
    let mut out = Map::new();
    for c in &run.capability_checks {
        out.insert(
            c.kind.items_key().to_string(),
            json!({
                "advertised": c.advertised,
                "method": c.kind.method(),
                "responded": c.status == CapabilityStatus::Responded,
                "status": c.status.as_str(),
                "itemCount": c.item_count,
                "pages": c.pages,
                "error": c.error.as_ref().map(|(code, message)| json!({"code": code, "message": message})),
            }),
        );
    }
    Value::Object(out)
}

fn tool_schema_value(run: &RunRecord) -> Value {
    match &run.tool_schema {
        Some(ts) => json!({
            "checked": true,
            "toolCount": ts.tool_count,
            "toolNames": ts.tool_names,
            "validToolCount": ts.valid_tool_count,
            "warningCount": ts.warning_count,
            "errorCount": ts.error_count,
            "duplicateNames": ts.duplicate_names,
        }),
        None => json!({
            "checked": false,
            "toolCount": 0,
            "toolNames": [],
            "validToolCount": 0,
            "warningCount": 0,
            "errorCount": 0,
            "duplicateNames": [],
        }),
    }
}

fn command_value(t: &Target) -> Value {
    let argv = &t.context.argv;
    json!({
        "executable": argv.first().cloned().unwrap_or_default(),
        "args": argv.iter().skip(1).cloned().collect::<Vec<_>>(),
        "argv": argv,
    })
}

/// The `adversarial` block: one entry per probe with its status, the risk it guards against, its
/// issue codes, what was sent and what came back, and the effects attributed to it; its status
/// is `checks.adversarial`'s.
fn adversarial_value(run: &RunRecord, verdicts: &[CheckVerdict]) -> Value {
    let Some(adv) = &run.adversarial else {
        return json!({"enabled": false, "status": "skipped", "probes": []});
    };
    let status = verdicts
        .iter()
        .find(|v| v.check == Check::Adversarial)
        .map_or("skipped", |v| v.status.as_str());
    let probes: Vec<Value> = adv
        .probes
        .iter()
        .map(|p| {
            let mut v = json!({
                "name": p.name,
                "origin": p.origin.as_str(),
                "status": p.status.as_str(),
                "risk": p.risk,
                "issueCodes": p.issue_codes,
                "frame": p.frame,
                "reply": p.reply,
                "session": p.session.as_str(),
                "durationMs": p.duration.as_millis() as u64,
            });
            if let Some(why) = &p.skip_reason {
                v["skipReason"] = Value::from(why.clone());
            }
            if let Some(ms) = p.process_ended_ms {
                v["processEndedMs"] = Value::from(ms);
            }
            if p.effects_observed {
                v["effects"] = Value::from(p.effects.iter().map(effect_value).collect::<Vec<_>>());
            }
            v
        })
        .collect();
    json!({"enabled": true, "status": status, "probes": probes})
}

fn effect_value(e: &Effect) -> Value {
    json!({
        "kind": e.kind.as_str(),
        "summary": e.summary,
        "phase": e.phase.as_str(),
        "after": e.after,
        "atMs": e.at.as_millis() as u64,
        "detail": e.detail,
    })
}

/// The `effects` block: what the no-effect proof observed in the (first) main run, by phase.
fn effects_value(run: &RunRecord) -> Value {
    let Some(rec) = &run.effects else {
        return json!({"enabled": false});
    };
    let mut by_phase = Map::new();
    for e in &rec.effects {
        let n = by_phase
            .get(e.phase.as_str())
            .and_then(Value::as_u64)
            .unwrap_or(0);
        by_phase.insert(e.phase.as_str().to_string(), Value::from(n + 1));
    }
    let side: usize = run
        .adversarial
        .iter()
        .flat_map(|a| &a.probes)
        .map(|p| p.effects.len())
        .sum();
    json!({
        "enabled": true,
        "channels": {
            "canary": rec.canary,
            "log": rec.logged,
            "processWatch": rec.watched,
            "syscalls": rec.observers.iter().any(|o| o.name == "syscalls" && o.ran),
        },
        // Which observers ran, and why the others did not.
        "observers": rec.observers.iter().map(|o| {
            let mut v = json!({"name": o.name, "ran": o.ran});
            if let Some(note) = &o.note {
                v[if o.ran { "note" } else { "reason" }] = Value::from(note.as_str());
            }
            v
        }).collect::<Vec<_>>(),
        "observed": rec.effects.len() as u64 + rec.dropped,
        "byPhase": by_phase,
        // The first 200 (a launcher can start hundreds of processes); `eventsOmitted` counts the rest.
        "events": rec.effects.iter().take(200).map(effect_value).collect::<Vec<_>>(),
        "eventsOmitted": (rec.effects.len().saturating_sub(200)) as u64 + rec.dropped,
        "duringProbes": side,
        "problems": rec.problems,
    })
}

/// The `buffering` block: frames that arrived after stdin EOF and the rerun in the other mode.
fn buffering_value(run: &RunRecord) -> Value {
    json!({
        "framesAfterStdinEof": run.frames_after_stdin_eof,
        "rerun": run.buffering.as_ref().map(|b| json!({
            "mode": b.rerun_mode,
            "extraPollution": b.extra_pollution,
            "durationMs": b.duration.as_millis() as u64,
        })),
    })
}

fn operation_value(op: &OperationRecord, effects: Option<&[Effect]>) -> Value {
    let mut v = json!({
        "method": op.method,
        "hasParams": op.has_params,
        "source": op.source.as_str(),
        "safeToolCallName": op.safe_tool_call_name.clone().unwrap_or_default(),
        "status": op.status.as_str(),
        "responded": matches!(op.status, crate::runtime::record::OperationStatus::Responded | crate::runtime::record::OperationStatus::Error),
        "durationMs": op.duration.map(|d| d.as_millis() as u64),
        "error": op.error.as_ref().map(|(code, message)| json!({"code": code, "message": message})),
    });
    if let Some(all) = effects {
        v["effects"] = Value::from(
            crate::runtime::checks::effects::of_operation(op, all)
                .into_iter()
                .map(effect_value)
                .collect::<Vec<_>>(),
        );
    }
    v
}

fn run_effects(run: &RunRecord) -> Option<&[Effect]> {
    run.effects.as_ref().map(|r| r.effects.as_slice())
}

fn fingerprint_value(t: &Target, scan: Option<&ScanSection>) -> Value {
    let c = &t.context;
    let cwd_requested = c
        .cwd_requested
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| c.cwd_resolved.display().to_string());
    let mut env_values = Map::new();
    for name in &c.env_names {
        env_values.insert(name.clone(), Value::from(crate::redact::REDACTED));
    }
    let ops: Vec<Value> = c
        .operations
        .iter()
        .map(|(method, has_params, source, tool)| {
            json!({"method": method, "hasParams": has_params, "source": source, "safeToolCallName": tool})
        })
        .collect();
    let mut runtimes = Map::new();
    for r in &c.runtimes {
        runtimes.insert(
            r.name.to_string(),
            json!({
                "command": r.command,
                "version": r.version,
                "role": r.role,
                "available": r.available,
                "status": r.status,
                "signal": r.signal,
            }),
        );
    }
    let (platform, arch) = node_platform();
    json!({
        "guard": {"name": "mcp-stdio-guard", "version": crate::VERSION},
        "command": command_value(t),
        "cwd": {
            "requested": cwd_requested,
            "resolved": c.cwd_resolved.display().to_string(),
            "exists": c.cwd_resolved.is_dir(),
        },
        "protocol": c.protocol,
        "config": config_value(t),
        "profile": c.profile,
        "timeoutMs": c.timeout_ms,
        "repeat": c.repeat,
        "capabilityProbes": c.capability_probes,
        "adversarialProbes": c.adversarial_probes,
        "operation": ops.first().cloned(),
        "operations": ops,
        "system": {
            "platform": platform,
            "arch": arch,
            "osRelease": os_release(),
        },
        "runtimes": runtimes,
        "package": c.package.as_ref().map(|p| json!({
            "manager": p.manager,
            "name": p.name,
            "versionSpec": p.version_spec,
            "version": p.version(),
            "ecosystem": p.ecosystem,
            "source": p.source,
        })),
        "env": {"inherited": true, "names": c.env_names, "values": env_values},
        "staticScan": static_scan_value(scan, t.context.fail_on_static),
        "timings": timings_value(&t.runs[0], t.context.duration.as_millis() as u64),
        "runs": t.runs.iter().map(|r| json!({
            "run": r.run,
            "ok": !r.has_errors(),
            "startupMs": startup_ms(r),
            "totalMs": r.timings.total.as_millis() as u64,
        })).collect::<Vec<_>>(),
    })
}

/// `startupMs` as the reference means it: from the start to the handshake's answer (`null`
/// when there was none).
fn startup_ms(run: &RunRecord) -> Option<u64> {
    if !run.initialized {
        return None;
    }
    let spawn = run.timings.spawn?;
    Some((spawn + run.timings.initialize.unwrap_or_default()).as_millis() as u64)
}

fn timings_value(run: &RunRecord, total_ms: u64) -> Value {
    let ms = |d: Option<std::time::Duration>| d.map(|d| d.as_millis() as u64);
    json!({
        "startupMs": startup_ms(run),
        "spawnMs": ms(run.timings.spawn),
        "initializeMs": ms(run.timings.initialize),
        "operationsMs": ms(run.timings.operations),
        "shutdownMs": ms(run.timings.shutdown),
        "startupCpuMs": ms(run.timings.startup_cpu),
        "totalMs": total_ms,
    })
}

/// `platform` and `arch` spelled as Node's `process.platform`/`process.arch` (the reference's
/// values): `linux`, `darwin`, `win32`; `x64`, `arm64`.
fn node_platform() -> (&'static str, &'static str) {
    let platform = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        "powerpc64" => "ppc64",
        other => other,
    };
    (platform, arch)
}

fn os_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn process_value(run: &RunRecord, timeout_ms: u64) -> Value {
    let p = &run.process;
    let o = &p.output;
    let sd = &p.shutdown;
    json!({
        "started": p.started,
        "pid": p.pid,
        "outcome": p.outcome.as_str(),
        "phase": status::decided_phase(run).contract_str(),
        "phaseDetail": status::decided_phase(run).as_str(),
        "exitCode": p.exit_code,
        "signal": p.signal.map(crate::runtime::transport::signal_name),
        "timedOut": p.timed_out,
        "timeoutCode": p.timeout_code.unwrap_or(""),
        "timeoutMs": timeout_ms,
        "killedByGuard": p.killed_by_guard,
        "killSignal": p.kill_signal.map_or("", |k| k.as_str()),
        "killReason": p.kill_reason.map_or("", |k| k.as_str()),
        "spawnError": p.spawn_error.as_ref().map(|(code, message)| json!({"code": code, "message": message})),
        "shutdown": {
            "stage": sd.stage.as_str(),
            "stdinEofToExitMs": sd.stdin_eof_to_exit.map(|d| d.as_millis() as u64),
            "stdoutHeldOpen": sd.stdout_held_open,
            "descendantsKilled": sd.descendants_killed.iter().map(|(pid, argv)| json!({"pid": pid, "argv": argv})).collect::<Vec<_>>(),
        },
        "output": {
            "stdoutBytes": o.stdout_bytes,
            "stdoutLines": o.stdout_lines,
            "stderrBytes": o.stderr_bytes,
            "stderrLines": o.stderr_lines,
            "stdinBytes": o.stdin_bytes,
            "maxStdoutBytes": o.max_stdout_bytes,
            "maxStdoutLineBytes": o.max_stdout_line_bytes,
            "maxStderrBytes": o.max_stderr_bytes,
            "stderrTruncated": o.stderr_truncated,
            "limitCode": o.limit_code.unwrap_or(""),
        },
        "frames": {
            "total": run.frames,
            "invalid": run.invalid_frames,
            "afterStdinEof": run.frames_after_stdin_eof,
            "serverRequests": run.server_requests,
            "serverNotifications": run.server_notifications,
        },
    })
}

/// One entry of `runs[]`: a schema-versioned result of that run alone (its own findings and
/// checks; the once-per-target probes count with the first run).
fn run_value(t: &Target, run: &RunRecord, issues: &[Issue]) -> Value {
    let verdicts = status::run_checks(run, issues, &t.asked(false));
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "run": run.run,
        "ok": !issues.iter().any(Issue::is_error),
        "command": t.context.argv,
        "protocol": t.context.protocol,
        "negotiatedProtocol": run.negotiated_protocol.clone().unwrap_or_default(),
        "era": run.era.as_str(),
        "initialized": run.initialized,
        "operation": run.operations.first().map(|o| operation_value(o, run_effects(run))),
        "operations": run.operations.iter().map(|o| operation_value(o, run_effects(run))).collect::<Vec<_>>(),
        "capabilityKeys": run.capability_keys,
        "capabilityChecks": capability_checks_value(run),
        "toolSchema": tool_schema_value(run),
        "process": process_value(run, t.context.timeout_ms),
        "checks": checks_value(&verdicts, Some(run), None),
        "issueClasses": classes_value(issues),
        "summary": summary_value(issues),
        "issues": issues.iter().map(issue_value).collect::<Vec<_>>(),
        "stderr": String::from_utf8_lossy(&run.stderr_tail),
        "durationMs": run.timings.total.as_millis() as u64,
        "fingerprint": {"timings": timings_value(run, run.timings.total.as_millis() as u64)},
    })
}

fn classes_value(issues: &[Issue]) -> Value {
    let mut out = Map::new();
    for class in CONTRACT_CLASSES {
        let mine: Vec<&Issue> = issues.iter().filter(|i| i.rule.class == class).collect();
        out.insert(
            class.as_str().to_string(),
            json!({"status": status::of_issues(mine.iter().copied()).as_str(), "issueCodes": status::codes(mine)}),
        );
    }
    Value::Object(out)
}

fn summary_value(issues: &[Issue]) -> Value {
    let s = status::summary(issues);
    json!({
        "status": s.status,
        "issueClass": s.issue_class,
        "primaryIssueCode": s.primary_code,
        "primaryIssueClass": s.primary_class,
        "issueCounts": {"error": s.errors, "warning": s.warnings, "total": s.errors + s.warnings, "note": s.notes},
        "badge": {"label": "mcp stdio", "message": s.badge_message, "color": s.badge_color},
        "display": s.display,
    })
}

fn checks_value(
    verdicts: &[CheckVerdict],
    run: Option<&RunRecord>,
    target: Option<&Target>,
) -> Value {
    let mut out = Map::new();
    for v in verdicts {
        let mut entry = json!({"status": v.status.as_str(), "issueCodes": v.codes()});
        // Why a check was skipped, or could not run.
        if let Some(why) = v.reason
            && matches!(v.status, status::Status::Skipped | status::Status::Fail)
        {
            entry["reason"] = Value::from(why);
        }
        if let (Check::Capabilities, Some(run)) = (v.check, run) {
            for kind in ListKind::ALL {
                entry[kind.items_key()] = capability_list_status(kind, v, run);
            }
        }
        if let (Check::Repeat, Some(t)) = (v.check, target)
            && let Some(d) = &t.drift
        {
            entry["runs"] = Value::from(t.runs.len());
            entry["passedRuns"] = Value::from(d.passed_runs.len());
            entry["failedRuns"] = Value::from(d.failed_runs.clone());
        }
        out.insert(v.check.as_str().to_string(), entry);
    }
    Value::Object(out)
}

/// `checks.capabilities.<list>`: skipped unless advertised and probes were on; `fail` with what
/// stopped it when the list was due but never probed; else the status of that list's findings.
fn capability_list_status(kind: ListKind, caps: &CheckVerdict, run: &RunRecord) -> Value {
    let Some(c) = run.capability(kind) else {
        return json!({"status": "skipped", "issueCodes": []});
    };
    let mine: Vec<&Issue> = caps
        .issues
        .iter()
        .copied()
        .filter(|i| i.rule.check == Check::Capabilities)
        .filter(|i| i.fields.get("method").and_then(Value::as_str) == Some(kind.method()))
        .collect();
    let (st, codes) =
        if !c.advertised || !run.capability_probes || caps.status == status::Status::Skipped {
            ("skipped", Vec::new())
        } else if c.status == CapabilityStatus::NotProbed {
            let blockers: Vec<&Issue> = caps
                .issues
                .iter()
                .copied()
                .filter(|i| i.rule.check != Check::Capabilities)
                .collect();
            ("fail", status::codes(blockers))
        } else {
            (
                status::of_issues(mine.iter().copied()).as_str(),
                status::codes(mine),
            )
        };
    json!({
        "status": st,
        "issueCodes": codes,
        "advertised": c.advertised,
        "method": kind.method(),
        "responded": c.status == CapabilityStatus::Responded,
        "itemCount": c.item_count,
    })
}

pub fn issue_value(i: &Issue) -> Value {
    let mut v = Map::new();
    v.insert("class".into(), Value::from(i.rule.class.as_str()));
    v.insert("severity".into(), Value::from(i.severity.as_str()));
    v.insert("code".into(), Value::from(i.code()));
    v.insert("message".into(), Value::from(i.message.clone()));
    v.insert("help".into(), Value::from(i.help.clone()));
    v.insert(
        "detailCode".into(),
        Value::from(i.detail_code.unwrap_or("")),
    );
    v.insert("check".into(), Value::from(i.rule.check.as_str()));
    if let Some(phase) = i.phase {
        v.insert("phase".into(), Value::from(phase.contract_str()));
        if phase.contract_str() != phase.as_str() {
            v.insert("phaseDetail".into(), Value::from(phase.as_str()));
        }
    }
    if let Some(run) = i.run {
        v.insert("run".into(), Value::from(run));
    }
    match &i.location {
        Some(Location::Stream {
            stream,
            line,
            byte_offset,
        }) => {
            v.insert(
                "stream".into(),
                serde_json::to_value(stream).unwrap_or(Value::Null),
            );
            v.insert("line".into(), Value::from(*line));
            v.insert("byteOffset".into(), Value::from(*byte_offset));
        }
        Some(Location::Source {
            file,
            line,
            column,
            end_line,
            end_column,
        }) => {
            v.insert("file".into(), Value::from(file.display().to_string()));
            v.insert("line".into(), Value::from(*line));
            v.insert("column".into(), Value::from(*column));
            v.insert("endLine".into(), Value::from(*end_line));
            v.insert("endColumn".into(), Value::from(*end_column));
        }
        None => {}
    }
    if let Some(e) = &i.evidence {
        v.insert("evidence".into(), Value::from(e.clone()));
    }
    if i.is(&crate::catalog::runtime::SPAWN_FAILED) && !i.fields.contains_key("spawnErrorCode") {
        v.insert("spawnErrorCode".into(), Value::from(""));
    }
    for (k, val) in &i.fields {
        v.insert(k.clone(), val.clone());
    }
    v.insert("docs".into(), Value::from(i.rule.docs_url()));
    Value::Object(v)
}

/// The reference's `staticScan` block.
/// `staticScan`: whether a scan ran, on what, and whether its findings fail (set by the profile
/// or config even when no scan path was given).
fn static_scan_value(scan: Option<&ScanSection>, fail_on_static: bool) -> Value {
    match scan {
        Some(s) => json!({
            "enabled": true,
            "path": s.paths.join(" "),
            "failOnFindings": s.fail_on_findings,
        }),
        None => json!({"enabled": false, "path": "", "failOnFindings": fail_on_static}),
    }
}

/// The position fields of a source finding (`file`, `line`, `column`, `endLine`, `endColumn`).
fn source_fields(i: &Issue, v: &mut Map<String, Value>) {
    if let Some(Location::Source {
        file,
        line,
        column,
        end_line,
        end_column,
    }) = &i.location
    {
        v.insert("file".into(), Value::from(file.display().to_string()));
        v.insert("line".into(), Value::from(*line));
        v.insert("column".into(), Value::from(*column));
        v.insert("endLine".into(), Value::from(*end_line));
        v.insert("endColumn".into(), Value::from(*end_column));
    }
}

/// One entry of the reference's `staticFindings[]` (`reason` is the reference's name for the rule).
fn static_finding_value(i: &Issue) -> Value {
    let mut v = Map::new();
    v.insert(
        "language".into(),
        i.fields.get("language").cloned().unwrap_or(Value::from("")),
    );
    source_fields(i, &mut v);
    v.insert("rule".into(), Value::from(i.code()));
    v.insert("reason".into(), Value::from(i.code()));
    v.insert("severity".into(), Value::from(i.severity.as_str()));
    v.insert("message".into(), Value::from(i.message.clone()));
    v.insert("help".into(), Value::from(i.help.clone()));
    Value::Object(v)
}

/// One entry of `scan --format json`'s `findings[]`.
fn finding_value(i: &Issue) -> Value {
    let mut v = Map::new();
    source_fields(i, &mut v);
    v.insert("rule".into(), Value::from(i.code()));
    v.insert("severity".into(), Value::from(i.severity.as_str()));
    v.insert("message".into(), Value::from(i.message.clone()));
    v.insert("help".into(), Value::from(i.help.clone()));
    for key in ["language", "context"] {
        if let Some(val) = i.fields.get(key) {
            v.insert(key.into(), val.clone());
        }
    }
    v.insert("docs".into(), Value::from(i.rule.docs_url()));
    Value::Object(v)
}

/// `scan --format json`: the findings with the same `ok`/`summary` as the runtime contract.
fn scan_value(scan: Option<&ScanSection>) -> Value {
    let empty = ScanSection::default();
    let s = scan.unwrap_or(&empty);
    let st = &s.stats;
    let languages: Map<String, Value> = st
        .languages
        .iter()
        .map(|(l, n)| (l.to_string(), Value::from(*n)))
        .collect();
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "ok": !s.issues.iter().any(Issue::is_error),
        "staticScan": static_scan_value(scan, true),
        "summary": summary_value(&s.issues),
        "findings": s.issues.iter().map(finding_value).collect::<Vec<_>>(),
        "stats": {
            "files": st.files,
            "parsed": st.parsed,
            "prefiltered": st.prefiltered,
            "skipped": st.skipped,
            "bytes": st.bytes,
            "parsedBytes": st.parsed_bytes,
            "durationMs": st.duration.as_millis() as u64,
            "languages": languages,
        },
    })
}
