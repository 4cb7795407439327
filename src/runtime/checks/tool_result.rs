//! A `tools/call` result: content blocks of the negotiated revision, `isError`, and — when the
//! tool declares an `outputSchema` (from 2025-06-18) — `structuredContent` present and valid.

use super::initialize::short;
use super::schema::{self, Declared, Dialect};
use crate::catalog::protocol as rules;
use crate::issue::Issue;
use serde_json::Value;

/// The verdict on one call result.
#[derive(Debug, Default)]
pub struct Verdict {
    pub issues: Vec<Issue>,
    /// The tool reported a failure (`isError: true`); the caller decides the severity.
    pub is_error: bool,
}

/// Content block types each revision defines.
fn known_types(revision: &str) -> &'static [&'static str] {
    if revision >= "2025-06-18" {
        &["text", "image", "audio", "resource", "resource_link"]
    } else if revision >= "2025-03-26" {
        &["text", "image", "audio", "resource"]
    } else {
        &["text", "image", "resource"]
    }
}

pub fn check(result: &Value, tool: &str, output_schema: Option<&Value>, revision: &str) -> Verdict {
    let mut v = Verdict::default();
    let invalid = |detail: &'static str, msg: String| {
        Issue::new(&rules::TOOL_RESULT_INVALID, msg)
            .detail(detail)
            .field("tool", tool)
    };
    let Some(obj) = result.as_object() else {
        v.issues.push(invalid(
            "not-an-object",
            format!(
                "the tools/call result of {tool:?} is {}, expected an object",
                short(result)
            ),
        ));
        return v;
    };
    match obj.get("content") {
        None => v.issues.push(invalid(
            "content-missing",
            format!("the tools/call result of {tool:?} has no content array"),
        )),
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                if let Some((detail, why)) = block_problem(block, revision) {
                    v.issues.push(invalid(
                        detail,
                        format!("content block #{} of the {tool:?} result {why}", i + 1),
                    ));
                }
            }
        }
        Some(other) => v.issues.push(invalid(
            "content-not-an-array",
            format!(
                "the tools/call result of {tool:?} has content {}, expected an array",
                short(other)
            ),
        )),
    }
    match obj.get("isError") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => v.is_error = true,
        Some(other) => v.issues.push(invalid(
            "is-error-not-boolean",
            format!(
                "the tools/call result of {tool:?} has isError {}, expected a boolean",
                short(other)
            ),
        )),
    }
    let structured = obj.get("structuredContent");
    if let Some(s) = structured.filter(|s| !s.is_object()) {
        v.issues.push(invalid(
            "structured-content-not-an-object",
            format!(
                "the tools/call result of {tool:?} has structuredContent {}, expected an object",
                short(s)
            ),
        ));
        return v;
    }
    let Some(output_schema) = output_schema else {
        return v;
    };
    if revision < "2025-06-18" || v.is_error {
        return v;
    }
    let Some(structured) = structured else {
        v.issues.push(
            Issue::new(
                &rules::TOOL_RESULT_STRUCTURED_CONTENT_MISSING,
                format!(
                    "tool {tool:?} declares an outputSchema but its result has no structuredContent"
                ),
            )
            .field("tool", tool),
        );
        return v;
    };
    let Declared::Known(dialect) =
        schema::dialect_of(output_schema, Dialect::default_for(revision))
    else {
        return v; // reported on the schema itself
    };
    // A schema that cannot be compiled (remote $ref, invalid) is reported with the tool list.
    if let Ok(validator) = schema::compile(output_schema, dialect) {
        let errors = schema::instance_errors(&validator, structured, 3);
        if !errors.is_empty() {
            v.issues.push(
                Issue::new(
                    &rules::TOOL_RESULT_STRUCTURED_CONTENT_INVALID,
                    format!(
                        "the structuredContent of tool {tool:?} does not match its outputSchema: {}",
                        errors.join("; ")
                    ),
                )
                .field("tool", tool),
            );
        }
    }
    v
}

