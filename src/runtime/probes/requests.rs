//! Explicit operations: each `--request`, config request and safe tool call.

use super::{exit_detail, stdout_closed_issue};
use crate::catalog::{Severity, protocol as protocol_rules, runtime as rules};
use crate::issue::{Issue, Phase};
use crate::runtime::checks::lists::{self, ListKind};
use crate::runtime::checks::tool_result;
use crate::runtime::checks::tools::{self, NameRule, ToolSummary};
use crate::runtime::record::{OperationRecord, OperationStatus};
use crate::runtime::session::{Outcome, Reply, Session};
use serde_json::Value;

/// Where an explicit operation was asked for (the JSON report's `operations[].source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationSource {
    /// `--request` (with its `--params`).
    CliRequest,
    /// Config `request`/`requests`.
    ConfigRequest,
    /// Config `safeToolCalls`.
    SafeToolCall,
}

impl OperationSource {
    pub fn as_str(self) -> &'static str {
        match self {
            OperationSource::CliRequest => "cli-request",
            OperationSource::ConfigRequest => "config-request",
            OperationSource::SafeToolCall => "safe-tool-call",
        }
    }
}

/// One operation to send after the handshake.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationSpec {
    pub method: String,
    pub params: Option<Value>,
    pub source: OperationSource,
    pub safe_tool_call_name: Option<String>,
}

pub struct Policy {
    /// Error replies to explicit operations (and `isError` tool results) are warnings instead of
    /// errors.
    pub allow_errors: bool,
    /// Tool definitions from the capability probe, for judging call results; `None` when tools
    /// were not listed (then an explicit `tools/list` is judged here).
    pub tools: Option<Vec<Value>>,
    pub name_rule: NameRule,
    /// The capabilities the server advertised (`Value::Null` when unknown): a method of a
    /// capability it did not advertise may rightly be refused.
    pub capabilities: Value,
}

/// What the operations produced besides their records.
#[derive(Debug, Default)]
pub struct Extra {
    /// The `toolSchema` summary of an explicit `tools/list` judged here.
    pub tool_schema: Option<ToolSummary>,
}

pub async fn run(
    s: &mut Session,
    ops: &[OperationSpec],
    policy: &mut Policy,
) -> (Vec<OperationRecord>, Extra) {
    let mut out = Vec::new();
    let mut extra = Extra::default();
    for op in ops {
        let mut rec = OperationRecord {
            method: op.method.clone(),
            has_params: op.params.is_some(),
            source: op.source,
            safe_tool_call_name: op.safe_tool_call_name.clone(),
            status: OperationStatus::Skipped,
            duration: None,
            error: None,
            result: None,
            request_id: None,
        };
        if s.is_dead() || !s.initialized {
            out.push(rec);
            continue;
        }
        s.phase = Phase::Operation;
        if let Some((id, sent_at)) = s.unanswered_before(&op.method) {
            // The same method already went unanswered in this process: not waited for twice.
            let timeout_ms = s.cfg.timeout.as_millis() as u64;
            rec.status = OperationStatus::Timeout;
            rec.request_id = Some(id.clone());
            s.record(
                Issue::new(
                    &rules::OPERATION_TIMEOUT,
                    format!(
                        "{} was not answered: the same method, sent as request #{id} at {} ms, got no reply within {timeout_ms} ms in this process, so the guard did not wait for it again",
                        op.method,
                        sent_at.as_millis()
                    ),
                )
                .detail("request-timeout")
                .field("method", op.method.as_str())
                .field("timeoutMs", timeout_ms)
                .field("sameMethodUnansweredAtMs", sent_at.as_millis() as u64),
            );
            out.push(rec);
            continue;
        }
        let started = s.now();
        let outcome = s.request(&op.method, op.params.clone()).await;
        rec.request_id = Some(s.last_request_id());
        rec.duration = Some(s.now().saturating_sub(started));
        let method = &op.method;
        let timeout_ms = s.cfg.timeout.as_millis() as u64;
        match outcome {
            Outcome::Reply(Reply::Result { value, .. }) => {
                rec.status = OperationStatus::Responded;
                super::check_result_type(s, method, &value);
                judge_result(s, op, &value, policy, &mut extra);
                rec.result = Some(value);
            }
            Outcome::Reply(Reply::Error { error, .. })
                if error.code == -32601
                    && let Some(capability) = unadvertised(method, &policy.capabilities) =>
            {
                rec.status = OperationStatus::Error;
                rec.error = Some((error.code, error.message.clone()));
                s.record(
                    Issue::new(
                        &rules::OPERATION_NOT_ADVERTISED,
                        format!(
                            "{method} was refused with -32601 ({:?}), as it should be: the server does not advertise the {capability:?} capability",
                            error.message
                        ),
                    )
                    .field("method", method.as_str())
                    .field("capability", capability),
                );
            }
            Outcome::Reply(Reply::Error { error, .. }) => {
                rec.status = OperationStatus::Error;
                rec.error = Some((error.code, error.message.clone()));
                let severity = if policy.allow_errors {
                    Severity::Warning
                } else {
                    Severity::Error
                };
                s.record(
                    Issue::new(
                        &rules::OPERATION_ERROR,
                        format!(
                            "{method} was answered with error {}: {:?}",
                            error.code, error.message
                        ),
                    )
                    .severity(severity)
                    .field("method", method.as_str()),
                );
            }
            Outcome::Reply(Reply::Broken { .. }) | Outcome::Misaddressed => {
                rec.status = OperationStatus::Invalid;
            }
            Outcome::OutputLimit => rec.status = OperationStatus::MissingResponse,
            Outcome::Timeout => {
                rec.status = OperationStatus::Timeout;
                s.record(
                    Issue::new(
                        &rules::OPERATION_TIMEOUT,
                        format!("the server did not answer {method} within {timeout_ms} ms"),
                    )
                    .detail("request-timeout")
                    .field("method", method.as_str())
                    .field("timeoutMs", timeout_ms),
                );
            }
            Outcome::Exited(exit) => {
                rec.status = OperationStatus::MissingResponse;
                s.record(super::with_exit(
                    Issue::new(
                        &rules::OPERATION_MISSING_RESPONSE,
                        format!(
                            "the server exited with {} while {method} was waiting for its response",
                            exit.describe()
                        ),
                    )
                    .detail(exit_detail(&exit, "during-operation"))
                    .field("method", method.as_str()),
                    &exit,
                ));
            }
            Outcome::StdoutClosed => {
                rec.status = OperationStatus::MissingResponse;
                s.record(stdout_closed_issue(method));
            }
        }
        out.push(rec);
    }
    (out, extra)
}

