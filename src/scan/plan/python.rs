//! The Python lexer of the plan: statements by indentation, brackets, strings (prefixes,
//! triple quotes, continuations) and comments; large classes and functions are planned member
//! by member.

use super::{
    Plan, Stmt, Vocab, WordSet, bind_bound, follow_aliases, is_ident, is_ident_start, keep_binders,
    owner_before, push_range, word_at,
};
use crate::scan::lang::Lang;
use std::ops::Range;
use std::sync::LazyLock;

/// Python's vocabulary, derived from its sink table.
pub(super) static VOCAB: LazyLock<Vocab> = LazyLock::new(|| Vocab::derive(Lang::Python, &[], None));

const BLOCK_KEYWORDS: &[&[u8]] = &[
    b"def", b"class", b"async", b"if", b"for", b"while", b"try", b"with", b"match", b"@",
];
const CONTINUATION_KEYWORDS: &[&[u8]] = &[b"else", b"elif", b"except", b"finally"];

/// Bytes the lexer steps over without looking (blanks, operators, `.`, `,`, `:`): not a line
/// end, comment, continuation, bracket, `*`, `=`, quote, word or number.
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = !(c.is_ascii_alphanumeric()
            || c >= 0x80
            || matches!(
                c,
                b'_' | b'\n'
                    | b'#'
                    | b'\\'
                    | b'('
                    | b'['
                    | b'{'
                    | b')'
                    | b']'
                    | b'}'
                    | b'*'
                    | b'='
                    | b'"'
                    | b'\''
            ));
        b += 1;
    }
    t
};

/// A function this short may be a helper whose result is a candidate (`def out(): return
/// sys.stdout`): its name is followed like an alias.
const SHORT_FUNCTION: usize = 512;

/// Plans a Python file.
pub fn python(src: &[u8], region_min_bytes: usize) -> Plan {
    // Most files that pass the prefilter have no candidate in code (`f.write`, `open` in a
    // docstring): a skim settles them without lexing every word.
    if !skim(src) {
        return Plan::Skip;
    }
    lexed(src, region_min_bytes)
}

/// [`python`] without the skim: what the skim must agree with.
fn lexed(src: &[u8], region_min_bytes: usize) -> Plan {
    // `import sys as system`: `system.stdout` is `sys.stdout` (shared with class bodies).
    let mut sys_aliases: Vec<&[u8]> = Vec::new();
    // A small file is parsed whole as soon as one candidate shows up.
    let small = src.len() <= region_min_bytes;
    let stmts = Lexer::new(src, 0..src.len(), 0, 0, &mut sys_aliases, small)
        .statements()
        .unwrap_or_default();
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
    let mut keep: Vec<bool> = stmts.iter().map(|s| s.hit).collect();
    let extra = follow_aliases(
        &stmts,
        &mut keep,
        |r| &src[r.clone()],
        |s, names| {
            if s.import {
                names.extend(import_bound(src, s));
            } else if !s.block || s.func {
                bind_bound(src, s, names);
            }
        },
    );
    // What the kept statements use, where it is bound.
    let bind_kept = python_binders(src, &stmts, &keep);
    let mut ranges: Vec<(Range<usize>, usize)> = Vec::new();
    let mut all = true;
    for (i, s) in stmts.iter().enumerate() {
        let k = keep[i] || s.import || bind_kept[i];
        if !k {
            all = false;
            continue;
        }
        // Classes and functions over 1/16 of the region threshold are parsed in parts.
        let parts = if keep[i] {
            block_parts(src, s, &extra, region_min_bytes / 16, &mut sys_aliases, 0)
        } else {
            None
        };
        if parts.is_some() {
            all = false;
        }
        for (r, row) in parts.unwrap_or_else(|| vec![(s.start..s.end, s.row)]) {
            push_range(&mut ranges, r, row);
        }
    }
    if all {
        Plan::Whole
    } else {
        Plan::Ranges(ranges)
    }
}

/// Splits a span into the statements that start at one indentation, lexing strings, comments
/// and brackets as it goes.
struct Lexer<'s, 'a> {
    src: &'s [u8],
    /// The end of the span (the lexer never reads past it).
    end: usize,
    indent: usize,
    sys_aliases: &'a mut Vec<&'s [u8]>,
    /// A small file: only the first candidate matters.
    stop_at_hit: bool,
    stmts: Vec<Stmt>,
    cur: Stmt,
    /// The open brackets, innermost last.
    open: Vec<u8>,
    row: usize,
    i: usize,
    at_line_start: bool,
    /// A backslash continuation.
    continued: bool,
    pending_decorator: bool,
    first: bool,
    prev_word: &'s [u8],
    prev_as: bool,
    prev_prev_sys: bool,
    /// After `global` on this line: the names it declares.
    in_global: bool,
}

