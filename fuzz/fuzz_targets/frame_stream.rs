//! Random stdout bytes, cut into random chunks, through the framer, the frame judge, the
//! pretty-print joiner and the JSON-RPC classifier. Invariants: nothing panics; without
//! truncation the frames give back exactly the input bytes (none lost, none duplicated); every
//! frame is either clean or has a named problem.
//!
//! The deep case: when bit 6 of the first byte is set, the stream is wrapped in as many levels of
//! `[`...`]` as the next two bytes say (up to 65 535), so the judge meets JSON far deeper than
//! serde_json's limit. Invariants: no stack overflow; a JSON value wrapped at any depth is still
//! JSON, and the value inside is kept whole when it is shallow enough.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_stdio_guard::runtime::frame::{self, Joined, Joiner};
use mcp_stdio_guard::runtime::framing::{Framer, FramerLimits};
use mcp_stdio_guard::runtime::jsonrpc;
use std::time::Duration;

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    // The first byte picks the chunk size and the line limit, the rest is the stream.
    let chunk = (data[0] as usize % 64) + 1;
    let line_limit = if data[0] & 0x80 != 0 { 16 } else { 1 << 20 };
    if data[0] & 0x40 != 0 && data.len() >= 3 {
        // At least one level: a bare line is the framing rules' business (CR, BOM), not depth's.
        deep(&data[3..], (u16::from_le_bytes([data[1], data[2]]) as usize).max(1));
        return;
    }
    let stream = &data[1..];
    let mut framer = Framer::new(FramerLimits {
        max_line_bytes: line_limit,
        max_total_bytes: 1 << 30,
    });
    let mut frames = Vec::new();
    for piece in stream.chunks(chunk) {
        framer.push(piece, Duration::ZERO, &mut frames);
    }
    frames.extend(framer.finish(Duration::ZERO));

    let mut rebuilt = Vec::new();
    let mut any_truncated = false;
    let mut joiner = Joiner::default();
    let mut consumed = 0u64;
    for f in &frames {
        assert_eq!(
            f.byte_offset, consumed,
            "byte offsets must count every byte before the line"
        );
        consumed += f.len + u64::from(f.terminated);
        any_truncated |= f.truncated;
        rebuilt.extend_from_slice(&f.bytes);
        if f.terminated {
            rebuilt.push(b'\n');
        }
        let inspected = frame::inspect(f);
        assert!(inspected.is_clean() || !inspected.problems.is_empty() || inspected.incomplete);
        for v in &inspected.values {
            for c in jsonrpc::classify(v, Some("2025-03-26")) {
                for viol in &c.violations {
                    assert!(!viol.detail.is_empty());
                }
            }
        }
        match joiner.offer(f.clone(), &inspected, 1 << 20) {
            Joined::Pretty { value, .. } => {
                let _ = jsonrpc::classify(&value, None);
            }
            Joined::Single(_) | Joined::Held => {}
        }
    }
    let _ = joiner.flush();
    if !any_truncated {
        assert_eq!(rebuilt, stream, "framing lost or duplicated bytes");
    }
});

/// `inner` wrapped in `depth` arrays, judged as one stdout line.
fn deep(inner: &[u8], depth: usize) {
    use mcp_stdio_guard::runtime::json_text::{self, First, KEEP_DEPTH};
    let inner_verdict = json_text::first(inner);
    let inner_whole = match &inner_verdict {
        First::Value(p) => json_text::trim_ws(&inner[p.end..]).is_empty(),
        _ => false,
    };
    let mut text = Vec::with_capacity(inner.len() + 2 * depth);
    text.resize(depth, b'[');
    text.extend_from_slice(inner);
    text.resize(text.len() + depth, b']');
    let frame = mcp_stdio_guard::runtime::framing::RawFrame {
        seq: 0,
        line: 1,
        byte_offset: 0,
        at: Duration::ZERO,
        len: text.len() as u64,
        bytes: text.clone(),
        terminated: true,
        truncated: false,
    };
    let judged = frame::inspect(&frame);
    let whole = judged.is_clean() && judged.values.len() == 1;
    // A JSON value stays JSON at any depth (the converse needs no check: `],[` inside `[[`...`]]`
    // is JSON while `],[` alone is not).
    if inner_whole && std::str::from_utf8(inner).is_ok() {
        assert!(whole, "depth {depth}: a JSON value wrapped in arrays was judged {judged:?}");
    }
    if whole {
        let mut v = &judged.values[0];
        for _ in 0..depth.min(KEEP_DEPTH - 1) {
            v = &v[0];
        }
        if let First::Value(p) = &inner_verdict
            && depth + p_depth(&p.value) < KEEP_DEPTH
        {
            assert_eq!(v, &p.value, "a shallow value must be kept whole");
        }
    }
    for v in &judged.values {
        let _ = jsonrpc::classify(v, None);
    }
}

/// The nesting depth of a value (bounded: values from the judge are at most `KEEP_DEPTH` deep).
fn p_depth(v: &serde_json::Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        match v {
            serde_json::Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            serde_json::Value::Object(m) => stack.extend(m.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    max
}