/// The capability `method` belongs to when the server's advertised capabilities (an object)
/// lack it.
fn unadvertised(method: &str, capabilities: &Value) -> Option<&'static str> {
    let advertised = capabilities.as_object()?;
    crate::protocol::capability_of(method).filter(|c| !advertised.contains_key(*c))
}

/// Judges the result of an explicit `tools/call` (content, `isError`, `structuredContent`) and of
/// an explicit `tools/list` when the capability probe did not list tools.
fn judge_result(
    s: &mut Session,
    op: &OperationSpec,
    value: &Value,
    policy: &mut Policy,
    extra: &mut Extra,
) {
    let revision = s
        .negotiated
        .clone()
        .unwrap_or_else(|| s.cfg.protocol.clone());
    match op.method.as_str() {
        "tools/call" => {
            let name = op
                .params
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let output_schema = policy.tools.as_ref().and_then(|tools| {
                tools
                    .iter()
                    .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
                    .and_then(|t| t.get("outputSchema"))
                    .filter(|o| o.is_object())
                    .cloned()
            });
            let verdict = tool_result::check(value, name, output_schema.as_ref(), &revision);
            for i in verdict.issues {
                s.record(i);
            }
            if verdict.is_error {
                let severity = if policy.allow_errors {
                    Severity::Warning
                } else {
                    Severity::Error
                };
                let text = value
                    .get("content")
                    .and_then(Value::as_array)
                    .and_then(|c| c.iter().find_map(|b| b.get("text").and_then(Value::as_str)))
                    .unwrap_or("");
                s.record(
                    Issue::new(
                        &protocol_rules::TOOL_RESULT_IS_ERROR,
                        format!(
                            "tool {name:?} returned isError: true: {}",
                            crate::runtime::checks::initialize::short(&Value::from(text))
                        ),
                    )
                    .severity(severity)
                    .field("tool", name),
                );
            }
        }
        "tools/list" if policy.tools.is_none() => {
            let mut issues = Vec::new();
            if let Some(page) = lists::page(ListKind::Tools, value, 1, &mut issues) {
                let (found, summary) = tools::check(&page.items, &revision, policy.name_rule);
                issues.extend(found);
                extra.tool_schema = Some(summary);
                policy.tools = Some(page.items);
            }
            for i in issues {
                s.record(i);
            }
        }
        _ => {}
    }
}