/// What the lexer does after one step.
enum Step {
    Go,
    /// A dedent below the indentation: not the body of one block.
    Dedent,
    /// A candidate in a small file: stop here.
    Hit,
}

impl<'s, 'a> Lexer<'s, 'a> {
    fn new(
        src: &'s [u8],
        span: Range<usize>,
        start_row: usize,
        indent: usize,
        sys_aliases: &'a mut Vec<&'s [u8]>,
        stop_at_hit: bool,
    ) -> Lexer<'s, 'a> {
        Lexer {
            src,
            end: span.end,
            indent,
            sys_aliases,
            stop_at_hit,
            stmts: Vec::new(),
            cur: Stmt {
                start: span.start,
                row: start_row,
                ..Stmt::default()
            },
            open: Vec::new(),
            row: start_row,
            i: span.start,
            at_line_start: true,
            continued: false,
            pending_decorator: false,
            first: true,
            prev_word: b"",
            prev_as: false,
            prev_prev_sys: false,
            in_global: false,
        }
    }

    /// The statements at the indentation; `None` when a line dedents below it.
    fn statements(mut self) -> Option<Vec<Stmt>> {
        while self.i < self.end {
            if self.at_line_start {
                match self.line_start() {
                    Step::Dedent => return None,
                    Step::Hit | Step::Go if self.i >= self.end => break,
                    _ => {}
                }
            }
            if let Step::Hit = self.token() {
                return Some(vec![self.cur]);
            }
        }
        self.cur.end = self.end;
        self.cur.malformed |= !self.open.is_empty();
        self.stmts.push(self.cur);
        // Only imports and assignments bind names the alias pass should follow, and small
        // functions their name (`def out(): return sys.stdout` … `out().write(x)`).
        for s in &mut self.stmts {
            if !s.import && (s.block || !s.assign) {
                s.bound.clear();
            }
            // `global x` … `x = sys.stdout` in a function binds the module's `x`.
            let globals = std::mem::take(&mut s.globals);
            s.bound.extend(globals);
            if s.func
                && s.end - s.start <= SHORT_FUNCTION
                && let Some(name) = s.name.clone()
            {
                s.bound.push(name);
            }
        }
        Some(self.stmts)
    }

    /// The start of a line: a new statement when it starts at the indentation outside brackets.
    fn line_start(&mut self) -> Step {
        let src = &self.src[..self.end];
        self.at_line_start = false;
        let line_start = self.i;
        let mut ws = 0;
        while self.i + ws < src.len() && matches!(src[self.i + ws], b' ' | b'\t' | b'\x0c') {
            ws += 1;
        }
        let b = src.get(self.i + ws).copied().unwrap_or(b'\n');
        let blank = matches!(b, b'\n' | b'\r' | b'#');
        let outside = self.open.is_empty() && !self.continued && !blank;
        self.continued = false;
        if outside && ws < self.indent {
            return Step::Dedent;
        }
        if !(outside && ws == self.indent) {
            return Step::Go;
        }
        self.i += ws;
        let w = word_at(src, self.i);
        let continuation = CONTINUATION_KEYWORDS.contains(&w);
        if !continuation && !self.pending_decorator && !self.first {
            self.cur.end = line_start;
            self.stmts.push(std::mem::take(&mut self.cur));
            self.cur.start = line_start;
            self.cur.row = self.row;
        }
        self.first = false;
        if !continuation {
            let was_decorated = self.pending_decorator;
            self.pending_decorator = b == b'@';
            self.cur.import = w == b"import" || w == b"from";
            self.cur.block = BLOCK_KEYWORDS.contains(&w) || was_decorated;
            self.cur.class |= w == b"class";
            let after = super::skip_blanks(src, self.i + w.len());
            self.cur.func |= w == b"def" || (w == b"async" && src[after..].starts_with(b"def"));
        }
        Step::Go
    }

