//! JSON value → JSON-RPC 2.0 [`Message`], server → client direction. Pure functions, no I/O.
//!
//! Classification is strict (the grammar rules of DESIGN.md §3) but forgiving in what it recovers:
//! a response with a broken envelope still yields the id it carried, so the session can pair it
//! with the request it answers and stop waiting.

use serde_json::{Map, Value};
use std::fmt;

/// A JSON-RPC id: a string or an integer, compared with its type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    Int(i64),
    Str(String),
}

impl Id {
    pub fn to_value(&self) -> Value {
        match self {
            Id::Int(n) => Value::from(*n),
            Id::Str(s) => Value::from(s.clone()),
        }
    }

    /// A valid id from a JSON value, if it is one (`null`, booleans, fractions, objects are not).
    pub fn from_value(value: &Value) -> Option<Id> {
        match value {
            Value::String(s) => Some(Id::Str(s.clone())),
            Value::Number(n) => n.as_i64().map(Id::Int),
            _ => None,
        }
    }

    /// The same id with the other type (`1` ↔ `"1"`), to recognise a type round-trip bug.
    pub fn swapped_type(&self) -> Option<Id> {
        match self {
            Id::Int(n) => Some(Id::Str(n.to_string())),
            Id::Str(s) => s
                .parse::<i64>()
                .ok()
                .filter(|n| n.to_string() == *s)
                .map(Id::Int),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Int(n) => write!(f, "{n}"),
            Id::Str(s) => write!(f, "{}", Value::from(s.as_str())),
        }
    }
}

/// A JSON-RPC message from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request {
        id: Id,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    Result {
        id: Id,
        result: Value,
    },
    Error {
        id: Option<Id>,
        error: RpcError,
    },
}

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

/// A grammar violation, named by its detail code under `stdout-invalid-json-rpc`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub detail: &'static str,
    pub message: String,
}

/// One element's classification: the message when its shape allows one, the violations found,
/// and — for broken responses — the raw id it carried, to pair it with a request anyway.
#[derive(Debug, Clone, Default)]
pub struct Classified {
    pub message: Option<Message>,
    pub violations: Vec<Violation>,
    /// A response-looking frame whose envelope is broken: the id value it carried.
    pub broken_response_id: Option<Value>,
}

/// Elements of a batch that are classified; the rest are not read. A 4 MiB line can hold two
/// million elements, and classifying each took seconds and a gigabyte; a batch of MCP messages is
/// a handful.
pub const BATCH_CHECKED: usize = 1_000;

/// The revision whose negotiation makes batches legal.
pub const BATCH_REVISION: &str = "2025-03-26";

/// Classifies one JSON value (a batch yields one entry per element, plus batch-level violations
/// in the first entry).
pub fn classify(value: &Value, negotiated: Option<&str>) -> Vec<Classified> {
    match value {
        Value::Array(items) => {
            let mut head = Vec::new();
            if items.is_empty() {
                head.push(violation("batch-empty", "is an empty batch array".into()));
            } else if negotiated != Some(BATCH_REVISION) {
                head.push(violation(
                    "batch-not-negotiated",
                    format!(
                        "is a batch array of {} messages; batches are legal only when {BATCH_REVISION} is negotiated (negotiated: {})",
                        items.len(),
                        negotiated.unwrap_or("none")
                    ),
                ));
            }
            let mut out: Vec<Classified> =
                items.iter().take(BATCH_CHECKED).map(classify_one).collect();
            match out.first_mut() {
                Some(first) => {
                    head.append(&mut first.violations);
                    first.violations = head;
                }
                None => out.push(Classified {
                    violations: head,
                    ..Classified::default()
                }),
            }
            out
        }
        other => vec![classify_one(other)],
    }
}

