//! A [`RawFrame`]'s content, judged strictly: UTF-8, BOM, CR, `Content-Length` headers, exactly
//! one JSON value per line. Pure functions, no I/O.
//!
//! The result keeps whatever JSON value could still be recovered from a damaged line (after a BOM,
//! before trailing text, inside a pretty-printed message), so the session can tell that an awaited
//! reply *did* arrive — corrupted — and stop waiting instead of running into a timeout.

use super::framing::RawFrame;
use super::json_text::{self, First};
use crate::catalog::{self, Rule};
use crate::issue::{Issue, escape_bytes};
use serde_json::Value;

/// How many bytes of a line an evidence string shows.
pub const EVIDENCE_BYTES: usize = 120;

/// One problem found in a frame's content.
#[derive(Debug, Clone)]
pub struct Problem {
    pub rule: &'static Rule,
    pub message: String,
}

/// The verdict on one frame.
#[derive(Debug, Clone, Default)]
pub struct Inspected {
    /// JSON values recovered from the line (one for a clean line).
    pub values: Vec<Value>,
    pub problems: Vec<Problem>,
    /// The line is a strict prefix of a JSON value: it may be the first line of a pretty-printed
    /// message (see [`Joiner`]).
    pub incomplete: bool,
    /// The deepest nesting of a value on the line, when it is over
    /// [`json_text::KEEP_DEPTH`] (valid JSON; its deepest parts are not kept).
    pub deep: Option<usize>,
}

impl Inspected {
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty() && !self.incomplete
    }
}

/// The evidence string of a frame: its bytes escaped, with the newline when it had one.
pub fn evidence(frame: &RawFrame) -> String {
    if frame.terminated && frame.bytes.len() < EVIDENCE_BYTES && !frame.truncated {
        let mut bytes = frame.bytes.clone();
        bytes.push(b'\n');
        escape_bytes(&bytes, EVIDENCE_BYTES)
    } else if frame.truncated {
        format!(
            "{} ({} bytes in the line)",
            escape_bytes(&frame.bytes, EVIDENCE_BYTES),
            frame.len
        )
    } else {
        escape_bytes(&frame.bytes, EVIDENCE_BYTES)
    }
}

/// `stdout line N (byte B)`, the prefix of every frame message.
pub fn position(frame: &RawFrame) -> String {
    format!("stdout line {} (byte {})", frame.line, frame.byte_offset)
}

/// Turns a problem of a frame into an issue anchored at the frame.
pub fn issue(frame: &RawFrame, problem: &Problem) -> Issue {
    Issue::new(problem.rule, problem.message.clone())
        .at_stdout(frame.line, frame.byte_offset)
        .evidence(evidence(frame))
}

/// [`position`] as a `Display` that formats on demand.
struct LazyPos<'a>(&'a RawFrame);

impl std::fmt::Display for LazyPos<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stdout line {} (byte {})",
            self.0.line, self.0.byte_offset
        )
    }
}

/// [`evidence`] as a `Display` that formats on demand.
struct LazyEvidence<'a>(&'a RawFrame);

impl std::fmt::Display for LazyEvidence<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&evidence(self.0))
    }
}

/// Judges one frame's bytes.
pub fn inspect(frame: &RawFrame) -> Inspected {
    inspect_with(frame, &|_| true)
}

