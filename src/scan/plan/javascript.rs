//! The JavaScript/TypeScript lexer of the plan: strings, templates (with their `${}` code),
//! regular expressions and comments; statements start in column 0 outside brackets.

use super::{
    Plan, SHORT_STATEMENT, Stmt, Vocab, follow_aliases, is_ident, is_ident_start, owner_before,
    push_range, word_at,
};
use crate::scan::lang::Lang;
use crate::scan::sinks::javascript::{GLOBAL_OBJECTS, GLOBALS};
use std::ops::Range;
use std::sync::LazyLock;

/// JavaScript's vocabulary, derived from its sink table; `globalThis.console` is `console`.
pub(super) static VOCAB: LazyLock<Vocab> =
    LazyLock::new(|| Vocab::derive(Lang::JavaScript, GLOBAL_OBJECTS, Some(GLOBALS)));

/// Keywords after which a `/` starts a regular expression, not a division.
const REGEX_AFTER: &[&[u8]] = &[
    b"return",
    b"typeof",
    b"case",
    b"do",
    b"else",
    b"in",
    b"of",
    b"new",
    b"delete",
    b"void",
    b"throw",
    b"yield",
    b"await",
    b"instanceof",
];

/// Words before the first `=` of a statement that bind nothing themselves.
const DECLARATION_WORDS: &[&[u8]] = &[
    b"const",
    b"let",
    b"var",
    b"export",
    b"default",
    b"async",
    b"function",
    b"class",
    b"declare",
    b"static",
];

/// Whether the identifier at `src[start..end]` makes its statement a candidate: a candidate
/// word used as one (`process.stdout`, `globalThis.console`, a bare `stdout` from
/// destructuring; not `proc.stdout`, `this.console`, `console.error`), or a write to file
/// descriptor 1 (`writeSync(1, ...)`, `{ fd: 1 }`).
fn word_hit(src: &[u8], start: usize, end: usize) -> bool {
    let v = &*VOCAB;
    if v.is_word(&src[start..end])
        && owner_before(src, start, b"?\n\r)!").is_none_or(|o| v.owned_by(o))
        && v.continues(src, start, end)
    {
        return true;
    }
    v.fd_hit(src, start, end, false)
}

/// Plans a JavaScript/TypeScript file: skip it when no candidate word occurs outside strings
/// and comments; parse large files statement by statement (see [`Lexer`]).
pub fn javascript_planned(src: &[u8], region_min_bytes: usize) -> Plan {
    match javascript(src) {
        Plan::Skip => return Plan::Skip,
        _ if src.len() <= region_min_bytes => return Plan::Whole,
        _ => {}
    }
    let stmts = Lexer::new(src).statements();
    if !stmts.iter().any(|s| s.hit) {
        return Plan::Whole; // the statement lexer disagrees with the skip lexer: be safe
    }
    if stmts.iter().any(|s| s.malformed) {
        // An unclosed string, comment or template, or unbalanced brackets: where the file goes
        // wrong, a parser's error recovery and this lexer disagree on what is code.
        return Plan::Whole;
    }
    let mut keep: Vec<bool> = stmts.iter().map(|s| s.hit).collect();
    follow_aliases(src, &stmts, &mut keep, |_| true);
    let mut ranges: Vec<(Range<usize>, usize)> = Vec::new();
    let mut all = true;
    for (i, s) in stmts.iter().enumerate() {
        if !(keep[i] || s.import || s.end - s.start <= SHORT_STATEMENT) {
            all = false;
            continue;
        }
        push_range(&mut ranges, s.start..s.end, s.row);
    }
    if all {
        Plan::Whole
    } else {
        Plan::Ranges(ranges)
    }
}

/// Plans a JavaScript/TypeScript file as a whole: skip it when no candidate word occurs outside
/// strings and comments (template literals count as code, their `${}` parts are code).
pub fn javascript(src: &[u8]) -> Plan {
    let mut i = 0usize;
    while i < src.len() {
        let b = src[i];
        match b {
            b'/' if src.get(i + 1) == Some(&b'/') => {
                i = memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |p| i + p);
            }
            b'/' if src.get(i + 1) == Some(&b'*') => {
                match memchr::memmem::find(&src[i + 2..], b"*/") {
                    Some(p) => i += 2 + p + 2,
                    // An unclosed comment: a parser's error recovery reads the rest as code.
                    None => return Plan::Whole,
                }
            }
            b'"' | b'\'' => {
                let (end, _) = quoted(src, i);
                if VOCAB.string_hit(&src[(i + 1).min(end)..end]) {
                    return Plan::Whole;
                }
                i = end + 1;
            }
            _ if is_ident_start(b) || b == b'$' => {
                let start = i;
                while i < src.len() && (is_ident(src[i]) || src[i] == b'$') {
                    i += 1;
                }
                if word_hit(src, start, i) {
                    return Plan::Whole;
                }
            }
            _ => i += 1,
        }
    }
    Plan::Skip
}