fn violation(detail: &'static str, message: String) -> Violation {
    Violation { detail, message }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a fractional number",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn classify_one(value: &Value) -> Classified {
    let mut out = Classified::default();
    let Value::Object(obj) = value else {
        out.violations.push(violation(
            "not-an-object",
            format!("is {}, not a JSON-RPC message object", kind_of(value)),
        ));
        return out;
    };
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => out.violations.push(violation(
            "jsonrpc-version",
            format!("has \"jsonrpc\": {other}, expected exactly \"2.0\""),
        )),
        None => out.violations.push(violation(
            "jsonrpc-version",
            "has no \"jsonrpc\": \"2.0\" member".into(),
        )),
    }
    let has_result = obj.contains_key("result");
    let has_error = obj.contains_key("error");
    if let Some(method) = obj.get("method") {
        classify_call(obj, method, has_result || has_error, &mut out);
    } else if has_result || has_error {
        classify_response(obj, has_result, has_error, &mut out);
    } else {
        out.violations.push(violation(
            "no-result-or-error",
            "has neither \"method\" nor \"result\"/\"error\"".into(),
        ));
        if let Some(id) = obj.get("id") {
            out.broken_response_id = Some(id.clone());
        }
    }
    // Keep the id of a broken response so the session can still pair it.
    if !out.violations.is_empty()
        && let Some(Message::Result { id, .. } | Message::Error { id: Some(id), .. }) =
            out.message.take()
    {
        out.broken_response_id = Some(id.to_value());
    }
    out
}

fn classify_call(
    obj: &Map<String, Value>,
    method: &Value,
    also_response: bool,
    out: &mut Classified,
) {
    let Value::String(method) = method else {
        out.violations.push(violation(
            "method-invalid",
            format!("has \"method\": {method}, expected a string"),
        ));
        return;
    };
    if also_response {
        out.violations.push(violation(
            "result-and-error",
            format!(
                "is both a call (\"method\": {method:?}) and a response (\"result\"/\"error\")"
            ),
        ));
    }
    let params = obj.get("params").cloned();
    if let Some(p) = &params
        && !p.is_object()
        && !p.is_array()
    {
        out.violations.push(violation(
            "params-invalid",
            format!("has \"params\" that is {}, expected an object", kind_of(p)),
        ));
    }
    match obj.get("id") {
        None => {
            out.message = Some(Message::Notification {
                method: method.clone(),
                params,
            })
        }
        Some(raw) => match Id::from_value(raw) {
            Some(id) => {
                out.message = Some(Message::Request {
                    id,
                    method: method.clone(),
                    params,
                })
            }
            None => out.violations.push(violation(
                "id-invalid-type",
                format!(
                    "has an id that is {} ({raw}); ids are strings or integers",
                    kind_of(raw)
                ),
            )),
        },
    }
}

fn classify_response(
    obj: &Map<String, Value>,
    has_result: bool,
    has_error: bool,
    out: &mut Classified,
) {
    if has_result && has_error {
        out.violations.push(violation(
            "result-and-error",
            "has both \"result\" and \"error\"; a response has exactly one".into(),
        ));
    }
    let raw_id = obj.get("id");
    let id = match raw_id {
        None => {
            out.violations.push(violation(
                "id-invalid-type",
                "is a response without an \"id\"".into(),
            ));
            None
        }
        // `null` is legal only on an error response to a request whose id could not be read.
        Some(Value::Null) if has_error && !has_result => None,
        Some(raw) => match Id::from_value(raw) {
            Some(id) => Some(id),
            None => {
                out.violations.push(violation(
                    "id-invalid-type",
                    format!(
                        "has a response id that is {} ({raw}); ids are strings or integers",
                        kind_of(raw)
                    ),
                ));
                out.broken_response_id = Some(raw.clone());
                None
            }
        },
    };
    if has_error {
        let err = parse_error(obj.get("error").unwrap_or(&Value::Null));
        match err {
            Ok(error) if !has_result => {
                if out.violations.is_empty() || id.is_some() {
                    out.message = Some(Message::Error { id, error });
                }
            }
            Ok(_) => {}
            Err(message) => out
                .violations
                .push(violation("error-object-invalid", message)),
        }
        if out.message.is_none()
            && let Some(raw) = raw_id
        {
            out.broken_response_id.get_or_insert(raw.clone());
        }
    } else if let Some(id) = id {
        out.message = Some(Message::Result {
            id,
            result: obj.get("result").cloned().unwrap_or(Value::Null),
        });
    }
}

