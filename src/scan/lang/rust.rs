//! Rust: `print!`/`println!`, writes to `std::io::stdout()` (directly, through a variable or a
//! lock), `tracing_subscriber::fmt` without a stderr writer (its default is stdout), env_logger's
//! `Target::Stdout`, and `Command`s run with inherited stdout. `eprint!`, `eprintln!` and `dbg!`
//! write to stderr and are not reported. Writes whose payload is built with `serde_json` are the
//! hand-written transport.

use super::{Field, FileFacts, Finding, Lang, captured, query, snippet, text};
use crate::catalog::scan::{
    STATIC_PRINT_CALL, STATIC_STDOUT_INHERIT, STATIC_STDOUT_LOGGER, STATIC_STDOUT_WRITE,
};
use std::collections::HashSet;
use std::sync::LazyLock;
use tree_sitter::{Node, Query, Tree};

static QUERY: LazyLock<Query> = LazyLock::new(|| {
    query(
        Lang::Rust,
        "[(macro_invocation) (call_expression) (let_declaration) (scoped_identifier)] @n",
    )
});

struct Rs<'t> {
    src: &'t [u8],
    stdout_vars: HashSet<&'t str>,
    command_vars: HashSet<&'t str>,
    json_vars: HashSet<&'t str>,
    facts: FileFacts,
}

pub fn analyze(tree: &Tree, src: &[u8]) -> FileFacts {
    let nodes = captured(&QUERY, tree, src);
    let mut rs = Rs {
        src,
        stdout_vars: HashSet::new(),
        command_vars: HashSet::new(),
        json_vars: HashSet::new(),
        facts: FileFacts::default(),
    };
    for n in nodes.iter().filter(|n| n.kind() == "let_declaration") {
        rs.track(*n);
    }
    let uses_tracing = memchr::memmem::find(src, b"tracing_subscriber").is_some();
    for n in nodes {
        match n.kind() {
            "macro_invocation" => rs.mac(n),
            "call_expression" => rs.call(n, uses_tracing),
            "scoped_identifier" => {
                let t = text(n, src);
                if t.ends_with("Target::Stdout")
                    && n.parent().is_none_or(|p| p.kind() != "scoped_identifier")
                {
                    rs.facts.findings.push(Finding::at(
                        &STATIC_STDOUT_LOGGER,
                        n,
                        format!("`{t}` sends the logger's output to stdout"),
                    ));
                }
            }
            _ => {}
        }
    }
    rs.facts
}

fn mentions_stdout(t: &str) -> bool {
    t.contains("stdout()") && !t.contains("stderr")
}

impl<'t> Rs<'t> {
    fn text(&self, n: Node<'t>) -> &'t str {
        text(n, self.src)
    }

    fn track(&mut self, n: Node<'t>) {
        let (Some(pat), Some(value)) = (n.field("pattern"), n.field("value")) else {
            return;
        };
        // `let mut out = ...`: the identifier is the last named child of a mut pattern.
        let name = if pat.kind() == "identifier" {
            Some(pat)
        } else {
            let mut c = pat.walk();
            pat.named_children(&mut c)
                .find(|k| k.kind() == "identifier")
        };
        let Some(name) = name else { return };
        let name = self.text(name);
        let v = self.text(value);
        let root = v.split(['.', '(']).next().unwrap_or("").trim();
        if mentions_stdout(v) || self.stdout_vars.contains(root) {
            self.stdout_vars.insert(name);
        }
        if v.contains("Command::new") {
            self.command_vars.insert(name);
        }
        if v.contains("serde_json::to_") || v.contains("to_string(&") && v.contains("json") {
            self.json_vars.insert(name);
        }
    }

    fn is_stdout_expr(&self, t: &str) -> bool {
        let t = t.trim().trim_start_matches("&mut ").trim_start_matches('&');
        let root = t.split(['.', '(', ' ']).next().unwrap_or("");
        mentions_stdout(t) || self.stdout_vars.contains(root)
    }

    fn is_json(&self, t: &str) -> bool {
        t.contains("serde_json")
            || self.json_vars.iter().any(|v| {
                t.split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == *v)
            })
    }

