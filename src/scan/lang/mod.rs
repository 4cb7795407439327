//! Languages of the static scan: detection (extension, shebang), the byte prefilter, the
//! tree-sitter grammar of each, and the dispatch to the per-language analyzers.
//!
//! Python and JavaScript/TypeScript need real name resolution (scopes, imports, aliases, shadowed
//! builtins), so their analyzers walk the tree once with an explicit stack. The other languages
//! are resolved with tree-sitter queries compiled once per process plus a small import table.

pub mod csharp;
pub mod flow;
pub mod go;
pub mod java;
pub mod javascript;
pub mod kotlin;
pub mod python;
pub mod rust;

use crate::catalog::Rule;
use aho_corasick::{AhoCorasick, MatchKind};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::LazyLock;
use tree_sitter::{Language, Node, Query};

/// The most parts a dotted path built from source (`sys.stdout.write`) may have: far more than
/// any path a rule knows, and a bound on the work a chain of a million members can cause.
pub(crate) const MAX_PATH_PARTS: usize = 32;

/// A language the scan understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Rust,
    Java,
    Kotlin,
    CSharp,
}

impl Lang {
    /// The name reports use (`language` in JSON).
    pub fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Go => "go",
            Lang::Rust => "rust",
            Lang::Java => "java",
            Lang::Kotlin => "kotlin",
            Lang::CSharp => "csharp",
        }
    }

    /// The language of a file from its name alone; `None` for unknown extensions and for `.d.ts`
    /// declaration files, which carry no code.
    pub fn from_file_name(name: &str) -> Option<Lang> {
        let lower = name.to_ascii_lowercase();
        for decl in [".d.ts", ".d.mts", ".d.cts"] {
            if lower.ends_with(decl) {
                return None;
            }
        }
        let ext = lower.rsplit_once('.')?.1;
        Some(match ext {
            "py" | "pyi" | "pyw" => Lang::Python,
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" => Lang::Go,
            "rs" => Lang::Rust,
            "java" => Lang::Java,
            "kt" | "kts" => Lang::Kotlin,
            "cs" => Lang::CSharp,
            _ => return None,
        })
    }

    /// The language of an extension-less script from its `#!` line.
    pub fn from_shebang(head: &[u8]) -> Option<Lang> {
        let line = head.strip_prefix(b"#!")?;
        let line = &line[..memchr::memchr(b'\n', line).unwrap_or(line.len())];
        let line = String::from_utf8_lossy(line);
        let mut words = line.split_whitespace();
        let mut prog = words.next()?.rsplit('/').next()?.to_string();
        if prog == "env" {
            prog = words.find(|w| !w.starts_with('-'))?.to_string();
        }
        if prog.starts_with("python") || prog == "uv" || prog == "pypy" || prog.starts_with("pypy3")
        {
            Some(Lang::Python)
        } else if prog == "node" || prog == "nodejs" || prog == "bun" {
            Some(Lang::JavaScript)
        } else if prog == "deno" || prog == "ts-node" || prog == "tsx" {
            Some(Lang::TypeScript)
        } else {
            None
        }
    }

    pub fn grammar(self) -> Language {
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
            Lang::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        }
    }

    /// Byte strings at least one of which must occur in a file for it to contain any candidate;
    /// a file with none of them is never parsed. Every pattern a rule of the language can report
    /// contains one of these tokens (the fixture test proves it: it scans with the prefilter on).
    pub fn prefilter(self) -> &'static [&'static str] {
        // Derived from the language's sink table (`sinks::prefilter_words`).
        static DERIVED: LazyLock<Vec<(Lang, Vec<&'static str>)>> = LazyLock::new(|| {
            ALL.iter()
                .map(|&l| (l, crate::scan::sinks::prefilter_words(l)))
                .collect()
        });
        DERIVED
            .iter()
            .find(|(l, _)| *l == self)
            .map_or(&[], |(_, words)| words.as_slice())
    }

    /// Does `bytes` hold one of the [`Lang::prefilter`] words? One pass over the file for all
    /// of them (a search per word read a file that holds none up to twenty times).
    pub fn prefilter_matches(self, bytes: &[u8]) -> bool {
        self.prefilter_searcher().is_match(bytes)
    }

    /// The searcher of the [`Lang::prefilter`] words (leftmost-first: the SIMD searcher for
    /// few short literals applies).
    pub fn prefilter_searcher(self) -> &'static AhoCorasick {
        static SEARCHERS: LazyLock<Vec<AhoCorasick>> = LazyLock::new(|| {
            ALL.iter()
                .map(|&l| {
                    AhoCorasick::builder()
                        .match_kind(MatchKind::LeftmostFirst)
                        .build(l.prefilter())
                        .expect("prefilter words are a few short literals")
                })
                .collect()
        });
        let i = ALL
            .iter()
            .position(|&l| l == self)
            .expect("ALL lists every language");
        &SEARCHERS[i]
    }

    /// The line-comment prefixes suppression markers may follow.
    pub fn comment_kinds(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &["comment"],
            Lang::Kotlin => &["line_comment", "block_comment", "comment"],
            Lang::Rust | Lang::Java => &["line_comment", "block_comment"],
            _ => &["comment"],
        }
    }
}

