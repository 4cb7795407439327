//! The issue catalogue: every code the guard can report, declared exactly once.
//!
//! A [`Rule`] carries the code, its class (the registry display bucket), its default severity, the
//! check it belongs to (the `checks.*` entry of the JSON contract), a one-line summary and the doc
//! sections *What it catches / Why it matters / Example / Fix*. Everything else reads from here:
//! `explain`, `docs/rules.md`, SARIF `rules[]`, JUnit test names, `--select/--ignore`. An
//! [`Issue`](crate::issue::Issue) can only be built from a `&'static Rule`, so a free-form code
//! cannot exist anywhere else in the program.
//!
//! Rules are grouped by area in sub-modules, each declared through the [`rules!`] macro, which also
//! builds that area's `ALL` list so that no rule can be declared and forgotten.

use serde::Serialize;

/// The registry display bucket of a rule (the reference tool's `issueClasses`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Class {
    /// The command could not start, timed out, exited or crashed: runtime health, not conformance.
    InstallRuntime,
    /// stdout was not a clean newline-delimited JSON-RPC channel, the stdio lifecycle was broken,
    /// or source code writes to stdout (static-scan findings, as in the reference).
    StdioTransport,
    /// The server emitted invalid JSON-RPC or MCP messages or mishandled the protocol.
    McpProtocol,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::InstallRuntime => "installRuntime",
            Class::StdioTransport => "stdioTransport",
            Class::McpProtocol => "mcpProtocol",
        }
    }
}

/// How bad a finding is. Only `Error` fails a run (exit code 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational: recorded and shown, never fails and never counts as a warning.
    Note,
    /// SHOULD-level rule or portability hazard: shown, does not fail.
    Warning,
    /// A MUST-level violation or a defect that breaks real clients: fails the run.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// The `checks.*` bucket of the JSON contract a rule reports under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Check {
    Initialize,
    Stdout,
    JsonRpc,
    Operation,
    Capabilities,
    ToolSchema,
    Adversarial,
    Effects,
    Process,
    PythonBuffering,
    StaticScan,
    Repeat,
}

impl Check {
    /// Every check, in the order the JSON contract and the reports list them.
    pub const ALL: [Check; 12] = [
        Check::Initialize,
        Check::Stdout,
        Check::JsonRpc,
        Check::Operation,
        Check::Capabilities,
        Check::ToolSchema,
        Check::Adversarial,
        Check::Effects,
        Check::Process,
        Check::PythonBuffering,
        Check::StaticScan,
        Check::Repeat,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Check::Initialize => "initialize",
            Check::Stdout => "stdout",
            Check::JsonRpc => "jsonRpc",
            Check::Operation => "operation",
            Check::Capabilities => "capabilities",
            Check::ToolSchema => "toolSchema",
            Check::Adversarial => "adversarial",
            Check::Effects => "effects",
            Check::Process => "process",
            Check::PythonBuffering => "pythonBuffering",
            Check::StaticScan => "staticScan",
            Check::Repeat => "repeat",
        }
    }

    /// A one-line human title, used by text and JUnit output.
    pub fn title(self) -> &'static str {
        match self {
            Check::Initialize => "initialize handshake",
            Check::Stdout => "stdout framing",
            Check::JsonRpc => "JSON-RPC grammar",
            Check::Operation => "explicit operations",
            Check::Capabilities => "advertised capabilities",
            Check::ToolSchema => "tool metadata",
            Check::Adversarial => "adversarial probes",
            Check::Effects => "no-effect proof",
            Check::Process => "process lifecycle",
            Check::PythonBuffering => "stdio buffering",
            Check::StaticScan => "static scan",
            Check::Repeat => "repeat drift",
        }
    }
}

/// One entry of the catalogue.
#[derive(Debug)]
pub struct Rule {
    /// The stable code, kebab-case (`stdout-non-json`).
    pub code: &'static str,
    pub class: Class,
    pub severity: Severity,
    pub check: Check,
    /// One line: what the code means.
    pub summary: &'static str,
    /// Doc section: what it catches.
    pub what: &'static str,
    /// Doc section: why it matters.
    pub why: &'static str,
    /// Doc section: an example of offending output or code.
    pub example: &'static str,
    /// Doc section: how to fix it. The first sentence is the default `help:` line.
    pub fix: &'static str,
    /// The finer `detailCode`s this code may carry (reference-compatible where the reference has them).
    pub detail_codes: &'static [&'static str],
    /// True when the reference tool (JavaScript, same name) has this exact code.
    pub reference: bool,
}

