//! `Issue`: one finding, built from a catalogue rule. Findings are data, never errors of the tool.

use crate::catalog::{Rule, Severity};
use serde::Serialize;
use std::path::PathBuf;

/// Where a finding is anchored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Location {
    /// A position in one of the server's streams (1-based line, 0-based byte offset from the start).
    #[serde(rename_all = "camelCase")]
    Stream {
        stream: Stream,
        line: u64,
        byte_offset: u64,
    },
    /// A position in a source file (1-based lines and columns; `file` relative to the working directory).
    #[serde(rename_all = "camelCase")]
    Source {
        file: PathBuf,
        line: u32,
        column: u32,
        end_line: u32,
        end_column: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdin,
    Stdout,
    Stderr,
}

/// The phase of a runtime session an issue was observed in (the reference's `process.phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Startup,
    Initialize,
    PostInitialize,
    Capabilities,
    Operation,
    Adversarial,
    Shutdown,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Startup => "startup",
            Phase::Initialize => "initialize",
            Phase::PostInitialize => "post-initialize",
            Phase::Capabilities => "capabilities",
            Phase::Operation => "operation",
            Phase::Adversarial => "adversarial",
            Phase::Shutdown => "shutdown",
        }
    }

    /// The phase in the reference's terms (`startup`, `initialize`, `operation`, `adversarial`,
    /// `post-initialize`): the capability probes and the shutdown ladder come after the
    /// handshake with no operation of the user's pending, so they are `post-initialize`; the
    /// finer phase is `phaseDetail` in the JSON report.
    pub fn contract_str(self) -> &'static str {
        match self {
            Phase::Capabilities | Phase::Shutdown => Phase::PostInitialize.as_str(),
            other => other.as_str(),
        }
    }
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Issue {
    pub rule: &'static Rule,
    pub severity: Severity,
    /// One sentence naming the problem, the offending token quoted.
    pub message: String,
    /// One sentence naming the fix; defaults to the rule's.
    pub help: String,
    pub detail_code: Option<&'static str>,
    pub location: Option<Location>,
    /// The offending bytes, escaped (`b"..."`), when there are any.
    pub evidence: Option<String>,
    pub phase: Option<Phase>,
    /// 1-based run number when `--repeat` ran several processes.
    pub run: Option<u32>,
    /// Extra stable fields for the JSON contract (`spawnErrorCode`, `probe`, `method`, ...).
    pub fields: serde_json::Map<String, serde_json::Value>,
}

impl Issue {
    pub fn new(rule: &'static Rule, message: impl Into<String>) -> Issue {
        Issue {
            rule,
            severity: rule.severity,
            message: message.into(),
            help: rule.help().to_string(),
            detail_code: None,
            location: None,
            evidence: None,
            phase: None,
            run: None,
            fields: serde_json::Map::new(),
        }
    }