    fn mac(&mut self, n: Node<'t>) {
        let Some(m) = n.field("macro") else {
            return;
        };
        let name = super::last_segment(self.text(m));
        let body = n
            .named_children(&mut n.walk())
            .find(|c| c.kind() == "token_tree")
            .map(|t| self.text(t))
            .unwrap_or("");
        match name {
            "print" | "println" => {
                if self.text(m).contains("::") && !self.text(m).starts_with("std::") {
                    return; // another crate's macro
                }
                self.facts.findings.push(Finding::at(
                    &STATIC_PRINT_CALL,
                    n,
                    format!("`{name}!` writes to stdout"),
                ));
            }
            "write" | "writeln" => {
                let inner = body.trim_start_matches(['(', '[', '{']);
                let first = inner.split(',').next().unwrap_or("");
                if self.is_stdout_expr(first) && !self.is_json(inner) {
                    self.facts.findings.push(Finding::at(
                        &STATIC_STDOUT_WRITE,
                        n,
                        format!("`{name}!({first}, ...)` writes to stdout"),
                    ));
                }
            }
            _ => {}
        }
    }

    fn call(&mut self, n: Node<'t>, uses_tracing: bool) {
        let Some(func) = n.field("function") else {
            return;
        };
        let args = n.field("arguments").map(|a| self.text(a)).unwrap_or("");
        match func.kind() {
            "field_expression" => {
                let (Some(value), Some(field)) = (func.field("value"), func.field("field")) else {
                    return;
                };
                let recv = self.text(value);
                match self.text(field) {
                    "write" | "write_all" | "write_fmt" | "write_vectored"
                        if self.is_stdout_expr(recv) && !self.is_json(args) =>
                    {
                        self.facts.findings.push(Finding::at(
                            &STATIC_STDOUT_WRITE,
                            n,
                            format!("`{}(...)` writes to stdout", snippet(func, self.src)),
                        ));
                    }
                    "status" | "spawn" => {
                        let root = recv.split(['.', '(']).next().unwrap_or("").trim();
                        let chained = recv.contains("Command::new") && !recv.contains(".stdout(");
                        let via_var = self.command_vars.contains(root)
                            && !self.sets_stdout(root)
                            && !recv.contains(".stdout(");
                        if chained || via_var {
                            self.facts.findings.push(Finding::at(
                                &STATIC_STDOUT_INHERIT,
                                n,
                                format!(
                                    "`.{}()` runs the child with the server's stdout (set `.stdout(Stdio::piped())` or `Stdio::null()`)",
                                    self.text(field)
                                ),
                            ));
                        }
                    }
                    _ => {}
                }
            }
            "scoped_identifier" | "identifier" => {
                let f = self.text(func);
                let tracing = uses_tracing
                    && matches!(
                        f,
                        "tracing_subscriber::fmt"
                            | "tracing_subscriber::fmt::init"
                            | "tracing_subscriber::fmt::layer"
                            | "tracing_subscriber::fmt::Subscriber::builder"
                            | "tracing_subscriber::FmtSubscriber::builder"
                            | "FmtSubscriber::builder"
                            | "fmt::layer"
                            | "fmt::init"
                            | "fmt::Subscriber::builder"
                            | "fmt"
                    );
                if tracing && !self.statement_text(n).contains("with_writer") {
                    self.facts.findings.push(Finding::at(
                        &STATIC_STDOUT_LOGGER,
                        n,
                        format!("`{f}()` without `.with_writer(std::io::stderr)` logs to stdout"),
                    ));
                }
            }
            _ => {}
        }
    }

    /// True when some statement rooted at `var` calls `.stdout(...)` on it, however the builder
    /// chain is laid out (`cmd\n    .stdin(..)\n    .stdout(..)`).
    fn sets_stdout(&self, var: &str) -> bool {
        let compact: Vec<u8> = self
            .src
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        let needle = format!("{var}.");
        let mut at = 0;
        while let Some(p) = memchr::memmem::find(&compact[at..], needle.as_bytes()) {
            let start = at + p;
            // Only a use of the variable itself, not `other_cmd.`.
            let standalone = start == 0
                || !(compact[start - 1].is_ascii_alphanumeric() || compact[start - 1] == b'_');
            let end = memchr::memchr(b';', &compact[start..]).map_or(compact.len(), |e| start + e);
            if standalone && memchr::memmem::find(&compact[start..end], b".stdout(").is_some() {
                return true;
            }
            at = start + needle.len();
        }
        false
    }

    /// The text of the statement a node belongs to (the whole builder chain).
    fn statement_text(&self, mut n: Node<'t>) -> &'t str {
        while let Some(p) = n.parent() {
            if matches!(
                p.kind(),
                "expression_statement" | "let_declaration" | "block" | "source_file"
            ) {
                return self.text(if p.kind() == "block" { n } else { p });
            }
            n = p;
        }
        self.text(n)
    }
}