    /// One token: a line end, a comment, a continuation, a bracket, a string, a word.
    fn token(&mut self) -> Step {
        let src = &self.src[..self.end];
        let b = src[self.i];
        match b {
            b'\n' => {
                self.row += 1;
                self.at_line_start = true;
                self.in_global = false;
                self.i += 1;
            }
            b'#' => {
                self.i = memchr::memchr(b'\n', &src[self.i..]).map_or(src.len(), |p| self.i + p);
            }
            b'\\' => {
                let crlf =
                    src.get(self.i + 1) == Some(&b'\r') && src.get(self.i + 2) == Some(&b'\n');
                if src.get(self.i + 1) == Some(&b'\n') || crlf {
                    self.continued = true;
                    self.at_line_start = true;
                    self.row += 1;
                    self.i += if crlf { 3 } else { 2 };
                } else {
                    self.i += 1;
                }
            }
            b'(' | b'[' | b'{' => {
                self.open.push(b);
                self.i += 1;
            }
            b'*' if self.cur.import => {
                self.cur.star = true;
                self.i += 1;
            }
            b')' | b']' | b'}' => {
                let opener = match b {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                self.cur.malformed |= self.open.pop() != Some(opener);
                self.i += 1;
            }
            b'=' => {
                let next = src.get(self.i + 1).copied();
                let prev = if self.i > 0 { src[self.i - 1] } else { b' ' };
                if self.open.is_empty()
                    && next != Some(b'=')
                    && !matches!(prev, b'=' | b'!' | b'<' | b'>' | b':')
                {
                    self.cur.assign = true;
                }
                self.i += 1;
            }
            b'"' | b'\'' => return self.string(self.i, false),
            _ if is_ident_start(b) => return self.word(),
            _ if b.is_ascii_digit() => {
                while self.i < src.len()
                    && (src[self.i].is_ascii_alphanumeric() || matches!(src[self.i], b'.' | b'_'))
                {
                    self.i += 1;
                }
            }
            // Blanks and operators: the run of them (the lexer's most frequent step).
            _ => {
                let from = self.i + 1;
                self.i = from
                    + src[from..]
                        .iter()
                        .position(|&b| !PLAIN[usize::from(b)])
                        .unwrap_or(src.len() - from);
            }
        }
        Step::Go
    }

    /// A string at its quote; a formatted string's code counts.
    fn string(&mut self, quote: usize, formatted: bool) -> Step {
        let src = &self.src[..self.end];
        let (end, rows, hit, closed) = python_string(src, quote, formatted);
        self.cur.malformed |= !closed;
        self.cur.hit |= hit;
        self.row += rows;
        self.i = end;
        if hit && self.stop_at_hit {
            Step::Hit
        } else {
            Step::Go
        }
    }

    fn word(&mut self) -> Step {
        let src: &'s [u8] = &self.src[..self.end];
        let start = self.i;
        let i = start
            + 1
            + src[start + 1..]
                .iter()
                .position(|&b| !is_ident(b))
                .unwrap_or(src.len() - start - 1);
        self.i = i;
        let w = &src[start..i];
        // A string prefix: `f"..."`, `rb'...'`.
        if self.i < src.len()
            && matches!(src[self.i], b'"' | b'\'')
            && let Some(formatted) = string_prefix(w)
        {
            return self.string(self.i, formatted);
        }
        if self.cur.name.is_none()
            && ((self.cur.func && self.prev_word == b"def")
                || (self.cur.class && self.prev_word == b"class"))
        {
            self.cur.name = Some(start..self.i);
        }
        if self.cur.import && self.prev_as && self.prev_prev_sys {
            self.sys_aliases.push(w);
        }
        if self.in_global {
            self.cur.globals.push(start..self.i);
        }
        self.in_global |= w == b"global";
        self.prev_prev_sys = self.prev_word == b"sys";
        self.prev_as = w == b"as";
        self.prev_word = w;
        if self.counts(start, self.i) || VOCAB.fd_hit(src, start, self.i, self.cur.import) {
            self.cur.hit = true;
            if self.stop_at_hit {
                return Step::Hit;
            }
        }
        if w == b"self" && src.get(self.i) == Some(&b'.') {
            self.self_attribute();
        }
        if self.stop_at_hit {
            return Step::Go; // a small file: only the first candidate matters
        }
        self.cur.idents.push(start..self.i);
        let binds = if self.cur.import {
            !matches!(w, b"import" | b"from" | b"as")
        } else {
            !self.cur.assign && self.open.is_empty()
        };
        if binds {
            self.cur.bound.push(start..self.i);
        }
        Step::Go
    }

    /// [`word_counts`] with what the lexer knows: its brackets and the aliases of `sys`.
    fn counts(&self, start: usize, end: usize) -> bool {
        word_counts(
            &self.src[..self.end],
            start..end,
            self.open.is_empty(),
            |owner| self.sys_aliases.contains(&owner),
        )
    }

    /// `self.<name> = ...`: the attribute is bound here.
    fn self_attribute(&mut self) {
        let src = &self.src[..self.end];
        let a = self.i + 1;
        let mut e = a;
        while e < src.len() && is_ident(src[e]) {
            e += 1;
        }
        let k = super::skip_blanks(src, e);
        if e > a && src.get(k) == Some(&b'=') && src.get(k + 1) != Some(&b'=') {
            self.cur.self_bound.push(a..e);
        }
    }
}

/// The short simple statements the kept ones need (see [`keep_binders`]); the kept classes and
/// functions are those a statement uses by name (`Out.stream.write(x)`, `get_out().write(x)`).
/// Other statements without a candidate cannot change a finding: every sink, stream and
/// redirection the analyzer knows is spelled with a candidate word, and what it resolves, it
/// resolves by name.
fn python_binders(src: &[u8], stmts: &[Stmt], keep: &[bool]) -> Vec<bool> {
    let defined: WordSet = stmts
        .iter()
        .zip(keep)
        .filter(|(s, k)| **k && s.block)
        .filter_map(|(s, _)| s.name.clone().map(|r| &src[r]))
        .collect();
    keep_binders(
        src,
        stmts,
        keep,
        &defined,
        |r| &src[r.clone()],
        |_| false,
        |s| !s.block,
    )
}

/// The names an import binds that can matter: those that bring in something the sink table
/// knows, or a module holding such things (`from rich.console import Console`, `import
/// logging`, `from sys import stdout as out`), and candidate words; not `Text` of `from
/// rich.text import Text`, whose module's name made the import a candidate. An import the
/// reader below does not follow (a `;`, a relative one is read, not bound) binds every name.
fn import_bound<'s>(src: &'s [u8], s: &Stmt) -> Vec<&'s [u8]> {
    let all = || s.bound.iter().map(|r| &src[r.clone()]).collect();
    let mut text: Vec<u8> = Vec::with_capacity(s.end - s.start);
    let mut k = s.start;
    while k < s.end {
        match src[k] {
            b'#' => k = memchr::memchr(b'\n', &src[k..s.end]).map_or(s.end, |p| k + p),
            b'(' | b')' | b'\\' | b'\n' | b'\r' | b'\t' | b',' => {
                text.extend_from_slice(if src[k] == b',' { b" , " } else { b" " });
                k += 1;
            }
            b';' | b'"' | b'\'' => return all(),
            c => {
                text.push(c);
                k += 1;
            }
        }
    }
    let Ok(text) = std::str::from_utf8(&text) else {
        return all();
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    // (module, names): `from m import a as b, c` or `import m.n as o, p`.
    let (module, rest) = match words.as_slice() {
        ["from", module, "import", rest @ ..] => (Some(*module), rest),
        ["import", rest @ ..] => (None, rest),
        _ => return all(),
    };
    let mut out = Vec::new();
    for item in rest.split(|w| *w == ",").filter(|i| !i.is_empty()) {
        let (path, local) = match item {
            [name] => (*name, name.split('.').next().unwrap_or(name)),
            [name, "as", local] => (*name, *local),
            _ => return all(),
        };
        let target = match module {
            Some(m) => format!("{m}.{path}"),
            // `import a.b` binds `a`, the package.
            None if local != path && !item.contains(&"as") => local.to_string(),
            None => path.to_string(),
        };
        if KNOWN_PATHS.contains(target.as_str()) || VOCAB.is_word(local.as_bytes()) {
            let Some(p) = memchr::memmem::find(&src[s.start..s.end], local.as_bytes()) else {
                return all();
            };
            let at = s.start + p;
            out.push(&src[at..at + local.len()]);
        }
    }
    out
}

