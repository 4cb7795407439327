//! Tool metadata from `tools/list`: names (the spec rule and the stricter client rule), unique
//! names, descriptions, and `inputSchema`/`outputSchema` as object schemas that are valid JSON
//! Schema of their declared dialect (meta-schema validation from 2025-11-25; a warning before).

use super::initialize::short;
use super::schema::{self, Declared, Dialect};
use crate::catalog::{Rule, Severity, protocol as rules};
use crate::issue::Issue;
use serde_json::Value;
use std::collections::BTreeMap;

/// Which tool-name rule is the contract (`--tool-name-rule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NameRule {
    /// The spec rule is an error; the strict-client rule a warning.
    #[default]
    Spec,
    /// The strict-client rule `^[a-zA-Z0-9_-]{1,64}$` is an error too.
    StrictClient,
}

impl NameRule {
    pub fn as_str(self) -> &'static str {
        match self {
            NameRule::Spec => "spec",
            NameRule::StrictClient => "strict-client",
        }
    }

    pub fn parse(text: &str) -> Option<NameRule> {
        match text {
            "spec" => Some(NameRule::Spec),
            "strict-client" => Some(NameRule::StrictClient),
            _ => None,
        }
    }
}

/// The reference's `toolSchema` summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSummary {
    pub tool_count: usize,
    pub tool_names: Vec<String>,
    pub valid_tool_count: usize,
    pub warning_count: usize,
    pub error_count: usize,
    pub duplicate_names: Vec<String>,
}

/// How many meta-schema violations one message lists.
const SCHEMA_ERRORS_SHOWN: usize = 3;

/// Checks every tool of a (complete, de-paginated) `tools/list`.
pub fn check(tools: &[Value], revision: &str, rule: NameRule) -> (Vec<Issue>, ToolSummary) {
    let mut all = Vec::new();
    let mut summary = ToolSummary {
        tool_count: tools.len(),
        ..ToolSummary::default()
    };
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (n, tool) in tools.iter().enumerate() {
        let issues = check_one(n, tool, revision, rule);
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            summary.tool_names.push(name.to_string());
            *counts.entry(name).or_default() += 1;
        }
        let errors = issues
            .iter()
            .filter(|i| i.severity == Severity::Error)
            .count();
        summary.error_count += errors;
        summary.warning_count += issues
            .iter()
            .filter(|i| i.severity == Severity::Warning)
            .count();
        if errors == 0 {
            summary.valid_tool_count += 1;
        }
        all.extend(issues);
    }
    for (name, count) in counts {
        if count > 1 {
            summary.duplicate_names.push(name.to_string());
            summary.error_count += 1;
            all.push(
                Issue::new(
                    &rules::TOOL_NAME_DUPLICATE,
                    format!("tool name {name:?} appears {count} times in tools/list"),
                )
                .field("tool", name),
            );
        }
    }
    summary.tool_names.sort();
    (all, summary)
}

fn check_one(n: usize, tool: &Value, revision: &str, rule: NameRule) -> Vec<Issue> {
    let mut issues = Vec::new();
    let Some(obj) = tool.as_object() else {
        issues.push(
            Issue::new(
                &rules::TOOLS_LIST_INVALID_RESULT,
                format!(
                    "tools/list entry #{} is {}, expected a tool object",
                    n + 1,
                    short(tool)
                ),
            )
            .detail("tool-not-an-object"),
        );
        return issues;
    };
    let label = match obj.get("name").and_then(Value::as_str) {
        Some(name) => format!("tool {name:?}"),
        None => format!("tool #{}", n + 1),
    };
    match obj.get("name") {
        None => issues.push(
            Issue::new(&rules::TOOL_NAME_INVALID, format!("{label} has no name")).detail("missing"),
        ),
        Some(Value::String(name)) => {
            if !spec_name(name) {
                issues.push(
                    Issue::new(
                        &rules::TOOL_NAME_INVALID,
                        format!(
                            "tool name {name:?} breaks the MCP name rule ^[A-Za-z0-9_.-]{{1,128}}$ ({})",
                            name_problem(name, 128, true)
                        ),
                    )
                    .detail("spec-pattern")
                    .field("tool", name.as_str()),
                );
            } else if !strict_client_name(name) {
                let severity = match rule {
                    NameRule::Spec => Severity::Warning,
                    NameRule::StrictClient => Severity::Error,
                };
                issues.push(
                    Issue::new(
                        &rules::TOOL_NAME_NOT_PORTABLE,
                        format!(
                            "tool name {name:?} breaks the strict-client rule ^[a-zA-Z0-9_-]{{1,64}}$ ({}) that Claude Desktop and others enforce",
                            name_problem(name, 64, false)
                        ),
                    )
                    .severity(severity)
                    .detail("strict-client")
                    .field("tool", name.as_str()),
                );
            }
        }
        Some(other) => issues.push(
            Issue::new(
                &rules::TOOL_NAME_INVALID,
                format!("{label} has name {}, expected a string", short(other)),
            )
            .detail("not-a-string"),
        ),
    }
    match obj.get("description") {
        None => issues.push(Issue::new(
            &rules::TOOL_DESCRIPTION_MISSING,
            format!("{label} has no description"),
        )),
        Some(Value::String(d)) if d.trim().is_empty() => issues.push(Issue::new(
            &rules::TOOL_DESCRIPTION_MISSING,
            format!("{label} has an empty description"),
        )),
        Some(Value::String(_)) => {}
        Some(other) => issues.push(
            Issue::new(
                &rules::TOOLS_LIST_INVALID_RESULT,
                format!(
                    "{label} has description {}, expected a string",
                    short(other)
                ),
            )
            .detail("field-type"),
        ),
    }
    if let Some(title) = obj.get("title").filter(|t| !t.is_string()) {
        issues.push(
            Issue::new(
                &rules::TOOLS_LIST_INVALID_RESULT,
                format!("{label} has title {}, expected a string", short(title)),
            )
            .detail("field-type"),
        );
    }
    let input = SchemaRules {
        field: "inputSchema",
        invalid: &rules::TOOL_INPUT_SCHEMA_INVALID,
        required_missing: &rules::TOOL_INPUT_SCHEMA_REQUIRED_MISSING,
    };
    match obj.get("inputSchema") {
        None => issues.push(
            Issue::new(
                &rules::TOOL_INPUT_SCHEMA_INVALID,
                format!("{label} has no inputSchema; tools without parameters declare {{\"type\": \"object\"}}"),
            )
            .detail("missing"),
        ),
        Some(s) => object_schema(&label, s, &input, revision, &mut issues),
    }
    if let Some(s) = obj.get("outputSchema") {
        let output = SchemaRules {
            field: "outputSchema",
            invalid: &rules::TOOL_OUTPUT_SCHEMA_INVALID,
            required_missing: &rules::TOOL_OUTPUT_SCHEMA_REQUIRED_MISSING,
        };
        object_schema(&label, s, &output, revision, &mut issues);
    }
    if let Some(name) = obj.get("name").and_then(Value::as_str) {
        for i in &mut issues {
            if !i.fields.contains_key("tool") {
                i.fields.insert("tool".into(), name.into());
            }
        }
    }
    issues
}

