//! The verdict of one adversarial probe: pure, over what its server process was seen to do.
//!
//! The policy (the article's, calibrated on the official SDKs, which ignore garbage silently):
//! after a rejected frame the server either stays usable — the valid request that follows
//! succeeds and inherits nothing from the rejected one — or closes cleanly (exit status 0).
//! Silence is never a failure. A crash, a hang, a success `result` for a frame that must be
//! refused, a reply to a notification, stdout pollution the main run never showed, and any effect
//! observed between the frame and the guard closing stdin (the frame and its EOF, for
//! `truncated-eof`) are findings.

use crate::catalog::Check;
use crate::catalog::{Rule, Severity, adversarial as rules};
use crate::issue::{Issue, Location, Phase};
use crate::runtime::effects::{Effect, EffectKind};
use crate::runtime::probes::corpus::{Delivery, Expect, Probe};
use crate::runtime::record::{SessionState, ShutdownStage};
use crate::runtime::session::Tapped;
use crate::runtime::transport::ExitInfo;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

/// Findings of one kind kept in full per probe (more are counted on the first).
const PER_KIND: usize = 3;

/// What came back for a `Request` probe.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestReply {
    Result(Value),
    Error {
        code: i64,
        message: String,
    },
    /// A reply arrived but could not be read (its defect is a stdout finding).
    Broken,
    Timeout,
    /// The process exited or closed stdout first.
    Gone,
}

/// What became of the valid request sent after the frame.
#[derive(Debug, Clone, PartialEq)]
pub enum FollowUp {
    /// Not sent: the server was gone, the probe owned the end of the session, or the probe
    /// request itself was never answered.
    NotSent,
    Result,
    Error {
        code: i64,
        message: String,
    },
    /// Answered under the id of the rejected frame.
    WrongId(Value),
    Timeout,
    Gone,
}

/// Everything a probe's process was seen to do.
#[derive(Debug, Clone)]
pub struct Observation {
    /// When the frame was sent; `None` when it never was (see `not_run`).
    pub sent_at: Option<Duration>,
    pub not_run: Option<String>,
    pub reply: Option<RequestReply>,
    pub follow_up: FollowUp,
    pub exit: Option<(Duration, ExitInfo)>,
    pub stdout_eof: Option<Duration>,
    /// When stdin was closed (by `truncated-eof`).
    pub stdin_closed_at: Option<Duration>,
    /// When the probe's window ended (its process may go on with the next probe, or be killed):
    /// what happens after it is not the probe's.
    pub window_end: Option<Duration>,
    pub shutdown: ShutdownStage,
    /// Values received after the frame was sent.
    pub tapped: Vec<Tapped>,
    /// Issues the session recorded after the frame was sent.
    pub issues: Vec<Issue>,
    /// Every effect of the process (`None`: effects were not observed).
    pub effects: Option<Vec<Effect>>,
    pub stderr_tail: Vec<u8>,
    pub timeout: Duration,
    /// The valid request sent after the frame (`ping`, or `server/discover` when stateless).
    pub follow_up_method: &'static str,
    /// The error code the same request got before the frame, if it got an error (a server
    /// without `ping`): the same error after the frame is not inherited state.
    pub follow_up_baseline: Option<i64>,
}

/// What the main run established, to tell the probe's doing from the server's habits.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    /// Offending stdout bytes already reported by the main run.
    pub stdout_evidence: BTreeSet<String>,
    /// The main run's server exited on stdin EOF within the grace.
    pub shutdown_clean: bool,
    /// ...with exit status 0.
    pub eof_exit_clean: bool,
    /// Every code of the main run.
    pub codes: BTreeSet<&'static str>,
    /// The habits of the main run ([`Issue::habit`]): a probe's process showing one again (its
    /// banner, its unsolicited `sampling/createMessage`) shows the server, not the frame.
    pub habits: BTreeSet<(&'static str, String)>,
}

/// The verdict.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub issues: Vec<Issue>,
    pub session: SessionState,
    /// What the frame got back, in words.
    pub reply: String,
    /// The effects attributed to the probe.
    pub side_effects: Vec<Effect>,
}

/// One response seen after the frame (batch elements flattened).
#[derive(Debug, Clone)]
struct Resp {
    id: Value,
    result: Option<Value>,
    error_code: Option<i64>,
    line: u64,
    offset: u64,
}

