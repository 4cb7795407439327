//! Notifications the server sent for capabilities it did not declare.

use crate::catalog::protocol as rules;
use crate::issue::{Issue, Phase};
use crate::runtime::session::ServerMessage;
use serde_json::Value;
use std::collections::BTreeMap;

/// One issue per kind of undeclared notification (first occurrence, with the count).
pub fn undeclared(messages: &[ServerMessage], capabilities: &Value) -> Vec<Issue> {
    let cap = |key: &str| capabilities.get(key).filter(|v| v.is_object());
    let flag = |key: &str, field: &str| {
        cap(key)
            .and_then(|c| c.get(field))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    let mut found: BTreeMap<&'static str, (String, Phase, usize, String)> = BTreeMap::new();
    for m in messages.iter().filter(|m| !m.is_request) {
        let (detail, missing) = match m.method.as_str() {
            "notifications/message" if cap("logging").is_none() => {
                ("logging", "the logging capability")
            }
            "notifications/tools/list_changed" if !flag("tools", "listChanged") => {
                ("tools-list-changed", "tools.listChanged: true")
            }
            "notifications/resources/list_changed" if !flag("resources", "listChanged") => {
                ("resources-list-changed", "resources.listChanged: true")
            }
            "notifications/prompts/list_changed" if !flag("prompts", "listChanged") => {
                ("prompts-list-changed", "prompts.listChanged: true")
            }
            "notifications/resources/updated" if !flag("resources", "subscribe") => {
                ("resources-updated", "resources.subscribe: true")
            }
            _ => continue,
        };
        found
            .entry(detail)
            .or_insert_with(|| (m.method.clone(), m.phase, 0, missing.to_string()))
            .2 += 1;
    }
    found
        .into_iter()
        .map(|(detail, (method, phase, count, missing))| {
            let times = if count == 1 {
                String::new()
            } else {
                format!(" ({count} times)")
            };
            Issue::new(
                &rules::NOTIFICATION_UNDECLARED_CAPABILITY,
                format!("the server sent {method:?}{times} without declaring {missing}"),
            )
            .detail(detail)
            .phase(phase)
            .field("method", method)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn note(method: &str) -> ServerMessage {
        ServerMessage {
            at: Duration::ZERO,
            phase: Phase::Operation,
            method: method.into(),
            is_request: false,
        }
    }

    #[test]
    fn notifications_need_their_capability() {
        let msgs = [
            note("notifications/message"),
            note("notifications/message"),
            note("notifications/tools/list_changed"),
            note("notifications/progress"),
        ];
        let issues = undeclared(&msgs, &json!({"tools": {}}));
        let got: Vec<_> = issues.iter().map(|i| i.detail_code).collect();
        assert_eq!(got, [Some("logging"), Some("tools-list-changed")]);
        assert!(issues[0].message.contains("2 times"));
        assert!(
            undeclared(
                &msgs[..3],
                &json!({"logging": {}, "tools": {"listChanged": true}})
            )
            .is_empty()
        );
    }
}