/// Every qualified name the Python sink table knows, and every module or object path that
/// leads to one (`rich`, `rich.console`, `rich.console.Console`).
static KNOWN_PATHS: LazyLock<std::collections::HashSet<String>> = LazyLock::new(|| {
    let mut out = std::collections::HashSet::new();
    let Some(t) = crate::scan::sinks::table(Lang::Python) else {
        return out;
    };
    let names = t
        .names()
        .chain(t.aliases.iter().flat_map(|(a, b)| [*a, *b]))
        .chain(t.pretty.iter().flat_map(|(a, b)| [*a, *b]));
    for name in names {
        let mut path = String::new();
        for seg in name.split(['.', ':']).filter(|s| !s.is_empty()) {
            if seg.starts_with('<') {
                break;
            }
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(seg.trim_end_matches("()"));
            out.insert(path.clone());
        }
    }
    out
});

/// Could the lexer find a candidate or a malformation in `src`? A superset of what it finds
/// (false: the plan is [`Plan::Skip`]), at a fraction of its cost: it steps only through
/// strings, comments, brackets and line starts, and looks at a word only where the language's
/// prefilter words occur in it. At a candidate word it asks what the lexer asks (the owner
/// before it, a keyword argument's name, a descriptor write), with two answers widened: any
/// statement whose line starts with `import`/`from` counts as an import, and when the file may
/// rename `sys` (`import sys as s`), every owner counts.
fn skim(src: &[u8]) -> bool {
    // Matches in order, not overlapping: a match that hides part of a candidate word is made
    // of word bytes, so it lies in that word, which the skim then reads whole (a word cannot
    // end inside `/dev/`).
    let mut next = Lang::Python
        .prefilter_searcher()
        .find_iter(src)
        .map(|m| m.start())
        .peekable();
    let any_owner = may_rename_sys(src);
    let mut open: Vec<u8> = Vec::new();
    let mut import = line_imports(src, 0);
    let mut i = 0;
    while i < src.len() {
        // Occurrences behind `i` were in a string or a comment, or in a word already seen.
        while next.next_if(|&o| o < i).is_some() {}
        let stop = next.peek().copied().unwrap_or(src.len());
        i += src[i..stop]
            .iter()
            .position(|&b| SKIM_STOP[usize::from(b)])
            .unwrap_or(stop - i);
        if i == src.len() {
            break;
        }
        if i == stop {
            let mut start = i;
            while start > 0 && is_ident(src[start - 1]) {
                start -= 1;
            }
            let mut end = i;
            while end < src.len() && is_ident(src[end]) {
                end += 1;
            }
            if word_counts(src, start..end, open.is_empty(), |_| any_owner)
                || VOCAB.fd_hit(src, start, end, import)
            {
                return true;
            }
            i = end.max(i + 1);
            continue;
        }
        let b = src[i];
        match b {
            b'\n' => {
                i += 1;
                if open.is_empty() {
                    import = line_imports(src, i);
                }
            }
            b'#' => i = memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |p| i + p),
            b'\\' => {
                // A continuation keeps the statement (and its `import`) going.
                i += match (src.get(i + 1), src.get(i + 2)) {
                    (Some(b'\n'), _) => 2,
                    (Some(b'\r'), Some(b'\n')) => 3,
                    _ => 1,
                };
            }
            b'(' | b'[' | b'{' => {
                open.push(b);
                i += 1;
            }
            b')' | b']' | b'}' => {
                let opener = match b {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if open.pop() != Some(opener) {
                    return true; // malformed: the lexer has the file parsed whole
                }
                i += 1;
            }
            _ => {
                // A quote, after a prefix (`f"`, `rb'`) or not.
                let mut p = i;
                while p > 0 && is_ident(src[p - 1]) {
                    p -= 1;
                }
                let formatted = string_prefix(&src[p..i]) == Some(true);
                let (end, _, hit, closed) = python_string(src, i, formatted);
                if hit || !closed {
                    return true;
                }
                i = end;
            }
        }
    }
    !open.is_empty()
}