fn responses(tapped: &[Tapped]) -> Vec<Resp> {
    let mut out = Vec::new();
    let mut push = |v: &Value, line: u64, offset: u64| {
        let Some(obj) = v.as_object() else { return };
        if obj.contains_key("method") || !(obj.contains_key("result") || obj.contains_key("error"))
        {
            return;
        }
        out.push(Resp {
            id: obj.get("id").cloned().unwrap_or(Value::Null),
            result: obj.get("result").cloned(),
            error_code: obj
                .get("error")
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64),
            line,
            offset,
        });
    };
    for t in tapped {
        match &t.value {
            Value::Array(items) => items.iter().for_each(|v| push(v, t.line, t.offset)),
            v => push(v, t.line, t.offset),
        }
    }
    out
}

fn is_error_result(v: &Value) -> bool {
    v.get("isError") == Some(&Value::Bool(true))
}

fn describe_resp(r: &Resp) -> String {
    let id = if r.id.is_null() {
        "id null".to_string()
    } else {
        format!("id {}", r.id)
    };
    match (&r.result, r.error_code) {
        (Some(v), _) if is_error_result(v) => format!("result with isError ({id})"),
        (Some(_), _) => format!("result ({id})"),
        (None, Some(code)) => format!("error {code} ({id})"),
        (None, None) => format!("error ({id})"),
    }
}

/// The last non-empty line of stderr, for a crash message.
fn stderr_hint(tail: &[u8]) -> String {
    let text = String::from_utf8_lossy(tail);
    match text.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(line) => format!(
            "; last stderr line: {}",
            crate::issue::escape_bytes(line.trim().as_bytes(), 160)
        ),
        None => String::new(),
    }
}

fn issue(rule: &'static Rule, probe: &Probe, message: String) -> Issue {
    Issue::new(rule, message)
        .phase(Phase::Adversarial)
        .field("probe", probe.name.as_str())
}

/// Keeps the first `PER_KIND` issues of each code; counts the rest on the first.
fn cap(issues: Vec<Issue>) -> Vec<Issue> {
    let mut out: Vec<Issue> = Vec::new();
    for i in issues {
        let same = out.iter().filter(|o| o.code() == i.code()).count();
        if same < PER_KIND {
            out.push(i);
        } else if let Some(first) = out.iter_mut().find(|o| o.code() == i.code()) {
            let more = first
                .fields
                .get("moreOccurrences")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                + 1;
            first.fields.insert("moreOccurrences".into(), more.into());
        }
    }
    out
}

pub fn judge(probe: &Probe, obs: &Observation, base: &Baseline) -> Verdict {
    let name = probe.name.as_str();
    let Some(sent_at) = obs.sent_at else {
        let why = obs
            .not_run
            .clone()
            .unwrap_or_else(|| "it never started".into());
        return Verdict {
            issues: vec![issue(
                &rules::ADVERSARIAL_PROBE_INCONCLUSIVE,
                probe,
                format!("probe {name} could not run: {why}"),
            )],
            session: SessionState::NotRun,
            reply: "not sent".into(),
            side_effects: Vec::new(),
        };
    };
    let mut j = Judging {
        probe,
        obs,
        base,
        name,
        sent_at,
        eof_probe: matches!(probe.delivery, Delivery::RawThenEof(_)),
        resps: responses(&obs.tapped),
        issues: Vec::new(),
        explained: BTreeSet::new(),
    };
    let reply_words = reply_verdict(&mut j);
    let session = session_verdict(&mut j);
    pollution(&mut j);
    let reply = reply_words.join(", ");
    let side_effects = side_effects(&mut j, &reply);
    Verdict {
        issues: cap(j.issues),
        session,
        reply,
        side_effects,
    }
}

/// What one probe's verdict is built from, and the findings so far.
struct Judging<'a> {
    probe: &'a Probe,
    obs: &'a Observation,
    base: &'a Baseline,
    name: &'a str,
    sent_at: Duration,
    eof_probe: bool,
    /// Every response seen after the frame.
    resps: Vec<Resp>,
    issues: Vec<Issue>,
    /// stdout lines a verdict already explains (they are not pollution).
    explained: BTreeSet<u64>,
}

