//! Validates an `initialize` result (legacy era).

use crate::catalog::runtime as rules;
use crate::issue::Issue;
use crate::protocol;
use serde_json::Value;

/// The verdict on an initialize result: the issues, and the negotiated revision when it is usable.
#[derive(Debug, Default)]
pub struct Verdict {
    pub issues: Vec<Issue>,
    pub negotiated: Option<String>,
    /// False when an error-level issue means the handshake must not go on.
    pub usable: bool,
}

pub fn check(result: &Value, requested: &str) -> Verdict {
    let mut v = Verdict::default();
    let Value::Object(obj) = result else {
        v.issues.push(Issue::new(
            &rules::INITIALIZE_INVALID_RESULT,
            format!(
                "the initialize result is {}, expected an object",
                short(result)
            ),
        ));
        return v;
    };
    match obj.get("protocolVersion") {
        None => v.issues.push(Issue::new(
            &rules::INITIALIZE_MISSING_PROTOCOL_VERSION,
            "the initialize result has no protocolVersion",
        )),
        Some(Value::String(version)) => {
            if !protocol::is_known(version) {
                v.issues.push(
                    Issue::new(
                        &rules::INITIALIZE_INVALID_PROTOCOL_VERSION,
                        format!(
                            "the server negotiated protocolVersion {version:?}, which is not a published MCP revision (requested {requested:?})"
                        ),
                    )
                    .detail("unknown-revision"),
                );
            } else if protocol::is_newer(version, requested) {
                v.issues.push(
                    Issue::new(
                        &rules::INITIALIZE_INVALID_PROTOCOL_VERSION,
                        format!(
                            "the server negotiated protocolVersion {version:?}, newer than the requested {requested:?}"
                        ),
                    )
                    .detail("newer-than-requested"),
                );
            } else {
                v.negotiated = Some(version.clone());
            }
        }
        Some(other) => v.issues.push(
            Issue::new(
                &rules::INITIALIZE_INVALID_PROTOCOL_VERSION,
                format!(
                    "the initialize result has protocolVersion {}, expected a string",
                    short(other)
                ),
            )
            .detail("not-a-string"),
        ),
    }
    match obj.get("capabilities") {
        None => v.issues.push(Issue::new(
            &rules::INITIALIZE_MISSING_CAPABILITIES,
            "the initialize result has no capabilities object",
        )),
        Some(Value::Object(caps)) => {
            for (key, value) in caps {
                if !value.is_object() {
                    v.issues.push(Issue::new(
                        &rules::INITIALIZE_INVALID_CAPABILITIES,
                        format!("capabilities.{key} is {}, expected an object", short(value)),
                    ));
                }
            }
        }
        Some(other) => v.issues.push(Issue::new(
            &rules::INITIALIZE_INVALID_CAPABILITIES,
            format!(
                "the initialize result has capabilities {}, expected an object",
                short(other)
            ),
        )),
    }
    match obj.get("serverInfo") {
        None => v.issues.push(Issue::new(
            &rules::INITIALIZE_MISSING_SERVER_INFO,
            "the initialize result has no serverInfo",
        )),
        Some(Value::Object(info)) => {
            let mut bad = Vec::new();
            for field in ["name", "version"] {
                match info.get(field) {
                    Some(Value::String(_)) => {}
                    Some(other) => bad.push(format!("serverInfo.{field} is {}", short(other))),
                    None => bad.push(format!("serverInfo.{field} is missing")),
                }
            }
            if !bad.is_empty() {
                v.issues.push(Issue::new(
                    &rules::INITIALIZE_INVALID_SERVER_INFO,
                    format!("{}; expected strings", bad.join(" and ")),
                ));
            }
        }
        Some(other) => v.issues.push(Issue::new(
            &rules::INITIALIZE_INVALID_SERVER_INFO,
            format!(
                "the initialize result has serverInfo {}, expected an object",
                short(other)
            ),
        )),
    }
    v.usable = v.negotiated.is_some() && !v.issues.iter().any(Issue::is_error);
    v
}

/// A JSON value shown briefly.
pub fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 60 {
        let mut cut = 60;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &text[..cut])
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codes(v: &Value, requested: &str) -> Vec<(&'static str, Option<&'static str>)> {
        check(v, requested)
            .issues
            .iter()
            .map(|i| (i.code(), i.detail_code))
            .collect()
    }

    #[test]
    fn a_good_result_is_usable() {
        let v = json!({"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}});
        let verdict = check(&v, "2025-11-25");
        assert!(verdict.issues.is_empty());
        assert!(verdict.usable);
        assert_eq!(verdict.negotiated.as_deref(), Some("2025-06-18"));
    }

    #[test]
    fn each_defect_has_its_code() {
        assert_eq!(
            codes(&json!("ok"), "2025-11-25"),
            [("initialize-invalid-result", None)]
        );
        assert_eq!(
            codes(
                &json!({"capabilities":{},"serverInfo":{"name":"x","version":"1"}}),
                "2025-11-25"
            ),
            [("initialize-missing-protocol-version", None)]
        );
        assert_eq!(
            codes(
                &json!({"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}),
                "2025-03-26"
            ),
            [(
                "initialize-invalid-protocol-version",
                Some("newer-than-requested")
            )]
        );
        assert_eq!(
            codes(
                &json!({"protocolVersion":"1.0","capabilities":{},"serverInfo":{"name":"x","version":"1"}}),
                "2025-11-25"
            ),
            [(
                "initialize-invalid-protocol-version",
                Some("unknown-revision")
            )]
        );
        assert_eq!(
            codes(
                &json!({"protocolVersion":"2025-11-25","capabilities":[],"serverInfo":{"name":"x","version":"1"}}),
                "2025-11-25"
            ),
            [("initialize-invalid-capabilities", None)]
        );
        assert_eq!(
            codes(
                &json!({"protocolVersion":"2025-11-25","serverInfo":{"name":"x","version":"1"}}),
                "2025-11-25"
            ),
            [("initialize-missing-capabilities", None)]
        );
        let v = check(
            &json!({"protocolVersion":"2025-11-25","capabilities":{}}),
            "2025-11-25",
        );
        assert_eq!(v.issues[0].code(), "initialize-missing-server-info");
        assert!(v.usable, "a missing serverInfo is a warning only");
        assert_eq!(
            codes(
                &json!({"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x"}}),
                "2025-11-25"
            ),
            [("initialize-invalid-server-info", None)]
        );
    }
}