/// The bytes the skim stops at: line ends, comments, continuations, brackets, quotes.
static SKIM_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let stops = b"\n#\\()[]{}\"'";
    let mut k = 0;
    while k < stops.len() {
        t[stops[k] as usize] = true;
        k += 1;
    }
    t
};

/// Is the candidate word at `word` used in a way a rule can report? After a dot only on an
/// owner the table knows or one `also_owner` accepts (the lexer: an alias of `sys`; the skim:
/// any, when the file may rename `sys`); a keyword argument's name (`run(stdout=PIPE)`,
/// `def f(input=None)`) inside brackets (`outside` false) is not the value.
fn word_counts(
    src: &[u8],
    word: Range<usize>,
    outside: bool,
    also_owner: impl Fn(&[u8]) -> bool,
) -> bool {
    if !VOCAB.is_word(&src[word.clone()]) {
        return false;
    }
    if let Some(owner) = owner_before(src, word.start, b"") {
        return VOCAB.owned_by(owner) || also_owner(owner);
    }
    let j = super::skip_blanks(src, word.end);
    let keyword = src.get(j) == Some(&b'=') && src.get(j + 1) != Some(&b'=');
    !keyword || outside
}

/// Does the logical line starting at `i` start with `import` or `from` (at any indentation)?
fn line_imports(src: &[u8], i: usize) -> bool {
    let mut j = i;
    while j < src.len() && matches!(src[j], b' ' | b'\t' | b'\x0c') {
        j += 1;
    }
    matches!(word_at(src, j), b"import" | b"from")
}