struct SchemaRules {
    field: &'static str,
    invalid: &'static Rule,
    required_missing: &'static Rule,
}

/// The rules an input or output schema shares: an object, `type: "object"`, valid against its
/// dialect's meta-schema, `required` ⊆ `properties`.
fn object_schema(
    label: &str,
    schema: &Value,
    r: &SchemaRules,
    revision: &str,
    out: &mut Vec<Issue>,
) {
    let field = r.field;
    let Some(obj) = schema.as_object() else {
        out.push(
            Issue::new(
                r.invalid,
                format!(
                    "{label} {field} is {}, expected a JSON Schema object",
                    short(schema)
                ),
            )
            .detail("not-an-object"),
        );
        return;
    };
    match obj.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        other => out.push(
            Issue::new(
                r.invalid,
                format!(
                    "{label} {field} has type {}; MCP tool schemas must have \"type\": \"object\" at the root",
                    other.map(short).unwrap_or_else(|| "missing".into())
                ),
            )
            .detail("not-object-type"),
        ),
    }
    match schema::dialect_of(schema, Dialect::default_for(revision)) {
        Declared::Known(dialect) => {
            let errors = schema::meta_errors(schema, dialect, SCHEMA_ERRORS_SHOWN);
            if !errors.is_empty() {
                // The dialect rule exists from 2025-11-25; before it, clients varied: a warning.
                let severity = if revision >= "2025-11-25" {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                out.push(
                    Issue::new(
                        r.invalid,
                        format!(
                            "{label} {field} is not valid JSON Schema {}: {}",
                            dialect.name(),
                            errors.join("; ")
                        ),
                    )
                    .severity(severity)
                    .detail("meta-schema")
                    .field("dialect", dialect.name()),
                );
            }
        }
        Declared::Unknown(uri) => out.push(Issue::new(
            &rules::TOOL_SCHEMA_DIALECT_UNKNOWN,
            format!("{label} {field} declares $schema {uri:?}, which is not a published JSON Schema dialect; its validity was not checked"),
        )),
        Declared::NotAString => out.push(Issue::new(
            &rules::TOOL_SCHEMA_DIALECT_UNKNOWN,
            format!(
                "{label} {field} has $schema {}, expected a dialect URI string",
                short(&obj["$schema"])
            ),
        )),
    }
    if let Some(Value::Array(required)) = obj.get("required") {
        let props = obj.get("properties").and_then(Value::as_object);
        let missing: Vec<String> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|name| !props.is_some_and(|p| p.contains_key(*name)))
            .map(|name| format!("{name:?}"))
            .collect();
        if !missing.is_empty() {
            out.push(Issue::new(
                r.required_missing,
                format!(
                    "{label} {field}.required lists {} but {field}.properties does not define {}",
                    missing.join(", "),
                    if missing.len() == 1 { "it" } else { "them" }
                ),
            ));
        }
    }
}

