//! The JavaScript/TypeScript lexer of the plan: strings, templates (with their `${}` code),
//! regular expressions and comments; statements start in column 0 outside brackets. Large kept
//! statements are planned inside their function bodies (`blocks`).

mod blocks;

use super::{
    Plan, Stmt, Vocab, WordSet, follow_aliases, is_ident, is_ident_start, keep_binders,
    owner_before, push_range, word_at,
};
use crate::scan::lang::Lang;
use crate::scan::sinks::javascript::{GLOBAL_OBJECTS, GLOBALS};
use blocks::block_parts;
use std::collections::HashMap;
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

/// Keywords that start a statement and can never go on with an expression: after a block's
/// `}`, one of them starts a new statement.
const STATEMENT_KEYWORDS: &[&[u8]] = &[
    b"function",
    b"var",
    b"let",
    b"const",
    b"class",
    b"if",
    b"for",
    b"return",
    b"throw",
    b"try",
    b"switch",
    b"break",
    b"continue",
];

/// Keywords before a `(...)` whose `{` opens a block of the enclosing function, not a function.
const CONTROL_KEYWORDS: &[&[u8]] = &[
    b"if", b"for", b"while", b"switch", b"catch", b"with", b"await",
];

/// Reserved words: never a name that a kept statement's binding could be about.
const RESERVED: &[&[u8]] = &[
    b"break",
    b"case",
    b"catch",
    b"class",
    b"const",
    b"continue",
    b"debugger",
    b"default",
    b"delete",
    b"do",
    b"else",
    b"export",
    b"extends",
    b"false",
    b"finally",
    b"for",
    b"function",
    b"if",
    b"import",
    b"in",
    b"instanceof",
    b"let",
    b"new",
    b"null",
    b"return",
    b"super",
    b"switch",
    b"this",
    b"throw",
    b"true",
    b"try",
    b"typeof",
    b"var",
    b"void",
    b"while",
    b"with",
    b"yield",
    b"async",
    b"await",
    b"of",
    b"undefined",
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
/// descriptor 1 (`writeSync(1, ...)`, `{ fd: 1 }`). `member`: the token before it (comments
/// aside) is a `.`; only then can it have an owner (a comment ending in `user.` is none).
fn word_hit(src: &[u8], start: usize, end: usize, member: bool) -> bool {
    let v = &*VOCAB;
    if v.is_word(&src[start..end])
        && (!member || owner_before(src, start, b"?\n\r)!").is_none_or(|o| v.owned_by(o)))
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
    let mut stmts = minified_split(src, Lexer::new(src).statements(), region_min_bytes);
    // Where the skip lexer saw candidates the statement lexer did not (see below).
    let mut forced = Vec::new();
    if !stmts.iter().any(|s| s.hit) {
        // The lexers disagree (the skip lexer reads a template holding a `/` as code, and
        // what it then took for code may be text): the statements holding what the skip
        // lexer saw are kept, and the parser decides. Where the statement lexer misread the
        // file, the partial tree has a syntax error and the file is parsed whole.
        if skim(src, Some(&mut forced)) != Plan::Skip {
            return Plan::Whole;
        }
        for s in &mut stmts {
            force_hits(s, &forced);
        }
        if !stmts.iter().any(|s| s.hit) {
            return Plan::Whole;
        }
    }
    if stmts.iter().any(|s| s.malformed) {
        // An unclosed string, comment or template, or unbalanced brackets: where the file goes
        // wrong, a parser's error recovery and this lexer disagree on what is code.
        return Plan::Whole;
    }
    let mut keep: Vec<bool> = stmts.iter().map(|s| s.hit).collect();
    // The large function bodies of each large statement the alias pass binds from (lexed once).
    let large = (region_min_bytes / 16).max(1);
    let mut bodies_of: HashMap<usize, Vec<Range<usize>>> = HashMap::new();
    // A name bound plain (`var out = ...`) is read plain (`out.write(x)`), one bound as a member
    // (`exports.out = ...`) after a `.` (`m.out`): the alias pass keys them apart (see
    // [`name_key`]), so a bound `filter` does not keep every `xs.filter(...)` of a bundle.
    let key = |r: &Range<usize>| name_key(src, r);
    let names = follow_aliases(&stmts, &mut keep, key, |s, names| {
        if s.minified {
            let carried = carried_writes(src, s, names, &[]);
            names.extend(carried);
            return;
        }
        let bodies: &[Range<usize>] = if s.end - s.start >= large && !s.bound.is_empty() {
            bodies_of
                .entry(s.start)
                .or_insert_with(|| large_bodies(src, s, large))
        } else {
            &[]
        };
        if bodies.is_empty() {
            names.extend(s.bound.iter().map(key));
            return;
        }
        // Of the names it binds, those its value carries outside its large bodies.
        let carried = carried_writes(src, s, names, bodies);
        names.extend(s.bound.iter().map(key).filter(|w| carried.contains(w)));
    });
    let binders = javascript_binders(src, &stmts, &keep);
    let modules = module_names(src, &stmts);
    let mut ranges: Vec<(Range<usize>, usize)> = Vec::new();
    let mut all = true;
    for (i, s) in stmts.iter().enumerate() {
        if !(keep[i] || s.import || binders[i]) {
            all = false;
            continue;
        }
        // Large kept statements (bundles wrapped in one function, big functions) are parsed
        // with only the statements of their function bodies that can matter.
        let parts = if keep[i] {
            block_parts(
                src,
                s.start..s.end,
                s.row,
                &names,
                &modules,
                region_min_bytes / 16,
                &forced,
            )
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

/// The names the top-level statements write only with a module object
/// (`var util = require("util")`; see `blocks::module_value`).
fn module_names<'s>(src: &'s [u8], stmts: &[Stmt]) -> WordSet<'s> {
    let mut modules = WordSet::default();
    let mut others = WordSet::default();
    for s in stmts {
        for (k, w) in s.writes.iter().enumerate() {
            let value = s.values.get(k).cloned().unwrap_or(WHOLE);
            if src.get(value).is_some_and(blocks::module_value) {
                modules.insert(&src[w.clone()]);
            } else {
                others.insert(&src[w.clone()]);
            }
        }
    }
    modules.retain(|w| !others.contains(w));
    modules
}

/// The short statements without a candidate that the kept code needs (see [`keep_binders`]):
/// imports count as used, and the kept code's declarations (a kept `function out()` used by
/// `out().write(x)`) as defined. Other short statements are left out (a bundle's thousands of
/// `var f = (x) => ...` helpers).
fn javascript_binders(src: &[u8], stmts: &[Stmt], keep: &[bool]) -> Vec<bool> {
    let defined: WordSet = stmts
        .iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .flat_map(|(s, _)| s.declared.iter().map(|(r, _)| &src[r.clone()]))
        .collect();
    keep_binders(
        src,
        stmts,
        keep,
        &defined,
        |r| name_key(src, r),
        |s| s.import,
        |_| true,
    )
}

/// A top-level statement of minified code: more bytes than this per line end (template text
/// keeps some line ends in minified code).
const MINIFIED_LINE: usize = 1024;

/// Splits the large top-level statements of minified code (one line holding a whole module:
/// `var a=require("x");function f(){...};f()`) at their `;`s and at a `}` a statement keyword
/// follows, as a function body is split: statements start only at line starts at the top level
/// (semicolons are optional there), which leaves a minified file one statement. A split the
/// parser disagrees with shows as a syntax error in the partial tree, and the file is then
/// parsed whole.
fn minified_split(src: &[u8], stmts: Vec<Stmt>, min_bytes: usize) -> Vec<Stmt> {
    let minified = |s: &Stmt| {
        let len = s.end - s.start;
        len > min_bytes.max(4 * MINIFIED_LINE)
            && memchr::memchr_iter(b'\n', &src[s.start..s.end]).count() < len / MINIFIED_LINE
    };
    if !stmts.iter().any(minified) {
        return stmts;
    }
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        if !minified(&s) {
            out.push(s);
            continue;
        }
        let parts = Lexer::span(src, s.start..s.end, s.row, true).statements();
        if parts.len() < 2 || parts.iter().any(|p| p.malformed) {
            out.push(s);
            continue;
        }
        for mut p in parts {
            let first = p.start
                + (src[p.start..p.end].len() - src[p.start..p.end].trim_ascii_start().len());
            if word_at(src, first) == b"import" {
                p.import = true;
                p.bound = import_bound(src, &p);
            } else {
                p.minified = true;
            }
            out.push(p);
        }
    }
    out
}

/// The names an import binds: every name it mentions but `import`, `from`, `as`, `type`.
fn import_bound(src: &[u8], s: &Stmt) -> Vec<Range<usize>> {
    s.idents
        .iter()
        .filter(|r| !matches!(&src[(*r).clone()], b"import" | b"from" | b"as" | b"type"))
        .cloned()
        .collect()
}

/// The names a kept part of minified code binds for the alias pass: those it writes with a
/// value that holds a candidate or a name bound so far (`var i=n(()=>console)`), a function's
/// name when what it returns does, and a class's. Every word before a part's first `=` (the
/// rule for other statements) would bind `for`, `if` and the short names minified code reuses
/// everywhere, and keep the whole file.
///
/// A large statement binds the names it binds before its first `=` that this returns when
/// given `bodies`, its large function bodies (see [`large_bodies`]): what stands in them reaches
/// its names only through what a function returns. The analyzer resolves a call's result only
/// for a same-file function it calls by name, so
/// `var require_x = __commonJS({ "x"(exports) { ... console.log(...) ... } })` holds no stdout:
/// the bundle's modules that require it need not be kept for it (the planned-body pass decides
/// what inside it is kept).
fn carried_writes<'s>(
    src: &'s [u8],
    s: &Stmt,
    names: &WordSet<'s>,
    bodies: &[Range<usize>],
) -> Vec<&'s [u8]> {
    let outside = |p: usize| !bodies.iter().any(|b| b.contains(&p));
    // What a value holds outside the bodies, and what a `return` holds.
    let holds_in = |v: &Range<usize>, all: bool| {
        within(&s.hits, v, |&p| p)
            .iter()
            .any(|&p| all || outside(p))
            || within(&s.idents, v, |r| r.start)
                .iter()
                .any(|r| (all || outside(r.start)) && names.contains(name_key(src, r)))
    };
    let holds = |v: &Range<usize>| holds_in(v, true);
    let mut bound = Vec::new();
    for (k, w) in s.writes.iter().enumerate() {
        let v = s.values.get(k).cloned().unwrap_or(WHOLE);
        let returned = |v: &Range<usize>| {
            s.returns
                .iter()
                .filter(|r| v.start <= r.start && r.end <= v.end)
                .any(holds)
        };
        let carried = match v {
            WHOLE => {
                bodies.is_empty()
                    || s.returns.iter().any(holds)
                    || holds_in(&(s.start..s.end), false)
            }
            RETURNED => s.returns.iter().any(holds),
            // A function carries what it returns.
            _ if blocks::function_value(&src[v.clone()]) => returned(&v),
            _ => holds_in(&v, false),
        };
        if carried {
            bound.push(name_key(src, w));
        }
    }
    bound
}