/// The end of a one-line string starting at its quote `src[i]` (the closing quote's position,
/// or the line end), and whether it was closed.
fn quoted(src: &[u8], i: usize) -> (usize, bool) {
    let q = src[i];
    let mut j = i + 1;
    while j < src.len() && src[j] != q && src[j] != b'\n' {
        if src[j] == b'\\' {
            j += 1;
        }
        j += 1;
    }
    let end = j.min(src.len());
    (end, src.get(end) == Some(&q))
}

/// Splits a JavaScript/TypeScript file into top-level statements: a statement starts on a line
/// that begins in column 0 outside brackets, strings, templates, regular expressions and
/// comments, unless that line continues the previous one (`.then`, `)`, an operator, `(`, `[`,
/// a template). Identifiers are recorded with the names bound before the first `=`
/// (`const { log } = console` binds `log`).
struct Lexer<'s> {
    src: &'s [u8],
    stmts: Vec<Stmt>,
    cur: Stmt,
    depth: i32,
    row: usize,
    i: usize,
    at_line_start: bool,
    /// The last significant byte outside tokens skipped (`w` after a word, `r` after a regular
    /// expression, `"` after a string).
    prev: u8,
    prev_word: &'s [u8],
    eq_seen: bool,
    /// Brace depths at which a template substitution `${` opened.
    templates: Vec<i32>,
    in_template: bool,
}

