//! Invalid arguments for the tools the user declared safe, derived from each tool's
//! `inputSchema`. Pure.
//!
//! A gateway that validates the shape of `tools/call` but acts before it checks the arguments
//! passes every framing probe; only a call to a real tool with arguments its schema forbids
//! reaches that code. Each mutation starts from the safe call's own (valid) arguments and breaks
//! exactly one thing, so a reply or an effect is attributable to it:
//!
//! | mutation | what it sends |
//! | --- | --- |
//! | `missing-<p>` | the arguments without required property `p` |
//! | `<p>-wrong-type` | `p` with a value of a JSON type its `type` does not allow |
//! | `unknown-property` | an extra property, where `additionalProperties` is `false` |
//! | `<p>-not-in-enum` | a string outside `p`'s `enum` |
//! | `<p>-breaks-pattern` | a string `p`'s `pattern` does not match |
//! | `<p>-too-long` / `<p>-too-short` | one character past `maxLength` / short of `minLength` |
//! | `<p>-above-maximum` / `<p>-below-minimum` | a number past `maximum`/`exclusiveMaximum` / `minimum`/`exclusiveMinimum` |
//!
//! Every candidate is checked against the whole schema (the `jsonschema` crate, the dialect the
//! schema names): one the schema still accepts (a `oneOf` elsewhere, a type union) is dropped,
//! so the guard never calls "invalid" what the tool's own contract allows. Only top-level
//! properties are mutated. No tool but the one declared safe is ever named.

use serde_json::{Map, Value, json};

/// The most mutations per tool (each is a probe, in a fresh process).
pub const MAX_PER_TOOL: usize = 24;
/// `maxLength` past which `too-long` is not built (the string would be a flood, not a probe).
const MAX_LONG: u64 = 64 * 1024;
/// The extra property of `unknown-property`.
pub const UNKNOWN_PROPERTY: &str = "mcpStdioGuardUnknownProperty";

/// One invalid call: its name (the part after `invalid-arguments:<tool>:`), the arguments, and
/// what was broken, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Mutation {
    pub name: String,
    pub arguments: Value,
    pub what: String,
}

/// The mutations of one tool: `base` is the safe call's arguments, `schema` its `inputSchema`.
/// Also returns how many were left out past [`MAX_PER_TOOL`].
pub fn mutations(base: &Value, schema: &Value) -> (Vec<Mutation>, usize) {
    let base = base.as_object().cloned().unwrap_or_default();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .unwrap_or_default();
    for p in &required {
        let mut args = base.clone();
        args.remove(*p);
        out.push(Mutation {
            name: format!("missing-{p}"),
            arguments: Value::Object(args),
            what: format!("required property {p:?} left out"),
        });
    }
    for (p, sub) in &props {
        if let Some((value, allowed)) = wrong_type(sub) {
            out.push(with(
                &base,
                p,
                value,
                "wrong-type",
                format!("{p:?} given a value that is not {allowed}"),
            ));
        }
        out.extend(string_mutations(&base, p, sub));
        out.extend(number_mutations(&base, p, sub));
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        out.push(with(
            &base,
            UNKNOWN_PROPERTY,
            Value::from(true),
            "",
            "a property the schema does not declare (additionalProperties: false)".into(),
        ));
        if let Some(last) = out.last_mut() {
            last.name = "unknown-property".into();
        }
    }
    let validator = jsonschema::validator_for(schema).ok();
    out.retain(|m| validator.as_ref().is_none_or(|v| !v.is_valid(&m.arguments)));
    // One name once (two properties can never collide, but a schema may list `required` twice).
    let mut seen = std::collections::HashSet::new();
    out.retain(|m| seen.insert(m.name.clone()));
    let left_out = out.len().saturating_sub(MAX_PER_TOOL);
    out.truncate(MAX_PER_TOOL);
    (out, left_out)
}

fn with(base: &Map<String, Value>, p: &str, value: Value, suffix: &str, what: String) -> Mutation {
    let mut args = base.clone();
    args.insert(p.to_string(), value);
    Mutation {
        name: format!("{p}-{suffix}"),
        arguments: Value::Object(args),
        what,
    }
}

