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
//!
//! This module holds what the languages share: the statement model, the vocabulary derived from
//! each language's sink table ([`Vocab`]), the byte-level scanning helpers, and the alias pass
//! and range building over statements. `python` and `javascript` hold each language's lexer.

mod javascript;
mod python;

pub use javascript::{javascript, javascript_planned};
pub use python::python;

use crate::scan::lang::{FastHasher, Lang};
use crate::scan::sinks::{self, FdWord};
use std::collections::HashSet;
use std::ops::Range;

type WordSet<'a> = HashSet<&'a [u8], std::hash::BuildHasherDefault<FastHasher>>;

/// Files at most this large are parsed whole whenever they hold a candidate: region planning
/// pays off on big modules, and whole files keep parse-error notes exact in typical server code.
pub const DEFAULT_REGION_MIN_BYTES: usize = 8 * 1024;

/// Top-level statements this short are kept when the kept code needs them (they bind a name it
/// uses, or use a function or class it declares): constants, aliases, options, `__all__`.
const SHORT_STATEMENT: usize = 512;

/// Strings longer than this are prose (docstrings, messages), never a module name, an option
/// value or a path a rule reads.
const SHORT_STRING: usize = 32;

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

/// What one language's lexer looks for, derived from its sink table (`sinks::plan_words`,
/// `sinks::owners`, `sinks::continuations`, `sinks::fd_words`, `sinks::string_words`): a file
/// whose code holds none of it has no finding.
pub struct Vocab {
    /// Candidate identifiers.
    words: WordSet<'static>,
    /// A cheap first look before hashing: per first byte, the lengths of the words starting
    /// with it (bit `n` for length `n`; words of 64 bytes or more set bit 63 and are hashed).
    lengths: [u64; 256],
    /// Objects whose attributes named like a candidate are still candidates (`sys.stdout`,
    /// `globalThis.console`); `proc.stdout` and `self.print` are not.
    owners: Vec<&'static [u8]>,
    /// Where a candidate may go on after a dot (JavaScript: `console.error` is no candidate,
    /// `console.log` is). Words without an entry may go on anywhere.
    next: Vec<(&'static [u8], Vec<&'static [u8]>)>,
    /// Descriptor writes spelled without a candidate word (`os.write`, `writeSync(1, ...)`).
    fd: Vec<(&'static [u8], FdWord)>,
    /// [`Vocab::lengths`] for the words of `fd` (the lexers ask for every identifier).
    fd_lengths: [u64; 256],
    /// Words that make a short string a candidate (module names, option values, paths).
    strings: Vec<&'static [u8]>,
    /// Their searchers, built once (a string is checked at every quote).
    string_finders: Vec<memchr::memmem::Finder<'static>>,
    /// A string counts only when it is one of `strings` (after `node:`, before a `/subpath`):
    /// JavaScript, where module specifiers, option values and paths are whole strings and a
    /// substring (`'./util'`) is some other thing. There `strings` count where a module or
    /// member is named ([`name_position`]), and `values` wherever they stand, or as the value
    /// of their key.
    exact: bool,
    values: Vec<(&'static [u8], Option<&'static [u8]>)>,
}

impl Vocab {
    /// The vocabulary of a language. `globals` (JavaScript): the names code uses without an
    /// import; a word reached only through a module (`util`, `pino`) is then no identifier
    /// word (the local name is anyone's choice), its module string is, and strings match whole
    /// and members after a word must be ones a row names.
    fn derive(lang: Lang, extra_owners: &[&'static str], globals: Option<&[&str]>) -> Vocab {
        let modules = globals.map_or_else(Vec::new, |g| sinks::module_words(lang, g));
        let values = if globals.is_some() {
            sinks::string_values(lang)
        } else {
            Vec::new()
        };
        let words: WordSet<'static> = sinks::plan_words(lang)
            .into_iter()
            .filter(|w| !modules.contains(w))
            .map(str::as_bytes)
            .collect();
        let lengths = first_byte_lengths(words.iter().copied());
        let strings: Vec<&'static [u8]> = sinks::string_words(lang)
            .into_iter()
            .map(str::as_bytes)
            .collect();
        let mut owners: Vec<&'static [u8]> =
            sinks::owners(lang).into_iter().map(str::as_bytes).collect();
        owners.extend(extra_owners.iter().map(|o| o.as_bytes()));
        let next = if globals.is_some() {
            sinks::continuations(lang)
                .into_iter()
                .filter(|(w, _)| words.contains(w.as_bytes()))
                .map(|(w, n)| (w.as_bytes(), n.into_iter().map(str::as_bytes).collect()))
                .collect()
        } else {
            Vec::new()
        };
        let fd: Vec<(&'static [u8], FdWord)> = sinks::fd_words(lang)
            .into_iter()
            .map(|(w, k)| (w.as_bytes(), k))
            .collect();
        Vocab {
            words,
            lengths,
            owners,
            next,
            fd_lengths: first_byte_lengths(fd.iter().map(|(w, _)| *w)),
            fd,
            string_finders: strings
                .iter()
                .map(|w| memchr::memmem::Finder::new(*w))
                .collect(),
            strings,
            exact: globals.is_some(),
            values: values
                .iter()
                .map(|(w, k)| (w.as_bytes(), k.map(str::as_bytes)))
                .collect(),
        }
    }

    /// Is this identifier a candidate word?
    fn is_word(&self, w: &[u8]) -> bool {
        may_be(&self.lengths, w) && self.words.contains(w)
    }

    /// Does the short string between the quotes at `open` and `close` make its statement a
    /// candidate?
    fn string_hit_at(&self, src: &[u8], open: usize, close: usize) -> bool {
        let content = &src[(open + 1).min(close)..close];
        if !self.exact || content.len() > SHORT_STRING {
            return self.string_hit(content);
        }
        let c = content.strip_prefix(b"node:").unwrap_or(content);
        let named = |w: &[u8]| {
            c.strip_prefix(w)
                .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
        };
        let value = self
            .values
            .iter()
            .any(|(w, key)| c == *w && key.is_none_or(|k| key_near(src, open, k)));
        // A quoted key names a member of an object literal or a pattern, never a module: it
        // counts as the same word unquoted would (`{ 'stdout': out } = process`), so a table of
        // names (`{"ink": {...}}` in a domain list) is data.
        value
            || (self.strings.iter().any(|w| named(w))
                && match name_position(src, open, close) {
                    Position::Name => true,
                    Position::Key => self.is_word(c),
                    Position::Other => false,
                })
    }

    /// Does a short string's content make its statement a candidate (wherever it stands)?
    fn string_hit(&self, content: &[u8]) -> bool {
        if content.len() > SHORT_STRING {
            return false;
        }
        if self.exact {
            let c = content.strip_prefix(b"node:").unwrap_or(content);
            return self.values.iter().any(|(w, _)| c == *w)
                || self.strings.iter().any(|w| {
                    c.strip_prefix(*w)
                        .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
                });
        }
        // A word counts where it stands as a word (`"ext://sys.stdout"`, `"stdout"`), not as
        // part of a longer name (`'fcgi_stdout'` in a lexer's keyword table).
        self.string_finders.iter().zip(&self.strings).any(|(f, w)| {
            f.find_iter(content)
                .any(|at| bounded(content, at, at + w.len(), w))
        })
    }

    /// Does the code of a formatted string (`content` between its quotes) name a candidate
    /// word? Only the replacement fields (`{...}`, with their format specs) are code; the text
    /// around them (`f"input shape {shape}"`) and escaped braces (`{{`) are not.
    fn formatted_hit(&self, content: &[u8]) -> bool {
        let mut depth = 0usize;
        let mut i = 0;
        while i < content.len() {
            let c = content[i];
            if depth == 0 {
                if c == b'{' {
                    if content.get(i + 1) == Some(&b'{') {
                        i += 2;
                        continue;
                    }
                    depth = 1;
                }
                i += 1;
                continue;
            }
            match c {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ if is_ident_start(c) => {
                    let w = word_at(content, i);
                    if self.is_word(w) {
                        return true;
                    }
                    i += w.len();
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        false
    }

    /// Is a candidate word after `owner.` still a candidate?
    fn owned_by(&self, owner: &[u8]) -> bool {
        self.owners.contains(&owner)
    }

    /// May the word at `start..end` go on as written (`.member` after it)?
    fn continues(&self, src: &[u8], start: usize, end: usize) -> bool {
        let w = &src[start..end];
        let Some((_, next)) = self.next.iter().find(|(word, _)| *word == w) else {
            return true;
        };
        match member_after(src, end) {
            Some(m) => next.contains(&m),
            None => true,
        }
    }

    /// A descriptor write at `start..end`: `word(1`, `owner.word`, `word: 1`, or `word` in an
    /// import.
    fn fd_hit(&self, src: &[u8], start: usize, end: usize, import: bool) -> bool {
        let w = &src[start..end];
        if !may_be(&self.fd_lengths, w) {
            return false;
        }
        self.fd.iter().any(|(word, kind)| {
            *word == w
                && match kind {
                    FdWord::AfterOwner(owner) => {
                        import || owner_before(src, start, b"") == Some(owner.as_bytes())
                    }
                    FdWord::ArgOne => fd_one_follows(src, end),
                    FdWord::OptionOne => option_one_follows(src, end),
                }
        })
    }
}

/// One top-level statement found by a lexer.
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
    /// JavaScript: identifiers declared (`var`/`let`/`const` patterns, `function`/`class`
    /// names) or assigned with `=` (`x = v`, `this.x = v`, `[a, b] = v`) anywhere inside.
    writes: Vec<Range<usize>>,
    /// JavaScript: the names the statement declares in the scope it is in, with whether the
    /// declaration is block-scoped (`let`, `const`, `class`) rather than function-scoped
    /// (`var`, `function`): plain declarator names only, so never a name it does not declare.
    declared: Vec<(Range<usize>, bool)>,
    /// JavaScript: the value each of `writes` is given, as a span of the statement (what
    /// follows an `=` to where that expression ends), or `javascript::RETURNED` (a function's
    /// name: what it returns) or `javascript::WHOLE` (anything in the statement).
    values: Vec<Range<usize>>,
    /// JavaScript: what the `return` and `yield` statements in it return (in functions inside
    /// it too).
    returns: Vec<Range<usize>>,
    /// JavaScript: where the candidates that make `hit` are.
    hits: Vec<usize>,
    /// JavaScript: a part of a minified line (see `javascript::minified_split`); the alias
    /// pass follows the names it writes with a candidate value, not its `bound` words.
    minified: bool,
    /// An `=` at bracket depth 0: an assignment.
    assign: bool,
    /// Attributes assigned as `self.<name> = ...` anywhere inside.
    self_bound: Vec<Range<usize>>,
    /// Python: names declared `global` anywhere inside (a function's assignments to them bind
    /// the module's names).
    globals: Vec<Range<usize>>,
    /// `from module import *`.
    star: bool,
    /// The `class` keyword starts it (after decorators).
    class: bool,
    /// `def` or `async def` starts it (after decorators).
    func: bool,
    /// The name after `def` (Python: or `class`).
    name: Option<Range<usize>>,
    /// The lexer met something no valid file has (a string left open, a bracket closed that
    /// was not opened or never closed): tree-sitter's error recovery may read as code what the
    /// lexer took for a string, or split statements elsewhere, so the plan cannot be trusted.
    malformed: bool,
}

/// Marks the statements that mention a name bound by a kept statement, for up to three rounds
/// (`say = print` … `say(x)`); `bind` adds a kept statement's names, as `key` spells a name at
/// a position. Returns the names gathered.
fn follow_aliases<'s>(
    stmts: &[Stmt],
    keep: &mut [bool],
    key: impl Fn(&Range<usize>) -> &'s [u8],
    mut bind: impl FnMut(&Stmt, &mut WordSet<'s>),
) -> WordSet<'s> {
    let mut names: WordSet = WordSet::default();
    for _ in 0..3 {
        let before = names.len();
        for (i, s) in stmts.iter().enumerate() {
            if !keep[i] && s.idents.iter().any(|r| names.contains(key(r))) {
                keep[i] = true;
            }
            if keep[i] {
                bind(s, &mut names);
            }
        }
        if names.len() == before {
            break;
        }
    }
    names
}

/// The short statements without a candidate (and that `may_add`) the kept statements need:
/// those that bind or declare a name the kept statements use, or one those use in turn, up to
/// three steps (`ERR = sys.stderr` … `print(x, file=ERR)`; `var opts = {...}` … `pino(opts)`),
/// and those that mention a name of `defined` (the kept functions and classes). The names of
/// statements that `count` are used even when they are not kept. Names are compared as `key`
/// spells them (JavaScript keys members apart from plain names).
fn keep_binders<'s>(
    src: &'s [u8],
    stmts: &[Stmt],
    keep: &[bool],
    defined: &WordSet,
    key: impl Fn(&Range<usize>) -> &'s [u8],
    count: impl Fn(&Stmt) -> bool,
    may_add: impl Fn(&Stmt) -> bool,
) -> Vec<bool> {
    let mut added = vec![false; stmts.len()];
    let mut used: WordSet = WordSet::default();
    let mut read = vec![false; stmts.len()];
    for _ in 0..3 {
        for (i, s) in stmts.iter().enumerate() {
            if (keep[i] || added[i] || count(s)) && !read[i] {
                read[i] = true;
                used.extend(s.idents.iter().map(&key));
            }
        }
        let mut grew = false;
        for (i, s) in stmts.iter().enumerate() {
            if !keep[i]
                && !added[i]
                && may_add(s)
                && s.end - s.start <= SHORT_STATEMENT
                && (s.bound.iter().any(|r| used.contains(key(r)))
                    || s.declared
                        .iter()
                        .any(|(r, _)| used.contains(&src[r.clone()]))
                    || s.idents.iter().any(|r| defined.contains(key(r))))
            {
                added[i] = true;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    added
}

/// The names statement `s` binds (see [`Stmt::bound`]) join `names`.
fn bind_bound<'s>(src: &'s [u8], s: &Stmt, names: &mut WordSet<'s>) {
    names.extend(s.bound.iter().map(|r| &src[r.clone()]));
}

/// Appends a range, merging it with the previous one when they touch. An empty range adds
/// nothing (the empty statement after a block's last `}` may come after the next part began),
/// and a parser refuses included ranges that are empty or out of order.
fn push_range(ranges: &mut Vec<(Range<usize>, usize)>, r: Range<usize>, row: usize) {
    if r.is_empty() {
        return;
    }
    match ranges.last_mut() {
        Some((last, _)) if last.end == r.start => last.end = r.end,
        _ => ranges.push((r, row)),
    }
}

/// Where a JavaScript string stands (see [`name_position`]).
#[derive(Debug, PartialEq, Eq)]
enum Position {
    /// It names a module or a member.
    Name,
    /// A quoted key (`{ 'stdout': ... }`): a member's name, as if unquoted.
    Key,
    Other,
}

/// Whether the JavaScript string between the quotes at `open` and `close` names a module or
/// a member: `require('m')`, `import('m')`, `from 'm'`, `import 'm'`, `declare module 'm'`,
/// a subscript (`console['log']`; not an array literal, `['ink', 'inkml']`); or is a quoted
/// key (`{ 'stdout': ... }`).
fn name_position(src: &[u8], open: usize, close: usize) -> Position {
    let before = src[..open].trim_ascii_end();
    let name = match before.last() {
        Some(b'(') => matches!(
            word_before(before[..before.len() - 1].trim_ascii_end()),
            Some(b"require" | b"import" | b"resolve")
        ),
        Some(b'[') => {
            let object = before[..before.len() - 1].trim_ascii_end();
            object
                .last()
                .is_some_and(|&c| is_ident(c) || matches!(c, b'$' | b')' | b']' | b'.'))
                && !matches!(
                    word_before(object),
                    Some(b"return" | b"typeof" | b"case" | b"in" | b"of" | b"yield" | b"await")
                )
        }
        _ if matches!(word_before(before), Some(b"from" | b"import" | b"module")) => true,
        _ => {
            let after = src.get(close + 1..).unwrap_or_default().trim_ascii_start();
            if after.first() == Some(&b':') && after.get(1) != Some(&b':') {
                return Position::Key;
            }
            false
        }
    };
    if name {
        Position::Name
    } else {
        Position::Other
    }
}

/// The word `b` ends with, unless it is a member (`x.import`; `require.resolve` is one).
fn word_before(b: &[u8]) -> Option<&[u8]> {
    let mut k = b.len();
    while k > 0 && (is_ident(b[k - 1]) || b[k - 1] == b'$') {
        k -= 1;
    }
    (k == 0 || b[k - 1] != b'.' || b[..k].ends_with(b"require.")).then_some(&b[k..])
}

/// How far before a value its key is looked for: `stdio: ['pipe', 'inherit']`,
/// `type: verbose ? 'stdout' : 'file'`, `{ target: 'pino-pretty' }`.
const KEY_WINDOW: usize = 64;

/// Whether the word `key` stands (whole) in the [`KEY_WINDOW`] bytes before `open`: the value
/// there may be given to it. `new Set(['inherit', 'unset'])` in a style sheet is no `stdio`.
fn key_near(src: &[u8], open: usize, key: &[u8]) -> bool {
    let from = open.saturating_sub(KEY_WINDOW);
    let window = &src[from..open];
    memchr::memmem::find_iter(window, key).any(|p| {
        let at = from + p;
        let end = at + key.len();
        (at == 0 || !(is_ident(src[at - 1]) || src[at - 1] == b'$'))
            && !(is_ident(src[end]) || src[end] == b'$')
    })
}

/// The bit of a word length in [`Vocab::lengths`].
fn length_bit(len: usize) -> u64 {
    1 << len.min(63)
}

/// Per first byte, the lengths of `words` (see [`Vocab::lengths`]).
fn first_byte_lengths<'w>(words: impl Iterator<Item = &'w [u8]>) -> [u64; 256] {
    let mut lengths = [0u64; 256];
    for w in words.filter(|w| !w.is_empty()) {
        lengths[usize::from(w[0])] |= length_bit(w.len());
    }
    lengths
}

/// May `w` be one of the words `lengths` was made of? (False: it is not.)
fn may_be(lengths: &[u64; 256], w: &[u8]) -> bool {
    !w.is_empty() && lengths[usize::from(w[0])] & length_bit(w.len()) != 0
}

/// Bytes of identifiers: ASCII letters, digits, `_`, and every non-ASCII byte (a lexer reading
/// bytes treats a UTF-8 letter as part of a word). A table: the lexers ask for every byte.
static IDENT: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            t[b] = 2; // starts and continues a word
        } else if c.is_ascii_digit() {
            t[b] = 1; // continues a word
        }
        b += 1;
    }
    t
};

fn is_ident_start(b: u8) -> bool {
    IDENT[usize::from(b)] == 2
}

/// Does `w`, found at `start..end` of `text`, stand there as a word: no identifier byte joins
/// it on a side where it begins or ends with one (`/dev/` needs no boundary)?
fn bounded(text: &[u8], start: usize, end: usize, w: &[u8]) -> bool {
    let joins = |at: Option<&u8>| at.is_some_and(|&b| is_ident(b));
    !(w.first().is_some_and(|&b| is_ident(b)) && start > 0 && joins(text.get(start - 1))
        || w.last().is_some_and(|&b| is_ident(b)) && joins(text.get(end)))
}

fn is_ident(b: u8) -> bool {
    IDENT[usize::from(b)] != 0
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

fn skip_blanks(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && matches!(src[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// The identifier before `.` just before `start` (`os` in `os.write`, `sys . stdout`), if any;
/// `skip` are the bytes allowed around the dot besides blanks.
fn owner_before<'s>(src: &'s [u8], start: usize, skip: &[u8]) -> Option<&'s [u8]> {
    let blank = |b: u8| matches!(b, b' ' | b'\t') || skip.contains(&b);
    let mut k = start;
    while k > 0 && blank(src[k - 1]) {
        k -= 1;
    }
    if k == 0 || src[k - 1] != b'.' {
        return None;
    }
    let mut end = k - 1;
    while end > 0 && blank(src[end - 1]) {
        end -= 1;
    }
    let mut o = end;
    while o > 0 && is_ident(src[o - 1]) {
        o -= 1;
    }
    Some(&src[o..end])
}

/// The member named after `.` (or `?.`, across blanks and line ends) at `i`, if any.
fn member_after(src: &[u8], mut i: usize) -> Option<&[u8]> {
    while i < src.len() && matches!(src[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    if src.get(i) == Some(&b'?') && src.get(i + 1) == Some(&b'.') {
        i += 1;
    }
    if src.get(i) != Some(&b'.') {
        return None;
    }
    i += 1;
    while i < src.len() && matches!(src[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    let start = i;
    while i < src.len() && (is_ident(src[i]) || src[i] == b'$') {
        i += 1;
    }
    (i > start).then(|| &src[start..i])
}

/// True when `(1,` or `(1)` (blanks allowed) follows position `i`.
fn fd_one_follows(src: &[u8], i: usize) -> bool {
    let i = skip_blanks(src, i);
    if src.get(i) != Some(&b'(') {
        return false;
    }
    let i = skip_blanks(src, i + 1);
    if src.get(i) != Some(&b'1') {
        return false;
    }
    let i = skip_blanks(src, i + 1);
    matches!(src.get(i), Some(b',' | b')'))
}

/// True when `: 1` or `= 1` (not `== 1`, not `12`) follows position `i`.
fn option_one_follows(src: &[u8], i: usize) -> bool {
    let i = skip_blanks(src, i);
    if !matches!(src.get(i), Some(b':' | b'=')) || src.get(i + 1) == Some(&b'=') {
        return false;
    }
    let i = skip_blanks(src, i + 1);
    src.get(i) == Some(&b'1') && !src.get(i + 1).is_some_and(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_javascript_vocabulary_follows_members_and_owners() {
        let v = &*javascript::VOCAB;
        let src = b"console.error(x); console.log(x); process.stdout.isTTY; util.inspect(x)";
        let at = |w: &str| {
            let i = memchr::memmem::find(src, w.as_bytes()).expect("word in source");
            (i, i + w.len())
        };
        let (s, e) = at("console");
        assert!(!v.continues(src, s, e), "console.error is no candidate");
        let (s, _) = at("console.log");
        assert!(v.continues(src, s, s + "console".len()));
        let (s, e) = at("stdout");
        assert!(
            !v.continues(src, s, e),
            "process.stdout.isTTY writes nothing"
        );
        assert!(v.owned_by(b"process") && v.owned_by(b"globalThis") && !v.owned_by(b"proc"));
        assert!(v.fd_hit(b"writeSync(1, x)", 0, 9, false));
        assert!(v.fd_hit(b"{ fd: 1 }", 2, 4, false));
        assert!(!v.fd_hit(b"{ fd: 12 }", 2, 4, false));
        assert!(v.string_hit(b"inherit") && v.string_hit(b"pino-pretty"));
        assert!(v.string_hit(b"node:child_process") && v.string_hit(b"consola/basic"));
        assert!(
            v.string_hit(b"node:process"),
            "`import proc from 'node:process'` … `proc.stdout`"
        );
        assert!(
            !v.string_hit(b"./util") && !v.string_hit(b"utility"),
            "not node's util"
        );
        assert!(
            !v.is_word(b"util"),
            "a module is named by its string, not by a local name"
        );
        assert!(!v.string_hit(b"a long message that mentions the console in passing"));
    }

    #[test]
    fn the_python_vocabulary_finds_descriptor_writes() {
        let v = &*python::VOCAB;
        assert!(v.fd_hit(b"os.write(fd, b)", 3, 8, false));
        assert!(!v.fd_hit(b"f.write(1)", 2, 7, false));
        assert!(v.fd_hit(b"write", 0, 5, true));
        assert!(v.fd_hit(b"open(1, 'w')", 0, 4, false));
        assert!(!v.fd_hit(b"open(path)", 0, 4, false));
    }
}