fn block_problem(block: &Value, revision: &str) -> Option<(&'static str, String)> {
    let Some(obj) = block.as_object() else {
        return Some((
            "content-block-invalid",
            format!("is {}, expected an object", short(block)),
        ));
    };
    let Some(kind) = obj.get("type").and_then(Value::as_str) else {
        return Some(("content-block-invalid", "has no string type".into()));
    };
    if !known_types(revision).contains(&kind) {
        return Some((
            "content-type-unknown",
            format!(
                "has type {kind:?}, which {revision} does not define (known: {})",
                known_types(revision).join(", ")
            ),
        ));
    }
    let need: &[&str] = match kind {
        "text" => &["text"],
        "image" | "audio" => &["data", "mimeType"],
        "resource_link" => &["uri", "name"],
        _ => &[],
    };
    for field in need {
        if !obj.get(*field).is_some_and(Value::is_string) {
            return Some((
                "content-block-invalid",
                format!("of type {kind:?} has no string {field}"),
            ));
        }
    }
    if kind == "resource" {
        let ok = obj
            .get("resource")
            .and_then(Value::as_object)
            .is_some_and(|r| {
                r.get("uri").is_some_and(Value::is_string)
                    && (r.get("text").is_some_and(Value::is_string)
                        || r.get("blob").is_some_and(Value::is_string))
            });
        if !ok {
            return Some((
                "content-block-invalid",
                "of type \"resource\" has no resource object with a uri and text or blob".into(),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codes(v: &Verdict) -> Vec<(&'static str, Option<&'static str>)> {
        v.issues.iter().map(|i| (i.code(), i.detail_code)).collect()
    }

    #[test]
    fn content_blocks_follow_the_revision() {
        let ok = json!({"content": [{"type": "text", "text": "hi"}]});
        assert!(check(&ok, "t", None, "2025-11-25").issues.is_empty());
        let link = json!({"content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]});
        assert!(check(&link, "t", None, "2025-06-18").issues.is_empty());
        assert_eq!(
            codes(&check(&link, "t", None, "2025-03-26")),
            [("tool-result-invalid", Some("content-type-unknown"))]
        );
        assert_eq!(
            codes(&check(&json!({"content": "x"}), "t", None, "2025-11-25")),
            [("tool-result-invalid", Some("content-not-an-array"))]
        );
        assert_eq!(
            codes(&check(
                &json!({"content": [{"type": "text"}]}),
                "t",
                None,
                "2025-11-25"
            )),
            [("tool-result-invalid", Some("content-block-invalid"))]
        );
        let v = check(
            &json!({"content": [], "isError": true}),
            "t",
            None,
            "2025-11-25",
        );
        assert!(v.is_error && v.issues.is_empty());
    }

    #[test]
    fn structured_content_must_match_the_output_schema() {
        let schema =
            json!({"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]});
        let missing = json!({"content": [{"type": "text", "text": "21"}]});
        assert_eq!(
            codes(&check(&missing, "w", Some(&schema), "2025-11-25")),
            [("tool-result-structured-content-missing", None)]
        );
        assert!(
            check(&missing, "w", Some(&schema), "2025-03-26")
                .issues
                .is_empty(),
            "no outputSchema rule before 2025-06-18"
        );
        let wrong = json!({"content": [], "structuredContent": {"t": "21"}});
        assert_eq!(
            codes(&check(&wrong, "w", Some(&schema), "2025-11-25")),
            [("tool-result-structured-content-invalid", None)]
        );
        let good = json!({"content": [], "structuredContent": {"t": 21}});
        assert!(
            check(&good, "w", Some(&schema), "2025-11-25")
                .issues
                .is_empty()
        );
        let failed = json!({"content": [], "isError": true});
        assert!(
            check(&failed, "w", Some(&schema), "2025-11-25")
                .issues
                .is_empty(),
            "a tool error needs no structuredContent"
        );
    }
}
