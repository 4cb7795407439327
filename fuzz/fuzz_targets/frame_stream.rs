//! Random stdout bytes, cut into random chunks, through the framer, the frame judge, the
//! pretty-print joiner and the JSON-RPC classifier. Invariants: nothing panics; without
//! truncation the frames give back exactly the input bytes (none lost, none duplicated); every
//! frame is either clean or has a named problem.
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