impl Rule {
    /// The template every declaration starts from; `rules!` fills in the rest.
    pub const BLANK: Rule = Rule {
        code: "",
        class: Class::McpProtocol,
        severity: Severity::Error,
        check: Check::JsonRpc,
        summary: "",
        what: "",
        why: "",
        example: "",
        fix: "",
        detail_codes: &[],
        reference: false,
    };

    /// The default `help:` text: the whole fix section (one or two sentences).
    pub fn help(&self) -> &'static str {
        self.fix
    }

    /// The first sentence of the fix, for places with room for one line only.
    pub fn help_short(&self) -> &'static str {
        first_sentence(self.fix)
    }

    /// The anchor of this rule in `docs/rules.md`.
    pub fn docs_anchor(&self) -> String {
        format!("docs/rules.md#{}", self.code)
    }

    /// The docs URL used by SARIF `helpUri` and the text output.
    pub fn docs_url(&self) -> String {
        format!("{}/blob/main/{}", crate::REPOSITORY_URL, self.docs_anchor())
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
    }
}
impl Eq for Rule {}

fn first_sentence(text: &'static str) -> &'static str {
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'.' && (i + 1 == bytes.len() || bytes[i + 1] == b' ' || bytes[i + 1] == b'\n') {
            return &text[..=i];
        }
    }
    text
}

/// Declares rules as `pub static` items and an `ALL` slice listing them in declaration order.
macro_rules! rules {
    ($( $id:ident { $($field:ident : $val:expr),* $(,)? } )*) => {
        $(
            // A rule that sets every field leaves nothing for `BLANK` to fill.
            #[allow(clippy::needless_update)]
            pub static $id: $crate::catalog::Rule = $crate::catalog::Rule {
                $($field: $val,)*
                ..$crate::catalog::Rule::BLANK
            };
        )*
        /// Every rule of this area, in declaration order.
        pub static ALL: &[&$crate::catalog::Rule] = &[$(&$id),*];
    };
}

pub mod adversarial;
pub mod protocol;
pub mod runtime;
pub mod scan;

/// Every area's list, in the order docs and SARIF present them.
static AREAS: &[&[&Rule]] = &[runtime::ALL, protocol::ALL, adversarial::ALL, scan::ALL];

/// Every rule of the catalogue, in a stable order.
pub fn all() -> impl Iterator<Item = &'static Rule> {
    AREAS.iter().flat_map(|area| area.iter().copied())
}

/// Looks a rule up by its code.
pub fn find(code: &str) -> Option<&'static Rule> {
    all().find(|rule| rule.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_kebab_case_and_documented() {
        let mut seen = HashSet::new();
        for rule in all() {
            assert!(seen.insert(rule.code), "duplicate code {}", rule.code);
            assert!(
                !rule.code.is_empty()
                    && rule
                        .code
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "code {:?} is not kebab-case",
                rule.code
            );
            for (name, text) in [
                ("summary", rule.summary),
                ("what", rule.what),
                ("why", rule.why),
                ("example", rule.example),
                ("fix", rule.fix),
            ] {
                assert!(
                    !text.trim().is_empty(),
                    "{} has no {name} section",
                    rule.code
                );
            }
            assert!(
                rule.help_short().ends_with('.'),
                "{}: the fix must start with a full sentence",
                rule.code
            );
        }
    }

    #[test]
    fn first_sentence_stops_at_the_first_period_followed_by_space() {
        assert_eq!(first_sentence("Do this. Then that."), "Do this.");
        assert_eq!(first_sentence("Use v1.2 now. Later."), "Use v1.2 now.");
        assert_eq!(first_sentence("No period"), "No period");
    }

    /// No code string exists outside the catalogue: code that is not a test names a rule by its
    /// static (`&rules::X`), never by its code (`"stdout-non-json"`), so renaming a code cannot
    /// silently break a comparison.
    #[test]
    fn no_code_string_outside_the_catalogue() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![root.clone()];
        let mut found = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if path != root.join("catalog") {
                        stack.push(path);
                    }
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // Unit tests (at the end of a file) may spell codes out.
                let code_part = text.split("#[cfg(test)]").next().unwrap_or("");
                for rule in all() {
                    let quoted = format!("\"{}\"", rule.code);
                    // `process.outcome: "spawn-failed"` is the reference's outcome value, not
                    // the code.
                    let outcome =
                        rule.code == "spawn-failed" && path.ends_with("runtime/record.rs");
                    if code_part.contains(&quoted) && !outcome {
                        found.push(format!("{}: {quoted}", path.display()));
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "code strings outside src/catalog/:\n{}",
            found.join("\n")
        );
    }
}
