//! JSON Schema facts for tool schemas: which dialect a schema declares, whether it is valid
//! against that dialect's official meta-schema, and validating an instance against it. The
//! validation itself is the `jsonschema` crate's (the published meta-schemas), never hand-rolled.
//! Remote `$ref`s are never fetched (the crate is built without its HTTP/file resolvers).

use serde_json::Value;

/// The JSON Schema dialects the guard can validate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Draft4,
    Draft6,
    Draft7,
    Draft201909,
    Draft202012,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Draft4 => "draft-04",
            Dialect::Draft6 => "draft-06",
            Dialect::Draft7 => "draft-07",
            Dialect::Draft201909 => "2019-09",
            Dialect::Draft202012 => "2020-12",
        }
    }

    fn draft(self) -> jsonschema::Draft {
        match self {
            Dialect::Draft4 => jsonschema::Draft::Draft4,
            Dialect::Draft6 => jsonschema::Draft::Draft6,
            Dialect::Draft7 => jsonschema::Draft::Draft7,
            Dialect::Draft201909 => jsonschema::Draft::Draft201909,
            Dialect::Draft202012 => jsonschema::Draft::Draft202012,
        }
    }

    /// The dialect a schema without `$schema` is read in. MCP 2025-11-25 fixes 2020-12; earlier
    /// revisions said nothing and the SDKs of that time emitted draft-07.
    pub fn default_for(revision: &str) -> Dialect {
        if revision >= "2025-11-25" {
            Dialect::Draft202012
        } else {
            Dialect::Draft7
        }
    }
}

/// How a schema's `$schema` resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    Known(Dialect),
    /// A `$schema` string naming no published draft.
    Unknown(String),
    /// `$schema` present but not a string.
    NotAString,
}

/// The dialect `schema` declares (`default` when it has no `$schema`).
pub fn dialect_of(schema: &Value, default: Dialect) -> Declared {
    let Some(raw) = schema.get("$schema") else {
        return Declared::Known(default);
    };
    let Some(uri) = raw.as_str() else {
        return Declared::NotAString;
    };
    let norm = uri
        .trim_end_matches('#')
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    let dialect = match norm {
        "json-schema.org/draft-04/schema" => Dialect::Draft4,
        "json-schema.org/draft-06/schema" => Dialect::Draft6,
        "json-schema.org/draft-07/schema" => Dialect::Draft7,
        "json-schema.org/draft/2019-09/schema" => Dialect::Draft201909,
        "json-schema.org/draft/2020-12/schema" => Dialect::Draft202012,
        _ => return Declared::Unknown(uri.to_string()),
    };
    Declared::Known(dialect)
}

/// Up to `max` violations of the dialect's meta-schema, each as `at <pointer>: <reason>`.
/// A schema with a part nested deeper than the guard keeps (`json_text::ELIDED`) is not judged.
pub fn meta_errors(schema: &Value, dialect: Dialect, max: usize) -> Vec<String> {
    if crate::runtime::json_text::has_elided(schema) {
        return Vec::new();
    }
    let validator = match dialect {
        Dialect::Draft4 => jsonschema::draft4::meta::validator(),
        Dialect::Draft6 => jsonschema::draft6::meta::validator(),
        Dialect::Draft7 => jsonschema::draft7::meta::validator(),
        Dialect::Draft201909 => jsonschema::draft201909::meta::validator(),
        Dialect::Draft202012 => jsonschema::draft202012::meta::validator(),
    };
    validator
        .iter_errors(schema)
        .take(max)
        .map(|e| describe(&e.instance_path().to_string(), &e.to_string()))
        .collect()
}

/// A compiled schema for validating instances, or why it could not be compiled (e.g. a remote
/// `$ref`, which the guard never fetches).
pub fn compile(schema: &Value, dialect: Dialect) -> Result<jsonschema::Validator, String> {
    if crate::runtime::json_text::has_elided(schema) {
        return Err("the schema is nested deeper than the guard keeps".into());
    }
    jsonschema::options()
        .with_draft(dialect.draft())
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Up to `max` reasons `instance` fails `validator`.
pub fn instance_errors(
    validator: &jsonschema::Validator,
    instance: &Value,
    max: usize,
) -> Vec<String> {
    if crate::runtime::json_text::has_elided(instance) {
        return Vec::new();
    }
    validator
        .iter_errors(instance)
        .take(max)
        .map(|e| describe(&e.instance_path().to_string(), &e.to_string()))
        .collect()
}

fn describe(pointer: &str, reason: &str) -> String {
    let at = if pointer.is_empty() { "/" } else { pointer };
    let mut reason = reason.replace('\n', " ");
    if reason.len() > 160 {
        let mut cut = 160;
        while !reason.is_char_boundary(cut) {
            cut -= 1;
        }
        reason.truncate(cut);
        reason.push_str("...");
    }
    format!("at {at}: {reason}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dialects_resolve_from_schema_uris() {
        let d = Dialect::Draft202012;
        assert_eq!(dialect_of(&json!({}), d), Declared::Known(d));
        assert_eq!(
            dialect_of(
                &json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
                d
            ),
            Declared::Known(Dialect::Draft7)
        );
        assert_eq!(
            dialect_of(
                &json!({"$schema": "https://json-schema.org/draft/2020-12/schema"}),
                Dialect::Draft7
            ),
            Declared::Known(Dialect::Draft202012)
        );
        assert!(matches!(
            dialect_of(&json!({"$schema": "https://example.com/x"}), d),
            Declared::Unknown(_)
        ));
        assert_eq!(dialect_of(&json!({"$schema": 7}), d), Declared::NotAString);
    }

    #[test]
    fn meta_schema_violations_are_found_per_dialect() {
        let good = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert!(meta_errors(&good, Dialect::Draft202012, 3).is_empty());
        assert!(meta_errors(&good, Dialect::Draft7, 3).is_empty());
        let bad = json!({"type": "object", "properties": {"n": {"type": "integr"}}});
        let errors = meta_errors(&bad, Dialect::Draft202012, 3);
        assert!(!errors.is_empty());
        assert!(errors[0].contains("/properties/n/type"), "{errors:?}");
        // `exclusiveMinimum: true` is draft-04 syntax: valid there, invalid in 2020-12.
        let d4 = json!({"type": "object", "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": true}}});
        assert!(meta_errors(&d4, Dialect::Draft4, 3).is_empty());
        assert!(!meta_errors(&d4, Dialect::Draft202012, 3).is_empty());
    }

    #[test]
    fn instances_validate_against_compiled_schemas() {
        let schema =
            json!({"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]});
        let v = compile(&schema, Dialect::Draft202012).unwrap();
        assert!(instance_errors(&v, &json!({"t": 1}), 3).is_empty());
        let errors = instance_errors(&v, &json!({"t": "1"}), 3);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("at /t:"), "{errors:?}");
    }
}
