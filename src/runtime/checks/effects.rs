//! The no-effect proof's own check: effects per operation, and whether the recorder was ever
//! seen to work. Pure.

use crate::catalog::adversarial as rules;
use crate::issue::{Issue, Phase};
use crate::runtime::effects::Effect;
use crate::runtime::record::{OperationRecord, OperationStatus};

/// The effects observed after an operation's request and before the next message of the guard.
pub fn of_operation<'a>(op: &OperationRecord, effects: &'a [Effect]) -> Vec<&'a Effect> {
    match op.effects_tag() {
        Some(tag) => effects
            .iter()
            .filter(|e| e.phase == Phase::Operation && e.after == tag)
            .collect(),
        None => Vec::new(),
    }
}

/// A note when safe tool calls succeeded and none of them produced an observable effect: the
/// absence of effects under hostile input then proves little.
/// `observers` names the observers that ran (`the system-call observer, the canary proxy`).
pub fn unproven(ops: &[OperationRecord], effects: &[Effect], observers: &str) -> Option<Issue> {
    let calls: Vec<&OperationRecord> = ops
        .iter()
        .filter(|o| {
            o.source == crate::runtime::probes::requests::OperationSource::SafeToolCall
                && o.status == OperationStatus::Responded
        })
        .collect();
    if calls.is_empty() || calls.iter().any(|o| !of_operation(o, effects).is_empty()) {
        return None;
    }
    let names: Vec<&str> = calls
        .iter()
        .filter_map(|o| o.safe_tool_call_name.as_deref())
        .collect();
    Some(
        Issue::new(
            &rules::EFFECTS_RECORDER_UNPROVEN,
            format!(
                "the safe tool call(s) {} produced no effect the guard could observe ({observers}): zero effects under hostile input is not evidence by itself",
                names.join(", ")
            ),
        )
        .phase(Phase::Operation),
    )
}