/// Judges one frame's bytes, formatting messages only for the rules `wanted` asks for (a flood
/// of identical problems past the report's cap costs no formatting); the others carry an empty
/// message and still count.
pub fn inspect_with(frame: &RawFrame, wanted: &dyn Fn(&'static Rule) -> bool) -> Inspected {
    let mut out = Inspected::default();
    // Formatted only when a problem is found: clean frames allocate nothing here.
    let pos = LazyPos(frame);
    let ev = LazyEvidence(frame);
    let problem = |rule: &'static Rule, message: &dyn Fn() -> String| Problem {
        rule,
        message: if wanted(rule) {
            message()
        } else {
            String::new()
        },
    };

    if frame.truncated {
        out.problems
            .push(problem(&catalog::runtime::STDOUT_LINE_TOO_LARGE, &|| {
                format!(
                    "{pos} is {} bytes long, over the {}-byte line limit: {ev}",
                    frame.len,
                    frame.bytes.len()
                )
            }));
        return out;
    }
    if is_content_length_header(&frame.bytes) {
        out.problems.push(problem(
            &catalog::runtime::STDOUT_CONTENT_LENGTH_FRAMING,
            &|| format!("{pos} is an LSP-style Content-Length header, not a JSON-RPC frame: {ev}"),
        ));
        return out;
    }
    if !frame.terminated {
        // One finding for an unterminated tail; its content is still read, for correlation only.
        let mut inner = frame.clone();
        inner.terminated = true;
        let content = inspect_with(&inner, &|_| false);
        out.values = content.values;
        out.problems
            .push(problem(&catalog::runtime::STDOUT_WITHOUT_NEWLINE, &|| {
                format!("{pos} ended without a newline when stdout closed: {ev}")
            }));
        return out;
    }
    let mut bytes: &[u8] = &frame.bytes;
    if bytes.is_empty() || bytes == b"\r" {
        out.problems
            .push(problem(&catalog::runtime::STDOUT_EMPTY_LINE, &|| {
                format!("{pos} is an empty line: {ev}")
            }));
        return out;
    }
    if let Err(err) = std::str::from_utf8(bytes) {
        out.problems
            .push(problem(&catalog::runtime::STDOUT_INVALID_UTF8, &|| {
                format!(
                    "{pos} is not valid UTF-8 at byte {} of the line: {ev}",
                    err.valid_up_to()
                )
            }));
        return out;
    }
    if let Some(rest) = bytes.strip_prefix(b"\xef\xbb\xbf") {
        out.problems
            .push(problem(&catalog::runtime::STDOUT_UTF8_BOM, &|| {
                format!("{pos} starts with a UTF-8 byte-order mark: {ev}")
            }));
        bytes = rest;
    }
    if let Some(rest) = bytes.strip_suffix(b"\r") {
        out.problems
            .push(problem(&catalog::runtime::STDOUT_CRLF, &|| {
                format!("{pos} ends with \\r\\n instead of \\n: {ev}")
            }));
        bytes = rest;
    }
    match json_text::first(bytes) {
        First::Value(parsed) => {
            out.deep = parsed.deep;
            out.values.push(parsed.value);
            let rest = &bytes[parsed.end..];
            judge_rest(rest, &pos, &ev, wanted, &mut out);
        }
        First::Incomplete => {
            // A strict prefix of a JSON value: `{`, `[`, `{"a":` ... Possibly pretty-printed.
            out.incomplete = true;
        }
        First::Invalid => {
            out.problems
                .push(problem(&catalog::runtime::STDOUT_NON_JSON, &|| {
                    format!("{pos} is not JSON: {ev}")
                }));
        }
    }
    out
}