/// What the frame got back, in words; findings for a reply a correct server must not give.
fn reply_verdict(j: &mut Judging) -> Vec<String> {
    let (probe, obs, name) = (j.probe, j.obs, j.name);
    let eof_probe = j.eof_probe;
    let follow_up_line = |r: &Resp| -> bool {
        // The follow-up's reply is an integer id the session assigned; frame ids never are
        // (except a coerced `true`, handled below).
        r.id.is_i64() && !probe.coerced_ids.contains(&r.id)
    };
    let mut reply_words: Vec<String> = Vec::new();
    match (&probe.delivery, &obs.reply) {
        (Delivery::Request { method, .. }, Some(reply)) => {
            let accepted = probe.accepted.expect("request probes name their code");
            match reply {
                RequestReply::Result(v)
                    if probe.expect == Expect::ErrorOrIsError && is_error_result(v) =>
                {
                    reply_words.push("result with isError".into());
                }
                RequestReply::Result(v) => {
                    reply_words.push("result".into());
                    let mut i = issue(
                        accepted,
                        probe,
                        format!(
                            "probe {name}: {} was answered with a success result {}",
                            what_was_sent(probe),
                            crate::runtime::checks::initialize::short(v)
                        ),
                    );
                    if std::ptr::eq(accepted, &rules::ADVERSARIAL_INVALID_METHOD_RESULT) {
                        i = i.detail("success-result");
                    }
                    j.issues.push(i);
                }
                RequestReply::Error { code, message } => {
                    reply_words.push(format!(
                        "error {code} {}",
                        crate::runtime::checks::initialize::short(&Value::from(message.as_str()))
                    ));
                    if probe.expect == Expect::MethodNotFound && *code != -32601 {
                        j.issues.push(
                            issue(
                                accepted,
                                probe,
                                format!(
                                    "probe {name}: the unknown method {method} was refused with error {code} ({message:?}) instead of -32601 Method not found"
                                ),
                            )
                            .severity(Severity::Warning)
                            .detail("wrong-error-code"),
                        );
                    }
                }
                RequestReply::Broken => reply_words.push("an unreadable reply".into()),
                RequestReply::Timeout => {
                    reply_words.push(format!("no reply within {} ms", obs.timeout.as_millis()));
                    j.issues.push(
                        issue(
                            &rules::ADVERSARIAL_PROBE_TIMEOUT,
                            probe,
                            format!(
                                "probe {name}: {} got no reply within {} ms while the server kept running",
                                what_was_sent(probe),
                                obs.timeout.as_millis()
                            ),
                        )
                        .detail("no-reply"),
                    );
                }
                RequestReply::Gone => reply_words.push("no reply: the server went away".into()),
            }
        }
        _ => {
            let rejected: Vec<&Value> = probe
                .rejected_ids
                .iter()
                .chain(&probe.coerced_ids)
                .collect();
            let mut accepted_lines = Vec::new();
            for r in &j.resps {
                let ours = probe.frame_ids.contains(&r.id)
                    || probe.coerced_ids.contains(&r.id)
                    || r.id.is_null();
                if probe.no_reply && !follow_up_line(r) {
                    j.explained.insert(r.line);
                    reply_words.push(describe_resp(r));
                    j.issues.push(issue(
                        &rules::ADVERSARIAL_NOTIFICATION_RESPONSE,
                        probe,
                        format!(
                            "probe {name}: stdout line {} answers the notification notifications/mcp-stdio-guard/probe with a {}",
                            r.line,
                            describe_resp(r)
                        ),
                    ).at_stdout(r.line, r.offset));
                    continue;
                }
                if !ours {
                    continue;
                }
                reply_words.push(describe_resp(r));
                let is_success = r.result.as_ref().is_some_and(|v| !is_error_result(v));
                if let Some(rule) = probe.accepted
                    && is_success
                    && rejected.contains(&&r.id)
                {
                    j.explained.insert(r.line);
                    accepted_lines.push((rule, r.clone()));
                }
            }
            if let Some((rule, r)) = accepted_lines.first() {
                let coerced = probe.coerced_ids.contains(&r.id);
                j.issues.push(
                    issue(
                        rule,
                        probe,
                        format!(
                            "probe {name}: {} was answered with a success result on stdout line {}{}",
                            what_was_sent(probe),
                            r.line,
                            if coerced {
                                format!(" under id {}, a coercion of the rejected id", r.id)
                            } else {
                                String::new()
                            }
                        ),
                    )
                    .field("acceptedReplies", accepted_lines.len() as u64),
                );
            }
        }
    }
    if reply_words.is_empty() {
        reply_words.push(if eof_probe {
            "nothing before EOF".into()
        } else {
            "silence".into()
        });
    }

    reply_words
}