/// The spec rule: `^[A-Za-z0-9_.-]{1,128}$`.
pub fn spec_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// The strict-client rule: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn strict_client_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

fn name_problem(name: &str, max: usize, dots_ok: bool) -> String {
    if name.is_empty() {
        return "it is empty".into();
    }
    let bad: Vec<String> = name
        .chars()
        .filter(|c| {
            !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || (dots_ok && *c == '.'))
        })
        .map(|c| format!("{c:?}"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut why = Vec::new();
    if !bad.is_empty() {
        why.push(format!("characters {}", bad.join(" ")));
    }
    if name.len() > max {
        why.push(format!("{} bytes long, more than {max}", name.len()));
    }
    why.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codes(
        tools: &[Value],
        revision: &str,
        rule: NameRule,
    ) -> Vec<(&'static str, Severity, Option<&'static str>)> {
        check(tools, revision, rule)
            .0
            .iter()
            .map(|i| (i.code(), i.severity, i.detail_code))
            .collect()
    }

    fn tool(name: &str, schema: Value) -> Value {
        json!({"name": name, "description": "d", "inputSchema": schema})
    }

    #[test]
    fn a_good_tool_list_is_clean() {
        let tools = [tool(
            "echo",
            json!({"type": "object", "properties": {"t": {"type": "string"}}, "required": ["t"]}),
        )];
        let (issues, summary) = check(&tools, "2025-11-25", NameRule::Spec);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(summary.valid_tool_count, 1);
        assert_eq!(summary.tool_names, ["echo"]);
    }

    #[test]
    fn names_follow_the_spec_and_the_strict_client_rules() {
        let obj = json!({"type": "object"});
        assert_eq!(
            codes(
                &[tool("files.read", obj.clone())],
                "2025-11-25",
                NameRule::Spec
            ),
            [(
                "tool-name-not-portable",
                Severity::Warning,
                Some("strict-client")
            )]
        );
        assert_eq!(
            codes(
                &[tool("files.read", obj.clone())],
                "2025-11-25",
                NameRule::StrictClient
            ),
            [(
                "tool-name-not-portable",
                Severity::Error,
                Some("strict-client")
            )]
        );
        assert_eq!(
            codes(
                &[tool("read file", obj.clone())],
                "2025-11-25",
                NameRule::Spec
            ),
            [("tool-name-invalid", Severity::Error, Some("spec-pattern"))]
        );
        assert_eq!(
            codes(
                &[tool("a", obj.clone()), tool("a", obj.clone())],
                "2025-11-25",
                NameRule::Spec
            ),
            [("tool-name-duplicate", Severity::Error, None)]
        );
        assert!(spec_name(&"a".repeat(128)) && !spec_name(&"a".repeat(129)));
        assert!(strict_client_name(&"a".repeat(64)) && !strict_client_name(&"a".repeat(65)));
    }

    #[test]
    fn schemas_are_object_schemas_valid_in_their_dialect() {
        assert_eq!(
            codes(
                &[tool("t", json!({"type": "array"}))],
                "2025-11-25",
                NameRule::Spec
            ),
            [(
                "tool-input-schema-invalid",
                Severity::Error,
                Some("not-object-type")
            )]
        );
        let bad = json!({"type": "object", "properties": {"n": {"type": "integr"}}});
        assert_eq!(
            codes(&[tool("t", bad.clone())], "2025-11-25", NameRule::Spec),
            [(
                "tool-input-schema-invalid",
                Severity::Error,
                Some("meta-schema")
            )]
        );
        assert_eq!(
            codes(&[tool("t", bad)], "2025-06-18", NameRule::Spec),
            [(
                "tool-input-schema-invalid",
                Severity::Warning,
                Some("meta-schema")
            )]
        );
        // The TS SDK emits draft-07: judged by draft-07, not 2020-12.
        let d7 = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"n": {"type": "number", "exclusiveMinimum": 0}}, "additionalProperties": false});
        assert!(codes(&[tool("t", d7)], "2025-11-25", NameRule::Spec).is_empty());
        assert_eq!(
            codes(
                &[tool(
                    "t",
                    json!({"type": "object", "properties": {"a": {}}, "required": ["a", "b"]})
                )],
                "2025-11-25",
                NameRule::Spec
            ),
            [("tool-input-schema-required-missing", Severity::Error, None)]
        );
        let out = json!({"name": "t", "description": "d", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "required": ["x"]}});
        assert_eq!(
            codes(&[out], "2025-11-25", NameRule::Spec),
            [("tool-output-schema-required-missing", Severity::Error, None)]
        );
        assert_eq!(
            codes(
                &[tool(
                    "t",
                    json!({"$schema": "https://example.com/s", "type": "object"})
                )],
                "2025-11-25",
                NameRule::Spec
            ),
            [("tool-schema-dialect-unknown", Severity::Warning, None)]
        );
        assert_eq!(
            codes(
                &[json!({"name": "t", "inputSchema": {"type": "object"}})],
                "2025-11-25",
                NameRule::Spec
            ),
            [("tool-description-missing", Severity::Warning, None)]
        );
    }
}