fn judge_rest(
    rest: &[u8],
    pos: &LazyPos,
    ev: &LazyEvidence,
    wanted: &dyn Fn(&'static Rule) -> bool,
    out: &mut Inspected,
) {
    let trimmed = json_text::trim_ws(rest);
    if trimmed.is_empty() {
        return;
    }
    // Another complete JSON value (or several) with nothing else: two messages glued together.
    let mut more = Vec::new();
    let mut at = 0;
    let all_values = loop {
        if json_text::trim_ws(&trimmed[at..]).is_empty() {
            break true;
        }
        match json_text::first(&trimmed[at..]) {
            First::Value(parsed) => {
                at += parsed.end;
                out.deep = out.deep.max(parsed.deep);
                more.push(parsed.value);
            }
            First::Incomplete | First::Invalid => break false,
        }
    };
    // A bare number or word after a message is text, not a second message.
    if all_values && more.iter().all(|v| v.is_object() || v.is_array()) {
        let rule = &catalog::runtime::STDOUT_MULTIPLE_VALUES;
        out.problems.push(Problem {
            rule,
            message: if wanted(rule) {
                format!(
                    "{pos} holds {} JSON values on one line: {ev}",
                    more.len() + 1
                )
            } else {
                String::new()
            },
        });
        out.values.extend(more);
    } else {
        let rule = &catalog::runtime::STDOUT_TRAILING_TEXT;
        out.problems.push(Problem {
            rule,
            message: if wanted(rule) {
                format!(
                    "{pos} has text after its JSON message: {}",
                    escape_bytes(trimmed, EVIDENCE_BYTES)
                )
            } else {
                String::new()
            },
        });
    }
}

fn is_content_length_header(bytes: &[u8]) -> bool {
    const HEADER: &[u8] = b"content-length:";
    bytes.len() >= HEADER.len() && bytes[..HEADER.len()].eq_ignore_ascii_case(HEADER)
}

/// Rejoins a message pretty-printed over several lines.
///
/// A line that is a strict prefix of a JSON value is held; the following lines are appended until
/// the text parses (a pretty-printed message: one issue spanning the lines, the value recovered),
/// stops being a prefix, or a cap is reached (the held lines are then reported one by one).
#[derive(Debug, Default)]
pub struct Joiner {
    held: Vec<RawFrame>,
    joined: Vec<u8>,
}

/// What the joiner makes of a frame.
#[derive(Debug)]
pub enum Joined {
    /// Frames to judge on their own, in order (the current one included, when not held).
    Single(Vec<RawFrame>),
    /// The frame completed a pretty-printed message spanning `frames`.
    Pretty { frames: Vec<RawFrame>, value: Value },
    /// The frame was held as part of a possible multi-line message.
    Held,
}

const MAX_JOINED_LINES: usize = 10_000;

impl Joiner {
    pub fn is_holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// Offers a frame (already inspected as `inspected`).
    pub fn offer(&mut self, frame: RawFrame, inspected: &Inspected, max_bytes: u64) -> Joined {
        if self.held.is_empty() {
            if inspected.incomplete && frame.terminated {
                self.joined = frame.bytes.clone();
                self.held.push(frame);
                return Joined::Held;
            }
            return Joined::Single(vec![frame]);
        }
        let mut candidate = self.joined.clone();
        candidate.push(b'\n');
        candidate.extend_from_slice(&frame.bytes);
        let parsed = match json_text::first(&candidate) {
            First::Value(p) if json_text::trim_ws(&candidate[p.end..]).is_empty() => {
                Ok(Some(p.value))
            }
            First::Incomplete => Ok(None),
            _ => Err(()),
        };
        match parsed {
            Ok(Some(value)) => {
                let mut frames = std::mem::take(&mut self.held);
                frames.push(frame);
                self.joined.clear();
                Joined::Pretty { frames, value }
            }
            Ok(None)
                if frame.terminated
                    && self.held.len() < MAX_JOINED_LINES
                    && (candidate.len() as u64) <= max_bytes =>
            {
                self.joined = candidate;
                self.held.push(frame);
                Joined::Held
            }
            _ => {
                let mut frames = self.flush();
                // The current frame was not part of the held text: it is judged fresh, and it may
                // itself start a new multi-line message.
                if inspected.incomplete && frame.terminated {
                    self.joined = frame.bytes.clone();
                    self.held.push(frame);
                } else {
                    frames.push(frame);
                }
                Joined::Single(frames)
            }
        }
    }

    /// Gives back the held frames (stream ended, or the session stops waiting).
    pub fn flush(&mut self) -> Vec<RawFrame> {
        self.joined.clear();
        std::mem::take(&mut self.held)
    }
}

/// The non-JSON verdict for a held prefix line that never completed.
pub fn incomplete_problem(frame: &RawFrame) -> Problem {
    Problem {
        rule: &catalog::runtime::STDOUT_NON_JSON,
        message: format!(
            "{} is not JSON (an unfinished JSON value): {}",
            position(frame),
            evidence(frame)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn frame(bytes: &[u8]) -> RawFrame {
        RawFrame {
            seq: 0,
            line: 1,
            byte_offset: 0,
            at: Duration::ZERO,
            bytes: bytes.to_vec(),
            len: bytes.len() as u64,
            terminated: true,
            truncated: false,
        }
    }

    fn codes(bytes: &[u8]) -> Vec<&'static str> {
        inspect(&frame(bytes))
            .problems
            .iter()
            .map(|p| p.rule.code)
            .collect()
    }

    #[test]
    fn clean_line_has_one_value() {
        let got = inspect(&frame(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(got.is_clean());
        assert_eq!(got.values.len(), 1);
    }

    #[test]
    fn each_framing_failure_has_its_code() {
        assert_eq!(codes(b"loading optional extension"), ["stdout-non-json"]);
        assert_eq!(codes(b""), ["stdout-empty-line"]);
        assert_eq!(codes(b"\r"), ["stdout-empty-line"]);
        assert_eq!(codes(b"\xef\xbb\xbf{}"), ["stdout-utf8-bom"]);
        assert_eq!(codes(b"{}\r"), ["stdout-crlf"]);
        assert_eq!(
            codes(b"Content-Length: 42"),
            ["stdout-content-length-framing"]
        );
        assert_eq!(codes(b"{\"a\":\"caf\xe9\"}"), ["stdout-invalid-utf8"]);
        assert_eq!(codes(b"{\"a\":1}{\"b\":2}"), ["stdout-multiple-values"]);
        assert_eq!(codes(b"{\"a\":1} server ready"), ["stdout-trailing-text"]);
        assert_eq!(codes(b"{\"a\":1} 42"), ["stdout-trailing-text"]);
        // A form feed or vertical tab is not JSON whitespace: neither JSON.parse nor json.loads
        // accepts it after a message.
        assert_eq!(codes(b"{\"a\":1}\x0c"), ["stdout-trailing-text"]);
        assert_eq!(codes(b"{\"a\":1}\x0b"), ["stdout-trailing-text"]);
        assert!(inspect(&frame(b"{")).incomplete);
    }

    #[test]
    fn message_names_line_offset_and_bytes() {
        let got = inspect(&frame(b"loading optional extension"));
        assert_eq!(
            got.problems[0].message,
            r#"stdout line 1 (byte 0) is not JSON: b"loading optional extension\n""#
        );
    }

    #[test]
    fn damaged_lines_still_yield_their_value() {
        let got = inspect(&frame(b"{\"id\":1} banner"));
        assert_eq!(got.values.len(), 1);
        let got = inspect(&frame(b"{\"id\":1}{\"id\":2}"));
        assert_eq!(got.values.len(), 2);
    }

    #[test]
    fn joiner_rebuilds_pretty_printed_messages() {
        let mut j = Joiner::default();
        let lines: [&[u8]; 4] = [
            b"{",
            b"  \"jsonrpc\": \"2.0\",",
            b"  \"id\": 1, \"result\": {}",
            b"}",
        ];
        let mut result = None;
        for (i, l) in lines.iter().enumerate() {
            let mut f = frame(l);
            f.line = i as u64 + 1;
            let ins = inspect(&f);
            match j.offer(f, &ins, 1 << 20) {
                Joined::Held => {}
                Joined::Pretty { frames, value } => result = Some((frames.len(), value)),
                Joined::Single(_) => panic!("line {i} should not be judged alone"),
            }
        }
        let (n, value) = result.unwrap();
        assert_eq!(n, 4);
        assert_eq!(value["id"], 1);
    }

    #[test]
    fn joiner_gives_back_lines_that_never_complete() {
        let mut j = Joiner::default();
        let f = frame(b"{");
        let ins = inspect(&f);
        assert!(matches!(j.offer(f, &ins, 1 << 20), Joined::Held));
        let g = frame(b"not json at all");
        let ins = inspect(&g);
        match j.offer(g, &ins, 1 << 20) {
            Joined::Single(frames) => assert_eq!(frames.len(), 2),
            other => panic!("{other:?}"),
        }
        assert!(!j.is_holding());
    }
}