/// What became of the session after the frame: usable, closed, crashed, hung or broken.
fn session_verdict(j: &mut Judging) -> SessionState {
    let (probe, obs, name) = (j.probe, j.obs, j.name);
    let eof_probe = j.eof_probe;
    let closed_by_guard = obs.stdin_closed_at;
    let in_window = |at: Duration| obs.window_end.is_none_or(|w| at <= w);
    let exited_on_its_own = obs
        .exit
        .filter(|(at, _)| in_window(*at))
        .filter(|(at, _)| eof_probe || closed_by_guard.is_none_or(|c| *at < c));
    let stdout_closed_running = !eof_probe
        && obs.exit.is_none_or(|(at, _)| {
            obs.stdout_eof
                .is_some_and(|e| e + Duration::from_millis(250) < at)
        })
        && obs
            .stdout_eof
            .is_some_and(|e| closed_by_guard.is_none_or(|c| e < c));
    let hung_at_shutdown = matches!(
        obs.shutdown,
        ShutdownStage::Sigterm | ShutdownStage::Sigkill | ShutdownStage::Unkillable
    );
    if eof_probe {
        return eof_session(j, hung_at_shutdown, exited_on_its_own);
    }
    if let Some((_, exit)) = exited_on_its_own {
        if exit.is_clean() && !stdout_closed_running {
            SessionState::Closed
        } else {
            j.issues.push(issue(
                &rules::ADVERSARIAL_PROBE_CRASH,
                probe,
                format!(
                    "probe {name}: the server exited with {} after {}{}",
                    exit.describe(),
                    what_was_sent(probe),
                    stderr_hint(&obs.stderr_tail)
                ),
            ));
            SessionState::Crashed
        }
    } else if stdout_closed_running {
        j.issues.push(issue(
            &rules::ADVERSARIAL_PROBE_CRASH,
            probe,
            format!(
                "probe {name}: the server closed stdout and kept running after {}",
                what_was_sent(probe)
            ),
        ));
        SessionState::Crashed
    } else {
        open_session(j)
    }
}

/// `truncated-eof`: the server must exit on the EOF after the frame, as in the main run.
fn eof_session(
    j: &mut Judging,
    hung_at_shutdown: bool,
    exited_on_its_own: Option<(Duration, ExitInfo)>,
) -> SessionState {
    let (probe, obs, base, name) = (j.probe, j.obs, j.base, j.name);
    let mut session = SessionState::Usable;
    if hung_at_shutdown {
        session = SessionState::Hung;
        if base.shutdown_clean {
            j.issues.push(
                issue(
                    &rules::ADVERSARIAL_PROBE_TIMEOUT,
                    probe,
                    format!(
                        "probe {name}: after {} and stdin EOF the server kept running until the guard sent {}; in the main run it exited on EOF",
                        what_was_sent(probe),
                        if obs.shutdown == ShutdownStage::Sigterm { "SIGTERM" } else { "SIGKILL" }
                    ),
                )
                .detail("shutdown"),
            );
        }
    } else if let Some((_, exit)) = exited_on_its_own {
        if exit.is_clean() {
            session = SessionState::Closed;
        } else {
            session = SessionState::Crashed;
            if base.eof_exit_clean {
                j.issues.push(issue(
                    &rules::ADVERSARIAL_PROBE_CRASH,
                    probe,
                    format!(
                        "probe {name}: after {} and stdin EOF the server exited with {} (in the main run it exited with 0 on EOF){}",
                        what_was_sent(probe),
                        exit.describe(),
                        stderr_hint(&obs.stderr_tail)
                    ),
                ));
            }
        }
    }
    session
}