/// May the file bind another name to `sys` (`import sys as s`)? A word ending in `sys`, then
/// anything but words and quotes (blanks, line ends, brackets, commas, comments), then `as`.
fn may_rename_sys(src: &[u8]) -> bool {
    memchr::memmem::find_iter(src, b"sys").any(|p| {
        let mut j = p + 3;
        while j < src.len() && !is_ident(src[j]) && !matches!(src[j], b'"' | b'\'') {
            j = if src[j] == b'#' {
                memchr::memchr(b'\n', &src[j..]).map_or(src.len(), |q| j + q)
            } else {
                j + 1
            };
        }
        word_at(src, j) == b"as"
    })
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
    extra: &WordSet,
    min_bytes: usize,
    sys_aliases: &mut Vec<&'s [u8]>,
    depth: u32,
) -> Option<Vec<(Range<usize>, usize)>> {
    if !(s.class || s.func) || s.end - s.start < min_bytes || depth > 8 {
        return None;
    }
    let (body, row, indent) = body_start(src, s)?;
    let members = Lexer::new(src, body..s.end, row, indent, sys_aliases, false).statements()?;
    if members.iter().any(|m| m.malformed) {
        return None;
    }
    let uses = |m: &Stmt, set: &WordSet| m.idents.iter().any(|r| set.contains(&src[r.clone()]));
    // Names that make a statement matter, grown from the statements with a candidate.
    let mut names: WordSet = extra.clone();
    for m in members.iter().filter(|m| m.hit) {
        names.extend(m.self_bound.iter().map(|r| &src[r.clone()]));
        if m.import {
            names.extend(import_bound(src, m));
        } else if !m.block {
            names.extend(m.bound.iter().map(|r| &src[r.clone()]));
        }
    }
    let mut keep: Vec<bool> = members
        .iter()
        .map(|m| m.hit || m.import || uses(m, &names))
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
    // What the kept members use, where it is bound (`stream = sys.stderr` in a class body …
    // `print(x, file=self.stream)` in a method).
    let binders = python_binders(src, &members, &keep);
    for (k, b) in keep.iter_mut().zip(binders) {
        *k |= b;
    }
    let mut parts = vec![(s.start..body, s.row)];
    for (m, k) in members.iter().zip(&keep) {
        if !*k {
            continue;
        }
        let inner = block_parts(src, m, &names, min_bytes, sys_aliases, depth + 1);
        for (r, row) in inner.unwrap_or_else(|| vec![(m.start..m.end, m.row)]) {
            push_range(&mut parts, r, row);
        }
    }
    Some(parts)
}