/// How the top-level alias pass spells the name at `r`: a member (after a `.`) with its dot
/// (`.out`), so that it matches only members; a plain name as it is.
fn name_key<'s>(src: &'s [u8], r: &Range<usize>) -> &'s [u8] {
    if r.start > 0 && src[r.start - 1] == b'.' && blocks::is_member(src, r.start) {
        &src[r.start - 1..r.end]
    } else {
        &src[r.clone()]
    }
}

/// The function bodies of at least `min_bytes` of statement `s` that no other body holds (the
/// bodies the planned-body pass splits it at); none when the lexer cannot read it.
fn large_bodies(src: &[u8], s: &Stmt, min_bytes: usize) -> Vec<Range<usize>> {
    let mut lexed = Lexer::span(src, s.start..s.end, s.row, true);
    lexed.run();
    if lexed.depth != 0 || lexed.in_template || lexed.cur.malformed {
        return Vec::new();
    }
    lexed
        .bodies
        .into_iter()
        .map(|(b, _)| b)
        .filter(|b| b.len() >= min_bytes)
        .collect()
}

/// The items of `sorted` (in order of their positions, `at`) that stand in `r`.
pub(super) fn within<'a, T>(
    sorted: &'a [T],
    r: &Range<usize>,
    at: impl Fn(&T) -> usize,
) -> &'a [T] {
    let lo = sorted.partition_point(|x| at(x) < r.start);
    let hi = sorted.partition_point(|x| at(x) < r.end);
    &sorted[lo..hi.max(lo)]
}