/// A session the server kept open: the follow-up request and the valid requests inside the
/// frame say whether it is still usable.
fn open_session(j: &mut Judging) -> SessionState {
    let (probe, obs, name) = (j.probe, j.obs, j.name);
    let mut session = SessionState::Usable;
    match &obs.follow_up {
        FollowUp::Result | FollowUp::NotSent | FollowUp::Gone => {}
        FollowUp::Error { code, .. } if obs.follow_up_baseline == Some(*code) => {}
        FollowUp::Error { code, message } => {
            session = SessionState::Broken;
            j.issues.push(
                issue(
                    &rules::ADVERSARIAL_FOLLOW_UP_FAILED,
                    probe,
                    format!(
                        "probe {name}: after {}, a valid {} request was answered with error {code} ({message:?})",
                        what_was_sent(probe),
                        obs.follow_up_method
                    ),
                )
                .detail("error-reply"),
            );
        }
        FollowUp::WrongId(id) => {
            session = SessionState::Broken;
            j.issues.push(
                issue(
                    &rules::ADVERSARIAL_FOLLOW_UP_FAILED,
                    probe,
                    format!(
                        "probe {name}: after {}, the valid {} request that followed was answered under the rejected frame's id {id}",
                        what_was_sent(probe),
                        obs.follow_up_method
                    ),
                )
                .detail("wrong-id"),
            );
        }
        FollowUp::Timeout => {
            session = SessionState::Hung;
            j.issues.push(
                issue(
                    &rules::ADVERSARIAL_PROBE_TIMEOUT,
                    probe,
                    format!(
                        "probe {name}: after {}, a valid {} request got no reply within {} ms while the server kept running",
                        what_was_sent(probe),
                        obs.follow_up_method,
                        obs.timeout.as_millis()
                    ),
                )
                .detail("follow-up"),
            );
        }
    }
    if matches!(obs.reply, Some(RequestReply::Timeout)) {
        session = SessionState::Hung;
    }
    // A valid request inside the frame (debug-line) must be answered too.
    let follow_up_ok = obs.follow_up == FollowUp::Result
        || matches!(&obs.follow_up, FollowUp::Error { code, .. } if obs.follow_up_baseline == Some(*code));
    if session == SessionState::Usable && follow_up_ok {
        for valid in &probe.valid_ids {
            let answer = j.resps.iter().find(|r| &r.id == valid);
            match answer {
                Some(r) if r.result.is_some() => {}
                Some(r) => {
                    j.explained.insert(r.line);
                    session = SessionState::Broken;
                    j.issues.push(
                        issue(
                            &rules::ADVERSARIAL_FOLLOW_UP_FAILED,
                            probe,
                            format!(
                                "probe {name}: the valid request {valid} on the line after the bad line was answered with {}",
                                describe_resp(r)
                            ),
                        )
                        .detail("error-reply"),
                    );
                }
                None => {
                    session = SessionState::Broken;
                    j.issues.push(issue(
                        &rules::ADVERSARIAL_FOLLOW_UP_FAILED,
                        probe,
                        format!(
                            "probe {name}: the valid request {valid} on the line after the bad line got no reply, while the next request did: the reader dropped it with the bad line"
                        ),
                    )
                    .detail("request-lost"));
                }
            }
        }
    }

    session
}

/// stdout pollution after the frame that the main run never showed.
fn pollution(j: &mut Judging) {
    let (probe, obs, base, name) = (j.probe, j.obs, j.base, j.name);
    let mut polluted = Vec::new();
    for i in &obs.issues {
        if !matches!(i.rule.check, Check::Stdout | Check::JsonRpc) {
            continue;
        }
        let line = match &i.location {
            Some(Location::Stream { line, .. }) => Some(*line),
            _ => None,
        };
        if line.is_some_and(|l| j.explained.contains(&l)) {
            continue;
        }
        if i.evidence
            .as_ref()
            .is_some_and(|e| base.stdout_evidence.contains(e))
            || base.habits.contains(&i.habit())
        {
            continue;
        }
        let mut converted = issue(
            &rules::ADVERSARIAL_PROBE_INVALID_STDOUT,
            probe,
            format!("probe {name}, in its own server process: {}", i.message),
        )
        .field("stdoutCode", i.code());
        if let Some(loc) = &i.location {
            converted = converted.at(loc.clone());
        }
        if let Some(e) = &i.evidence {
            converted = converted.evidence(e.clone());
        }
        polluted.push(converted);
    }
    j.issues.extend(polluted);
}

