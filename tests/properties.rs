//! Property tests for invariants that are cheap to state.

use mcp_stdio_guard::redact;
use mcp_stdio_guard::runtime::frame;
use mcp_stdio_guard::runtime::framing::{Framer, FramerLimits};
use proptest::prelude::*;
use std::time::Duration;

fn frames_of(
    input: &[u8],
    chunk: usize,
    line_limit: u64,
) -> Vec<mcp_stdio_guard::runtime::framing::RawFrame> {
    let mut f = Framer::new(FramerLimits {
        max_line_bytes: line_limit,
        max_total_bytes: u64::MAX,
    });
    let mut out = Vec::new();
    for piece in input.chunks(chunk.max(1)) {
        f.push(piece, Duration::ZERO, &mut out);
    }
    out.extend(f.finish(Duration::ZERO));
    out
}

proptest! {
    /// Framing never loses or duplicates a byte between frames, whatever the chunking.
    #[test]
    fn framing_is_lossless(input in proptest::collection::vec(prop_oneof![Just(b'\n'), any::<u8>()], 0..2000), chunk in 1usize..300) {
        let frames = frames_of(&input, chunk, u64::MAX);
        let mut rebuilt = Vec::new();
        for fr in &frames {
            prop_assert_eq!(fr.byte_offset as usize, rebuilt.len());
            rebuilt.extend_from_slice(&fr.bytes);
            if fr.terminated { rebuilt.push(b'\n'); }
        }
        prop_assert_eq!(rebuilt, input);
    }

    /// With a line limit, offsets and lengths still account for every byte, and no frame holds
    /// more than the limit.
    #[test]
    fn line_limit_bounds_memory_but_not_accounting(input in proptest::collection::vec(any::<u8>(), 0..3000), limit in 1u64..64) {
        let frames = frames_of(&input, 17, limit);
        let mut consumed = 0u64;
        for fr in &frames {
            prop_assert!(fr.bytes.len() as u64 <= limit);
            prop_assert_eq!(fr.byte_offset, consumed);
            consumed += fr.len + u64::from(fr.terminated);
        }
        prop_assert_eq!(consumed, input.len() as u64);
    }

    /// Every frame is either clean or comes with at least one named problem (or is an unfinished
    /// JSON prefix the joiner may complete).
    #[test]
    fn every_bad_frame_is_named(line in proptest::collection::vec(any::<u8>(), 0..200)) {
        let frames = frames_of(&[line.as_slice(), b"\n"].concat(), 64, 1 << 20);
        for fr in &frames {
            let inspected = frame::inspect(fr);
            prop_assert!(inspected.is_clean() || !inspected.problems.is_empty() || inspected.incomplete);
            if !inspected.is_clean() {
                for p in &inspected.problems {
                    let prefix = format!("stdout line {}", fr.line);
                    prop_assert!(p.message.contains(&prefix));
                }
            }
        }
    }

    /// Redacting a command line twice changes nothing more than once.
    #[test]
    fn argv_redaction_is_idempotent(args in proptest::collection::vec("[-A-Za-z_=:/@?&.0-9]{0,24}", 0..8)) {
        let once = redact::argv(&args);
        prop_assert_eq!(redact::argv(&once), once.clone());
        prop_assert_eq!(once.len(), args.len());
    }

    /// Scrubbing free text removes every registered secret and is idempotent.
    #[test]
    fn scrubbing_removes_secrets(secret in "[a-zA-Z0-9]{6,20}", prefix in ".{0,20}", suffix in ".{0,20}") {
        let mut r = redact::Redactor::new();
        r.add(&secret);
        let text = format!("{prefix}{secret}{suffix}");
        let scrubbed = r.scrub(&text);
        prop_assert!(!scrubbed.contains(&secret) || redact::REDACTED.contains(&secret));
        prop_assert_eq!(r.scrub(&scrubbed), scrubbed);
    }
}