/// The first statement line of a block's body (on the line after the header's `:` at bracket
/// depth 0): its byte offset, row and indentation.
fn body_start(src: &[u8], s: &Stmt) -> Option<(usize, usize, usize)> {
    let header_end = header_end(src, s.start, s.end)?;
    let mut j = header_end;
    let mut row = s.row + memchr::memchr_iter(b'\n', &src[s.start..header_end]).count();
    loop {
        let line_end = memchr::memchr(b'\n', &src[j..s.end]).map_or(s.end, |p| j + p + 1);
        let line = &src[j..line_end];
        let content = line
            .iter()
            .position(|c| !matches!(c, b' ' | b'\t' | b'\x0c'));
        match content {
            Some(0) if !matches!(line[0], b'\n' | b'\r' | b'#') => return None,
            Some(p) if !matches!(line[p], b'\n' | b'\r' | b'#') => return Some((j, row, p)),
            _ if line_end >= s.end => return None,
            _ => {
                j = line_end;
                row += 1;
            }
        }
    }
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
                i = python_string(src, i, false).0;
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

/// Lexes a string starting at its quote; returns (end, newlines inside, candidate inside,
/// closed). An unclosed string ends at its line end (one quote) or at the end of the file
/// (three quotes). Strings only matter as short values (`"ext://sys.stdout"`, `"/dev/stdout"`,
/// `getattr(sys, "stdout")`); a docstring that mentions stdout is not a candidate. A
/// `formatted` string's code counts: any candidate word in it makes it a candidate.
fn python_string(src: &[u8], i: usize, formatted: bool) -> (usize, usize, bool, bool) {
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
    let hit = VOCAB.string_hit(content) || (formatted && VOCAB.formatted_hit(content));
    (j, rows, hit, closed)
}

/// `Some(formatted)` when `w`, just before a quote, is a string prefix (`f`, `rb`, `Rf`).
fn string_prefix(w: &[u8]) -> Option<bool> {
    (w.len() <= 2
        && w.iter()
            .all(|c| matches!(c.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f')))
    .then(|| w.iter().any(|c| c.eq_ignore_ascii_case(&b'f')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(src: &str) -> Vec<String> {
        match python(src.as_bytes(), 0) {
            Plan::Ranges(r) => r.iter().map(|(r, _)| src[r.clone()].to_string()).collect(),
            other => vec![format!("{other:?}")],
        }
    }

    /// The skim's promise: when it says a file has no candidate, the lexer agrees (the plan
    /// without the skim is `Skip` too), at both region thresholds.
    fn assert_skim_agrees(src: &[u8], what: &str) {
        if !skim(src) {
            for region in [0, super::super::DEFAULT_REGION_MIN_BYTES] {
                assert_eq!(lexed(src, region), Plan::Skip, "the skim missed: {what}");
            }
        }
    }

    #[test]
    fn the_skim_never_rules_out_what_the_lexer_keeps() {
        // Each case holds a candidate (or a malformation) the lexer keeps; most are near misses
        // of the skim's shortcuts.
        let cases: &[&str] = &[
            "import sys as s\ns.stdout.write('x')\n",
            "from x import (sys  # c\n as s)\ns.stdout.write('x')\n",
            "import os, sys as system\nsystem.stdout.flush()\n",
            "from os import write\n",
            "from os import (\n    write,\n)\n",
            "import os; os.write(1, b'x')\n",
            "os.write(1, b'x')\n",
            "open(1, 'w')\n",
            "x = f'{print(1)}'\n",
            "x = rf'''\n{print(1)}'''\n",
            "x = Rb'/dev/stdout'\n",
            "x = 'ext://sys.stdout'\n",
            "x = pprint\nprint\n",
            "def f(file=print): pass\n",
            "y = (a,\n     stdout)\n",
            "x = \\\n  print\n",
            "x = (1]\n",
            "x = (1\n",
            "x = 'open\n",
            "x = '''open\n",
            "class A:\n    def f(self):\n        input()\n",
            "1.0; print(2)\n",
            "x = 0x1F + print\n",
        ];
        for case in cases {
            assert!(skim(case.as_bytes()), "the skim ruled out: {case:?}");
            assert_skim_agrees(case.as_bytes(), case);
        }
        // And what it rules out: candidates only in strings, comments, keyword argument names
        // and after owners the table does not know.
        for case in [
            "x = 1  # print('a')\n'''print(1)'''\n",
            "run(cmd, stdout=PIPE, input=data)\n",
            "f.write(b'x')\nself.print(1)\nproc.stdout.read()\n",
            "x = 'a long string that mentions print and stdout but is no sink'\n",
        ] {
            assert!(!skim(case.as_bytes()), "the skim kept: {case:?}");
            assert_skim_agrees(case.as_bytes(), case);
        }
    }

    #[test]
    fn the_skim_agrees_with_the_lexer_on_every_fixture_and_its_cuts() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scan");
        let mut sources = Vec::new();
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).expect("fixture folder") {
                let p = entry.expect("fixture entry").path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|e| e == "py") {
                    sources.push((p.display().to_string(), std::fs::read(&p).expect("fixture")));
                }
            }
        }
        assert!(sources.len() >= 20, "the Python fixtures were not found");
        for (name, src) in &sources {
            assert_skim_agrees(src, name);
            // Cut at every line end and inside lines: strings and brackets left open, words
            // split, statements cut short.
            for cut in (0..src.len()).step_by(7) {
                assert_skim_agrees(&src[..cut], &format!("{name} cut at byte {cut}"));
                assert_skim_agrees(&src[cut..], &format!("{name} from byte {cut}"));
            }
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
        // A keyword argument's name is not the value.
        assert_eq!(
            python(b"run(cmd, stdout=PIPE, input=data)\n", 0),
            Plan::Skip
        );
    }

    #[test]
    fn python_formatted_strings_count_by_their_code_and_strings_by_whole_words() {
        let cases: &[(&[u8], Plan)] = &[
            // The text of a formatted string is not code; its replacement fields are.
            (b"x = f'input shape {shape}'\n", Plan::Skip),
            (b"x = f'{{print}} {n}'\n", Plan::Skip),
            (b"x = f'{n} input_ids {m}'\n", Plan::Skip),
            (b"x = f'{input_ids}'\n", Plan::Skip),
            (b"x = f'n: {print(n)}'\n", Plan::Whole),
            (b"x = f'{n:>{input()}}'\n", Plan::Whole),
            (b"x = f'''\n{n}\n{sys.stdout}'''\n", Plan::Whole),
            (b"x = f\"{getattr(sys, 'stdout')}\"\n", Plan::Whole),
            // A string counts where the word stands alone, not inside a longer name.
            (b"x = ['fcgi_stdout', 'stdouts']\n", Plan::Skip),
            (b"x = 'sys.stdout'\n", Plan::Whole),
            (b"x = 'sys.__stdout__'\n", Plan::Whole),
            (b"x = 'stdout'\n", Plan::Whole),
            (b"x = 'tty:/dev/pts'\n", Plan::Whole),
        ];
        for (src, plan) in cases {
            assert_eq!(&python(src, 0), plan, "{}", String::from_utf8_lossy(src));
        }
    }

    #[test]
    fn python_keeps_the_short_statements_that_bind_what_kept_code_uses() {
        let big = "    val = 1\n".repeat(80);
        let src = format!(
            "UNUSED = 1\nERR = STREAM\nSTREAM = sys.stderr\nOTHER = sys.stderr\n\
             def log(x):\n{big}    print(x, file=ERR)\n\n\
             class Reporter:\n    stream = OTHER\n    level = 3\n{big}\n    \
             def emit(self, x):\n        print(x, file=self.stream)\n\n\
             def get_out():\n{big}    return sys.stdout\n\n\
             get_out().write('x')\nReporter.stream.write('y')\nunrelated().write('z')\n"
        );
        let joined = kept(&src).join("");
        assert!(joined.contains("ERR = STREAM"), "{joined}");
        assert!(
            joined.contains("STREAM = sys.stderr"),
            "one step further: {joined}"
        );
        assert!(
            joined.contains("OTHER = sys.stderr"),
            "used by a kept member: {joined}"
        );
        assert!(joined.contains("    stream = OTHER"), "{joined}");
        assert!(!joined.contains("UNUSED"), "{joined}");
        assert!(!joined.contains("level = 3"), "{joined}");
        assert!(
            joined.contains("get_out().write"),
            "uses a kept function: {joined}"
        );
        assert!(
            joined.contains("Reporter.stream"),
            "uses a kept class: {joined}"
        );
        assert!(!joined.contains("unrelated"), "{joined}");
    }

    #[test]
    fn an_import_binds_only_the_names_that_lead_to_the_table() {
        let bound = |line: &str| -> Vec<String> {
            let src = line.as_bytes();
            let stmts = Lexer::new(src, 0..src.len(), 0, 0, &mut Vec::new(), false)
                .statements()
                .expect("one statement");
            import_bound(src, &stmts[0])
                .iter()
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect()
        };
        assert_eq!(bound("from rich.text import Text\n"), Vec::<String>::new());
        assert_eq!(
            bound("from rich.console import Console, Group as G\n"),
            ["Console"]
        );
        assert_eq!(
            bound("from rich import (\n  box,  # x\n  print,\n)\n"),
            ["print"]
        );
        assert_eq!(bound("import logging, typing\n"), ["logging"]);
        assert_eq!(bound("import logging.handlers\n"), ["logging"]);
        assert_eq!(bound("import os.path as osp\n"), Vec::<String>::new());
        assert_eq!(bound("from sys import stdout as out\n"), ["out"]);
        assert_eq!(
            bound("from .console import console\n"),
            Vec::<String>::new()
        );
        // What the reader does not follow binds every name.
        assert_eq!(bound("import rich; x = 1\n"), ["rich", "x"]);
    }

    #[test]
    fn python_keeps_candidates_imports_and_aliases() {
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
}