/// The effects observed in the probe's window: each one a finding (a rejected frame must
/// cause none).
fn side_effects(j: &mut Judging, reply_text: &str) -> Vec<Effect> {
    let (probe, obs, name) = (j.probe, j.obs, j.name);
    let (eof_probe, sent_at) = (j.eof_probe, j.sent_at);
    let closed_by_guard = obs.stdin_closed_at;
    let in_window = |at: Duration| obs.window_end.is_none_or(|w| at <= w);
    let mut side_effects = Vec::new();
    if let Some(effects) = &obs.effects {
        // One finding per distinct effect (a resolver retries the same lookup), with a count.
        let mut distinct: Vec<(&Effect, usize)> = Vec::new();
        for e in effects {
            let attributed = e.at >= sent_at
                && in_window(e.at)
                && (eof_probe || closed_by_guard.is_none_or(|c| e.at < c));
            // Local IPC (nscd, journald, a D-Bus socket) is not an action on the world.
            if !attributed || !e.kind.is_action() {
                continue;
            }
            side_effects.push(e.clone());
            match distinct
                .iter_mut()
                .find(|(d, _)| d.kind == e.kind && d.summary == e.summary)
            {
                Some((_, n)) => *n += 1,
                None => distinct.push((e, 1)),
            }
        }
        for (e, count) in distinct {
            let (rule, what, detail) = match e.kind {
                EffectKind::Http => (
                    &rules::ADVERSARIAL_SIDE_EFFECT_HTTP,
                    "made an HTTP request to the canary:",
                    None,
                ),
                EffectKind::Process => (
                    &rules::ADVERSARIAL_SIDE_EFFECT_PROCESS,
                    "started the process",
                    Some("watched"),
                ),
                EffectKind::Exec => (
                    &rules::ADVERSARIAL_SIDE_EFFECT_PROCESS,
                    "started the program",
                    Some("exec"),
                ),
                EffectKind::Dns => (
                    &rules::ADVERSARIAL_SIDE_EFFECT_NETWORK,
                    "made a",
                    Some("dns"),
                ),
                EffectKind::Network => (
                    &rules::ADVERSARIAL_SIDE_EFFECT_NETWORK,
                    "made the network call",
                    Some(if e.summary.starts_with("connect") {
                        "connect"
                    } else {
                        "send"
                    }),
                ),
                EffectKind::Logged => (
                    &rules::ADVERSARIAL_SIDE_EFFECT_LOGGED,
                    "logged the action",
                    None,
                ),
                EffectKind::Ipc => unreachable!("IPC is skipped above"),
            };
            let after_ms = e.at.saturating_sub(sent_at).as_millis() as u64;
            let mut found = issue(
                rule,
                probe,
                format!(
                    "probe {name}: the server {what} {}{} {after_ms} ms after {} (at {} ms of its process; its answer: {reply_text})",
                    e.summary,
                    if count > 1 {
                        format!(" ({count} times)")
                    } else {
                        String::new()
                    },
                    what_was_sent(probe),
                    e.at.as_millis()
                ),
            )
            .field(
                "effect",
                json!({
                    "kind": e.kind.as_str(),
                    "summary": e.summary,
                    "afterMs": after_ms,
                    "atMs": e.at.as_millis() as u64,
                    "after": e.after,
                    "count": count,
                }),
            );
            if let Some(d) = detail {
                found = found.detail(d);
            }
            j.issues.push(found);
        }
    }
    side_effects
}

