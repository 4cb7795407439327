//! The frame judge: what a stdout frame says, decided from its bytes alone. Pure: no I/O, no
//! clock, no knowledge of requests. It rejoins pretty-printed messages (the [`Joiner`]), judges
//! framing ([`frame::inspect`]), classifies every JSON value as JSON-RPC ([`jsonrpc::classify`])
//! and hands the session (the client side, `session.rs`) a [`Judged`]: the findings about the
//! bytes, the messages to pair, the ids of broken responses, and for a line that is not JSON the
//! ids it names lossily (for correlation only, never acceptance).

use super::frame::{self, Inspected, Joined, Joiner};
use super::framing::RawFrame;
use super::jsonrpc::{self, Message};
use crate::catalog::{Rule, runtime as rules};
use crate::issue::Issue;
use serde_json::Value;

/// Where a message started on stdout.
#[derive(Debug, Clone, Copy)]
pub struct Pos {
    pub line: u64,
    pub offset: u64,
}

impl Pos {
    pub fn of(frame: &RawFrame) -> Pos {
        Pos {
            line: frame.line,
            offset: frame.byte_offset,
        }
    }
}

/// What one frame (or one pretty-printed run of frames) says.
#[derive(Debug, Default)]
pub struct Judged {
    /// The first stdout line it covers, and the last (equal for a single frame).
    pub lines: (u64, u64),
    /// Findings about the bytes and the grammar, formatted.
    pub issues: Vec<Issue>,
    /// Findings past the report's cap for their code: counted, never formatted.
    pub counted: Vec<&'static Rule>,
    /// Every JSON value recovered, with where it started.
    pub values: Vec<(Value, Pos)>,
    /// The messages, with whether their frame broke a rule (the reply is damaged).
    pub messages: Vec<(Message, bool, Pos)>,
    /// Raw ids of responses whose envelope is broken (a `"1"` answering `1`, an id inside a
    /// broken response).
    pub broken_ids: Vec<Value>,
    /// The frame broke a framing or grammar rule, or held no message.
    pub invalid: bool,
    /// How many frames count as invalid (a pretty-printed message: all its lines).
    pub invalid_frames: u64,
    /// An LSP `Content-Length` header was seen: replies will not come as lines.
    pub lsp: bool,
    /// A line that is not JSON at all but reads as a JSON-RPC response (`"id": <value>` and a
    /// `result` or `error` key, read lossily): the ids it names, for correlation only.
    pub corrupted_ids: Vec<Value>,
}

/// The judge of one stdout stream.
#[derive(Debug, Default)]
pub struct FrameJudge {
    joiner: Joiner,
}

impl FrameJudge {
    /// True while lines are held as a possible pretty-printed message.
    pub fn is_holding(&self) -> bool {
        self.joiner.is_holding()
    }

