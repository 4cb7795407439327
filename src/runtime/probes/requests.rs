//! Explicit operations: each `--request` (and, later, config requests and safe tool calls).

use super::{exit_detail, stdout_closed_issue};
use crate::catalog::{Severity, runtime as rules};
use crate::issue::{Issue, Phase};
use crate::runtime::record::{OperationRecord, OperationStatus};
use crate::runtime::session::{Outcome, Reply, Session};
use serde_json::Value;

/// One operation to send after the handshake.
#[derive(Debug, Clone)]
pub struct OperationSpec {
    pub method: String,
    pub params: Option<Value>,
    /// `cli-request`, `config-request`, `safe-tool-call`.
    pub source: &'static str,
    pub safe_tool_call_name: Option<String>,
}

pub struct Policy {
    /// Error replies to explicit operations are warnings instead of errors.
    pub allow_errors: bool,
}

pub async fn run(s: &mut Session, ops: &[OperationSpec], policy: &Policy) -> Vec<OperationRecord> {
    let mut out = Vec::new();
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
        };
        if s.is_dead() || !s.initialized {
            out.push(rec);
            continue;
        }
        s.phase = Phase::Operation;
        let started = s.now();
        let outcome = s.request(&op.method, op.params.clone()).await;
        rec.duration = Some(s.now().saturating_sub(started));
        let method = &op.method;
        let timeout_ms = s.cfg.timeout.as_millis() as u64;
        match outcome {
            Outcome::Reply(Reply::Result { value, .. }) => {
                rec.status = OperationStatus::Responded;
                rec.result = Some(value);
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
                s.record(
                    Issue::new(
                        &rules::OPERATION_MISSING_RESPONSE,
                        format!(
                            "the server exited with {} while {method} was waiting for its response",
                            exit.describe()
                        ),
                    )
                    .detail(exit_detail(&exit, "during-operation"))
                    .field("method", method.as_str()),
                );
            }
            Outcome::StdoutClosed => {
                rec.status = OperationStatus::MissingResponse;
                s.record(stdout_closed_issue(method));
            }
        }
        out.push(rec);
    }
    out
}
