//! Where a runtime finding's stdout line was written in the server's code: the `source` field
//! [`crate::trace`] adds to a finding, read back by every report format.

use crate::issue::Issue;
use serde_json::{Value, json};

/// How sure a match is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confidence {
    /// A literal equal to the line.
    Exact,
    /// Literal text around holes (interpolations, format specs, other arguments), or a logger's
    /// message inside the line.
    Pattern,
    /// No text matched; the tree has one stdout write and its text is not a literal.
    OnlyCandidate,
    /// Several calls print this text.
    Ambiguous,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Exact => "exact",
            Confidence::Pattern => "pattern",
            Confidence::OnlyCandidate => "only-candidate",
            Confidence::Ambiguous => "ambiguous",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Confidence> {
        [
            Confidence::Exact,
            Confidence::Pattern,
            Confidence::OnlyCandidate,
            Confidence::Ambiguous,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

/// A write call a finding was traced to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Relative to the guard's working directory when under it, else absolute.
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub sink: String,
    pub confidence: Confidence,
    /// The call's place in the compiled file, when mapped back through a source map.
    pub compiled: Option<(String, u32, u32)>,
}

/// What a finding was traced to: one call, or several that print the same text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    One(Written),
    Ambiguous(Vec<Written>),
}

impl Written {
    pub(crate) fn to_json(&self) -> Value {
        let mut v = json!({
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "endLine": self.end_line,
            "endColumn": self.end_column,
            "sink": self.sink,
            "confidence": self.confidence.as_str(),
        });
        if let Some((file, line, column)) = &self.compiled {
            v["compiled"] = json!({"file": file, "line": line, "column": column});
        }
        v
    }

    pub(crate) fn from_json(v: &Value) -> Option<Written> {
        let n = |k: &str| v.get(k).and_then(Value::as_u64).map(|x| x as u32);
        Some(Written {
            file: v.get("file")?.as_str()?.to_string(),
            line: n("line")?,
            column: n("column")?,
            end_line: n("endLine")?,
            end_column: n("endColumn")?,
            sink: v.get("sink")?.as_str()?.to_string(),
            confidence: Confidence::parse(v.get("confidence")?.as_str()?)?,
            compiled: v.get("compiled").and_then(|c| {
                Some((
                    c.get("file")?.as_str()?.to_string(),
                    c.get("line")?.as_u64()? as u32,
                    c.get("column")?.as_u64()? as u32,
                ))
            }),
        })
    }

    /// `server.py:6 (print)`.
    pub fn short(&self) -> String {
        format!("{}:{} ({})", self.file, self.line, self.sink)
    }
}

impl Source {
    /// The `source` field of a finding.
    pub fn to_json(&self) -> Value {
        match self {
            Source::One(w) => w.to_json(),
            Source::Ambiguous(all) => json!({
                "confidence": Confidence::Ambiguous.as_str(),
                "candidates": all.iter().map(Written::to_json).collect::<Vec<_>>(),
            }),
        }
    }

    pub fn from_json(v: &Value) -> Option<Source> {
        if v.get("confidence").and_then(Value::as_str) == Some(Confidence::Ambiguous.as_str()) {
            let all = v
                .get("candidates")?
                .as_array()?
                .iter()
                .map(Written::from_json)
                .collect::<Option<Vec<_>>>()?;
            return Some(Source::Ambiguous(all));
        }
        Written::from_json(v).map(Source::One)
    }

    /// The source a finding was traced to, if it was.
    pub fn of(issue: &Issue) -> Option<Source> {
        issue.fields.get("source").and_then(Source::from_json)
    }

    /// The one call, when the trace found exactly one.
    pub fn unique(&self) -> Option<&Written> {
        match self {
            Source::One(w) => Some(w),
            Source::Ambiguous(_) => None,
        }
    }

    /// What the text report and the other formats say about it: `written by server.py:6
    /// (print)`, with how the match was made when it was not an exact literal.
    pub fn sentence(&self) -> String {
        match self {
            Source::One(w) => match w.confidence {
                Confidence::Exact => format!("written by {}", w.short()),
                Confidence::Pattern => format!(
                    "written by {}:{} ({}, its text with the values filled in)",
                    w.file, w.line, w.sink
                ),
                Confidence::OnlyCandidate => format!(
                    "possibly written by {}: no write's text matches the line, and this is the only stdout write in the tree",
                    w.short()
                ),
                Confidence::Ambiguous => format!("written by {}", w.short()),
            },
            Source::Ambiguous(all) => format!(
                "written by one of {} calls that print this text: {}",
                all.len(),
                all.iter()
                    .map(Written::short)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}