/// Makes statement `s` a candidate when a position of `forced` (sorted: candidates only the
/// skip lexer saw) falls in it and the statement lexer saw none there. Such a statement is
/// parsed, and the parser decides; it binds, writes and mentions nothing for the alias passes:
/// the statement lexer read the candidate as text, and only if both lexers erred together
/// would an alias of it be lost.
fn force_hits(s: &mut Stmt, forced: &[usize]) {
    if s.hit || within(forced, &(s.start..s.end), |&p| p).is_empty() {
        return;
    }
    s.hit = true;
    s.bound.clear();
    s.writes.clear();
    s.values.clear();
    s.idents.clear();
    s.returns.clear();
}

/// A value being read (see [`Stmt::values`]).
struct Region {
    /// The bracket depth it began at: it ends at a `;` there (or a `,`, unless it is what a
    /// `return` returns), or where that depth closes.
    depth: i32,
    /// The writes it is the value of (indices into `Stmt::writes`); none for a `return`.
    writes: Range<usize>,
    start: usize,
}

/// [`Stmt::values`] of a function's name: what the function returns ([`Stmt::returns`]).
pub(super) const RETURNED: Range<usize> = usize::MAX..usize::MAX;
/// [`Stmt::values`] of a name whose value may be anything in its statement.
pub(super) const WHOLE: Range<usize> = 0..usize::MAX;

/// Rows of positions at or after a start, counted as the positions go forward.
struct Rows<'s> {
    src: &'s [u8],
    at: std::cell::Cell<(usize, usize)>,
}

impl<'s> Rows<'s> {
    fn new(src: &'s [u8], start: usize, row: usize) -> Rows<'s> {
        Rows {
            src,
            at: std::cell::Cell::new((start, row)),
        }
    }

    /// The row of `pos` (positions asked in increasing order).
    fn at(&self, pos: usize) -> usize {
        let (from, row) = self.at.get();
        let row = row + memchr::memchr_iter(b'\n', &self.src[from..pos]).count();
        self.at.set((pos, row));
        row
    }
}

/// Plans a JavaScript/TypeScript file as a whole: skip it when no candidate word occurs outside
/// strings and comments (a template's text is a string, its `${}` parts are code).
pub fn javascript(src: &[u8]) -> Plan {
    skim(src, None)
}

/// The skip lexer of [`javascript`]. With `hits`, it reads on past candidates and records
/// where each one starts; it still answers `Plan::Whole` where it cannot read the file (an
/// unclosed comment or template), and `Plan::Skip` otherwise.
fn skim(src: &[u8], mut hits: Option<&mut Vec<usize>>) -> Plan {
    let mut hit_at = |at: usize| match hits.as_deref_mut() {
        Some(h) => {
            h.push(at);
            false
        }
        None => true,
    };
    let mut i = 0usize;
    // The last byte of code before `i` that is no blank (comments are not code).
    let mut prev = b';';
    // Templates: the brace depth, the depths at which the substitutions open now began, and
    // whether templates are still read as text (see `template_text`).
    let mut braces = 0i32;
    let mut templates: Vec<i32> = Vec::new();
    let mut texts = true;
    while i < src.len() {
        let b = src[i];
        match b {
            // A template's text, from its backtick or from the `}` that ends a substitution.
            b'`' | b'}'
                if (b == b'`' && texts)
                    || (b == b'}' && templates.last() == Some(&(braces - 1))) =>
            {
                if b == b'}' {
                    templates.pop();
                    braces -= 1;
                }
                match template_text(src, i + 1) {
                    Text::Chunk(end, substitution) => {
                        let whole = b == b'`' && !substitution;
                        let hit = if whole {
                            VOCAB.string_hit_at(src, i, end) && !compared(src, i, end)
                        } else {
                            VOCAB.string_hit(&src[i + 1..end])
                        };
                        if hit && hit_at(i) {
                            return Plan::Whole;
                        }
                        if substitution {
                            templates.push(braces);
                            braces += 1;
                        }
                        i = end + if substitution { 2 } else { 1 };
                        prev = if substitution { b'{' } else { b'"' };
                    }
                    // From here on every backtick is code: which ones close a template is
                    // unknown.
                    Text::Code => {
                        texts = false;
                        templates.clear();
                        prev = b;
                        i += 1;
                    }
                    Text::Open => return Plan::Whole,
                }
            }
            // A `/` in a substitution may open a regular expression, whose braces this lexer
            // cannot tell: templates are code from here on.
            b'/' if !templates.is_empty() => {
                texts = false;
                templates.clear();
                prev = b;
                i += 1;
            }
            b'{' => {
                braces += 1;
                prev = b;
                i += 1;
            }
            b'}' => {
                braces -= 1;
                prev = b;
                i += 1;
            }
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
                if VOCAB.string_hit_at(src, i, end) && !compared(src, i, end) && hit_at(i) {
                    return Plan::Whole;
                }
                i = end + 1;
                prev = b'"';
            }
            _ if is_ident_start(b) || b == b'$' => {
                let start = i;
                while i < src.len() && (is_ident(src[i]) || src[i] == b'$') {
                    i += 1;
                }
                if word_hit(src, start, i, prev == b'.') && hit_at(start) {
                    return Plan::Whole;
                }
                prev = b'w';
            }
            _ if b.is_ascii_whitespace() => {
                // A run of blanks at once (indentation, line ends).
                i += 1;
                while src.get(i).is_some_and(u8::is_ascii_whitespace) {
                    i += 1;
                }
            }
            _ => {
                prev = b;
                i += 1;
            }
        }
    }
    Plan::Skip
}

/// What a backtick (or a substitution's `}`) at `i - 1` starts, for the skip lexer.
enum Text {
    /// Template text up to `.0`: the closing backtick, or a `${` when `.1`.
    Chunk(usize, bool),
    /// Read it as code: the text holds a `/`, so the backtick may be inside a regular
    /// expression (which the skip lexer does not read), and the "text" code after it.
    Code,
    /// A template that never ends.
    Open,
}