/// The JSON types a property allows (`type`, a string or a list), if it says.
fn types(sub: &Value) -> Option<Vec<&str>> {
    match sub.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(list) => Some(list.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// A value of a type the property does not allow, and the allowed types in words.
fn wrong_type(sub: &Value) -> Option<(Value, String)> {
    let allowed = types(sub)?;
    let admits = |t: &str| allowed.contains(&t) || (t == "integer" && allowed.contains(&"number"));
    let candidates = [
        ("string", json!("mcp-stdio-guard: not the declared type")),
        ("integer", json!(12345)),
        ("boolean", json!(true)),
        ("object", json!({"mcpStdioGuard": "not the declared type"})),
        ("array", json!(["mcp-stdio-guard"])),
        ("null", Value::Null),
    ];
    let (_, value) = candidates.into_iter().find(|(t, _)| !admits(t))?;
    Some((value, allowed.join(" or ")))
}

fn is_string(sub: &Value) -> bool {
    types(sub).is_some_and(|t| t.contains(&"string"))
        || sub.get("pattern").is_some()
        || sub.get("maxLength").is_some()
}

fn string_mutations(base: &Map<String, Value>, p: &str, sub: &Value) -> Vec<Mutation> {
    let mut out = Vec::new();
    if !is_string(sub) && sub.get("enum").is_none() {
        return out;
    }
    if let Some(list) = sub.get("enum").and_then(Value::as_array) {
        let value = (0..)
            .map(|i| format!("mcp-stdio-guard-not-in-enum-{i}"))
            .find(|c| !list.contains(&Value::from(c.as_str())))
            .expect("an unused string exists");
        out.push(with(
            base,
            p,
            Value::from(value),
            "not-in-enum",
            format!("{p:?} given a value outside its enum"),
        ));
    }
    if let Some(pattern) = sub.get("pattern").and_then(Value::as_str)
        && let Some(value) = breaking(pattern, sub)
    {
        out.push(with(
            base,
            p,
            Value::from(value),
            "breaks-pattern",
            format!("{p:?} given a string its pattern {pattern:?} does not match"),
        ));
    }
    if let Some(max) = sub.get("maxLength").and_then(Value::as_u64)
        && max < MAX_LONG
    {
        let value = "x".repeat(max as usize + 1);
        out.push(with(
            base,
            p,
            Value::from(value),
            "too-long",
            format!("{p:?} given {} characters (maxLength {max})", max + 1),
        ));
    }
    if let Some(min) = sub.get("minLength").and_then(Value::as_u64)
        && min > 0
        && min <= MAX_LONG
    {
        let value = "x".repeat(min as usize - 1);
        out.push(with(
            base,
            p,
            Value::from(value),
            "too-short",
            format!("{p:?} given {} characters (minLength {min})", min - 1),
        ));
    }
    out
}

/// A string `pattern` does not match (checked with the schema library's own regex engine),
/// within the property's length bounds when it can be.
fn breaking(pattern: &str, sub: &Value) -> Option<String> {
    let check = jsonschema::validator_for(&json!({"type": "string", "pattern": pattern})).ok()?;
    let min = sub.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let mut candidates: Vec<String> = [
        "",
        " ",
        "-",
        "0",
        "a",
        "A",
        "../../etc/passwd",
        "; rm -rf / #",
        "mcp-stdio-guard invalid value!",
        "\u{0}",
        "\n",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let max = sub
        .get("maxLength")
        .and_then(Value::as_u64)
        .map_or(usize::MAX, |m| m as usize);
    // Padded to minLength, so the pattern is what breaks; those within the length bounds first.
    let padded: Vec<String> = candidates.iter().map(|c| format!("{c:!<min$}")).collect();
    candidates.splice(0..0, padded);
    let fits = |c: &String| (min..=max).contains(&c.chars().count());
    let breaks = |c: &String| !check.is_valid(&Value::from(c.as_str()));
    candidates
        .iter()
        .find(|c| fits(c) && breaks(c))
        .or_else(|| candidates.iter().find(|c| breaks(c)))
        .cloned()
}

fn number_mutations(base: &Map<String, Value>, p: &str, sub: &Value) -> Vec<Mutation> {
    let mut out = Vec::new();
    let integer = types(sub).is_some_and(|t| t.contains(&"integer") && !t.contains(&"number"));
    let step = if integer { 1.0 } else { 0.5 };
    let num = |v: f64| -> Value {
        if integer || v.fract() == 0.0 {
            json!(v as i64)
        } else {
            json!(v)
        }
    };
    let bound = |k: &str| sub.get(k).and_then(Value::as_f64);
    // Draft 4 says `exclusiveMaximum: true` beside `maximum`; later drafts give the bound itself.
    let draft4_excl = |k: &str| sub.get(k).and_then(Value::as_bool).unwrap_or(false);
    let above = match (bound("maximum"), bound("exclusiveMaximum")) {
        (_, Some(x)) => Some(x),
        (Some(m), None) if draft4_excl("exclusiveMaximum") => Some(m),
        (Some(m), None) => Some(m + step),
        (None, None) => None,
    };
    let below = match (bound("minimum"), bound("exclusiveMinimum")) {
        (_, Some(x)) => Some(x),
        (Some(m), None) if draft4_excl("exclusiveMinimum") => Some(m),
        (Some(m), None) => Some(m - step),
        (None, None) => None,
    };
    if let Some(v) = above {
        out.push(with(
            base,
            p,
            num(v),
            "above-maximum",
            format!("{p:?} given {v}, past its maximum"),
        ));
    }
    if let Some(v) = below {
        out.push(with(
            base,
            p,
            num(v),
            "below-minimum",
            format!("{p:?} given {v}, below its minimum"),
        ));
    }
    out
}

/// The `inputSchema` of each named tool in a `tools/list` result (`None`: the server does not
/// list it), each name once.
pub fn safe_tool_schemas<'a>(
    names: impl Iterator<Item = &'a str>,
    tools: Option<&[Value]>,
) -> Vec<(String, Option<Value>)> {
    let mut out: Vec<(String, Option<Value>)> = Vec::new();
    for name in names {
        if out.iter().any(|(n, _)| n == name) {
            continue;
        }
        let schema = tools
            .unwrap_or_default()
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|t| t.get("inputSchema"))
            .cloned();
        out.push((name.to_string(), schema));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(ms: &[Mutation]) -> Vec<&str> {
        ms.iter().map(|m| m.name.as_str()).collect()
    }

    fn deploy() -> Value {
        json!({
            "type": "object",
            "properties": {
                "target": {"type": "string", "pattern": "^preview-[a-z0-9-]+$", "maxLength": 40},
                "region": {"type": "string", "enum": ["eu", "us"]},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 5},
                "dryRun": {"type": "boolean"}
            },
            "required": ["target"],
            "additionalProperties": false
        })
    }

    #[test]
    fn every_kind_of_mutation_is_derived_and_each_breaks_one_thing() {
        let base = json!({"target": "preview-42", "region": "eu", "replicas": 2});
        let (ms, left_out) = mutations(&base, &deploy());
        assert_eq!(left_out, 0);
        assert_eq!(
            names(&ms),
            [
                "missing-target",
                "target-wrong-type",
                "target-breaks-pattern",
                "target-too-long",
                "region-wrong-type",
                "region-not-in-enum",
                "replicas-wrong-type",
                "replicas-above-maximum",
                "replicas-below-minimum",
                "dryRun-wrong-type",
                "unknown-property",
            ]
        );
        let get = |n: &str| &ms.iter().find(|m| m.name == n).unwrap().arguments;
        assert_eq!(
            get("missing-target"),
            &json!({"region": "eu", "replicas": 2})
        );
        assert_eq!(get("replicas-above-maximum")["replicas"], json!(6));
        assert_eq!(get("replicas-below-minimum")["replicas"], json!(0));
        assert_eq!(get("target-too-long")["target"].as_str().unwrap().len(), 41);
        assert_eq!(get("target-wrong-type")["target"], json!(12345));
        assert_eq!(
            get("dryRun-wrong-type")["dryRun"],
            json!("mcp-stdio-guard: not the declared type")
        );
        assert_eq!(get("unknown-property")[UNKNOWN_PROPERTY], json!(true));
        // Everything else stays as the safe call had it.
        assert_eq!(get("region-not-in-enum")["target"], json!("preview-42"));
        let validator = jsonschema::validator_for(&deploy()).unwrap();
        assert!(validator.is_valid(&base));
        for m in &ms {
            assert!(!validator.is_valid(&m.arguments), "{} is valid", m.name);
        }
    }

    #[test]
    fn a_mutation_the_schema_still_accepts_is_dropped() {
        // `value` may be a string or a number: a number is not a wrong type; no
        // additionalProperties: an unknown property is allowed.
        let schema = json!({
            "type": "object",
            "properties": {"value": {"type": ["string", "number"]}},
            "required": []
        });
        let (ms, _) = mutations(&json!({"value": "x"}), &schema);
        assert_eq!(names(&ms), ["value-wrong-type"]);
        assert_eq!(ms[0].arguments["value"], json!(true));
        // A property with no constraints yields nothing.
        let (none, _) = mutations(
            &json!({}),
            &json!({"type": "object", "properties": {"any": {}}}),
        );
        assert!(none.is_empty());
    }

    #[test]
    fn exclusive_bounds_of_every_draft_are_broken_at_the_bound() {
        let later = json!({"type": "object", "properties": {"n": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}}});
        let (ms, _) = mutations(&json!({"n": 0.5}), &later);
        let get = |n: &str| ms.iter().find(|m| m.name == n).unwrap().arguments["n"].clone();
        assert_eq!(
            (get("n-above-maximum"), get("n-below-minimum")),
            (json!(1), json!(0))
        );
        let draft4 = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"n": {"type": "number", "maximum": 10, "exclusiveMaximum": true}}
        });
        let (ms, _) = mutations(&json!({"n": 1}), &draft4);
        assert_eq!(
            ms.iter()
                .find(|m| m.name == "n-above-maximum")
                .unwrap()
                .arguments["n"],
            json!(10)
        );
    }

    #[test]
    fn patterns_are_broken_by_a_string_the_regex_rejects_within_min_length() {
        let schema = json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]{3,}$", "minLength": 3}}});
        let (ms, _) = mutations(&json!({"id": "abc"}), &schema);
        let broken = ms.iter().find(|m| m.name == "id-breaks-pattern").unwrap();
        let s = broken.arguments["id"].as_str().unwrap();
        assert!(s.len() >= 3, "{s:?}");
        assert!(ms.iter().any(|m| m.name == "id-too-short"));
    }

    #[test]
    fn a_wide_schema_is_capped_and_counted() {
        let props: Map<String, Value> = (0..40)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        let schema = json!({"type": "object", "properties": props});
        let (ms, left_out) = mutations(&json!({}), &schema);
        assert_eq!((ms.len(), left_out), (MAX_PER_TOOL, 40 - MAX_PER_TOOL));
    }
}
