//! Random bytes as one stdout line: the frame judge, then every JSON value it recovers through
//! the JSON-RPC classifier under every MCP revision (and none). Invariants: nothing panics; a
//! batch gives one classification per element (one for an empty batch); every classification
//! is a message or names at least one violation, by a detail code the catalogue declares, with
//! a message; a request or notification keeps the method it was sent with.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_stdio_guard::catalog::runtime::STDOUT_INVALID_JSON_RPC;
use mcp_stdio_guard::protocol;
use mcp_stdio_guard::runtime::frame;
use mcp_stdio_guard::runtime::framing::RawFrame;
use mcp_stdio_guard::runtime::jsonrpc::{self, Message};
use serde_json::Value;
use std::time::Duration;

fn check(value: &Value, negotiated: Option<&str>) {
    let out = jsonrpc::classify(value, negotiated);
    match value {
        Value::Array(items) => assert_eq!(out.len(), items.len().max(1)),
        _ => assert_eq!(out.len(), 1),
    }
    let elements: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    for (i, c) in out.iter().enumerate() {
        assert!(
            c.message.is_some() || !c.violations.is_empty(),
            "{value} element {i} is neither a message nor a named violation"
        );
        for v in &c.violations {
            assert!(
                STDOUT_INVALID_JSON_RPC.detail_codes.contains(&v.detail),
                "{}",
                v.detail
            );
            assert!(!v.message.is_empty());
        }
        if let Some(Message::Request { method, .. } | Message::Notification { method, .. }) =
            &c.message
        {
            let sent = elements.get(i).and_then(|e| e.get("method"));
            assert_eq!(sent.and_then(Value::as_str), Some(method.as_str()));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let line = RawFrame {
        seq: 0,
        line: 1,
        byte_offset: 0,
        at: Duration::ZERO,
        bytes: data.to_vec(),
        len: data.len() as u64,
        terminated: true,
        truncated: false,
    };
    let inspected = frame::inspect(&line);
    assert!(inspected.is_clean() || !inspected.problems.is_empty() || inspected.incomplete);
    let mut values = inspected.values;
    // Also the bytes as plain JSON, when they are (the judge may have refused them: BOM, CR).
    if let Ok(v) = serde_json::from_slice::<Value>(data) {
        values.push(v);
    }
    for v in &values {
        check(v, None);
        for revision in protocol::all_revisions() {
            check(v, Some(revision));
        }
    }
});