impl<'s> Lexer<'s> {
    fn new(src: &'s [u8]) -> Lexer<'s> {
        Lexer {
            src,
            stmts: Vec::new(),
            cur: Stmt::default(),
            depth: 0,
            row: 0,
            i: 0,
            at_line_start: true,
            prev: b';',
            prev_word: b"",
            eq_seen: false,
            templates: Vec::new(),
            in_template: false,
        }
    }

    fn statements(mut self) -> Vec<Stmt> {
        while self.i < self.src.len() {
            if self.in_template {
                if !self.template_text() {
                    break;
                }
                continue;
            }
            if self.at_line_start {
                self.line_start();
            }
            self.token();
        }
        self.cur.end = self.src.len();
        // A template, bracket or substitution still open at the end of the file.
        self.cur.malformed |= self.in_template || self.depth != 0 || !self.templates.is_empty();
        self.stmts.push(self.cur);
        let src = self.src;
        for s in &mut self.stmts {
            if s.import {
                // Imports bind every name they mention (but `import`, `from`, `as`, `type`).
                s.bound = s
                    .idents
                    .iter()
                    .filter(|r| {
                        !matches!(&src[(*r).clone()], b"import" | b"from" | b"as" | b"type")
                    })
                    .cloned()
                    .collect();
            } else if !s.assign {
                // Only declarations and assignments bind names the alias pass should follow.
                s.bound.clear();
            }
        }
        self.stmts
    }

    /// Template text: up to the closing backtick or a `${`. False at the end of the file.
    fn template_text(&mut self) -> bool {
        let src = self.src;
        let Some(p) = memchr::memchr3(b'`', b'\\', b'$', &src[self.i..]) else {
            return false;
        };
        self.row += memchr::memchr_iter(b'\n', &src[self.i..self.i + p]).count();
        self.i += p;
        match src[self.i] {
            b'\\' => {
                if src.get(self.i + 1) == Some(&b'\n') {
                    self.row += 1;
                }
                self.i += 2;
            }
            b'`' => {
                self.in_template = false;
                self.prev = b'`';
                self.i += 1;
            }
            _ if src.get(self.i + 1) == Some(&b'{') => {
                self.templates.push(self.depth);
                self.depth += 1;
                self.in_template = false;
                self.prev = b'{';
                self.i += 2;
            }
            _ => self.i += 1,
        }
        true
    }

    /// A line start in column 0 outside brackets and templates starts a statement, unless the
    /// line continues the previous one.
    fn line_start(&mut self) {
        self.at_line_start = false;
        let b = self.src[self.i];
        let continuation = matches!(
            b,
            b' ' | b'\t'
                | b'\n'
                | b'\r'
                | b'.'
                | b')'
                | b']'
                | b'}'
                | b','
                | b'?'
                | b':'
                | b'+'
                | b'-'
                | b'*'
                | b'/'
                | b'&'
                | b'|'
                | b'='
                | b'>'
                | b'<'
                | b'('
                | b'['
                | b'`'
                | b'%'
                | b'^'
        );
        if self.depth == 0 && self.templates.is_empty() && !continuation && self.i > 0 {
            self.cur.end = self.i;
            self.stmts.push(std::mem::take(&mut self.cur));
            self.cur.start = self.i;
            self.cur.row = self.row;
            self.eq_seen = false;
            self.cur.import = word_at(self.src, self.i) == b"import";
        } else if self.i == 0 {
            self.cur.import = word_at(self.src, 0) == b"import";
        }
    }

    fn token(&mut self) {
        let src = self.src;
        let b = src[self.i];
        match b {
            b'\n' => {
                self.row += 1;
                self.at_line_start = true;
                self.i += 1;
            }
            b' ' | b'\t' | b'\r' => self.i += 1,
            b'/' if src.get(self.i + 1) == Some(&b'/') => {
                self.i = memchr::memchr(b'\n', &src[self.i..]).map_or(src.len(), |p| self.i + p);
            }
            b'/' if src.get(self.i + 1) == Some(&b'*') => {
                let found = memchr::memmem::find(&src[self.i + 2..], b"*/");
                self.cur.malformed |= found.is_none();
                let end = found.map_or(src.len(), |p| self.i + 2 + p + 2);
                self.row += memchr::memchr_iter(b'\n', &src[self.i..end]).count();
                self.i = end;
            }
            b'/' if self.regex_may_start() => self.regex(),
            b'"' | b'\'' => {
                let (end, closed) = quoted(src, self.i);
                // Left open at the line end: the lexer and a parser may disagree from here.
                self.cur.malformed |= !closed;
                if VOCAB.string_hit(&src[(self.i + 1).min(end)..end]) {
                    self.cur.hit = true;
                }
                self.i = (end + 1).min(src.len());
                self.prev = b'"';
            }
            b'`' => {
                self.in_template = true;
                self.i += 1;
            }
            b'(' | b'[' | b'{' => {
                self.depth += 1;
                self.prev = b;
                self.i += 1;
            }
            b')' | b']' | b'}' => {
                self.cur.malformed |= self.depth == 0;
                self.depth = (self.depth - 1).max(0);
                if b == b'}' && self.templates.last() == Some(&self.depth) {
                    self.templates.pop();
                    self.in_template = true;
                }
                self.prev = b;
                self.i += 1;
            }
            b'=' => {
                let next = src.get(self.i + 1).copied();
                if self.depth == 0
                    && !matches!(next, Some(b'=' | b'>'))
                    && !matches!(self.prev, b'!' | b'<' | b'>' | b'=')
                {
                    self.eq_seen = true;
                    self.cur.assign = true;
                }
                self.prev = b'=';
                self.i += 1;
            }
            _ if is_ident_start(b) || b == b'$' => self.word(),
            _ => {
                self.prev = b;
                self.i += 1;
            }
        }
    }

    /// After these, a `/` starts a regular expression literal, not a division.
    fn regex_may_start(&self) -> bool {
        matches!(
            self.prev,
            b'(' | b','
                | b'='
                | b':'
                | b'['
                | b'!'
                | b'&'
                | b'|'
                | b'?'
                | b'{'
                | b'}'
                | b';'
                | b'+'
                | b'-'
                | b'*'
                | b'%'
                | b'<'
                | b'>'
                | b'~'
                | b'^'
        ) || (self.prev == b'w' && REGEX_AFTER.contains(&self.prev_word))
    }

    /// A regular expression literal: to the closing `/` outside a class, or the line end.
    fn regex(&mut self) {
        let src = self.src;
        let mut j = self.i + 1;
        let mut class = false;
        while j < src.len() && src[j] != b'\n' {
            match src[j] {
                b'\\' => j += 1,
                b'[' => class = true,
                b']' => class = false,
                b'/' if !class => break,
                _ => {}
            }
            j += 1;
        }
        self.i = (j + 1).min(src.len());
        self.prev = b'r';
    }

    fn word(&mut self) {
        let src = self.src;
        let start = self.i;
        while self.i < src.len() && (is_ident(src[self.i]) || src[self.i] == b'$') {
            self.i += 1;
        }
        let w = &src[start..self.i];
        if word_hit(src, start, self.i) {
            self.cur.hit = true;
        }
        self.cur.idents.push(start..self.i);
        if !self.eq_seen && !self.cur.import && !DECLARATION_WORDS.contains(&w) {
            self.cur.bound.push(start..self.i);
        }
        self.prev = b'w';
        self.prev_word = w;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javascript_files_the_lexer_cannot_read_are_parsed_whole() {
        let filler = (0..20)
            .map(|n| {
                let body = "  total = total * a + b - 1;\n".repeat(30);
                format!("function f{n}(a, b) {{\n  let total = {n};\n{body}  return total;\n}}\n")
            })
            .collect::<String>();
        let good = format!("{filler}console.log(1);\n{filler}");
        assert!(matches!(
            javascript_planned(good.as_bytes(), 0),
            Plan::Ranges(_)
        ));
        for broken in [
            "/* never closed\nfunction f() {}\n",
            "const s = 'open\nfunction f() {}\n",
            "const t = `open ${x}\nfunction f() {}\n",
            "function f() { if (x) {\n",
            "f(1));\n",
        ] {
            let src = format!("{filler}console.log(1);\n{broken}{filler}");
            assert_eq!(
                javascript_planned(src.as_bytes(), 0),
                Plan::Whole,
                "{broken:?}"
            );
        }
        // The skip lexer never skips a file whose comment runs to the end.
        assert_eq!(javascript(b"/* open\nconsole.log(1)\n"), Plan::Whole);
        assert_eq!(javascript(b"/* closed */ const x = 1;\n"), Plan::Skip);
    }

    #[test]
    fn javascript_skips_files_without_code_candidates() {
        assert_eq!(
            javascript(b"// console.log('x')\nconst a = 1;\n"),
            Plan::Skip
        );
        assert_eq!(
            javascript(b"/* console.log */ let s = \"console\";"),
            Plan::Whole
        );
        // A string counts whole: a module, an option value, a path; prose does not.
        assert_eq!(javascript(b"let s = \"console.log\";"), Plan::Skip);
        assert_eq!(javascript(b"const u = require('./util');"), Plan::Skip);
        assert_eq!(javascript(b"const u = require('node:util');"), Plan::Whole);
        assert_eq!(
            javascript(b"var util = x; util.inherits(a, b);"),
            Plan::Skip
        );
        assert_eq!(javascript(b"let s = `${console.log(1)}`;"), Plan::Whole);
        assert_eq!(javascript(b"const p = require('pino');"), Plan::Whole);
        assert_eq!(javascript(b"export const a = 1;"), Plan::Skip);
        assert_eq!(
            javascript(b"child.stdout.on('data', f); this.console.log(1);"),
            Plan::Skip
        );
        assert_eq!(javascript(b"logger.log('x'); util.inspect(x);"), Plan::Skip);
        assert_eq!(javascript(b"process.stdout.write(x)"), Plan::Whole);
        assert_eq!(javascript(b"import u from 'util'; u.log(x)"), Plan::Whole);
        assert_eq!(javascript(b"globalThis.console.info(x)"), Plan::Whole);
        assert_eq!(javascript(b"(console as any)\n  .log(x)"), Plan::Whole);
        // Members no row names: console.error is stderr, isTTY writes nothing.
        assert_eq!(
            javascript(b"console.error(x); if (process.stdout.isTTY) {}"),
            Plan::Skip
        );
        assert_eq!(javascript(b"console\n  .log(x)"), Plan::Whole);
        assert_eq!(javascript(b"console?.info(x)"), Plan::Whole);
        assert_eq!(javascript(b"const { stdout } = process;"), Plan::Whole);
    }

    #[test]
    fn javascript_large_files_keep_candidates_imports_and_aliases() {
        let big = format!("function quiet() {{\n{}}}\n", "  const v = 1;\n".repeat(80));
        let src = format!(
            "import fs from 'node:fs';\nconst {{ log }} = console;\n{big}function loud() {{\n  log('x');\n{}}}\nconst re = /[/'\"]/g;\nconst t = `a\n${{console.log(1)}}\nb`;\n{big}",
            "  const v = 1;\n".repeat(80)
        );
        let kept = match javascript_planned(src.as_bytes(), 0) {
            Plan::Ranges(r) => r
                .iter()
                .map(|(r, _)| src[r.clone()].to_string())
                .collect::<String>(),
            other => format!("{other:?}"),
        };
        assert!(kept.contains("import fs"), "{kept}");
        assert!(kept.contains("const { log } = console;"));
        assert!(kept.contains("function loud"));
        assert!(kept.contains("console.log(1)"));
        assert!(!kept.contains("function quiet"), "{kept}");
    }
}