/// A template's text from `i` (see [`Text`]): reading code as text could skip a file, so text
/// with a `/` is read as code, which only keeps more.
fn template_text(src: &[u8], mut i: usize) -> Text {
    let from = i;
    loop {
        let Some(p) = memchr::memchr3(b'`', b'\\', b'$', &src[i.min(src.len())..]) else {
            return Text::Open;
        };
        let p = i + p;
        let end = match src[p] {
            b'\\' => {
                i = p + 2;
                continue;
            }
            b'`' => Text::Chunk(p, false),
            _ if src.get(p + 1) == Some(&b'{') => Text::Chunk(p, true),
            _ => {
                i = p + 1;
                continue;
            }
        };
        return if memchr::memchr(b'/', &src[from..p]).is_some() {
            Text::Code
        } else {
            end
        };
    }
}

/// Is the string from its opening quote at `open` to its closing quote at `close` one side of
/// an equality test (`e.type === 'stdout'`, `'console' != kind`) or a `case` label? Such a
/// string names no module, option or path a rule reads (`r.type === `console`` in a minified
/// bundle would otherwise keep the whole file).
fn compared(src: &[u8], open: usize, close: usize) -> bool {
    let mut k = open;
    while k > 0 && matches!(src[k - 1], b' ' | b'\t' | b'\n' | b'\r') {
        k -= 1;
    }
    if k >= 2 && src[k - 1] == b'=' && matches!(src[k - 2], b'=' | b'!') {
        return true;
    }
    if k >= 4
        && &src[k - 4..k] == b"case"
        && (k == 4 || !(is_ident(src[k - 5]) || src[k - 5] == b'$' || src[k - 5] == b'.'))
    {
        return true;
    }
    let mut j = close + 1;
    while j < src.len() && matches!(src[j], b' ' | b'\t' | b'\n' | b'\r') {
        j += 1;
    }
    j + 1 < src.len() && matches!(src[j], b'=' | b'!') && src[j + 1] == b'='
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
    /// The source up to the end of the span lexed (positions stay the file's).
    src: &'s [u8],
    /// Inside a block (a function body): statements end at `;` and at a `}` followed by a
    /// statement keyword, not at line starts.
    block: bool,
    /// The open brackets: the byte that opened each, where, whether it opened a body (`) {`,
    /// `=> {`), how many identifiers the statement had then, and whether the body is a
    /// function's (not `if (...) {`, `for (...) {`, `catch (...) {`).
    open: Vec<(u8, usize, bool, usize, bool)>,
    /// Where the `(` of the last `)` was.
    paren_open: usize,
    /// The last bracket group closed was a subscript (`a[k]`).
    subscript: bool,
    /// Declarations being read (`var`/`let`/`const`): the bracket depth each began at,
    /// whether its initializer (after `=`) is being read, and whether it is a `var`; names in
    /// its pattern are writes.
    decls: Vec<(i32, bool, bool)>,
    /// The next word is a declared name (after `function`, `class`).
    name_next: bool,
    /// The next word is the name of a declaration that starts the statement (`function f`:
    /// `Some(false)`, function-scoped; `class C`: `Some(true)`, block-scoped).
    decl_name_next: Option<bool>,
    /// The name `name_next` announces is a class's (its value is the whole statement), not a
    /// function's (its value is what it returns).
    class_next: bool,
    /// Where the declarator being read began in `cur.writes`.
    decl_from: usize,
    /// The values being read: after an `=` (of the writes it assigns) or a `return`/`yield`.
    regions: Vec<Region>,
    /// Where (in `cur.idents`) the bracket group closed last began: `[a, b] = v` writes both.
    last_group: usize,
    /// The contents of the outermost bodies met (`) {`, `=> {`), in order, and whether each
    /// is a function's (not an `if`'s or a loop's).
    bodies: Vec<(Range<usize>, bool)>,
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
        Lexer::span(src, 0..src.len(), 0, false)
    }

    /// A lexer of `span` (starting at `row`); `block`: the span is a block's contents.
    fn span(src: &'s [u8], span: Range<usize>, row: usize, block: bool) -> Lexer<'s> {
        Lexer {
            src: &src[..span.end],
            block,
            open: Vec::new(),
            decls: Vec::new(),
            paren_open: 0,
            subscript: false,
            name_next: false,
            decl_name_next: None,
            class_next: false,
            decl_from: 0,
            regions: Vec::new(),
            last_group: 0,
            bodies: Vec::new(),
            stmts: Vec::new(),
            cur: Stmt {
                start: span.start,
                row,
                ..Stmt::default()
            },
            depth: 0,
            row,
            i: span.start,
            at_line_start: true,
            prev: b';',
            prev_word: b"",
            eq_seen: false,
            templates: Vec::new(),
            in_template: false,
        }
    }

    fn statements(mut self) -> Vec<Stmt> {
        self.run();
        self.finish()
    }

    /// Lexes the span to its end.
    fn run(&mut self) {
        while self.i < self.src.len() {
            if self.in_template {
                if !self.template_text() {
                    break;
                }
                continue;
            }
            if self.at_line_start && !self.block {
                self.line_start();
            }
            self.token();
        }
    }

    /// The statements, with the names each binds.
    fn finish(mut self) -> Vec<Stmt> {
        self.close_regions(-1, true);
        self.cur.end = self.src.len();
        // A template, bracket or substitution still open at the end of the file.
        self.cur.malformed |= self.in_template || self.depth != 0 || !self.templates.is_empty();
        self.stmts.push(self.cur);
        let src = self.src;
        for s in &mut self.stmts {
            if s.import {
                s.bound = import_bound(src, s);
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
                self.open
                    .push((b'$', self.i, false, self.cur.idents.len(), false));
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
        // `else`, `catch` and `finally` in column 0 go on with the statement before, and so
        // does any line after one that ends with an operator (`cond ?` ... `:` then an object
        // literal in column 0). A `++`/`--` that ends a statement joins two statements, which
        // only keeps more.
        let continuation = continuation
            || matches!(word_at(self.src, self.i), b"else" | b"catch" | b"finally")
            || matches!(
                self.prev,
                b':' | b'?'
                    | b'='
                    | b','
                    | b'+'
                    | b'-'
                    | b'*'
                    | b'/'
                    | b'%'
                    | b'&'
                    | b'|'
                    | b'^'
                    | b'!'
                    | b'~'
                    | b'<'
                    | b'>'
                    | b'.'
            );
        if self.depth == 0 && self.templates.is_empty() && !continuation && self.i > 0 {
            self.close_regions(-1, true);
            self.cur.end = self.i;
            self.stmts.push(std::mem::take(&mut self.cur));
            self.cur.start = self.i;
            self.cur.row = self.row;
            self.eq_seen = false;
            self.decls.clear();
            self.name_next = false;
            self.decl_name_next = None;
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
            // A run of blanks at once (indentation): none of them changes the lexer's state.
            b' ' | b'\t' | b'\r' => {
                self.i += 1;
                while src
                    .get(self.i)
                    .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\r'))
                {
                    self.i += 1;
                }
            }
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
                if VOCAB.string_hit_at(src, self.i, end) && !compared(src, self.i, end) {
                    self.cur.hit = true;
                    self.cur.hits.push(self.i);
                }
                self.i = (end + 1).min(src.len());
                self.prev = b'"';
            }
            b'`' => {
                self.in_template = true;
                self.i += 1;
            }
            b'(' | b'[' | b'{' => {
                // `function (x)`, `class {`: no name follows.
                self.name_next = false;
                self.decl_name_next = None;
                // A `switch`'s braces hold `case` clauses, not statements one could leave out.
                let body =
                    b == b'{' && self.body_starts() && self.word_before_parens() != b"switch";
                let function = body && self.function_body();
                self.cur.block |= b == b'{' && self.depth == 0;
                self.open
                    .push((b, self.i, body, self.cur.idents.len(), function));
                self.depth += 1;
                self.prev = b;
                self.i += 1;
            }
            b')' | b']' | b'}' => self.close(b),
            b';' => {
                if self.decls.last().is_some_and(|d| d.0 == self.depth) {
                    self.decls.pop();
                }
                self.close_regions(self.depth - 1, true);
                self.prev = b;
                self.i += 1;
                // `if (a) f(); else g();` is one statement.
                if self.block && self.depth == 0 && word_at(self.rest(), 0) != b"else" {
                    self.end_statement();
                }
            }
            b',' => {
                if let Some(d) = self.decls.last_mut()
                    && d.0 == self.depth
                {
                    d.1 = false;
                    self.decl_from = self.cur.writes.len();
                }
                self.close_regions(self.depth - 1, false);
                self.prev = b;
                self.i += 1;
            }
            b'=' => {
                let next = src.get(self.i + 1).copied();
                if !matches!(next, Some(b'=' | b'>')) {
                    self.assigned();
                }
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

    /// A closing bracket: the outermost function bodies are recorded; in a block, a `}` at the
    /// statement's level followed by a statement keyword ends the statement.
    fn close(&mut self, b: u8) {
        self.cur.malformed |= self.depth == 0;
        self.depth = (self.depth - 1).max(0);
        let opened = self.open.pop();
        if let Some((b'{', at, true, _, function)) = opened
            && !self.open.iter().any(|o| o.2)
        {
            self.bodies.push((at + 1..self.i, function));
        }
        if let Some((open, at, _, idents, _)) = opened {
            self.last_group = idents;
            self.subscript = open == b'['
                && self.src[..at]
                    .trim_ascii_end()
                    .last()
                    .is_some_and(|&c| is_ident(c) || matches!(c, b')' | b']' | b'$'));
            if open == b'(' {
                self.paren_open = at;
            }
        }
        while self.decls.last().is_some_and(|d| d.0 > self.depth) {
            self.decls.pop();
        }
        self.close_regions(self.depth, true);
        if b == b'}' && self.templates.last() == Some(&self.depth) {
            self.templates.pop();
            self.in_template = true;
        }
        self.prev = b;
        self.i += 1;
        if self.block && b == b'}' && self.depth == 0 && self.statement_follows() {
            self.end_statement();
        }
    }

    /// Does a `{` here open a function body (after `)` or `=>`)?
    fn body_starts(&self) -> bool {
        let before = self.src[..self.i].trim_ascii_end();
        before.ends_with(b")") || before.ends_with(b"=>")
    }

    /// Is the body opening here a function's: after `=>`, or after a `(...)` that no control
    /// keyword (`if`, `for`, `while`, `switch`, `catch`, `with`, `for await`) starts?
    fn function_body(&self) -> bool {
        if self.src[..self.i].trim_ascii_end().ends_with(b"=>") {
            return true;
        }
        !CONTROL_KEYWORDS.contains(&self.word_before_parens())
    }

    /// The word before the `(...)` just closed (`if`, `switch`, a function's name).
    fn word_before_parens(&self) -> &'s [u8] {
        let before = self.src[..self.paren_open.min(self.i)].trim_ascii_end();
        let mut k = before.len();
        while k > 0 && (is_ident(before[k - 1]) || before[k - 1] == b'$') {
            k -= 1;
        }
        &before[k..]
    }

    /// After a block's `}`: does a statement keyword (which cannot go on with an expression)
    /// or the end of the block come next?
    fn statement_follows(&self) -> bool {
        let rest = self.rest();
        rest.is_empty() || STATEMENT_KEYWORDS.contains(&word_at(rest, 0))
    }

    /// The source after `i`, blanks and closed comments skipped.
    fn rest(&self) -> &'s [u8] {
        let mut rest = self.src[self.i..].trim_ascii_start();
        // Comments in between (closed ones: an unclosed comment is malformed anyway).
        loop {
            if rest.starts_with(b"//") {
                let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
                rest = rest[end..].trim_ascii_start();
            } else if rest.starts_with(b"/*")
                && let Some(p) = memchr::memmem::find(&rest[2..], b"*/")
            {
                rest = rest[2 + p + 2..].trim_ascii_start();
            } else {
                break;
            }
        }
        rest
    }

    /// Ends the current statement here (inside a block).
    fn end_statement(&mut self) {
        self.close_regions(-1, true);
        self.cur.end = self.i;
        self.stmts.push(std::mem::take(&mut self.cur));
        self.cur.start = self.i;
        self.cur.row = self.row;
        self.eq_seen = false;
        self.decls.clear();
        self.name_next = false;
        self.decl_name_next = None;
    }

    /// An `=` (not `==`, `=>`, `+=`): the name before it is assigned (`x = v`, `this.x = v`),
    /// or every name of the bracket group before it (`[a, b] = v`); a declaration's pattern
    /// ends at it.
    fn assigned(&mut self) {
        let n = self.cur.idents.len();
        let declarator = self.decls.last().is_some_and(|d| !d.1 && d.0 == self.depth);
        let targets = match self.prev {
            // A declarator's `=`: its names were read as declarations.
            _ if declarator => {
                let from = self.decl_from.min(self.cur.writes.len());
                self.regions.push(Region {
                    depth: self.depth,
                    writes: from..self.cur.writes.len(),
                    start: self.i,
                });
                0..0
            }
            b'w' => n.saturating_sub(1)..n,
            // `a[k] = v` assigns no name (`[a, b] = v` does).
            b']' if self.subscript => 0..0,
            b')' | b']' | b'}' => self.last_group.min(n)..n,
            _ => 0..0,
        };
        let from = self.cur.writes.len();
        for k in targets {
            let r = self.cur.idents[k].clone();
            self.cur.writes.push(r);
            self.cur.values.push(WHOLE);
        }
        if self.cur.writes.len() > from {
            self.regions.push(Region {
                depth: self.depth,
                writes: from..self.cur.writes.len(),
                start: self.i,
            });
        }
        if let Some(d) = self.decls.last_mut()
            && d.0 == self.depth
        {
            d.1 = true;
        }
    }

    /// Ends the values being read at depths above `depth` (at `depth + 1` only at a `,`, and
    /// then not what a `return` returns): their writes get them as values.
    pub(super) fn close_regions(&mut self, depth: i32, returns_too: bool) {
        while let Some(r) = self.regions.last() {
            if r.depth <= depth || (!returns_too && r.writes.is_empty()) {
                break;
            }
            let r = self.regions.pop().expect("a region");
            let value = r.start..self.i;
            if r.writes.is_empty() {
                self.cur.returns.push(value);
            } else {
                for k in r.writes {
                    self.cur.values[k] = value.clone();
                }
            }
        }
    }

    /// Whether the word being read is a declarator's plain name (`var a = 1, b`, `let c`; not
    /// in a pattern, where keys and defaults are names too): `Some(false)` for a `var`
    /// (function-scoped, at any depth), `Some(true)` for a `let`/`const` starting the
    /// statement (block-scoped).
    fn simple_declarator(&self) -> Option<bool> {
        let d = self.decls.last()?;
        let after = self.prev == b','
            || (self.prev == b'w' && matches!(self.prev_word, b"var" | b"let" | b"const"));
        (after && !d.1 && d.0 == self.depth && (d.2 || self.depth == 0)).then_some(!d.2)
    }

    /// Whether only `export`, `default` or `async` came before the word being read in this
    /// statement (it was pushed already).
    fn opens_statement(&self) -> bool {
        let n = self.cur.idents.len().saturating_sub(1);
        self.cur.idents[..n]
            .iter()
            .all(|r| matches!(&self.src[r.clone()], b"export" | b"default" | b"async"))
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
        let member = self.prev == b'.';
        if word_hit(src, start, self.i, member) {
            self.cur.hit = true;
            self.cur.hits.push(start);
        }
        self.cur.idents.push(start..self.i);
        // A name declared inside a function of the statement is that function's own: it binds
        // nothing the statement's neighbours see. Assignments may be to an outer name.
        // A `let`/`const` in a block of the statement (`for (const k of ks)`, `if (a) { let
        // b }`) is that block's own: it binds nothing outside the statement.
        let declared = std::mem::take(&mut self.name_next)
            || self
                .decls
                .last()
                .is_some_and(|d| !d.1 && self.depth >= d.0 && (d.2 || d.0 == 0));
        let in_function = self.open.iter().any(|o| o.4);
        let class = std::mem::take(&mut self.class_next);
        if declared && !in_function {
            self.cur.writes.push(start..self.i);
            // A pattern's names until the declarator's `=` gives them their value.
            let value = match (self.decls.last().is_some_and(|d| !d.1), class) {
                (true, _) | (false, true) => WHOLE,
                (false, false) => RETURNED,
            };
            self.cur.values.push(value);
        }
        let scoped = std::mem::take(&mut self.decl_name_next);
        if !member
            && !in_function
            && let Some(block) = scoped.or_else(|| self.simple_declarator())
        {
            self.cur.declared.push((start..self.i, block));
        }
        if !member {
            match w {
                b"var" | b"let" | b"const" => {
                    if self.decls.last().is_some_and(|d| d.0 == self.depth) {
                        self.decls.pop();
                    }
                    self.decls.push((self.depth, false, w == b"var"));
                    self.decl_from = self.cur.writes.len();
                }
                // A function's own `return`s are inside its body: all count (a nested
                // function's too, which only keeps more).
                b"return" | b"yield" => self.regions.push(Region {
                    depth: self.depth,
                    writes: 0..0,
                    start: self.i,
                }),
                b"function" | b"class" => {
                    self.name_next = true;
                    self.class_next = w == b"class";
                    if self.depth == 0 && self.opens_statement() {
                        self.decl_name_next = Some(w == b"class");
                    }
                }
                b"in" | b"of" if self.decls.last().is_some_and(|d| d.0 == self.depth) => {
                    self.decls.pop();
                }
                _ => {}
            }
        }
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
    fn javascript_strings_compared_for_equality_are_no_candidates() {
        // A minified viewer testing an event's type names no module, option or path (skipped);
        // the same words as values still count: a ternary's stdio, a module, an option.
        let cases: [(&str, bool); 8] = [
            ("if (e.type === `console`) show(e);\n", true),
            (
                "const err = e.type !== 'stdout' && e.type == \"stderr\";\n",
                true,
            ),
            ("switch (kind) { case 'console': break; }\n", true),
            ("if ('inherit' === mode) go();\n", true),
            (
                "spawn(cmd, { stdio: quiet ? 'pipe' : 'inherit' });\n",
                false,
            ),
            ("const c = require('console');\n", false),
            ("const appender = { type: 'stdout' };\n", false),
            ("const m = require(`console`);\n", false),
        ];
        for (src, skipped) in cases {
            assert_eq!(javascript(src.as_bytes()) == Plan::Skip, skipped, "{src}");
        }
    }

    #[test]
    fn javascript_names_count_as_strings_only_where_a_module_or_member_is_named() {
        // Module and member names are strings where a module is imported or a member is read
        // by subscript; a quoted key counts as the word would unquoted (a module's name there
        // is data: a domain list's `"ink"`); elsewhere the same text is data (a mime table's
        // extensions, an event's name). Values count anywhere, or as the value of their key.
        let cases: [(&str, bool); 21] = [
            ("var eo = new Set(['inset', 'inherit', 'initial']);\n", true),
            ("i(a, () => [{ values: ['current', 'inherit'] }]);\n", true),
            (
                "spawn(cmd, args, {\n  cwd: root,\n  env: process.env,\n  stdio: 'inherit',\n});\n",
                false,
            ),
            (
                "const t = { 'application/inkml+xml': ['ink', 'inkml'] };\n",
                true,
            ),
            (
                "const Events = { Console: 'console', Close: 'close' };\n",
                true,
            ),
            ("f('console');\n", true),
            ("const kind = 'stdout';\n", true),
            ("const ui = require('ink');\n", false),
            ("const u = require.resolve('pino');\n", false),
            ("import { render } from 'ink';\n", false),
            ("import 'consola';\n", false),
            ("const m = await import('node:child_process');\n", false),
            ("declare module 'winston' {}\n", false),
            ("globalThis['console'].info(x);\n", false),
            ("const o = { 'stdout': s };\n", false),
            (
                "module.exports = { \"ink\": { \"$\": 0 }, \"pino\": 1 };\n",
                true,
            ),
            ("const { 'log': say } = console;\n", false),
            ("const a = { out: { type: 'console' } };\n", false),
            ("const a = { out: { \"type\": 'stdout' } };\n", false),
            (
                "spawn(cmd, { stdio: ['pipe', 'inherit', 'pipe'] });\n",
                false,
            ),
            ("const p = '/dev/stdout';\n", false),
        ];
        for (src, skipped) in cases {
            assert_eq!(javascript(src.as_bytes()) == Plan::Skip, skipped, "{src}");
        }
    }

    /// The text of the ranges a plan keeps (parts of at least `min` bytes planned), as one
    /// string, or the plan.
    fn kept_at(src: &str, min: usize) -> String {
        kept_planned(src, min).concat()
    }

    /// The text of the ranges a plan keeps, or the plan.
    fn kept_text(src: &str) -> Vec<String> {
        kept_planned(src, 0)
    }

    fn kept_planned(src: &str, min: usize) -> Vec<String> {
        match javascript_planned(src.as_bytes(), min) {
            Plan::Ranges(r) => r.iter().map(|(r, _)| src[r.clone()].to_string()).collect(),
            other => vec![format!("{other:?}")],
        }
    }

    #[test]
    fn minified_lines_are_planned_part_by_part() {
        // One line holding a module: its parts (at `;`) are planned like statements, and a
        // part binds only the names it writes with a candidate value.
        let filler: String = (0..40)
            .map(|n| {
                let body = format!("b+=a[0]*{n};").repeat(60);
                format!("function f{n}(a,b){{for(let i=0;i<a.length;i++){{{body}}}return b}};")
            })
            .collect();
        let pad = "q+=1;".repeat(120);
        let src = format!(
            "var z=1;{filler}if(z)h=console;{filler}function g(){{let q=0;{pad}return h}};\
             function k(){{let q=z;{pad}return q}};h.log(g());{filler}\n"
        );
        let kept = kept_text(&src).concat();
        assert!(kept.contains("if(z)h=console;"), "{kept}");
        assert!(kept.contains("h.log(g());"), "{kept}");
        // `g` returns `h`, which holds the console: an alias.
        assert!(kept.contains("function g()"), "{kept}");
        // `z` is only read by the part that writes `h`: `k`, which mentions it, is no alias.
        assert!(!kept.contains("function k()"), "{kept}");
        assert!(kept.len() < src.len() / 4, "{}", kept.len());
        // The same code on lines of its own is planned as before; short lines are kept.
        let lines = src.replace(';', ";\n");
        assert!(matches!(
            javascript_planned(lines.as_bytes(), 0),
            Plan::Ranges(_)
        ));
    }

    #[test]
    fn javascript_keeps_the_short_statements_that_bind_what_kept_code_uses() {
        let filler: String = (0..40)
            .map(|n| format!("function f{n}(a, b) {{\n  return a * {n} + b;\n}}\n"))
            .collect();
        let src = format!(
            "const pino = require('pino');\nvar level = 'info';\nvar opts = {{ level }};\nvar helper = (x) => x + 1;\n\
             {filler}pino(opts).info(1);\nfunction out() {{\n  return process.stdout;\n}}\n\
             out().write('x');\n{filler}"
        );
        let kept = kept_text(&src).concat();
        assert!(kept.contains("pino(opts)"), "{kept}");
        assert!(
            kept.contains("var opts = { level };"),
            "what a kept call reads: {kept}"
        );
        assert!(kept.contains("var level = 'info';"), "two steps: {kept}");
        assert!(
            kept.contains("out().write('x');"),
            "uses a kept function: {kept}"
        );
        assert!(
            !kept.contains("var helper"),
            "binds nothing kept code uses: {kept}"
        );
    }

    #[test]
    fn a_line_after_an_operator_goes_on_with_the_statement() {
        // axios: `cond ? {...} :`, a comment, then the other object literal in column 0.
        let src = "var cookies = env ?\n  {\n    write() { console.log(1); },\n  } :\n\
                   // not in a browser\n{\n  write() {},\n};\n\
                   var sum = 1 +\n2;\nvar after = 1;\n";
        let stmts: Vec<&str> = Lexer::new(src.as_bytes())
            .statements()
            .iter()
            .map(|s| &src[s.start..s.end])
            .collect();
        assert_eq!(stmts.len(), 3, "{stmts:#?}");
        assert!(stmts[0].ends_with("write() {},\n};\n"), "{stmts:#?}");
        assert_eq!(stmts[1], "var sum = 1 +\n2;\n");
    }

    #[test]
    fn a_candidate_only_the_skip_lexer_sees_keeps_its_statement_not_the_file() {
        // After a template holding a `/`, the skip lexer reads templates as code and sees
        // `console` in `console-tab`; the statement lexer reads it as text. The statement is
        // kept for the parser to decide, the rest of the file is not parsed.
        let filler = (0..30)
            .map(|n| {
                let body = format!("  b = b * a + {n};\n").repeat(40);
                format!("function f{n}(a, b) {{\n{body}  return b;\n}}\n")
            })
            .collect::<String>();
        let src = format!(
            "const u = `a/b`;\n{filler}const tab = h(`div`, {{ className: `console-tab` }});\n{filler}"
        );
        assert_eq!(javascript(src.as_bytes()), Plan::Whole);
        let kept = kept_text(&src).concat();
        assert!(kept.contains("console-tab"), "{kept}");
        assert!(kept.len() < src.len() / 4, "{kept}");
    }

    #[test]
    fn javascript_skips_files_without_code_candidates() {
        assert_eq!(
            javascript(b"// console.log('x')\nconst a = 1;\n"),
            Plan::Skip
        );
        assert_eq!(
            javascript(b"/* console.log */ let s = require(\"console\");"),
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
        // A template's text is a string; its substitutions are code.
        assert_eq!(javascript(b"if (t === `console.log`) f();"), Plan::Skip);
        assert_eq!(
            javascript(b"let s = `a ${x} console.log ${y} b`;"),
            Plan::Skip
        );
        assert_eq!(javascript(b"const m = require(`console`);"), Plan::Whole);
        assert_eq!(
            javascript(b"let s = `a ${`b ${console.log(1)}`}`;"),
            Plan::Whole
        );
        // A backtick inside a regular expression does not open a template there: text with a
        // `/` is read as code, and so is every template after it.
        assert_eq!(
            javascript(b"const r = /`/; console.log(1); t = `x`;"),
            Plan::Whole
        );
        assert_eq!(
            javascript(b"a = `x/y`; console.log(1); b = `z`;"),
            Plan::Whole
        );
        // A `/` in a substitution may open a regular expression with braces in it.
        assert_eq!(
            javascript(b"x = `${s.replace(/{/g, '')}a`; console.log(1); y = `b`;"),
            Plan::Whole
        );
        assert_eq!(javascript(b"t = `never closed"), Plan::Whole);
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
        // A comment ending in `word.` owns nothing on the next line.
        assert_eq!(
            javascript(b"// for the user.\nconsole.log(1);"),
            Plan::Whole
        );
        assert_eq!(javascript(b"user. /* c */ console.log(1);"), Plan::Whole);
        assert_eq!(javascript(b"user.\n  console.log(1);"), Plan::Skip);
    }

    #[test]
    fn a_name_bound_plain_is_not_read_as_a_member_nor_the_reverse() {
        // `filter` bound from the console keeps `filter(...)`, not `xs.filter(...)`; `out`
        // assigned as a member keeps `mod.out.write(...)`, not a plain `out`.
        let body = "  total = total + 1;\n".repeat(8);
        let src = format!(
            "const filter = console.log;\nexports.out = process.stdout;\n\
             function listy(xs) {{\n{body}  return xs.filter(Boolean);\n}}\n\
             function plain() {{\n{body}  return out;\n}}\n\
             function calls() {{\n{body}  filter('x');\n}}\n\
             function member(mod) {{\n{body}  mod.out.write('y');\n}}\n"
        );
        let kept = kept_text(&src).concat();
        assert!(kept.contains("filter('x')"), "{kept}");
        assert!(kept.contains("mod.out.write('y')"), "{kept}");
        assert!(!kept.contains("xs.filter(Boolean)"), "{kept}");
        assert!(!kept.contains("return out;"), "{kept}");
    }

    #[test]
    fn a_bundled_module_holding_a_candidate_binds_nothing_for_the_modules_requiring_it() {
        // `require_noisy` is the result of a call: the analyzer never follows it, so the
        // modules that require it are not kept for it. A value that holds stdout outside its
        // large bodies, or a function returning it, still binds its name.
        let filler = "    total = total + item.size * 3 - item.depth;\n".repeat(16);
        let module = |name: &str, body: &str| {
            format!(
                "var require_{name} = __commonJS({{\n  \"node_modules/{name}/index.js\"(exports, module) {{\n{filler}{body}  }}\n}});\n"
            )
        };
        let mut src = String::from(
            "var __commonJS = (cb, mod) => function __require() { return mod || (0, cb[Object.keys(cb)[0]])((mod = { exports: {} }).exports, mod), mod.exports; };\n",
        );
        src += &module("noisy", "    console.log('loaded');\n");
        for n in 0..10 {
            src += &module(
                &format!("quiet{n}"),
                "    var import_noisy = require_noisy();\n    import_noisy.helper();\n",
            );
        }
        src += &format!("var stream = wrapStream(process.stdout, function () {{\n{filler}}});\n");
        src += &format!("var getOut = function () {{\n{filler}  return process.stdout;\n}};\n");
        src += "stream.write('x');\ngetOut().write('y');\n";
        let kept = kept_at(&src, super::super::DEFAULT_REGION_MIN_BYTES);
        assert!(kept.contains("console.log('loaded')"), "{kept}");
        assert!(!kept.contains("import_noisy.helper()"), "{kept}");
        assert!(kept.contains("stream.write('x')"), "{kept}");
        assert!(kept.contains("getOut().write('y')"), "{kept}");
    }

    #[test]
    fn javascript_large_files_keep_candidates_imports_and_aliases() {
        let big = format!("function quiet() {{\n{}}}\n", "  const v = 1;\n".repeat(80));
        let src = format!(
            "import fs from 'node:fs';\nconst {{ log }} = console;\n{big}function loud() {{\n  log('x');\n{}}}\nconst re = /[/'\"]/g;\nconst t = `a\n${{console.log(1)}}\nb`;\n{big}",
            "  const v = 1;\n".repeat(80)
        );
        let kept = kept_at(&src, 0);
        assert!(kept.contains("import fs"), "{kept}");
        assert!(kept.contains("const { log } = console;"));
        assert!(kept.contains("function loud"));
        assert!(kept.contains("console.log(1)"));
        assert!(!kept.contains("function quiet"), "{kept}");
    }
}
