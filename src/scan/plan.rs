//! What to parse: a cheap lexer pass decides, before tree-sitter runs, whether a file can contain
//! a finding at all and, for large files, which top-level statements must be parsed.
//!
//! The lexers know strings, comments and (for Python) brackets and indentation, so a candidate
//! word inside a docstring or a comment does not make a file expensive. They never decide what
//! is a finding: they only keep bytes away from the parser. Every top-level statement that holds
//! a candidate word in code, every import, every short statement (constants like `FD = 1`), and
//! every statement that mentions a name bound from a candidate (`say = print` … `say(x)`) is
//! parsed; the rest is not. tree-sitter parses the kept statements as one document through
//! included ranges, with the original byte positions, so findings are unchanged. When the
//! partial tree has a syntax error, the caller parses the whole file instead.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::LazyLock;

type WordSet<'a> = HashSet<&'a [u8], std::hash::BuildHasherDefault<super::lang::FastHasher>>;

static PY_SET: LazyLock<WordSet<'static>> =
    LazyLock::new(|| PY_WORDS.iter().map(|w| w.as_bytes()).collect());
static JS_SET: LazyLock<WordSet<'static>> =
    LazyLock::new(|| JS_WORDS.iter().map(|w| w.as_bytes()).collect());

/// Files at most this large are parsed whole whenever they hold a candidate: region planning
/// pays off on big modules, and whole files keep parse-error notes exact in typical server code.
pub const DEFAULT_REGION_MIN_BYTES: usize = 8 * 1024;

/// Short top-level statements are always kept (constants, aliases, `__all__`).
const SHORT_STATEMENT: usize = 512;

/// The decision for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// No candidate in code: nothing to parse.
    Skip,
    /// Parse everything.
    Whole,
    /// Parse these byte ranges (top-level statements), with their starting rows.
    Ranges(Vec<(Range<usize>, usize)>),
}

/// Candidate identifiers of Python code, derived from the sink table
/// (`sinks::plan_words`): every row's anchor except those of fd rows (`os.write(1, ...)`,
/// `open(1)`), which [`python_fd_hit`] finds with their argument.
static PY_WORDS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| crate::scan::sinks::plan_words(crate::scan::lang::Lang::Python));

/// Strings only matter as short values: `"ext://sys.stdout"`, `"/dev/stdout"`,
/// `getattr(sys, "stdout")`; a docstring that mentions stdout is not a candidate.
fn python_string_hit(content: &[u8]) -> bool {
    content.len() <= 32
        && (memchr::memmem::find(content, b"/dev/").is_some()
            || memchr::memmem::find(content, b"stdout").is_some())
}

/// Objects whose attributes named like a candidate word are still candidates
/// (`sys.stdout`, `os.system`, `builtins.print`); `proc.stdout`, `self.print` and
/// `platform.system()` are not. Derived from the table: the segment before each anchor.
static DOT_OWNERS: LazyLock<Vec<&'static [u8]>> = LazyLock::new(|| {
    crate::scan::sinks::owners(crate::scan::lang::Lang::Python)
        .into_iter()
        .map(str::as_bytes)
        .collect()
});

/// A cheap first look before hashing: the lengths and first bytes of the candidate words.
static PY_SHAPE: LazyLock<([bool; 256], usize, usize)> = LazyLock::new(|| {
    let mut first = [false; 256];
    let (mut min, mut max) = (usize::MAX, 0);
    for w in PY_WORDS.iter() {
        first[usize::from(w.as_bytes()[0])] = true;
        min = min.min(w.len());
        max = max.max(w.len());
    }
    (first, min, max)
});

fn maybe_word(w: &[u8]) -> bool {
    let (first, min, max) = &*PY_SHAPE;
    (*min..=*max).contains(&w.len()) && first[usize::from(w[0])]
}

/// Is the candidate word at `start..end` used in a way a rule can report?
fn python_word_counts(src: &[u8], start: usize, end: usize, sys_aliases: &[&[u8]]) -> bool {
    let w = &src[start..end];
    let mut k = start;
    while k > 0 && matches!(src[k - 1], b' ' | b'\t') {
        k -= 1;
    }
    if k > 0 && src[k - 1] == b'.' {
        let mut o = k - 1;
        while o > 0 && matches!(src[o - 1], b' ' | b'\t') {
            o -= 1;
        }
        let owner_end = o;
        while o > 0 && is_ident(src[o - 1]) {
            o -= 1;
        }
        let owner = &src[o..owner_end];
        return DOT_OWNERS.contains(&owner) || sys_aliases.contains(&owner);
    }
    if w == b"stdout" || w == b"input" {
        // A keyword argument (`stdout=PIPE`) is not the stream itself.
        let mut j = end;
        while j < src.len() && matches!(src[j], b' ' | b'\t') {
            j += 1;
        }
        if src.get(j) == Some(&b'=') && src.get(j + 1) != Some(&b'=') {
            return false;
        }
    }
    true
}