fn parse_error(value: &Value) -> Result<RpcError, String> {
    let Value::Object(err) = value else {
        return Err(format!(
            "has an \"error\" that is {}, expected an object",
            kind_of(value)
        ));
    };
    let code = match err.get("code") {
        Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64().unwrap_or_default(),
        Some(other) => {
            return Err(format!(
                "has an error \"code\" that is {} ({other}), expected an integer",
                kind_of(other)
            ));
        }
        None => return Err("has an \"error\" without an integer \"code\"".into()),
    };
    let message = match err.get("message") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "has an error \"message\" that is {} ({other}), expected a string",
                kind_of(other)
            ));
        }
        None => return Err("has an \"error\" without a string \"message\"".into()),
    };
    Ok(RpcError {
        code,
        message,
        data: err.get("data").cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn details(v: Value) -> Vec<&'static str> {
        classify(&v, Some("2025-11-25"))
            .iter()
            .flat_map(|c| c.violations.iter().map(|v| v.detail))
            .collect()
    }

    #[test]
    fn valid_messages() {
        let c = classify(&json!({"jsonrpc":"2.0","id":1,"result":{}}), None);
        assert_eq!(
            c[0].message,
            Some(Message::Result {
                id: Id::Int(1),
                result: json!({})
            })
        );
        let c = classify(&json!({"jsonrpc":"2.0","id":"a","method":"ping"}), None);
        assert!(matches!(c[0].message, Some(Message::Request { .. })));
        let c = classify(
            &json!({"jsonrpc":"2.0","method":"notifications/message","params":{}}),
            None,
        );
        assert!(matches!(c[0].message, Some(Message::Notification { .. })));
        let c = classify(
            &json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}),
            None,
        );
        assert!(matches!(
            c[0].message,
            Some(Message::Error { id: None, .. })
        ));
        assert!(c[0].violations.is_empty());
    }

    #[test]
    fn grammar_violations_have_detail_codes() {
        assert_eq!(
            details(json!([1])),
            ["batch-not-negotiated", "not-an-object"]
        );
        assert_eq!(details(json!("hi")), ["not-an-object"]);
        assert_eq!(
            details(json!({"jsonrpc":"1.0","id":1,"result":{}})),
            ["jsonrpc-version"]
        );
        assert_eq!(details(json!({"id":1,"result":{}})), ["jsonrpc-version"]);
        assert_eq!(
            details(json!({"jsonrpc":"2.0","id":true,"result":{}})),
            ["id-invalid-type"]
        );
        assert_eq!(
            details(json!({"jsonrpc":"2.0","id":1.5,"result":{}})),
            ["id-invalid-type"]
        );
        assert_eq!(
            details(json!({"jsonrpc":"2.0","id":null,"result":{}})),
            ["id-invalid-type"]
        );
        assert_eq!(
            details(json!({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}})),
            ["result-and-error"]
        );
        assert_eq!(
            details(json!({"jsonrpc":"2.0","id":1})),
            ["no-result-or-error"]
        );
        assert_eq!(
            details(json!({"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}})),
            ["error-object-invalid"]
        );
        assert_eq!(
            details(json!({"jsonrpc":"2.0","id":1,"error":{"code":1}})),
            ["error-object-invalid"]
        );
        assert_eq!(
            details(json!({"jsonrpc":"2.0","method":7})),
            ["method-invalid"]
        );
        assert_eq!(
            details(json!({"jsonrpc":"2.0","method":"x","params":"s"})),
            ["params-invalid"]
        );
        assert_eq!(details(json!([])), ["batch-empty"]);
    }

    #[test]
    fn batches_are_legal_only_on_2025_03_26() {
        let v = json!([{"jsonrpc":"2.0","id":1,"result":{}}]);
        assert!(classify(&v, Some("2025-03-26"))[0].violations.is_empty());
        assert_eq!(
            classify(&v, Some("2025-06-18"))[0].violations[0].detail,
            "batch-not-negotiated"
        );
    }

    #[test]
    fn a_huge_batch_is_read_up_to_the_cap() {
        let v = Value::Array(vec![json!(1); BATCH_CHECKED * 3]);
        let c = classify(&v, None);
        assert_eq!(c.len(), BATCH_CHECKED);
        assert!(c[0].violations[0].message.contains("3000 messages"));
    }

    #[test]
    fn broken_responses_keep_their_id() {
        let c = classify(&json!({"jsonrpc":"1.0","id":3,"result":{}}), None);
        assert!(c[0].message.is_none());
        assert_eq!(c[0].broken_response_id, Some(json!(3)));
    }

    #[test]
    fn id_type_swap() {
        assert_eq!(Id::Int(7).swapped_type(), Some(Id::Str("7".into())));
        assert_eq!(Id::Str("7".into()).swapped_type(), Some(Id::Int(7)));
        assert_eq!(Id::Str("07".into()).swapped_type(), None);
    }
}