/// One candidate finding of an analyzer, before suppression, severity context and file names.
#[derive(Debug, Clone)]
pub struct Finding {
    pub rule: &'static Rule,
    /// 0-based row and byte column of the start and the end (exclusive) of the reported node.
    pub start: (usize, usize),
    pub end: (usize, usize),
    pub message: String,
    /// Overrides the rule's help when set.
    pub help: Option<String>,
    /// Dropped at the end of a scan if any scanned file satisfied the condition.
    pub unless: Option<Condition>,
    /// In code compiled for tests only (`#[cfg(test)] mod tests`): the file's test-file
    /// treatment applies, whatever the file is.
    pub test: bool,
}

/// A cross-file condition that cancels a finding (see [`Finding::unless`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Condition {
    /// Some scanned file calls `structlog.configure(...)`.
    StructlogConfigured,
}

impl Finding {
    pub fn at(rule: &'static Rule, node: Node, message: impl Into<String>) -> Finding {
        let s = node.start_position();
        let e = node.end_position();
        Finding {
            rule,
            start: (s.row, s.column),
            end: (e.row, e.column),
            message: message.into(),
            help: None,
            unless: None,
            test: false,
        }
    }

    pub fn help(mut self, help: impl Into<String>) -> Finding {
        self.help = Some(help.into());
        self
    }
}

/// What one analyzer returns for one file.
#[derive(Debug, Default)]
pub struct FileFacts {
    pub findings: Vec<Finding>,
    /// Conditions this file satisfies (e.g. it configures structlog).
    pub satisfies: Vec<Condition>,
    /// The sink-table rows (by name) this file's analysis matched, whether or not they gave
    /// a finding: the fixture test requires every row of every table to be exercised.
    pub rows: Vec<&'static str>,
}

/// A fast non-cryptographic hasher for the analyzers' small maps (names, node ids): the
/// default SipHash showed up in profiles. Keys come from the scanned file, and a file that makes
/// the maps collide only slows its own scan down.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
}

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

/// The text of a node (lossy only for files that were not UTF-8 to begin with).
pub fn text<'s>(node: Node, src: &'s [u8]) -> &'s str {
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("")
}

/// Shortens a node's text for a message: the first line, at most 60 characters.
pub fn snippet(node: Node, src: &[u8]) -> String {
    let t = text(node, src);
    let line = t.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(60).collect();
    if out.len() < line.len() || t.contains('\n') {
        out.push_str("...");
    }
    out
}

/// Compiles a query once; a broken query is a bug of the program, caught by the tests.
pub fn query(lang: Lang, source: &str) -> Query {
    Query::new(&lang.grammar(), source)
        .unwrap_or_else(|e| panic!("static scan query for {} is invalid: {e}", lang.name()))
}

/// Queries of the suppression comments, one per language, compiled on first use.
pub fn comment_query(lang: Lang) -> &'static Query {
    static QUERIES: LazyLock<Vec<(Lang, Query)>> = LazyLock::new(|| {
        ALL.iter()
            .map(|&l| {
                let kinds = l
                    .comment_kinds()
                    .iter()
                    .filter(|k| l.grammar().id_for_node_kind(k, true) != 0)
                    .map(|k| format!("({k}) @c"))
                    .collect::<Vec<_>>()
                    .join(" ");
                (l, query(l, &format!("[{kinds}]")))
            })
            .collect()
    });
    &QUERIES
        .iter()
        .find(|(l, _)| *l == lang)
        .expect("every language has a comment query")
        .1
}

pub const ALL: [Lang; 9] = [
    Lang::Python,
    Lang::JavaScript,
    Lang::TypeScript,
    Lang::Tsx,
    Lang::Go,
    Lang::Rust,
    Lang::Java,
    Lang::Kotlin,
    Lang::CSharp,
];