    /// Judges a frame: zero or more verdicts (the joiner may hold the frame, or give back lines
    /// it held). `negotiated` decides what JSON-RPC allows (batches); `wanted` whether a
    /// finding of a rule is formatted or only counted.
    pub fn offer(
        &mut self,
        frame: RawFrame,
        max_line_bytes: u64,
        negotiated: Option<&str>,
        wanted: &dyn Fn(&'static Rule) -> bool,
    ) -> Vec<Judged> {
        let inspected = frame::inspect_with(&frame, wanted);
        match self.joiner.offer(frame, &inspected, max_line_bytes) {
            Joined::Held => Vec::new(),
            Joined::Single(frames) => {
                // The frame just offered is the last one returned unless the joiner held it again.
                let current_included = !self.joiner.is_holding();
                let n = frames.len();
                // Moved, not cloned: the parsed value of a 4 MiB line can weigh 100 MB.
                let mut inspected = Some(inspected);
                frames
                    .into_iter()
                    .enumerate()
                    .map(|(i, f)| {
                        let verdict = if current_included && i + 1 == n {
                            inspected.take().unwrap_or_default()
                        } else {
                            never_completed(&f)
                        };
                        judge(&f, verdict, negotiated, wanted)
                    })
                    .collect()
            }
            Joined::Pretty { frames, value } => {
                vec![pretty(&frames, value, negotiated, wanted)]
            }
        }
    }

    /// Gives back held lines as non-JSON (the multi-line message never completed).
    pub fn flush(
        &mut self,
        negotiated: Option<&str>,
        wanted: &dyn Fn(&'static Rule) -> bool,
    ) -> Vec<Judged> {
        self.joiner
            .flush()
            .iter()
            .map(|f| judge(f, never_completed(f), negotiated, wanted))
            .collect()
    }
}

fn never_completed(f: &RawFrame) -> Inspected {
    Inspected {
        problems: vec![frame::incomplete_problem(f)],
        ..Inspected::default()
    }
}

/// A message pretty-printed over `frames`: one finding spanning them, the value recovered.
fn pretty(
    frames: &[RawFrame],
    value: Value,
    negotiated: Option<&str>,
    wanted: &dyn Fn(&'static Rule) -> bool,
) -> Judged {
    let first = &frames[0];
    let last = &frames[frames.len() - 1];
    let mut j = Judged {
        lines: (first.line, last.line),
        invalid: true,
        invalid_frames: frames.len() as u64,
        ..Judged::default()
    };
    j.issues.push(
        Issue::new(
            &rules::STDOUT_PRETTY_PRINTED,
            format!(
                "stdout lines {}-{} (byte {}) are one JSON message pretty-printed over {} lines: {}",
                first.line,
                last.line,
                first.byte_offset,
                frames.len(),
                frame::evidence(first)
            ),
        )
        .at_stdout(first.line, first.byte_offset)
        .evidence(frame::evidence(first)),
    );
    classify(&mut j, value, true, Pos::of(first), negotiated, wanted);
    j
}

/// Judges one frame whose content was inspected.
pub fn judge(
    frame: &RawFrame,
    inspected: Inspected,
    negotiated: Option<&str>,
    wanted: &dyn Fn(&'static Rule) -> bool,
) -> Judged {
    let damaged = !inspected.problems.is_empty();
    let mut j = Judged {
        lines: (frame.line, frame.line),
        invalid: damaged || inspected.values.is_empty(),
        ..Judged::default()
    };
    for p in &inspected.problems {
        j.lsp |= p.rule == &rules::STDOUT_CONTENT_LENGTH_FRAMING;
        if p.message.is_empty() {
            j.counted.push(p.rule);
        } else {
            j.issues.push(frame::issue(frame, p));
        }
    }
    if let Some(depth) = inspected.deep {
        // Valid JSON, only deep: a note, never damage.
        j.issues.push(
            Issue::new(
                &rules::STDOUT_DEEP_JSON,
                format!(
                    "{} is valid JSON nested {depth} levels deep; the guard checks its content to {} levels",
                    frame::position(frame),
                    super::json_text::KEEP_DEPTH
                ),
            )
            .at_stdout(frame.line, frame.byte_offset)
            .field("depth", depth as u64),
        );
    }
    if inspected.incomplete && inspected.problems.is_empty() {
        // An incomplete value that could not be held (unterminated): not JSON.
        j.issues
            .push(frame::issue(frame, &frame::incomplete_problem(frame)));
    }
    let no_values = inspected.values.is_empty();
    for value in inspected.values {
        classify(&mut j, value, damaged, Pos::of(frame), negotiated, wanted);
    }
    if no_values && !inspected.incomplete && !frame.truncated {
        j.corrupted_ids = response_ids(&frame.bytes);
    }
    if j.invalid {
        j.invalid_frames = j.invalid_frames.max(1);
    }
    j
}

/// Grammar findings of one frame formatted in full (the report keeps few more of one code).
const GRAMMAR_PER_FRAME: usize = 5;

/// Classifies a JSON value: grammar findings, messages, broken response ids.
fn classify(
    j: &mut Judged,
    value: Value,
    damaged: bool,
    pos: Pos,
    negotiated: Option<&str>,
    wanted: &dyn Fn(&'static Rule) -> bool,
) {
    // The evidence is the value's bytes, serialized once (a batch of a million elements can
    // break a rule a thousand times); past `GRAMMAR_PER_FRAME` findings the rest are counted.
    let mut evidence: Option<String> = None;
    for c in jsonrpc::classify(&value, negotiated) {
        for v in &c.violations {
            j.invalid = true;
            let formatted = j
                .issues
                .iter()
                .filter(|i| i.rule == &rules::STDOUT_INVALID_JSON_RPC)
                .count();
            if formatted >= GRAMMAR_PER_FRAME || !wanted(&rules::STDOUT_INVALID_JSON_RPC) {
                j.counted.push(&rules::STDOUT_INVALID_JSON_RPC);
                continue;
            }
            let evidence = evidence
                .get_or_insert_with(|| {
                    crate::issue::escape_bytes(
                        &serde_json::to_vec(&value).unwrap_or_default(),
                        frame::EVIDENCE_BYTES,
                    )
                })
                .clone();
            j.issues.push(
                Issue::new(
                    &rules::STDOUT_INVALID_JSON_RPC,
                    format!("stdout line {} {}", pos.line, v.message),
                )
                .detail(v.detail)
                .at_stdout(pos.line, pos.offset)
                .evidence(evidence),
            );
        }
        if let Some(raw) = c.broken_response_id {
            j.broken_ids.push(raw);
        }
        if let Some(msg) = c.message {
            j.messages
                .push((msg, damaged || !c.violations.is_empty(), pos));
        }
    }
    j.values.push((value, pos));
}

/// The ids a line that is not JSON names as a response, read lossily: only when it has a
/// `"result"` or `"error"` key, every `"id": <number or string>` (at most 16).
pub fn response_ids(bytes: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(bytes);
    if !(text.contains("\"result\"") || text.contains("\"error\"")) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut rest: &str = &text;
    while let Some(i) = rest.find("\"id\"") {
        rest = &rest[i + 4..];
        let Some(after) = rest.trim_start().strip_prefix(':') else {
            continue;
        };
        let token = after.trim_start();
        let end = if let Some(quoted) = token.strip_prefix('"') {
            quoted.find('"').map(|e| e + 2)
        } else {
            Some(
                token
                    .find(|c: char| !(c.is_ascii_digit() || c == '-'))
                    .unwrap_or(token.len()),
            )
        };
        if let Some(end) = end.filter(|e| *e > 0)
            && let Ok(v) = serde_json::from_str::<Value>(&token[..end])
        {
            out.push(v);
        }
        if out.len() >= 16 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn frame(line: u64, bytes: &[u8]) -> RawFrame {
        RawFrame {
            seq: line - 1,
            line,
            byte_offset: 0,
            at: Duration::ZERO,
            bytes: bytes.to_vec(),
            len: bytes.len() as u64,
            terminated: true,
            truncated: false,
        }
    }

    fn all(_: &'static Rule) -> bool {
        true
    }

    #[test]
    fn a_clean_reply_is_one_message_and_no_finding() {
        let mut j = FrameJudge::default();
        let out = j.offer(
            frame(1, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            1 << 20,
            None,
            &all,
        );
        assert_eq!(out.len(), 1);
        assert!(out[0].issues.is_empty() && !out[0].invalid);
        assert_eq!(out[0].messages.len(), 1);
    }

    #[test]
    fn a_pretty_printed_message_is_one_finding_over_its_lines() {
        let mut j = FrameJudge::default();
        assert!(j.offer(frame(1, b"{"), 1 << 20, None, &all).is_empty());
        assert!(
            j.offer(
                frame(2, br#" "jsonrpc":"2.0","id":1,"#),
                1 << 20,
                None,
                &all
            )
            .is_empty()
        );
        let out = j.offer(frame(3, br#" "result":{}}"#), 1 << 20, None, &all);
        assert_eq!(out[0].lines, (1, 3));
        assert_eq!(out[0].invalid_frames, 3);
        assert_eq!(out[0].issues[0].code(), "stdout-pretty-printed");
        assert!(out[0].messages[0].1, "the reply is damaged");
    }

    #[test]
    fn a_line_that_is_not_json_names_the_ids_of_the_reply_it_carries() {
        let f = frame(
            1,
            b"ready> {\"jsonrpc\":\"2.0\",\"id\" : 7,\"result\":{\"x\":\"caf\xe9\"}}",
        );
        let got = judge(&f, frame::inspect(&f), None, &all);
        assert_eq!(got.corrupted_ids, [Value::from(7)]);
        assert_eq!(response_ids(b"loading id 7"), Vec::<Value>::new());
        assert_eq!(
            response_ids(br#"{"id":"abc","error" garbage"#),
            [Value::from("abc")]
        );
    }

    #[test]
    fn past_the_cap_a_finding_is_counted_not_formatted() {
        let none = |_: &'static Rule| false;
        let f = frame(1, b"banner");
        let got = judge(&f, frame::inspect_with(&f, &none), None, &none);
        assert!(got.issues.is_empty());
        assert_eq!(got.counted.len(), 1);
    }
}