/// The frame, in words, for messages.
fn what_was_sent(probe: &Probe) -> String {
    match &probe.delivery {
        Delivery::Request { method, params } => format!(
            "the request {method} with params {}",
            crate::runtime::checks::initialize::short(params)
        ),
        Delivery::Raw(bytes) | Delivery::RawThenEof(bytes) => {
            format!("the frame {}", crate::issue::escape_bytes(bytes, 72))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::probes::corpus::{self, Context};

    fn probe(name: &str) -> Probe {
        corpus::build(name, &Context::default()).unwrap()
    }

    fn obs() -> Observation {
        Observation {
            sent_at: Some(Duration::from_millis(100)),
            not_run: None,
            reply: None,
            follow_up: FollowUp::Result,
            exit: Some((
                Duration::from_millis(900),
                ExitInfo {
                    code: Some(0),
                    signal: None,
                },
            )),
            stdout_eof: Some(Duration::from_millis(900)),
            stdin_closed_at: Some(Duration::from_millis(800)),
            window_end: None,
            shutdown: ShutdownStage::StdinEof,
            tapped: Vec::new(),
            issues: Vec::new(),
            effects: Some(Vec::new()),
            stderr_tail: Vec::new(),
            timeout: Duration::from_secs(5),
            follow_up_method: "ping",
            follow_up_baseline: None,
        }
    }

    fn base() -> Baseline {
        Baseline {
            shutdown_clean: true,
            eof_exit_clean: true,
            ..Baseline::default()
        }
    }

    fn tap(line: u64, v: Value) -> Tapped {
        Tapped {
            at: Duration::from_millis(150),
            line,
            offset: 0,
            value: v,
        }
    }

    fn codes(v: &Verdict) -> Vec<&'static str> {
        v.issues.iter().map(Issue::code).collect()
    }

    #[test]
    fn silence_and_a_working_follow_up_pass() {
        let v = judge(&probe("malformed-json"), &obs(), &base());
        assert!(v.issues.is_empty(), "{:?}", v.issues);
        assert_eq!(
            (v.session, v.reply.as_str()),
            (SessionState::Usable, "silence")
        );
    }

    #[test]
    fn a_result_for_a_rejected_frame_is_an_acceptance() {
        let mut o = obs();
        o.tapped = vec![
            tap(
                3,
                json!({"jsonrpc":"2.0","id":"adv-banner-same-line","result":{}}),
            ),
            tap(4, json!({"jsonrpc":"2.0","id":3,"result":{}})),
        ];
        let v = judge(&probe("banner-same-line"), &o, &base());
        assert_eq!(codes(&v), ["adversarial-malformed-json-result"]);
    }

    #[test]
    fn a_coerced_boolean_id_is_an_acceptance_and_not_also_pollution() {
        let mut o = obs();
        o.tapped = vec![tap(3, json!({"jsonrpc":"2.0","id":1,"result":{}}))];
        o.issues = vec![
            Issue::new(
                &crate::catalog::runtime::STDOUT_UNEXPECTED_REQUEST_ID,
                "second reply",
            )
            .at_stdout(3, 10),
        ];
        let v = judge(&probe("boolean-id"), &o, &base());
        assert_eq!(codes(&v), ["adversarial-invalid-request-result"]);
    }

    #[test]
    fn a_parse_error_reply_is_fine_but_not_for_a_notification() {
        let mut o = obs();
        o.tapped = vec![tap(
            3,
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}),
        )];
        let v = judge(&probe("malformed-json"), &o, &base());
        assert!(v.issues.is_empty());
        assert_eq!(v.reply, "error -32700 (id null)");
        let v = judge(&probe("notification"), &o, &base());
        assert_eq!(codes(&v), ["adversarial-notification-response"]);
    }

    #[test]
    fn crash_hang_and_clean_close() {
        let mut o = obs();
        o.exit = Some((
            Duration::from_millis(200),
            ExitInfo {
                code: Some(1),
                signal: None,
            },
        ));
        o.stderr_tail = b"Traceback\nValueError: bad line\n".to_vec();
        o.follow_up = FollowUp::NotSent;
        let v = judge(&probe("debug-line"), &o, &base());
        assert_eq!(codes(&v), ["adversarial-probe-crash"]);
        assert!(v.issues[0].message.contains("ValueError: bad line"));
        o.exit = Some((
            Duration::from_millis(200),
            ExitInfo {
                code: Some(0),
                signal: None,
            },
        ));
        let v = judge(&probe("debug-line"), &o, &base());
        assert!(v.issues.is_empty());
        assert_eq!(v.session, SessionState::Closed);
        let mut o = obs();
        o.follow_up = FollowUp::Timeout;
        o.shutdown = ShutdownStage::Sigterm;
        let v = judge(&probe("crlf"), &o, &base());
        assert_eq!(codes(&v), ["adversarial-probe-timeout"]);
        assert_eq!(v.issues[0].detail_code, Some("follow-up"));
    }

    #[test]
    fn the_truncated_frame_owns_the_end_of_the_session() {
        let mut o = obs();
        o.follow_up = FollowUp::NotSent;
        o.stdin_closed_at = Some(Duration::from_millis(120));
        o.exit = Some((
            Duration::from_millis(300),
            ExitInfo {
                code: Some(1),
                signal: None,
            },
        ));
        let v = judge(&probe("truncated-eof"), &o, &base());
        assert_eq!(codes(&v), ["adversarial-probe-crash"]);
        // Not the probe's doing when the server always exits non-zero on EOF.
        let v = judge(
            &probe("truncated-eof"),
            &o,
            &Baseline {
                eof_exit_clean: false,
                ..base()
            },
        );
        assert!(v.issues.is_empty());
        o.exit = None;
        o.shutdown = ShutdownStage::Sigkill;
        let v = judge(&probe("truncated-eof"), &o, &base());
        assert_eq!(codes(&v), ["adversarial-probe-timeout"]);
    }

    #[test]
    fn a_follow_up_error_is_inherited_state_and_a_lost_valid_request_too() {
        let mut o = obs();
        o.follow_up = FollowUp::Error {
            code: -32602,
            message: "ping takes no params".into(),
        };
        let v = judge(&probe("tools-call-string-params"), &o, &base());
        assert_eq!(codes(&v), ["adversarial-follow-up-failed"]);
        assert_eq!(v.issues[0].detail_code, Some("error-reply"));
        let v = judge(&probe("debug-line"), &obs(), &base());
        assert_eq!(v.issues[0].detail_code, Some("request-lost"));
    }

    #[test]
    fn new_pollution_is_reported_and_known_pollution_is_not() {
        let mut o = obs();
        o.issues = vec![
            Issue::new(
                &crate::catalog::runtime::STDOUT_NON_JSON,
                "stdout line 3 is not JSON",
            )
            .at_stdout(3, 200)
            .evidence("b\"bad input\\n\""),
            Issue::new(
                &crate::catalog::runtime::STDOUT_NON_JSON,
                "stdout line 1 is not JSON",
            )
            .at_stdout(1, 0)
            .evidence("b\"banner\\n\""),
        ];
        let mut b = base();
        b.stdout_evidence.insert("b\"banner\\n\"".into());
        let v = judge(&probe("malformed-json"), &o, &b);
        assert_eq!(codes(&v), ["adversarial-probe-invalid-stdout"]);
        assert_eq!(v.issues[0].fields["stdoutCode"], "stdout-non-json");
    }

    #[test]
    fn system_call_effects_are_one_finding_each_with_a_count_and_ipc_is_never_one() {
        let e = |ms: u64, kind, summary: &str| Effect {
            kind,
            at: Duration::from_millis(ms),
            phase: Phase::Adversarial,
            after: "request tools/call #3".into(),
            summary: summary.into(),
            detail: json!({}),
        };
        let lookup =
            "DNS lookup of api.example (A, AAAA) to 10.0.0.53:53/udp (refused by the guard)";
        let mut o = obs();
        o.effects = Some(vec![
            e(110, EffectKind::Ipc, "connect unix /var/run/nscd/socket"),
            e(120, EffectKind::Dns, lookup),
            e(125, EffectKind::Dns, lookup),
            e(130, EffectKind::Network, "connect tcp 127.0.0.1:8080"),
            e(
                140,
                EffectKind::Exec,
                "`ssh deploy@host uptime` (/usr/bin/ssh)",
            ),
        ]);
        let v = judge(
            &probe("invalid-params"),
            &Observation {
                reply: Some(RequestReply::Error {
                    code: -32602,
                    message: "bad".into(),
                }),
                ..o
            },
            &base(),
        );
        assert_eq!(
            codes(&v),
            [
                "adversarial-side-effect-network",
                "adversarial-side-effect-network",
                "adversarial-side-effect-process"
            ]
        );
        let details: Vec<Option<&str>> = v.issues.iter().map(|i| i.detail_code).collect();
        assert_eq!(details, [Some("dns"), Some("connect"), Some("exec")]);
        assert!(v.issues[0].message.contains("api.example (A, AAAA)"));
        assert!(
            v.issues[0].message.contains("(2 times)"),
            "{}",
            v.issues[0].message
        );
        assert_eq!(v.side_effects.len(), 4, "IPC is not a side effect");
    }

    #[test]
    fn effects_between_the_frame_and_stdin_close_are_side_effects() {
        let e = |ms: u64, kind| Effect {
            kind,
            at: Duration::from_millis(ms),
            phase: Phase::Adversarial,
            after: "raw".into(),
            summary: "POST http://canary/deploy".into(),
            detail: json!({}),
        };
        let mut o = obs();
        o.effects = Some(vec![
            e(50, EffectKind::Process),
            e(130, EffectKind::Http),
            e(850, EffectKind::Logged),
        ]);
        let v = judge(
            &probe("invalid-params"),
            &Observation {
                reply: Some(RequestReply::Error {
                    code: -32602,
                    message: "bad".into(),
                }),
                ..o
            },
            &base(),
        );
        assert_eq!(codes(&v), ["adversarial-side-effect-http"]);
        assert!(
            v.issues[0].message.contains("30 ms after"),
            "{}",
            v.issues[0].message
        );
        assert!(v.issues[0].message.contains("error -32602"));
    }

    #[test]
    fn request_probes_expect_their_error() {
        let mut o = obs();
        o.reply = Some(RequestReply::Error {
            code: -32603,
            message: "oops".into(),
        });
        let v = judge(&probe("invalid-method"), &o, &base());
        assert_eq!(v.issues[0].severity, Severity::Warning);
        assert_eq!(v.issues[0].detail_code, Some("wrong-error-code"));
        o.reply = Some(RequestReply::Result(
            json!({"content": [], "isError": true}),
        ));
        assert!(
            judge(&probe("invalid-params"), &o, &base())
                .issues
                .is_empty()
        );
        o.reply = Some(RequestReply::Result(json!({})));
        assert_eq!(
            codes(&judge(&probe("invalid-method"), &o, &base())),
            ["adversarial-invalid-method-result"]
        );
    }
}