/// Field ids by name for one grammar: `child_by_field_name` scans every field name with
/// `strncmp` on each call, which showed up in profiles; this is one hash lookup.
pub struct Fields(HashMap<&'static str, u16>);

impl Fields {
    fn new(lang: Lang) -> Fields {
        let g = lang.grammar();
        Fields(
            (1..=g.field_count() as u16)
                .filter_map(|id| g.field_name_for_id(id).map(|n| (n, id)))
                .collect(),
        )
    }
}

thread_local! {
    static FIELDS: Cell<Option<&'static Fields>> = const { Cell::new(None) };
}

fn fields_of(lang: Lang) -> &'static Fields {
    static TABLES: LazyLock<Vec<(Lang, Fields)>> =
        LazyLock::new(|| ALL.iter().map(|&l| (l, Fields::new(l))).collect());
    &TABLES
        .iter()
        .find(|(l, _)| *l == lang)
        .expect("every language has a field table")
        .1
}

/// `node.field("function")`: `child_by_field_name` through the analyzed language's table.
pub trait Field<'t> {
    fn field(self, name: &str) -> Option<Node<'t>>;
}

impl<'t> Field<'t> for Node<'t> {
    fn field(self, name: &str) -> Option<Node<'t>> {
        match FIELDS.with(Cell::get) {
            Some(table) => table.0.get(name).and_then(|id| self.child_by_field_id(*id)),
            None => self.child_by_field_name(name),
        }
    }
}

/// Runs the analyzer of a language over a parsed tree.
pub fn analyze(lang: Lang, tree: &tree_sitter::Tree, src: &str) -> FileFacts {
    FIELDS.with(|f| f.set(Some(fields_of(lang))));
    match lang {
        Lang::Python => python::analyze(tree, src),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => javascript::analyze(tree, src),
        Lang::Go => go::analyze(tree, src),
        Lang::Rust => rust::analyze(tree, src),
        Lang::Java => java::analyze(tree, src),
        Lang::Kotlin => kotlin::analyze(tree, src),
        Lang::CSharp => csharp::analyze(tree, src),
    }
}

/// Visits every node in document order with one tree cursor (no allocation per node), passing
/// its parent and the scope it is in; `enter` returns the scope of the node's children.
pub fn walk<'t>(
    root: Node<'t>,
    root_scope: usize,
    mut enter: impl FnMut(Node<'t>, Option<Node<'t>>, usize) -> usize,
) {
    let mut cursor = root.walk();
    let mut path: Vec<(Node<'t>, usize)> = Vec::new();
    let mut scope = root_scope;
    loop {
        let node = cursor.node();
        let inner = enter(node, path.last().map(|(n, _)| *n), scope);
        if cursor.goto_first_child() {
            path.push((node, scope));
            scope = inner;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            match path.pop() {
                Some((_, s)) => scope = s,
                None => return,
            }
        }
    }
}

/// Runs a query once over a tree and returns every captured node, in document order.
pub fn captured<'t>(query: &Query, tree: &'t tree_sitter::Tree, src: &[u8]) -> Vec<Node<'t>> {
    use tree_sitter::StreamingIterator;
    let mut cursor = tree_sitter::QueryCursor::new();
    let mut out = Vec::new();
    let mut it = cursor.captures(query, tree.root_node(), src);
    while let Some((m, i)) = it.next() {
        out.push(m.captures[*i].node);
    }
    out
}

/// The last `::`/`.`-separated segment of a path.
pub fn last_segment(path: &str) -> &str {
    path.rsplit(['.', ':']).next().unwrap_or(path)
}

/// True for a function name that says it writes protocol messages (`send`, `reply`,
/// `write_message`, `emitResponse`): a JSON serialization printed there is the hand-written
/// transport.
pub fn is_transport_function(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "send",
        "reply",
        "respond",
        "response",
        "write",
        "emit",
        "transport",
        "notify",
        "output",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// Callee names that set up a protocol transport or wrap the stream (not a stray write).
pub fn is_transport_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "stdio",
        "transport",
        "serve",
        "server",
        "listen",
        "connect",
        "wrap",
        "framed",
        "codec",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_by_name_and_shebang() {
        assert_eq!(Lang::from_file_name("a.py"), Some(Lang::Python));
        assert_eq!(Lang::from_file_name("A.MJS"), Some(Lang::JavaScript));
        assert_eq!(Lang::from_file_name("x.tsx"), Some(Lang::Tsx));
        assert_eq!(Lang::from_file_name("index.d.ts"), None);
        assert_eq!(Lang::from_file_name("README"), None);
        assert_eq!(
            Lang::from_shebang(b"#!/usr/bin/env python3\nx"),
            Some(Lang::Python)
        );
        assert_eq!(
            Lang::from_shebang(b"#!/usr/bin/env -S node --no-warnings\n"),
            Some(Lang::JavaScript)
        );
        assert_eq!(Lang::from_shebang(b"#!/bin/sh\n"), None);
        assert_eq!(Lang::from_shebang(b"print(1)"), None);
    }

    #[test]
    fn every_comment_query_compiles() {
        for lang in ALL {
            let _ = comment_query(lang);
        }
    }
}