    pub fn code(&self) -> &'static str {
        self.rule.code
    }

    pub fn severity(mut self, severity: Severity) -> Issue {
        self.severity = severity;
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Issue {
        self.help = help.into();
        self
    }

    /// Attaches a detail code; it must be one the rule declares.
    pub fn detail(mut self, detail: &'static str) -> Issue {
        debug_assert!(
            self.rule.detail_codes.contains(&detail),
            "{} does not declare detail code {detail}",
            self.rule.code
        );
        self.detail_code = Some(detail);
        self
    }

    pub fn at(mut self, location: Location) -> Issue {
        self.location = Some(location);
        self
    }

    pub fn at_stdout(self, line: u64, byte_offset: u64) -> Issue {
        self.at(Location::Stream {
            stream: Stream::Stdout,
            line,
            byte_offset,
        })
    }

    pub fn evidence(mut self, evidence: impl Into<String>) -> Issue {
        self.evidence = Some(evidence.into());
        self
    }

    pub fn phase(mut self, phase: Phase) -> Issue {
        self.phase = Some(phase);
        self
    }

    pub fn field(mut self, key: &str, value: impl Into<serde_json::Value>) -> Issue {
        self.fields.insert(key.to_string(), value.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Whether this finding is of `rule` (by identity: rules are compared as the catalogue's
    /// statics, never by their code strings).
    pub fn is(&self, rule: &'static Rule) -> bool {
        std::ptr::eq(self.rule, rule)
    }

    /// What identifies the defect behind this finding, wherever it was seen: the code and the
    /// offending bytes, or else the message without what differs between processes (stdout
    /// positions, request ids, timings). Two findings with one cause are one root cause.
    pub fn cause(&self) -> (&'static str, String) {
        let what = match &self.evidence {
            Some(e) => e.clone(),
            None => mask_positions(&self.message),
        };
        (self.code(), what)
    }
}

impl Issue {
    /// [`Issue::cause`] with every number masked, for telling a server's habit from a new
    /// defect across processes: `debug: request 7 handled` in a probe's process is the same
    /// habit as `debug: request 3 handled` in the main run.
    pub fn habit(&self) -> (&'static str, String) {
        let (code, what) = self.cause();
        let mut out = String::with_capacity(what.len());
        let mut in_number = false;
        for c in what.chars() {
            if c.is_ascii_digit() {
                if !in_number {
                    out.push('N');
                }
                in_number = true;
            } else {
                in_number = false;
                out.push(c);
            }
        }
        (code, out)
    }
}

/// `message` with the numbers that name a place or a moment masked: `line 3`, `lines 3-5`,
/// `byte 120`, `#7`, `250 ms`. Other numbers (a tool's index, an error code) stay.
pub fn mask_positions(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (text, tail) = rest.split_at(digits);
        out.push_str(text);
        let run = tail
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(tail.len());
        let (number, after) = tail.split_at(run);
        if number.is_empty() {
            break;
        }
        let place = ["line ", "lines ", "byte ", "#"]
            .iter()
            .any(|w| text.ends_with(w));
        let moment = after.starts_with(" ms");
        if place || moment {
            out.push('N');
        } else {
            out.push_str(number);
        }
        rest = after;
    }
    out
}

/// Escapes bytes the way the reports show them: `b"..."` with `\n`, `\r`, `\t`, `\\`, `\"` and
/// `\xNN` for every byte outside printable ASCII, cut at `max` input bytes with a `...` marker.
pub fn escape_bytes(bytes: &[u8], max: usize) -> String {
    let shown = &bytes[..bytes.len().min(max)];
    let mut out = String::with_capacity(shown.len() + 8);
    out.push_str("b\"");
    for &b in shown {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    if bytes.len() > max {
        out.push_str(&format!("... ({} bytes)", bytes.len()));
    }
    out
}

/// The bytes of the report's evidence string (`b"..."`, see [`escape_bytes`])
/// and whether it was cut short (`b"..."... (N bytes)`).
pub fn unescape_evidence(evidence: &str) -> Option<(Vec<u8>, bool)> {
    let body = evidence.strip_prefix("b\"")?;
    let mut out = Vec::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                let rest = &body[i + 1..];
                return Some((out, !rest.trim().is_empty()));
            }
            '\\' => match chars.next()?.1 {
                'n' => out.push(b'\n'),
                'r' => out.push(b'\r'),
                't' => out.push(b'\t'),
                '\\' => out.push(b'\\'),
                '"' => out.push(b'"'),
                'x' => {
                    let hi = chars.next()?.1.to_digit(16)?;
                    let lo = chars.next()?.1.to_digit(16)?;
                    out.push((hi * 16 + lo) as u8);
                }
                _ => return None,
            },
            other => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_bytes_is_unambiguous() {
        assert_eq!(
            escape_bytes(b"loading optional extension\n", 80),
            r#"b"loading optional extension\n""#
        );
        assert_eq!(
            escape_bytes(b"\xef\xbb\xbf{\"a\"}", 80),
            r#"b"\xef\xbb\xbf{\"a\"}""#
        );
        assert_eq!(escape_bytes(b"abcdef", 3), r#"b"abc"... (6 bytes)"#);
    }

    #[test]
    fn positions_and_moments_are_masked_other_numbers_stay() {
        assert_eq!(
            mask_positions("stdout line 12 (byte 340) answers ping #7 after 250 ms"),
            "stdout line N (byte N) answers ping #N after N ms"
        );
        assert_eq!(
            mask_positions("stdout lines 3-5 hold tools[2] with error -32601"),
            "stdout lines N hold tools[2] with error -32601"
        );
    }

    #[test]
    fn evidence_round_trips() {
        let bytes = b"caf\xc3\xa9 \"x\"\t\\ \xff\n";
        let e = escape_bytes(bytes, 120);
        assert_eq!(unescape_evidence(&e), Some((bytes.to_vec(), false)));
        let e = escape_bytes(&[b'a'; 200], 120);
        assert_eq!(unescape_evidence(&e), Some((vec![b'a'; 120], true)));
        let e = format!("{} (5000 bytes in the line)", escape_bytes(b"ab", 120));
        assert_eq!(unescape_evidence(&e), Some((b"ab".to_vec(), true)));
    }
}