/// One top-level statement found by the lexer.
#[derive(Debug, Default)]
struct Stmt {
    start: usize,
    row: usize,
    end: usize,
    /// `import`/`from` statements.
    import: bool,
    /// `def`, `class`, decorators, and compound statements (`if`, `for`, `try`, ...).
    block: bool,
    /// A candidate word (or string) in code.
    hit: bool,
    /// Identifiers in code, as byte ranges (for the alias pass).
    idents: Vec<Range<usize>>,
    /// Identifiers bound by an import or before `=` in a simple statement.
    bound: Vec<Range<usize>>,
    /// An `=` at bracket depth 0: an assignment.
    assign: bool,
    /// Attributes assigned as `self.<name> = ...` anywhere inside.
    self_bound: Vec<Range<usize>>,
    /// `from module import *`.
    star: bool,
    /// The `class` keyword starts it (after decorators).
    class: bool,
    /// `def` or `async def` starts it (after decorators).
    func: bool,
    /// The lexer met something no valid file has (a string left open, a bracket closed that
    /// was not opened or never closed): tree-sitter's error recovery may read as code what the
    /// lexer took for a string, or split statements elsewhere, so the plan cannot be trusted.
    malformed: bool,
}

const BLOCK_KEYWORDS: &[&[u8]] = &[
    b"def", b"class", b"async", b"if", b"for", b"while", b"try", b"with", b"match", b"@",
];
const CONTINUATION_KEYWORDS: &[&[u8]] = &[b"else", b"elif", b"except", b"finally"];

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn word_at(src: &[u8], i: usize) -> &[u8] {
    let mut j = i;
    while j < src.len() && (is_ident(src[j]) || (j == i && src[j] == b'@')) {
        j += 1;
        if src[i] == b'@' {
            break;
        }
    }
    &src[i..j]
}

/// Plans a Python file.
pub fn python(src: &[u8], region_min_bytes: usize) -> Plan {
    let words: &WordSet = &PY_SET;
    // `import sys as system`: `system.stdout` is `sys.stdout` (shared with class bodies).
    let mut sys_aliases: Vec<&[u8]> = Vec::new();
    // A small file is parsed whole as soon as one candidate shows up.
    let small = src.len() <= region_min_bytes;
    let stmts = python_statements(src, words, &mut sys_aliases, small);
    // A file that is not valid Python is parsed whole, even without a candidate the lexer can
    // see: where tree-sitter recovers from the error is not the lexer's to guess (after an
    // unclosed `"""` it reads the rest of the file as code, which the lexer took for a string).
    if stmts.iter().any(|s| s.malformed) {
        return Plan::Whole;
    }
    if !stmts.iter().any(|s| s.hit) {
        return Plan::Skip;
    }
    // A star import of a module with candidate names (`from subprocess import *`) brings in
    // names the alias pass cannot list: parse everything.
    if small || stmts.iter().any(|s| s.import && s.star && s.hit) {
        return Plan::Whole;
    }
    // Names bound from a candidate become candidates themselves (aliases, imports).
    let mut extra: WordSet = WordSet::default();
    let mut keep: Vec<bool> = stmts.iter().map(|s| s.hit).collect();
    for _ in 0..3 {
        let before = extra.len();
        for (i, s) in stmts.iter().enumerate() {
            if !keep[i] && s.idents.iter().any(|r| extra.contains(&src[r.clone()])) {
                keep[i] = true;
            }
            if keep[i] && !s.block {
                extra.extend(s.bound.iter().map(|r| &src[r.clone()]));
            }
        }
        if extra.len() == before {
            break;
        }
    }
    let mut ranges: Vec<(Range<usize>, usize)> = Vec::new();
    let mut all = true;
    for (i, s) in stmts.iter().enumerate() {
        let k = keep[i] || s.import || (!s.block && s.end - s.start <= SHORT_STATEMENT);
        if !k {
            all = false;
            continue;
        }
        let parts = if keep[i] {
            // Classes and functions over 1/16 of the region threshold are parsed in parts.
            block_parts(
                src,
                s,
                words,
                &extra,
                region_min_bytes / 16,
                &mut sys_aliases,
                0,
            )
        } else {
            None
        };
        let parts = match parts {
            Some(p) => {
                all = false;
                p
            }
            None => vec![(s.start..s.end, s.row)],
        };
        for (r, row) in parts {
            match ranges.last_mut() {
                Some((last, _)) if last.end == r.start => last.end = r.end,
                _ => ranges.push((r, row)),
            }
        }
    }
    if all {
        Plan::Whole
    } else {
        Plan::Ranges(ranges)
    }
}

/// Splits a Python file into top-level statements, lexing strings, comments and brackets.
fn python_statements<'s>(
    src: &'s [u8],
    words: &WordSet,
    sys_aliases: &mut Vec<&'s [u8]>,
    stop_at_hit: bool,
) -> Vec<Stmt> {
    python_statements_in(src, 0..src.len(), 0, 0, words, sys_aliases, stop_at_hit)
        .unwrap_or_default()
}

/// Splits `span` into the statements that start at indentation `indent` (in bytes of leading
/// whitespace). `None` when a line dedents below `indent` (not a block body).
fn python_statements_in<'s>(
    src: &'s [u8],
    span: Range<usize>,
    start_row: usize,
    indent: usize,
    words: &WordSet,
    sys_aliases: &mut Vec<&'s [u8]>,
    stop_at_hit: bool,
) -> Option<Vec<Stmt>> {
    let mut stmts: Vec<Stmt> = Vec::new();
    let mut cur = Stmt {
        start: span.start,
        row: start_row,
        ..Stmt::default()
    };
    let mut depth: i32 = 0;
    // The open brackets, innermost last (`depth` counts them, clamped at 0).
    let mut open: Vec<u8> = Vec::new();
    let mut row = start_row;
    let mut i = span.start;
    let src_all = src;
    let src = &src_all[..span.end];
    let mut at_line_start = true;
    let mut continued = false; // backslash continuation
    let mut pending_decorator = false;
    let mut first = true;
    let (mut prev_word, mut prev_as, mut prev_prev_sys): (&[u8], bool, bool) = (b"", false, false);
    while i < src.len() {
        if at_line_start {
            at_line_start = false;
            let line_start = i;
            let mut ws = 0;
            while i + ws < src.len() && matches!(src[i + ws], b' ' | b'\t' | b'\x0c') {
                ws += 1;
            }
            let b = src.get(i + ws).copied().unwrap_or(b'\n');
            let blank = matches!(b, b'\n' | b'\r' | b'#');
            if depth == 0 && !continued && !blank && ws < indent {
                return None; // dedent: not the body of one block
            }
            if depth == 0 && !continued && !blank && ws == indent {
                i += ws;
                let w = word_at(src, i);
                let continuation = CONTINUATION_KEYWORDS.contains(&w);
                if !continuation && !pending_decorator && !first {
                    cur.end = line_start;
                    stmts.push(std::mem::take(&mut cur));
                    cur.start = line_start;
                    cur.row = row;
                }
                first = false;
                if !continuation {
                    let was_decorated = pending_decorator;
                    pending_decorator = b == b'@';
                    cur.import = w == b"import" || w == b"from";
                    cur.block = BLOCK_KEYWORDS.contains(&w) || was_decorated;
                    cur.class |= w == b"class";
                    cur.func |= w == b"def"
                        || (w == b"async" && {
                            let mut k = i + w.len();
                            while k < src.len() && matches!(src[k], b' ' | b'\t') {
                                k += 1;
                            }
                            src[k..].starts_with(b"def")
                        });
                }
            }
            continued = false;
            if i >= src.len() {
                break;
            }
        }
        let b = src[i];
        match b {
            b'\n' => {
                row += 1;
                at_line_start = true;
                i += 1;
            }
            b'#' => {
                i = memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |p| i + p);
            }
            b'\\' => {
                if src.get(i + 1) == Some(&b'\n') {
                    continued = true;
                    at_line_start = true;
                    row += 1;
                    i += 2;
                    continue;
                }
                if src.get(i + 1) == Some(&b'\r') && src.get(i + 2) == Some(&b'\n') {
                    continued = true;
                    at_line_start = true;
                    row += 1;
                    i += 3;
                    continue;
                }
                i += 1;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                open.push(b);
                i += 1;
            }
            b'*' if cur.import => {
                cur.star = true;
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = (depth - 1).max(0);
                let opener = match b {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                cur.malformed |= open.pop() != Some(opener);
                i += 1;
            }
            b'=' => {
                let next = src.get(i + 1).copied();
                let prev = if i > 0 { src[i - 1] } else { b' ' };
                if depth == 0
                    && next != Some(b'=')
                    && !matches!(prev, b'=' | b'!' | b'<' | b'>' | b':')
                {
                    cur.assign = true;
                }
                i += 1;
            }
            b'"' | b'\'' => {
                let (end, rows, hit, closed) = python_string(src, i);
                cur.malformed |= !closed;
                cur.hit |= hit;
                if hit && stop_at_hit {
                    return Some(vec![cur]);
                }
                row += rows;
                i = end;
            }
            _ if is_ident_start(b) => {
                let start = i;
                while i < src.len() && is_ident(src[i]) {
                    i += 1;
                }
                let w = &src[start..i];
                // A string prefix: `f"..."`, `rb'...'`.
                if i < src.len()
                    && matches!(src[i], b'"' | b'\'')
                    && w.len() <= 2
                    && w.iter()
                        .all(|c| matches!(c.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f'))
                {
                    let fmt = w.iter().any(|c| c.eq_ignore_ascii_case(&b'f'));
                    let (end, rows, hit, closed) = python_string(src, i);
                    cur.malformed |= !closed;
                    let hit = hit
                        || (fmt
                            && words
                                .iter()
                                .any(|word| memchr::memmem::find(&src[i..end], word).is_some()));
                    cur.hit |= hit;
                    row += rows;
                    i = end;
                    continue;
                }
                if cur.import && prev_as && prev_prev_sys {
                    sys_aliases.push(w);
                }
                prev_prev_sys = prev_word == b"sys";
                prev_as = w == b"as";
                prev_word = w;
                if (maybe_word(w)
                    && words.contains(w)
                    && python_word_counts(src, start, i, sys_aliases))
                    || python_fd_hit(src, start, i, cur.import)
                {
                    cur.hit = true;
                    if stop_at_hit {
                        return Some(vec![cur]);
                    }
                }
                if w == b"self" && src.get(i) == Some(&b'.') {
                    let a = i + 1;
                    let mut e = a;
                    while e < src.len() && is_ident(src[e]) {
                        e += 1;
                    }
                    let mut k = e;
                    while k < src.len() && src[k] == b' ' {
                        k += 1;
                    }
                    if e > a && src.get(k) == Some(&b'=') && src.get(k + 1) != Some(&b'=') {
                        cur.self_bound.push(a..e);
                    }
                }
                if stop_at_hit {
                    continue; // a small file: only the first candidate matters
                }
                cur.idents.push(start..i);
                if (cur.import && !matches!(w, b"import" | b"from" | b"as"))
                    || (!cur.import && !cur.assign && depth == 0)
                {
                    cur.bound.push(start..i);
                }
            }
            _ if b.is_ascii_digit() => {
                while i < src.len()
                    && (src[i].is_ascii_alphanumeric() || src[i] == b'.' || src[i] == b'_')
                {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    cur.end = src.len();
    cur.malformed |= !open.is_empty();
    stmts.push(cur);
    // Only imports and assignments bind names the alias pass should follow.
    for s in &mut stmts {
        if !s.import && (s.block || !s.assign) {
            s.bound.clear();
        }
    }
    Some(stmts)
}

/// The kept parts of a large kept class or function: its header, then the statements of its
/// body that can matter, recursively. In a class: candidates, short statements, members using
/// a name bound next to a candidate or a `self.x` assigned in a member with a candidate. In a
/// function: candidates, imports, short statements, and every statement mentioning a name the
/// kept statements use (so local bindings of those names stay: Python names are local to the
/// whole function). `None`: keep the whole block.
fn block_parts<'s>(
    src: &'s [u8],
    s: &Stmt,
    words: &WordSet,
    extra: &WordSet,
    min_bytes: usize,
    sys_aliases: &mut Vec<&'s [u8]>,
    depth: u32,
) -> Option<Vec<(Range<usize>, usize)>> {
    if !(s.class || s.func) || s.end - s.start < min_bytes || depth > 8 {
        return None;
    }
    // The body starts on the line after the header's `:` at bracket depth 0; find the first
    // statement line of the body to learn its indentation.
    let header_end = header_end(src, s.start, s.end)?;
    let mut j = header_end;
    let mut row = s.row + memchr::memchr_iter(b'\n', &src[s.start..header_end]).count();
    let body_start = loop {
        let line_end = memchr::memchr(b'\n', &src[j..s.end]).map_or(s.end, |p| j + p + 1);
        let line = &src[j..line_end];
        let content = line
            .iter()
            .position(|c| !matches!(c, b' ' | b'\t' | b'\x0c'));
        match content {
            Some(p) if !matches!(line[p], b'\n' | b'\r' | b'#') => break (j, p),
            _ if line_end >= s.end => return None,
            _ => {
                j = line_end;
                row += 1;
            }
        }
    };
    let (body, indent) = body_start;
    if indent == 0 {
        return None;
    }
    let members = python_statements_in(src, body..s.end, row, indent, words, sys_aliases, false)?;
    if members.iter().any(|m| m.malformed) {
        return None;
    }
    let uses = |m: &Stmt, set: &WordSet| m.idents.iter().any(|r| set.contains(&src[r.clone()]));
    // Names that make a statement matter, grown from the statements with a candidate.
    let mut names: WordSet = extra.clone();
    for m in members.iter().filter(|m| m.hit) {
        names.extend(m.self_bound.iter().map(|r| &src[r.clone()]));
        if !m.block {
            names.extend(m.bound.iter().map(|r| &src[r.clone()]));
        }
    }
    let mut keep: Vec<bool> = members
        .iter()
        .map(|m| {
            m.hit || m.import || (!m.block && m.end - m.start <= SHORT_STATEMENT) || uses(m, &names)
        })
        .collect();
    if s.func {
        // Everything the kept statements mention may be bound anywhere in the function.
        for _ in 0..3 {
            let before = names.len();
            for (m, k) in members.iter().zip(&keep) {
                if *k {
                    // `self` and `cls` are never rebound: following them would keep everything.
                    names.extend(
                        m.idents
                            .iter()
                            .map(|r| &src[r.clone()])
                            .filter(|w| !matches!(*w, b"self" | b"cls")),
                    );
                }
            }
            for (m, k) in members.iter().zip(keep.iter_mut()) {
                *k |= uses(m, &names);
            }
            if names.len() == before {
                break;
            }
        }
    }
    if !keep.iter().any(|k| *k) {
        return None;
    }
    let mut parts = vec![(s.start..body, s.row)];
    for (m, k) in members.iter().zip(&keep) {
        if !*k {
            continue;
        }
        let inner = block_parts(src, m, words, &names, min_bytes, sys_aliases, depth + 1);
        for (r, row) in inner.unwrap_or_else(|| vec![(m.start..m.end, m.row)]) {
            match parts.last_mut() {
                Some((last, _)) if last.end == r.start => last.end = r.end,
                _ => parts.push((r, row)),
            }
        }
    }
    Some(parts)
}

/// The end of a block header: just past the newline after its `:` at bracket depth 0.
fn header_end(src: &[u8], start: usize, end: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut i = start;
    while i < end {
        match src[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'#' => {
                while i < end && src[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                i = python_string(src, i).0;
                continue;
            }
            b':' if depth == 0 => {
                // Only the header line ends here: `class A: pass` has no separate body.
                let nl = memchr::memchr(b'\n', &src[i..end])?;
                let rest = &src[i + 1..i + nl];
                if rest.iter().any(|c| !matches!(c, b' ' | b'\t' | b'\r'))
                    && !rest.trim_ascii_start().starts_with(b"#")
                {
                    return None;
                }
                return Some(i + nl + 1);
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `os.write(1, ...)`, `from os import write`, `open(1, ...)`, `fdopen(1)`: writes to fd 1
/// spelled without a candidate word.
fn python_fd_hit(src: &[u8], start: usize, end: usize, import: bool) -> bool {
    let w = &src[start..end];
    match w {
        b"write" => import || src[..start].ends_with(b"os."),
        b"open" | b"fdopen" | b"FileIO" => fd_one_follows(src, end),
        _ => false,
    }
}

/// True when `(1,` or `(1)` (spaces allowed) follows position `i`.
fn fd_one_follows(src: &[u8], mut i: usize) -> bool {
    let skip = |src: &[u8], mut i: usize| {
        while i < src.len() && matches!(src[i], b' ' | b'\t') {
            i += 1;
        }
        i
    };
    i = skip(src, i);
    if src.get(i) != Some(&b'(') {
        return false;
    }
    i = skip(src, i + 1);
    if src.get(i) != Some(&b'1') {
        return false;
    }
    i = skip(src, i + 1);
    matches!(src.get(i), Some(b',' | b')'))
}

/// Lexes a string starting at its quote; returns (end, newlines inside, candidate inside,
/// closed). An unclosed string ends at its line end (one quote) or at the end of the file
/// (three quotes).
fn python_string(src: &[u8], i: usize) -> (usize, usize, bool, bool) {
    let q = src[i];
    let triple = src.get(i + 1) == Some(&q) && src.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    let mut rows = 0;
    let content_start = j;
    let mut closed = false;
    while j < src.len() {
        // Jump to the next byte that can matter.
        j = match memchr::memchr3(q, b'\\', b'\n', &src[j..]) {
            Some(p) => j + p,
            None => src.len(),
        };
        let Some(&c) = src.get(j) else { break };
        if c == b'\\' {
            if src.get(j + 1) == Some(&b'\n') {
                rows += 1;
            } else if src.get(j + 1) == Some(&b'\r') && src.get(j + 2) == Some(&b'\n') {
                rows += 1;
                j += 1; // an escaped CRLF line end
            }
            j += 2;
            continue;
        }
        if c == b'\n' {
            if !triple {
                break; // unterminated: stop at the line end
            }
            rows += 1;
        }
        if c == q {
            if !triple {
                j += 1;
                closed = true;
                break;
            }
            if src.get(j + 1) == Some(&q) && src.get(j + 2) == Some(&q) {
                j += 3;
                closed = true;
                break;
            }
        }
        j += 1;
    }
    let j = j.min(src.len());
    let content = &src[content_start.min(j)..j];
    (j, rows, python_string_hit(content), closed)
}

/// Candidate words of JavaScript/TypeScript code.
const JS_WORDS: &[&str] = &[
    "console",
    "Console",
    "stdout",
    "writeSync",
    "pino",
    "winston",
    "bunyan",
    "inherit",
    "fork",
    "stdio",
    "log",
    "print",
    "puts",
];

/// Is a JS candidate word at `start..end` used where a rule can see it? `proc.stdout`,
/// `this.console` and `logger.log` are not; `process.stdout`, `globalThis.console` and
/// `util.log` are, and so are bare names (`const { stdout } = process`). `log`, `print` and
/// `puts` only count on `util`.
fn javascript_word_counts(src: &[u8], start: usize, end: usize) -> bool {
    let w = &src[start..end];
    let mut k = start;
    while k > 0 && matches!(src[k - 1], b' ' | b'\t' | b'?') {
        k -= 1;
    }
    let owner = if k > 0 && src[k - 1] == b'.' {
        let mut o = k - 1;
        while o > 0 && matches!(src[o - 1], b' ' | b'\t' | b'\n' | b'\r' | b')' | b'!') {
            o -= 1;
        }
        let owner_end = o;
        while o > 0 && (is_ident(src[o - 1]) || src[o - 1] == b'$') {
            o -= 1;
        }
        Some(&src[o..owner_end])
    } else {
        None
    };
    match (w, owner) {
        (b"log" | b"print" | b"puts", Some(o)) => o == b"util",
        (b"log" | b"print" | b"puts", None) => false,
        (b"stdout", Some(o)) => o == b"process",
        (b"console", Some(o)) => matches!(o, b"globalThis" | b"global" | b"window" | b"self"),
        _ => true,
    }
}

/// Words that matter inside short strings (module names, option values).
const STRING_WORDS: &[&str] = &[
    "console",
    "stdout",
    "pino",
    "winston",
    "bunyan",
    "inherit",
    "log",
    "util",
    "child_process",
    "execa",
    "cross-spawn",
];

/// Whether the identifier at `src[start..end]` makes its statement a candidate: a candidate
/// word used as one, a write to file descriptor 1, or an `fd: 1` option.
fn javascript_word_hit(src: &[u8], start: usize, end: usize) -> bool {
    let w = &src[start..end];
    if JS_SET.contains(w) && javascript_word_counts(src, start, end) {
        return true;
    }
    if matches!(
        w,
        b"write" | b"writeFile" | b"appendFile" | b"appendFileSync" | b"writeFileSync"
    ) && fd_one_follows(src, end)
    {
        return true;
    }
    w == b"fd" && {
        let rest: Vec<u8> = src[end..src.len().min(end + 8)]
            .iter()
            .copied()
            .filter(|c| *c != b' ')
            .collect();
        rest.starts_with(b":1") && !rest.get(2).is_some_and(|c| c.is_ascii_digit())
    }
}

/// Whether a string literal's content makes its statement a candidate: `require('pino')`,
/// `'/dev/stdout'`, `stdio: 'inherit'`, `console['log']` — module names, option values and
/// computed members are short strings.
fn javascript_string_hit(content: &[u8]) -> bool {
    content.len() <= 32
        && (STRING_WORDS
            .iter()
            .any(|w| memchr::memmem::find(content, w.as_bytes()).is_some())
            || memchr::memmem::find(content, b"/dev/").is_some())
}

/// Plans a JavaScript/TypeScript file: skip it when no candidate word occurs outside strings
/// and comments; parse large files statement by statement (see [`javascript_statements`]).
pub fn javascript_planned(src: &[u8], region_min_bytes: usize) -> Plan {
    match javascript(src) {
        Plan::Skip => return Plan::Skip,
        _ if src.len() <= region_min_bytes => return Plan::Whole,
        _ => {}
    }
    let stmts = javascript_statements(src);
    if !stmts.iter().any(|s| s.hit) {
        return Plan::Whole; // the statement lexer disagrees with the skip lexer: be safe
    }
    if stmts.iter().any(|s| s.malformed) {
        // An unclosed string, comment or template, or unbalanced brackets: where the file goes
        // wrong, a parser's error recovery and this lexer disagree on what is code.
        return Plan::Whole;
    }
    let mut names: WordSet = WordSet::default();
    let mut keep: Vec<bool> = stmts.iter().map(|s| s.hit).collect();
    for _ in 0..3 {
        let before = names.len();
        for (i, s) in stmts.iter().enumerate() {
            if !keep[i] && s.idents.iter().any(|r| names.contains(&src[r.clone()])) {
                keep[i] = true;
            }
            if keep[i] {
                names.extend(s.bound.iter().map(|r| &src[r.clone()]));
            }
        }
        if names.len() == before {
            break;
        }
    }
    let mut ranges: Vec<(Range<usize>, usize)> = Vec::new();
    let mut all = true;
    for (i, s) in stmts.iter().enumerate() {
        if !(keep[i] || s.import || s.end - s.start <= SHORT_STATEMENT) {
            all = false;
            continue;
        }
        match ranges.last_mut() {
            Some((r, _)) if r.end == s.start => r.end = s.end,
            _ => ranges.push((s.start..s.end, s.row)),
        }
    }
    if all {
        Plan::Whole
    } else {
        Plan::Ranges(ranges)
    }
}

/// Keywords after which a `/` starts a regular expression, not a division.
const JS_REGEX_AFTER: &[&[u8]] = &[
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

/// Splits a JavaScript/TypeScript file into top-level statements: a statement starts on a line
/// that begins in column 0 outside brackets, strings, templates, regular expressions and
/// comments, unless that line continues the previous one (`.then`, `)`, an operator, `(`, `[`,
/// a template). Identifiers are recorded with the names bound before the first `=`
/// (`const { log } = console` binds `log`).
fn javascript_statements(src: &[u8]) -> Vec<Stmt> {
    let mut stmts: Vec<Stmt> = Vec::new();
    let mut cur = Stmt::default();
    let mut depth: i32 = 0;
    let mut row = 0usize;
    let mut i = 0usize;
    let mut at_line_start = true;
    let mut prev: u8 = b';'; // last significant byte outside tokens we skip
    let mut prev_word: &[u8] = b"";
    let mut eq_seen = false;
    // Brace depths at which a template substitution `${` opened.
    let mut templates: Vec<i32> = Vec::new();
    let mut in_template = false;
    while i < src.len() {
        if in_template {
            // Template text: up to the closing backtick or a `${`.
            match memchr::memchr3(b'`', b'\\', b'$', &src[i..]) {
                None => break,
                Some(p) => {
                    row += memchr::memchr_iter(b'\n', &src[i..i + p]).count();
                    i += p;
                }
            }
            match src[i] {
                b'\\' => {
                    if src.get(i + 1) == Some(&b'\n') {
                        row += 1;
                    }
                    i += 2;
                }
                b'`' => {
                    in_template = false;
                    prev = b'`';
                    i += 1;
                }
                _ if src.get(i + 1) == Some(&b'{') => {
                    templates.push(depth);
                    depth += 1;
                    in_template = false;
                    prev = b'{';
                    i += 2;
                }
                _ => i += 1,
            }
            continue;
        }
        if at_line_start {
            at_line_start = false;
            let b = src[i];
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
            if depth == 0 && templates.is_empty() && !continuation && i > 0 {
                cur.end = i;
                stmts.push(std::mem::take(&mut cur));
                cur.start = i;
                cur.row = row;
                eq_seen = false;
                let w = word_at(src, i);
                cur.import = w == b"import";
            } else if i == 0 {
                cur.import = word_at(src, 0) == b"import";
            }
        }
        let b = src[i];
        match b {
            b'\n' => {
                row += 1;
                at_line_start = true;
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'/' if src.get(i + 1) == Some(&b'/') => {
                i = memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |p| i + p);
            }
            b'/' if src.get(i + 1) == Some(&b'*') => {
                let found = memchr::memmem::find(&src[i + 2..], b"*/");
                cur.malformed |= found.is_none();
                let end = found.map_or(src.len(), |p| i + 2 + p + 2);
                row += memchr::memchr_iter(b'\n', &src[i..end]).count();
                i = end;
            }
            b'/' if matches!(
                prev,
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
            ) || (prev == b'w' && JS_REGEX_AFTER.contains(&prev_word)) =>
            {
                // A regular expression literal: to the closing `/` outside a class, or the line end.
                let mut j = i + 1;
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
                i = (j + 1).min(src.len());
                prev = b'r';
            }
            b'"' | b'\'' => {
                let q = b;
                let start = i + 1;
                i += 1;
                while i < src.len() && src[i] != q && src[i] != b'\n' {
                    if src[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                // Left open at the line end: the lexer and a parser may disagree from here.
                cur.malformed |= src.get(i) != Some(&q);
                let content = &src[start.min(src.len())..i.min(src.len())];
                if javascript_string_hit(content) {
                    cur.hit = true;
                }
                i = (i + 1).min(src.len());
                prev = b'"';
            }
            b'`' => {
                in_template = true;
                i += 1;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                prev = b;
                i += 1;
            }
            b')' | b']' | b'}' => {
                cur.malformed |= depth == 0;
                depth = (depth - 1).max(0);
                if b == b'}' && templates.last() == Some(&depth) {
                    templates.pop();
                    in_template = true;
                }
                prev = b;
                i += 1;
            }
            b'=' => {
                let next = src.get(i + 1).copied();
                if depth == 0
                    && !matches!(next, Some(b'=' | b'>'))
                    && !matches!(prev, b'!' | b'<' | b'>' | b'=')
                {
                    eq_seen = true;
                    cur.assign = true;
                }
                prev = b'=';
                i += 1;
            }
            _ if is_ident_start(b) || b == b'$' => {
                let start = i;
                while i < src.len() && (is_ident(src[i]) || src[i] == b'$') {
                    i += 1;
                }
                let w = &src[start..i];
                if javascript_word_hit(src, start, i) {
                    cur.hit = true;
                }
                cur.idents.push(start..i);
                if !eq_seen
                    && !cur.import
                    && !matches!(
                        w,
                        b"const"
                            | b"let"
                            | b"var"
                            | b"export"
                            | b"default"
                            | b"async"
                            | b"function"
                            | b"class"
                            | b"declare"
                            | b"static"
                    )
                {
                    cur.bound.push(start..i);
                }
                prev = b'w';
                prev_word = w;
            }
            _ => {
                prev = b;
                i += 1;
            }
        }
    }
    cur.end = src.len();
    // A template, bracket or substitution still open at the end of the file.
    cur.malformed |= in_template || depth != 0 || !templates.is_empty();
    stmts.push(cur);
    for s in &mut stmts {
        if !s.import && !s.assign {
            // Only declarations and assignments bind names the alias pass should follow.
            s.bound.clear();
        }
        if s.import {
            // Imports bind every name they mention (but `import`, `from`, `as`).
            s.bound = s
                .idents
                .iter()
                .filter(|r| !matches!(&src[(*r).clone()], b"import" | b"from" | b"as" | b"type"))
                .cloned()
                .collect();
        }
    }
    stmts
}

/// Plans a JavaScript/TypeScript file as a whole: skip it when no candidate word occurs outside
/// strings and comments (template literals count as code, their `${}` parts are code).
pub fn javascript(src: &[u8]) -> Plan {
    let mut i = 0usize;
    while i < src.len() {
        let b = src[i];
        match b {
            b'/' if src.get(i + 1) == Some(&b'/') => {
                while i < src.len() && src[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if src.get(i + 1) == Some(&b'*') => {
                match memchr::memmem::find(&src[i + 2..], b"*/") {
                    Some(p) => i += 2 + p + 2,
                    // An unclosed comment: a parser's error recovery reads the rest as code.
                    None => return Plan::Whole,
                }
            }
            b'"' | b'\'' => {
                let q = b;
                let start = i + 1;
                i += 1;
                while i < src.len() && src[i] != q && src[i] != b'\n' {
                    if src[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                let content = &src[start.min(src.len())..i.min(src.len())];
                if javascript_string_hit(content) {
                    return Plan::Whole;
                }
                i += 1;
            }
            _ if is_ident_start(b) || b == b'$' => {
                let start = i;
                while i < src.len() && (is_ident(src[i]) || src[i] == b'$') {
                    i += 1;
                }
                if javascript_word_hit(src, start, i) {
                    return Plan::Whole;
                }
            }
            _ => i += 1,
        }
    }
    Plan::Skip
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

    fn kept(src: &str) -> Vec<String> {
        match python(src.as_bytes(), 0) {
            Plan::Ranges(r) => r.iter().map(|(r, _)| src[r.clone()].to_string()).collect(),
            other => vec![format!("{other:?}")],
        }
    }

    #[test]
    fn python_words_in_strings_and_comments_do_not_count() {
        assert_eq!(
            python(b"x = 1  # print('a')\n'''print(1)'''\n", 0),
            Plan::Skip
        );
        assert_eq!(python(b"x = 'print(1)'\n", 0), Plan::Skip);
        assert_eq!(python(b"print(1)\n", 0), Plan::Whole);
        assert_eq!(python(b"x = f'{print(1)}'\n", 0), Plan::Whole);
        assert_eq!(python(b"x = 'ext://sys.stdout'\n", 0), Plan::Whole);
        assert_eq!(python(b"print(1)\n", 1 << 20), Plan::Whole);
    }

    #[test]
    fn python_keeps_candidates_imports_short_statements_and_aliases() {
        let big = "    val = 1\n".repeat(80);
        let src = format!(
            "import sys\nfrom subprocess import run as go\nsay = print\n\ndef quiet():\n{big}\ndef loud():\n{big}    print('x')\n\ndef uses_alias():\n{big}    say('y')\n\ndef uses_import():\n{big}    go(['ls'])\n\nclass C:\n    '''print'''\n{big}\nif __name__ == '__main__':\n{big}"
        );
        let kept = kept(&src);
        let joined = kept.join("");
        assert!(joined.contains("import sys"));
        assert!(joined.contains("say = print"));
        assert!(joined.contains("def loud"));
        assert!(joined.contains("def uses_alias"));
        assert!(joined.contains("def uses_import"));
        assert!(!joined.contains("def quiet"));
        assert!(!joined.contains("class C"));
        assert!(!joined.contains("__main__"));
    }

    #[test]
    fn python_statement_boundaries_follow_brackets_strings_and_continuations() {
        let big = "    val = 1\n".repeat(80);
        let src = format!(
            "def a():\n{big}\nx = (\nprint)\ny = '''\nprint\n'''\nz = 1 + \\\nprint\n@decorator\ndef b():\n{big}    print()\ntry:\n{big}\nexcept E:\n    print()\n"
        );
        let joined = kept(&src).join("");
        assert!(!joined.contains("def a"));
        assert!(joined.contains("x = (\nprint)"), "{joined:?}");
        assert!(joined.contains("@decorator\ndef b"));
        assert!(
            joined.contains("try:") && joined.contains("except E:"),
            "{joined}"
        );
    }

    #[test]
    fn python_files_the_lexer_cannot_read_are_parsed_whole() {
        // Valid: the write in `f` and the binding it uses are kept, `quiet` is not.
        let big = "    val = 1\n".repeat(80);
        let ok = format!(
            "import sys\n\ndef quiet():\n    '''Docs.'''\n{big}\ndef f(stream=None):\n    stream = stream or sys.stdout\n    stream.write('x')\n"
        );
        let joined = kept(&ok).join("");
        assert!(joined.contains("stream.write") && !joined.contains("def quiet"));
        // The fuzz finding: a docstring left open makes the lexer see one string to the end
        // of the file, where tree-sitter's recovery reads the rest as code.
        let open_docstring = ok.replace("'''Docs.'''", "'''Docs.");
        assert_eq!(python(open_docstring.as_bytes(), 0), Plan::Whole);
        // Even with no candidate the lexer could see.
        assert_eq!(
            python(b"import sys\n'''\nsys.stdout.write(1)\n", 0),
            Plan::Whole
        );
        // A one-quote string left open at its line end.
        let open_line = ok.replace("'''Docs.'''", "x = 'Docs.");
        assert_eq!(python(open_line.as_bytes(), 0), Plan::Whole);
        // Brackets never closed, closed without being opened, or closed by the wrong kind.
        for (from, to) in [
            ("val = 1", "val = (1"),
            ("val = 1", "val = 1)"),
            ("val = 1", "val = (1]"),
        ] {
            let bad = ok.replacen(from, to, 1);
            assert_eq!(python(bad.as_bytes(), 0), Plan::Whole, "{to}");
        }
        // An escaped line end (also CRLF) continues a one-quote string: still valid.
        let continued = ok.replace("'''Docs.'''", "x = 'Do\\\r\ncs.'");
        assert!(matches!(python(continued.as_bytes(), 0), Plan::Ranges(_)));
    }

    #[test]
    fn python_large_classes_keep_their_header_and_the_members_that_matter() {
        let big = "        val = 1\n".repeat(40);
        let src = format!(
            "import sys\n\n@decorated\nclass Server(Base):\n    '''Docs.'''\n    stream = sys.stdout\n\n    def __init__(self):\n        self.out = sys.stdout\n\n    def quiet(self):\n{big}\n    def loud(self):\n{big}        print('x')\n\n    def via_attr(self):\n{big}        self.out.write('y')\n\n    @property\n    def via_class_attr(self):\n{big}        return self.stream\n"
        );
        let joined = kept(&src).join("");
        assert!(
            joined.contains("@decorated\nclass Server(Base):\n"),
            "{joined}"
        );
        assert!(joined.contains("def __init__"));
        assert!(joined.contains("def loud"));
        assert!(joined.contains("def via_attr"));
        assert!(joined.contains("@property\n    def via_class_attr"));
        assert!(!joined.contains("def quiet"), "{joined}");
    }

    #[test]
    fn javascript_skips_files_without_code_candidates() {
        assert_eq!(
            javascript(b"// console.log('x')\nconst a = 1;\n"),
            Plan::Skip
        );
        assert_eq!(
            javascript(b"/* console.log */ let s = \"console.log\";"),
            Plan::Whole
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
        assert_eq!(javascript(b"util.log(x)"), Plan::Whole);
        assert_eq!(javascript(b"globalThis.console.info(x)"), Plan::Whole);
        assert_eq!(javascript(b"(console as any)\n  .log(x)"), Plan::Whole);
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
