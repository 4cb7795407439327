//! Large kept statements (a bundle wrapped in one function, a big module function) planned
//! inside their function bodies, as one tree of statements.
//!
//! A statement of at least `min_bytes` with function bodies of at least `min_bytes` is split:
//! its header (everything outside those bodies) and the statements of each body, recursively.
//! Which statements are kept is decided over the whole tree, by name, until nothing changes:
//!
//! - a statement *carries* stdout when it holds a candidate or mentions a name a carrying
//!   statement writes (`const out = process.stdout` … `out.write(x)`); a function whose
//!   `return` statement carries stdout carries it too (`function out() { return ...; }`,
//!   `const out = () => {...}`), the result of a call it is passed to does not
//!   (`var init_x = __esm({ ... })`: the analyzer resolves only a function's own calls);
//! - a statement is kept when it carries stdout, or when it writes (declares or assigns) a name
//!   a kept statement mentions: the bindings the analyzer resolves those names to
//!   (`const opts = {}` for `pino(opts)`, a local named `console`);
//! - the headers around a kept statement are kept (a function's parameters are bindings too),
//!   and so are the short simple statements of a kept body;
//! - a statement kept only for what it binds adds its plain names to what is used, not its
//!   members (`other.value`): the analyzer reads a member only from its object's own literal,
//!   which the plain name's binding brings, and members matched by name alone would pull in
//!   every class of a bundle that assigns one;
//! - a name written only with a module object (`var util2 = require("util")`) carries stdout
//!   only where it is read whole or for a member a row or alias names (`util2.log`,
//!   `util2.default.log`), not as `util2.inspect(x)`.
//!
//! Names written only by kept statements that carry nothing are no candidates: what they are
//! bound to holds no candidate and mentions no name that carries stdout, so no statement that
//! reads them can find anything through them. Two statements that only read the same name
//! cannot change each other's findings.
//!
//! Names are matched in scopes: each planned body is a scope, and a name resolves to the
//! innermost body around it that declares it (`var`/`let`/`const` declarators, `function` and
//! `class` declarations; a block's only with `let`/`const`/`class`), else to the file, so a
//! local `root` in one function no longer pulls in the `root` of another. Only plain
//! declarators count as declarations (never a destructuring pattern, whose keys and defaults
//! are names too, nor a function's parameters): a declaration missed makes two names match
//! that need not, which keeps more, never less. Names after a `.` are members, matched by name
//! alone, and so is a plain assignment (`x = v`), which may be a class field. An assignment to
//! a member of a name a planned body declares (`module2.exports = ...` in a bundle's module
//! function, `opts.out = ...`) writes nothing: the analyzer reads such members only from the
//! object's own literal; members of `this` and of other names (globals: `console.log = ...`)
//! are written. A `let`/`const` inside a block of a statement (`for (const k of ks)`) binds
//! nothing outside it.
//!
//! Splitting is lazy: a statement is split only when, taken whole, it would be kept (a part can
//! only be kept when the whole would), so large statements that never matter are not lexed
//! again.

use super::{Lexer, RESERVED, RETURNED, Rows, WHOLE, force_hits, is_ident, within};
use crate::scan::lang::{FastHasher, Lang};
use crate::scan::plan::{SHORT_STATEMENT, Stmt, WordSet, push_range};
use crate::scan::sinks;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::ops::Range;
use std::sync::LazyLock;

/// A name as resolved: the scope that declares it (0: the file) or [`MEMBER`], and the name.
type Key<'s> = (u32, &'s [u8]);
type KeySet<'s> = HashSet<Key<'s>, BuildHasherDefault<FastHasher>>;
/// A name mentioned, and whether it is read as `name.member` (through any `.default`) with a
/// member no row names: a module object read so reaches no row (`util.inspect`).
type Mention<'s> = (Key<'s>, bool);

/// The members a row or an alias names (`log`, `write`, `stdout`, `spawn`, `default`, ...).
static MEMBER_WORDS: LazyLock<WordSet<'static>> = LazyLock::new(|| {
    sinks::member_words(Lang::JavaScript)
        .into_iter()
        .map(str::as_bytes)
        .collect()
});

/// The scope of member names (`a.name`): they are matched by name alone.
const MEMBER: u32 = u32::MAX;

/// What a written name's value can hold: a candidate, and the names it mentions.
#[derive(Default)]
struct Source<'s> {
    hit: bool,
    mentions: Vec<Mention<'s>>,
    /// It holds stdout (given what carries stdout so far).
    carried: bool,
    /// It may be a function, whose calls the analyzer resolves to what it returns (a
    /// function's name, `x = () => ...`, `x = function () {...}`, anything this cannot tell);
    /// a call's result (`x = wrap(() => {...})`) or an object's methods are not.
    function: bool,
}

/// A planned body: the scope around it, and the names declared in it.
struct Scope<'s> {
    parent: u32,
    declared: WordSet<'s>,
}

/// How deep statements are split inside one another.
const MAX_DEPTH: u32 = 8;

/// Passes over the tree before the plan gives up (keeps the statement whole).
const MAX_ROUNDS: usize = 64;

/// One statement of the tree.
#[derive(Default)]
struct Node<'s> {
    span: Range<usize>,
    row: usize,
    parent: Option<usize>,
    depth: u32,
    /// Split: the planned function bodies; the rest of `span` is the header.
    bodies: Vec<Range<usize>>,
    /// The statements of `bodies`, as indices into the tree, in source order.
    children: Vec<usize>,
    /// The scope the statement is in.
    scope: u32,
    /// The names of the statement (split: of its header) as resolved, and those it declares
    /// or assigns.
    mentions: Vec<Mention<'s>>,
    /// The names it writes with a module object (`var util2 = require("util")`), and those
    /// it writes with anything else.
    module_writes: Vec<(Key<'s>, bool)>,
    /// The names written, each with its value (an index into `sources`).
    writes: Vec<(Key<'s>, usize)>,
    sources: Vec<Source<'s>>,
    hit: bool,
    /// A short statement that is no block: kept whenever its body is.
    short: bool,
    /// Tried as a split already (or too small or too deep to be).
    settled: bool,
    /// A `return` statement.
    returns: bool,
    kept: bool,
    carries: bool,
}

/// The kept parts of a large kept statement (see the module comment); `names`: the names the
/// kept top-level statements bind (a member's with its dot: `.out`). `None`: keep it whole.
pub(super) fn block_parts(
    src: &[u8],
    span: Range<usize>,
    row: usize,
    names: &WordSet,
    modules: &WordSet,
    min_bytes: usize,
    forced: &[usize],
) -> Option<Vec<(Range<usize>, usize)>> {
    if span.len() < min_bytes {
        return None;
    }
    let mut tree = Tree {
        src,
        forced,
        min_bytes,
        nodes: vec![Node {
            span,
            row,
            ..Node::default()
        }],
        used: KeySet::default(),
        carried: KeySet::default(),
        carried_names: WordSet::default(),
        scopes: vec![Scope {
            parent: 0,
            declared: WordSet::default(),
        }],
        modules: modules.iter().map(|&w| (0, w)).collect(),
        not_modules: KeySet::default(),
    };
    // The names the kept top-level statements bind: the file's, or members (`.out`).
    for &w in names {
        let key = match w.strip_prefix(b".") {
            Some(member) => (MEMBER, member),
            None => (0, w),
        };
        tree.used.insert(key);
        tree.carried.insert(key);
        tree.carried_names.insert(key.1);
    }
    if !tree.split(0) {
        return None;
    }
    tree.keep(0, false);
    if !tree.settle() {
        return None;
    }
    let mut parts = Vec::new();
    tree.emit(0, &mut parts);
    Some(parts)
}

struct Tree<'s> {
    src: &'s [u8],
    /// Candidates only the skip lexer saw (sorted positions): the statements holding them
    /// are candidates (see `javascript_planned`).
    forced: &'s [usize],
    min_bytes: usize,
    nodes: Vec<Node<'s>>,
    /// Every name the kept statements mention.
    used: KeySet<'s>,
    /// The names the statements that carry stdout write.
    carried: KeySet<'s>,
    /// The names of `carried`, in any scope.
    carried_names: WordSet<'s>,
    /// The planned bodies; 0 is the file.
    scopes: Vec<Scope<'s>>,
    /// Names written with a module object, and names written with anything else: a name
    /// only ever written with a module object is one (see [`Mention`]).
    modules: KeySet<'s>,
    not_modules: KeySet<'s>,
}

impl<'s> Tree<'s> {
    /// A name at `r` mentioned in `scope`, as resolved (reserved words are none).
    fn mention(&self, scope: u32, r: &Range<usize>) -> Option<Key<'s>> {
        let w = &self.src[r.clone()];
        if RESERVED.contains(&w) {
            return None;
        }
        if is_member(self.src, r.start) {
            return Some((MEMBER, w));
        }
        let mut s = scope;
        while s != 0 {
            let sc = &self.scopes[s as usize];
            if sc.declared.contains(w) {
                return Some((s, w));
            }
            s = sc.parent;
        }
        Some((0, w))
    }

    /// Whether the member at `start` belongs to an object a name declared in a planned body
    /// holds (`module2.exports`, `opts.out`, `Foo.prototype.log`): the analyzer reads such a member
    /// only from the object's own value, never from an assignment to it, so the assignment
    /// writes no name. Members of `this` and of globals (`console.log = ...`,
    /// `module.exports = ...`) are assigned for readers elsewhere; so are members of what
    /// this cannot follow back to a name (`f().x`, `a[k].x`).
    fn local_member(&self, scope: u32, start: usize) -> bool {
        let src = self.src;
        let mut at = start;
        loop {
            let mut k = src[..at].trim_ascii_end().len();
            if k == 0 || src[k - 1] != b'.' {
                break;
            }
            k -= 1;
            if k > 0 && src[k - 1] == b'?' {
                k -= 1;
            }
            let end = src[..k].trim_ascii_end().len();
            let mut b = end;
            while b > 0 && (is_ident(src[b - 1]) || src[b - 1] == b'$') {
                b -= 1;
            }
            if b == end || src[b].is_ascii_digit() {
                return false;
            }
            at = b;
        }
        if at == start {
            return false;
        }
        let root = at..at
            + src[at..]
                .iter()
                .take_while(|&&c| is_ident(c) || c == b'$')
                .count();
        if &src[root.clone()] == b"this" {
            return false;
        }
        match self.mention(scope, &root) {
            Some((0, w)) => self.scopes[0].declared.contains(w),
            Some((MEMBER, _)) | None => false,
            Some(_) => true,
        }
    }

    /// Adds statement `s`'s names in `scope` to `node` (only those at positions `mine`): what
    /// it mentions, and what it writes with the value of each (a plain assignment, not a
    /// declaration, may also be a class field, read as a member).
    fn add_names(
        &self,
        node: &mut Node<'s>,
        scope: impl Fn(usize) -> u32,
        s: &Stmt,
        mine: impl Fn(usize) -> bool,
    ) {
        let keys: Vec<Option<Mention<'s>>> = s
            .idents
            .iter()
            .enumerate()
            .map(|(j, r)| {
                mine(r.start)
                    .then(|| self.mention(scope(r.start), r))
                    .flatten()
                    .map(|k| (k, k.0 != MEMBER && other_member(self.src, &s.idents, j)))
            })
            .collect();
        node.mentions.extend(keys.iter().flatten().copied());
        // Values are spans and the lexer records positions in order: the identifiers and
        // candidates inside one are a slice. Writes with the same value share its source.
        let mut by_value: HashMap<(usize, usize), usize, BuildHasherDefault<FastHasher>> =
            HashMap::default();
        for (k, r) in s.writes.iter().enumerate() {
            if !mine(r.start) {
                continue;
            }
            let Some(key) = self.mention(scope(r.start), r) else {
                continue;
            };
            if key.0 == MEMBER && self.local_member(scope(r.start), r.start) {
                continue;
            }
            let value = s.values.get(k).cloned().unwrap_or(WHOLE);
            let at = match by_value.get(&(value.start, value.end)) {
                Some(&at) => at,
                None => {
                    let spans: &[Range<usize>] = if value == RETURNED {
                        &s.returns
                    } else {
                        std::slice::from_ref(&value)
                    };
                    let mut source = Source {
                        function: value == RETURNED
                            || value == WHOLE
                            || function_value(&self.src[value.clone()]),
                        ..Source::default()
                    };
                    for v in spans {
                        let lo = s.idents.partition_point(|r| r.start < v.start);
                        let ids = within(&s.idents, v, |r| r.start).iter().zip(&keys[lo..]);
                        source
                            .mentions
                            .extend(ids.filter(|(r, _)| mine(r.start)).filter_map(|(_, k)| *k));
                        source.hit |= within(&s.hits, v, |&p| p).iter().any(|&p| mine(p));
                    }
                    node.sources.push(source);
                    by_value.insert((value.start, value.end), node.sources.len() - 1);
                    node.sources.len() - 1
                }
            };
            node.writes.push((key, at));
            if key.0 != MEMBER {
                node.module_writes
                    .push((key, self.src.get(value.clone()).is_some_and(module_value)));
            }
            let declared = s
                .declared
                .binary_search_by_key(&r.start, |(d, _)| d.start)
                .is_ok();
            if key.0 != MEMBER && !declared {
                node.writes.push(((MEMBER, key.1), at));
            }
        }
    }

    fn leaf(&self, s: Stmt, parent: usize, scope: u32, depth: u32) -> Node<'s> {
        let mut node = Node {
            scope,
            short: !s.block && s.end - s.start <= SHORT_STATEMENT,
            returns: s
                .idents
                .first()
                .is_some_and(|r| &self.src[r.clone()] == b"return"),
            span: s.start..s.end,
            row: s.row,
            parent: Some(parent),
            depth,
            hit: s.hit,
            ..Node::default()
        };
        self.add_names(&mut node, |_| scope, &s, |_| true);
        node
    }

    /// Splits node `i` into its header and the statements of its large function bodies; false
    /// (and nothing changed) when it has none or the lexer cannot read it.
    fn split(&mut self, i: usize) -> bool {
        self.nodes[i].settled = true;
        let (span, row, depth, scope) = {
            let n = &self.nodes[i];
            (n.span.clone(), n.row, n.depth, n.scope)
        };
        if span.len() < self.min_bytes || depth > MAX_DEPTH {
            return false;
        }
        let src = self.src;
        let mut lexed = Lexer::span(src, span.clone(), row, true);
        lexed.run();
        if lexed.depth != 0
            || lexed.in_template
            || lexed.cur.malformed
            || lexed.stmts.iter().any(|s| s.malformed)
        {
            return false;
        }
        let (bodies, function): (Vec<Range<usize>>, Vec<bool>) = std::mem::take(&mut lexed.bodies)
            .into_iter()
            .filter(|(b, _)| b.len() >= self.min_bytes)
            .unzip();
        if bodies.is_empty() {
            return false;
        }
        let rows = Rows::new(src, span.start, row);
        let mut members = Vec::new();
        // The parameter lists of the bodies, each with the body's scope.
        let mut params: Vec<(Range<usize>, u32)> = Vec::new();
        for (body, &function) in bodies.iter().zip(&function) {
            let next_id = u32::try_from(self.scopes.len())
                .unwrap_or(MEMBER - 1)
                .min(MEMBER - 1);
            let mut stmts = Lexer::span(src, body.clone(), rows.at(body.start), true).statements();
            for s in &mut stmts {
                force_hits(s, self.forced);
            }
            if stmts.iter().any(|m| m.malformed) {
                return false;
            }
            // The body's scope: a block's declares only its `let`, `const` and `class` names
            // (a `var` or a function declaration in it may be the function's).
            let mut declared: WordSet = stmts
                .iter()
                .flat_map(|m| &m.declared)
                .filter(|(_, block)| function || *block)
                .map(|(r, _)| &src[r.clone()])
                .collect();
            if function {
                let (list, names) = parameters(src, body.start - 1);
                declared.extend(names.iter().map(|r| &src[r.clone()]));
                params.push((list, next_id));
            }
            let id = next_id;
            self.scopes.push(Scope {
                parent: scope,
                declared,
            });
            members.extend(stmts.into_iter().map(|m| (m, id)));
        }
        // The parameters' names are the bodies' declarations, not the header's names.
        let inside = |p: usize| bodies.iter().any(|b| b.contains(&p));
        // A parameter list's names (defaults included) are in its body's scope.
        let scope_at = |p: usize| {
            params
                .iter()
                .find(|(l, _)| l.contains(&p))
                .map_or(scope, |&(_, id)| id)
        };
        lexed.close_regions(-1, true);
        lexed.stmts.push(std::mem::take(&mut lexed.cur));
        let mut header = Node::default();
        for s in &lexed.stmts {
            header.hit |= s.hits.iter().any(|&p| !inside(p));
            self.add_names(&mut header, scope_at, s, |p| !inside(p));
        }
        header.hit |= within(self.forced, &span, |&p| p)
            .iter()
            .any(|&p| !inside(p));
        let mut children = Vec::with_capacity(members.len());
        for (m, id) in members {
            children.push(self.nodes.len());
            let leaf = self.leaf(m, i, id, depth + 1);
            self.note_modules(&leaf);
            self.nodes.push(leaf);
        }
        self.note_modules(&header);
        let n = &mut self.nodes[i];
        (n.bodies, n.children) = (bodies, children);
        (n.mentions, n.writes, n.sources) = (header.mentions, header.writes, header.sources);
        (n.hit, n.short) = (header.hit, false);
        true
    }

    /// Keeps node `i` (and whether it carries stdout) with every statement around it, and what
    /// they mention.
    fn keep(&mut self, i: usize, carries: bool) {
        let mut at = Some(i);
        let mut carries = carries;
        while let Some(k) = at {
            if carries && k == i {
                self.carry_sources(k);
            }
            let n = &mut self.nodes[k];
            let (was_kept, was_carrying) = (n.kept, n.carries);
            n.kept = true;
            n.carries |= carries;
            // A statement kept for what it binds (no candidate reaches it) needs the bindings
            // of its plain names, not of its members: members are matched by name alone, and
            // in a bundle every kept binder's members would pull in every class that has one.
            let full = carries || n.hit;
            if !was_kept {
                self.used.extend(
                    n.mentions
                        .iter()
                        .map(|m| m.0)
                        .filter(|k| full || k.0 != MEMBER),
                );
            } else if full && !was_carrying {
                self.used
                    .extend(n.mentions.iter().map(|m| m.0).filter(|k| k.0 == MEMBER));
            }
            if carries
                && k != i
                && !(was_carrying && n.sources.iter().all(|s| s.carried || !s.function))
            {
                // A `return` inside it carries stdout: so does the function it is the value of.
                for s in n.sources.iter_mut().filter(|s| s.function) {
                    s.carried = true;
                }
                let sources = &n.sources;
                let names = n.writes.iter().filter(|w| sources[w.1].function);
                for w in names {
                    self.carried.insert(w.0);
                    self.carried_names.insert(w.0.1);
                }
            }
            // A `return` that carries stdout: the function around it does.
            carries &= n.returns;
            if was_kept && !carries && k != i {
                break;
            }
            at = n.parent;
        }
    }

    /// Whether mention `m` reads a name that carries stdout: a module object read as
    /// `m.other` (see [`Mention`]) does not.
    fn carrying(&self, m: &Mention<'s>) -> bool {
        self.carried.contains(&m.0) && !inert(m, &self.modules, &self.not_modules)
    }

    /// Records the names node `n` writes with and without a module object.
    fn note_modules(&mut self, n: &Node<'s>) {
        for &(key, module) in &n.module_writes {
            if module {
                self.modules.insert(key);
            } else {
                self.not_modules.insert(key);
            }
        }
    }

    /// Node `i` as it stands: (carries stdout, is kept) given what is kept so far.
    fn pulled(&self, i: usize) -> (bool, bool) {
        let n = &self.nodes[i];
        let carries = !n.carries && (n.hit || n.mentions.iter().any(|m| self.carrying(m)));
        // A short statement of a kept body is parsed with it (see `emit`): when it mentions a
        // name that carries stdout somewhere, the binding it reads decides whether its name
        // is that one (`const log = () => {}` shadows a `log` taken from `console`).
        let with_body = n.short
            && n.parent.is_some_and(|p| self.nodes[p].kept)
            && n.mentions
                .iter()
                .any(|m| self.carried_names.contains(m.0.1));
        let kept =
            !n.kept && (carries || with_body || n.writes.iter().any(|w| self.used.contains(&w.0)));
        (carries, kept)
    }

    /// Marks the values of carrying node `i` that hold stdout (a candidate, or a name that
    /// carries it), and their names as carrying; true when one was new.
    fn carry_sources(&mut self, i: usize) -> bool {
        let (carried, modules, not_modules) = (&self.carried, &self.modules, &self.not_modules);
        let mut added: Vec<Key<'s>> = Vec::new();
        let carrying = |m: &Mention<'s>, added: &[Key<'s>]| {
            (carried.contains(&m.0) || added.contains(&m.0)) && !inert(m, modules, not_modules)
        };
        let n = &mut self.nodes[i];
        let mut changed = false;
        for (k, s) in n.sources.iter_mut().enumerate() {
            if !s.carried && (s.hit || s.mentions.iter().any(|m| carrying(m, &added))) {
                s.carried = true;
                changed = true;
                added.extend(n.writes.iter().filter(|w| w.1 == k).map(|w| w.0));
            }
        }
        for key in added {
            self.carried.insert(key);
            self.carried_names.insert(key.1);
        }
        changed
    }

    /// Keeps what matters until nothing changes; false when that takes too long.
    fn settle(&mut self) -> bool {
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            let mut i = 0;
            while i < self.nodes.len() {
                let (carries, kept) = self.pulled(i);
                if !carries && !kept {
                    // A carrying statement whose other values may carry stdout by now.
                    if self.nodes[i].carries && self.carry_sources(i) {
                        changed = true;
                    }
                    i += 1;
                    continue;
                }
                // A large statement that would be kept whole: look at its parts instead.
                if !self.nodes[i].settled && self.split(i) {
                    continue;
                }
                self.nodes[i].settled = true;
                self.keep(i, carries);
                changed = true;
                i += 1;
            }
            if !changed {
                return true;
            }
        }
        false
    }

    /// The kept parts of node `i` (which is kept), in source order.
    fn emit(&self, i: usize, parts: &mut Vec<(Range<usize>, usize)>) {
        let n = &self.nodes[i];
        if n.bodies.is_empty() {
            push_range(parts, n.span.clone(), n.row);
            return;
        }
        let rows = Rows::new(self.src, n.span.start, n.row);
        let mut from = n.span.start;
        let mut kids = n.children.iter().peekable();
        for body in &n.bodies {
            push_range(parts, from..body.start, rows.at(from));
            while let Some(&&k) = kids.peek() {
                let child = &self.nodes[k];
                if child.span.start >= body.end {
                    break;
                }
                kids.next();
                if child.kept || (child.short && child.bodies.is_empty()) {
                    self.emit(k, parts);
                }
            }
            from = body.end;
        }
        push_range(parts, from..n.span.end, rows.at(from));
    }
}

/// The plain parameter names of the function whose body's `{` is at `open` (`(a, b = 1, ...c)`,
/// `x =>`, TypeScript's `a?: T`); none when the list holds anything this cannot read for sure
/// (a string, a comment, a regular expression: a `(` in them would mislead the search).
/// Destructured parameters are left out: a declaration missed only keeps more.
fn parameters(src: &[u8], open: usize) -> (Range<usize>, Vec<Range<usize>>) {
    let before = src[..open].trim_ascii_end();
    let (list, arrow) = match before.strip_suffix(b"=>") {
        Some(b) => (b.trim_ascii_end(), true),
        None => (before, false),
    };
    if arrow && !list.ends_with(b")") {
        // `x => {`
        let mut k = list.len();
        while k > 0 && (is_ident(list[k - 1]) || list[k - 1] == b'$') {
            k -= 1;
        }
        return (k..list.len(), std::iter::once(k..list.len()).collect());
    }
    let Some(inner_end) = list.len().checked_sub(1).filter(|&e| list[e] == b')') else {
        return (0..0, Vec::new());
    };
    let mut depth = 0i32;
    let mut start = None;
    for k in (0..inner_end).rev() {
        match list[k] {
            b'"' | b'\'' | b'`' | b'/' => return (0..0, Vec::new()),
            b')' | b']' | b'}' => depth += 1,
            b'(' if depth == 0 => {
                start = Some(k + 1);
                break;
            }
            b'(' | b'[' | b'{' => depth -= 1,
            _ => {}
        }
    }
    let Some(start) = start else {
        return (0..0, Vec::new());
    };
    let inner = &list[start..inner_end];
    let mut names = Vec::new();
    let mut depth = 0i32;
    let mut part_start = 0;
    for k in 0..=inner.len() {
        let b = inner.get(k).copied().unwrap_or(b',');
        match b {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' | b'>' => depth -= 1,
            b',' if depth <= 0 => {
                let part = inner[part_start..k].trim_ascii();
                let part = part.strip_prefix(b"...").unwrap_or(part).trim_ascii_start();
                let mut e = 0;
                while e < part.len() && (is_ident(part[e]) || part[e] == b'$') {
                    e += 1;
                }
                let rest = part[e..].trim_ascii_start();
                let plain = e > 0
                    && !part[0].is_ascii_digit()
                    && (rest.is_empty() || matches!(rest[0], b'=' | b':' | b'?'));
                if plain {
                    // `part` is a subslice of `src`: its offset there.
                    let at = part.as_ptr() as usize - src.as_ptr() as usize;
                    names.push(at..at + e);
                }
                depth = 0;
                part_start = k + 1;
            }
            _ => {}
        }
    }
    (start..inner_end, names)
}

/// Whether a value (what follows an `=`) may be a function: `function`, `async`, `x =>`, or
/// anything in parentheses first (`(a, b) => ...`, but also `(0, f)(x)`: keeping more is safe).
pub(super) fn function_value(value: &[u8]) -> bool {
    let v = value.trim_ascii_start();
    let v = v.strip_prefix(b"=").unwrap_or(v).trim_ascii_start();
    if v.starts_with(b"(") || v.starts_with(b"function") || v.starts_with(b"async") {
        return true;
    }
    let name = v.iter().take_while(|&&c| is_ident(c) || c == b'$').count();
    name > 0 && v[name..].trim_ascii_start().starts_with(b"=>")
}

/// Whether the name at `start` follows a `.` (`a.name`, `a?.name`; not `...name`).
pub(super) fn is_member(src: &[u8], start: usize) -> bool {
    let before = src[..start].trim_ascii_end();
    before.ends_with(b".") && !before.ends_with(b"...")
}

/// Whether mention `m` reads a module object (a name only ever written with one) for a member
/// no row names: such a read carries nothing.
fn inert(m: &Mention, modules: &KeySet, not_modules: &KeySet) -> bool {
    m.1 && modules.contains(&m.0) && !not_modules.contains(&m.0)
}

/// Whether the identifier `idents[j]` is read as `name.member` (through any `.default`, spaces
/// allowed around the dots) with a member no row names ([`MEMBER_WORDS`]). Anything else after
/// it (a call, a subscript, a comment, the name alone) is no such read.
fn other_member(src: &[u8], idents: &[Range<usize>], j: usize) -> bool {
    let mut k = j;
    loop {
        let rest = &src[idents[k].end..];
        let after = rest.trim_ascii_start();
        let after = match after.strip_prefix(b"?.") {
            Some(a) => a,
            None => match after.strip_prefix(b".") {
                Some(a) => a,
                None => return false,
            },
        };
        let at = src.len() - after.trim_ascii_start().len();
        let Some(next) = idents.get(k + 1).filter(|r| r.start == at) else {
            return false;
        };
        match &src[next.clone()] {
            b"default" => k += 1,
            m => return !MEMBER_WORDS.contains(m),
        }
    }
}

/// Whether a value is a module object: `require("m")`, perhaps inside one helper call that
/// only wraps it (`__toESM(require("m"), 1)`, `__importStar(require("m"))`).
pub(super) fn module_value(v: &[u8]) -> bool {
    // A value's span starts at its `=`.
    let v = v.trim_ascii();
    let v = v.strip_prefix(b"=").unwrap_or(v).trim_ascii_start();
    let ident = |c: u8| is_ident(c) || c == b'$';
    let (inner, wrapped) = match v.iter().position(|&c| !ident(c)) {
        Some(p) if p > 0 && v[p] == b'(' && &v[..p] != b"require" => (&v[p + 1..], true),
        _ => (v, false),
    };
    let Some(rest) = inner.trim_ascii_start().strip_prefix(b"require") else {
        return false;
    };
    let Some(rest) = rest.trim_ascii_start().strip_prefix(b"(") else {
        return false;
    };
    let rest = rest.trim_ascii_start();
    let Some(&quote) = rest.first().filter(|&&q| q == b'"' || q == b'\'') else {
        return false;
    };
    let Some(close) = rest[1..].iter().position(|&c| c == quote || c == b'\\') else {
        return false;
    };
    if rest[1 + close] != quote {
        return false;
    }
    let Some(tail) = rest[close + 2..].trim_ascii_start().strip_prefix(b")") else {
        return false;
    };
    if wrapped {
        // What follows the wrapped call: `)` or `, 1)`.
        let tail = tail.trim_ascii();
        tail.ends_with(b")")
            && tail[..tail.len() - 1]
                .iter()
                .all(|&c| c.is_ascii_digit() || matches!(c, b',' | b' ' | b'!'))
    } else {
        tail.trim_ascii().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use crate::scan::plan::{Plan, javascript_planned};

    /// A bundle: `body` inside one function, then enough top-level statements to plan it.
    fn bundle(body: &str) -> String {
        format!(
            "(function () {{\n{body}}})();\n{}",
            "const pad = 1;\n".repeat(100)
        )
    }

    fn kept(src: &str) -> String {
        match javascript_planned(src.as_bytes(), 1600) {
            Plan::Ranges(r) => r.iter().map(|(r, _)| &src[r.clone()]).collect(),
            Plan::Whole => src.to_string(),
            Plan::Skip => String::new(),
        }
    }

    #[test]
    fn a_statement_kept_for_its_binding_pulls_in_no_member_writes() {
        let filler = "    var total = item.size * 3 - item.depth + item.width;\n".repeat(8);
        let src = bundle(&format!(
            "function loud() {{\n{filler}  console.log(opts);\n}}\n\
             var opts = build(other.value);\n\
             function Setter() {{\n{filler}  this.value = compute();\n}}\n\
             function Writer() {{\n{filler}  this.out = process.stdout;\n}}\n\
             function user(w) {{\n{filler}  w.out.write(1);\n}}\n",
        ));
        let kept = kept(&src);
        assert!(kept.contains("var opts = build(other.value)"), "{kept}");
        assert!(!kept.contains("function Setter"), "{kept}");
        assert!(kept.contains("w.out.write(1)"), "{kept}");
        assert!(kept.contains("this.out = process.stdout"), "{kept}");
    }

    #[test]
    fn module_values_are_require_calls_alone() {
        use super::module_value;
        for v in [
            "require(\"util\")",
            " require('node:process') ",
            "= require(\"util\")",
            "__toESM(require(\"node:fs\"), 1)",
            "__importStar(require(\"util\"))",
        ] {
            assert!(module_value(v.as_bytes()), "{v}");
        }
        for v in [
            "require(\"util\").inspect",
            "require(name)",
            "wrap(require(\"util\"), opts)",
            "f(g(require(\"util\")))",
            "require(\"util\");",
            "{ out: process.stdout }",
        ] {
            assert!(!module_value(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn a_module_object_read_for_a_member_no_row_names_carries_nothing() {
        let filler = "    var total = item.size * 3 - item.depth + item.width;\n".repeat(8);
        let src = bundle(&format!(
            "var util2 = require(\"util\");\n\
             var io = {{ out: process.stdout }};\n\
             function inspect(a) {{\n{filler}  return util2.inspect(a);\n}}\n\
             function dflt(a) {{\n{filler}  return util2.default.format(a);\n}}\n\
             function logs(a) {{\n{filler}  util2.log(a);\n}}\n\
             function deflog(a) {{\n{filler}  util2.default.log(a);\n}}\n\
             function whole(a) {{\n{filler}  return use(util2);\n}}\n\
             function member(a) {{\n{filler}  io.out.write(a);\n}}\n",
        ));
        let kept = kept(&src);
        assert!(!kept.contains("function inspect"), "{kept}");
        assert!(!kept.contains("function dflt"), "{kept}");
        for wanted in [
            "util2.log(a)",
            "util2.default.log(a)",
            "use(util2)",
            "io.out.write(a)",
        ] {
            assert!(kept.contains(wanted), "{wanted}: {kept}");
        }
    }

    #[test]
    fn bodies_keep_what_carries_stdout_and_the_bindings_it_reads() {
        let filler = "    count = count + node.size * 2 - node.depth;\n".repeat(8);
        let src = format!(
            "const pino = require('pino');\n(function () {{\n\
             function makeOut() {{\n  return process.stdout;\n}}\n\
             function user(node) {{\n{filler}  var w = makeOut();\n  w.write('x');\n}}\n\
             var opts = {{\n  level: 'info',\n  name: 'a logger whose options are long enough to be kept only when read'\n}};\n\
             function log(node) {{\n{filler}  pino(opts).info(node);\n}}\n\
             function quiet(node) {{\n{filler}  return node;\n}}\n\
             function loud(node) {{\n  console.log(node);\n}}\n\
             }})();\n{}",
            "const pad = 1;\n".repeat(100)
        );
        let kept = kept(&src);
        assert!(kept.contains("return process.stdout;"), "{kept}");
        assert!(
            kept.contains("w.write('x')"),
            "a name bound from a carrying call: {kept}"
        );
        assert!(kept.contains("pino(opts)"), "{kept}");
        assert!(
            kept.contains("var opts = {"),
            "the binding a kept call reads: {kept}"
        );
        assert!(kept.contains("console.log(node)"), "{kept}");
        assert!(
            !kept.contains("function quiet"),
            "only reads the names the kept statements read: {kept}"
        );
    }

    #[test]
    fn declarations_inside_functions_and_subscripts_write_no_outer_name() {
        let filler = "    total = total + item.size;\n".repeat(8);
        let src = bundle(&format!(
            "function loud() {{\n{filler}  console.log(args);\n}}\n\
             function local() {{\n{filler}  (function () {{ var args = [1]; }})();\n}}\n\
             function subscript(table) {{\n{filler}  table[args] = 1;\n}}\n\
             if (ready) {{\n{filler}  var args = [2];\n}}\n",
        ));
        let kept = kept(&src);
        assert!(kept.contains("console.log(args)"), "{kept}");
        assert!(!kept.contains("function local"), "{kept}");
        assert!(!kept.contains("function subscript"), "{kept}");
        assert!(
            kept.contains("var args = [2]"),
            "a `var` in an `if` block is the enclosing function's: {kept}"
        );
    }

    #[test]
    fn names_resolve_in_the_scope_that_declares_them() {
        let filler = "    total = total + item.size;\n".repeat(8);
        let src = bundle(&format!(
            "function loud(root, {{ a }}, ...rest) {{\n{filler}  console.log(root, glob, a, rest);\n}}\n\
             function other() {{\n{filler}  var root = makeTree();\n  return root;\n}}\n\
             function setter() {{\n{filler}  root = makeRoot();\n  rest = makeRest();\n}}\n\
             function outer() {{\n{filler}  glob = makeGlob();\n  a = makeA();\n}}\n",
        ));
        let kept = kept(&src);
        assert!(kept.contains("console.log(root"), "{kept}");
        assert!(
            !kept.contains("makeTree"),
            "another function's own `root`: {kept}"
        );
        assert!(
            !kept.contains("makeRoot") && !kept.contains("makeRest"),
            "`root` and `rest` are parameters of the function that reads them: {kept}"
        );
        assert!(kept.contains("makeGlob"), "an undeclared name: {kept}");
        assert!(
            kept.contains("makeA"),
            "a destructured parameter is not read as declared: {kept}"
        );
    }

    #[test]
    fn a_parameter_default_is_the_value_of_the_parameter_in_its_body() {
        let filler = "    total = total + item.size;\n".repeat(8);
        let src = bundle(&format!(
            "function make(out = process.stdout, copy = out) {{\n{filler}  holder.sink = copy;\n}}\n\
             function send(x) {{\n{filler}  holder.sink.write(x);\n}}\n",
        ));
        let kept = kept(&src);
        assert!(kept.contains("holder.sink = copy"), "{kept}");
        assert!(kept.contains("holder.sink.write(x)"), "{kept}");
    }

    #[test]
    fn parameter_lists_are_read_only_when_plain() {
        use super::parameters;
        let names = |src: &str| -> Vec<String> {
            let open = src.rfind('{').expect("a body");
            parameters(src.as_bytes(), open)
                .1
                .into_iter()
                .map(|r| src[r].to_string())
                .collect()
        };
        assert_eq!(names("function f(a, b = g(1, 2), ...c) {"), ["a", "b", "c"]);
        assert_eq!(names("(x, { y }, [z]) => {"), ["x"]);
        assert_eq!(names("x => {"), ["x"]);
        assert_eq!(names("m(a: Map<K, V>, b?: T) {"), ["a", "b"]);
        assert!(names("function f(a = \")\", b) {").is_empty());
        assert!(names("function f(a = /x/) {").is_empty());
    }

    #[test]
    fn only_values_that_hold_stdout_carry_it() {
        let filler = "    total = total + item.size;\n".repeat(8);
        let src = bundle(&format!(
            "function warn(format, args) {{\n{filler}  args = args.concat([format]);\n  console.info.apply(console, args);\n}}\n\
             function user(args) {{\n{filler}  var parts = args.slice(1);\n  warn('x', parts);\n}}\n\
             function getOut() {{\n{filler}  return process.stdout;\n}}\n\
             function writer() {{\n{filler}  var o = getOut();\n  o.write('y');\n}}\n",
        ));
        let kept = kept(&src);
        assert!(kept.contains("console.info.apply"), "{kept}");
        assert!(
            !kept.contains("args.slice(1)"),
            "calling a function that writes, or reading a name a writing statement assigns, \
             carries nothing: {kept}"
        );
        assert!(kept.contains("o.write('y')"), "a returned stream: {kept}");
    }

    #[test]
    fn calls_locals_and_block_names_carry_nothing_outside() {
        let filler = "    total = total + item.size;\n".repeat(8);
        let src = bundle(&format!(
            "function mod(exports2, module2) {{\n{filler}  module2.exports = {{ out: process.stdout }};\n}}\n\
             function reader(m) {{\n{filler}  var e = m.exports;\n}}\n\
             var init = wrap(function () {{\n{filler}  return process.stdout;\n}});\n\
             function caller() {{\n{filler}  var r = init();\n}}\n\
             var get = function () {{\n{filler}  return process.stdout;\n}};\n\
             function user() {{\n{filler}  var o = get();\n  o.write('y');\n}}\n\
             function loop(list) {{\n{filler}  for (const key of list) {{ console.log(key); }}\n}}\n\
             function other() {{\n{filler}  use(key);\n}}\n\
             function global() {{\n{filler}  exports.out = process.stdout;\n}}\n\
             function reads() {{\n{filler}  exports.out.write('z');\n}}\n",
        ));
        let kept = kept(&src);
        assert!(kept.contains("module2.exports = {"), "{kept}");
        assert!(
            !kept.contains("m.exports"),
            "a member of a parameter is no name another function reads: {kept}"
        );
        assert!(
            !kept.contains("var r = init()"),
            "a call's result is not the function passed to it: {kept}"
        );
        assert!(
            kept.contains("o.write('y')"),
            "a function value's return: {kept}"
        );
        assert!(kept.contains("console.log(key)"), "{kept}");
        assert!(
            !kept.contains("use(key)"),
            "a `const` of a `for` binds nothing outside it: {kept}"
        );
        assert!(
            kept.contains("exports.out.write('z')"),
            "a member of a global is written for every reader: {kept}"
        );
    }

    #[test]
    fn parts_are_in_order_and_never_empty() {
        // A body whose last statement is a block (the lexer ends the statement at its `}` and
        // leaves an empty one after it), then the next body: as in minified bundles.
        let filler = "total=total+item.size;".repeat(12);
        let shapes = [
            bundle(&format!(
                "function outer(){{var a=1;function inner(x){{{filler}console.log(x)}}}}\n\
                 function next(y){{{filler}console.log(y)}}\n"
            )),
            bundle(&format!(
                "function outer(){{var a=1;function inner(x){{{filler}console.log(x)}}}}function next(y){{{filler}console.log(y)}}"
            )),
            // A browserify bundle: modules are functions in an object literal.
            format!(
                "!function(){{return {{1:[function(require,module,exports){{var a=1;module.exports=function(v){{{filler}console.log(v)}}}},{{}}],\
                 2:[function(require,module,exports){{var b=2;module.exports=function(w){{{filler}console.log(w)}}}},{{}}]}}}}();{}",
                "var pad=1;".repeat(200)
            ),
        ];
        for src in shapes {
            let Plan::Ranges(parts) = javascript_planned(src.as_bytes(), 1600) else {
                panic!("planned in parts: {src}");
            };
            assert!(parts.iter().all(|(r, _)| !r.is_empty()), "{parts:?}");
            assert!(
                parts.windows(2).all(|w| w[0].0.end < w[1].0.start),
                "{parts:?}"
            );
        }
    }

    #[test]
    fn cuts_keep_the_syntax_whole() {
        let filler = "    total = total + item.size;\n".repeat(8);
        let src = bundle(&format!(
            "function f(kind, x) {{\n{filler}  switch (kind) {{\n    case 1:\n      total = 1;\n{filler}      break;\n    case 2:\n      console.log(x);\n  }}\n\
             if (x) quiet(); else console.log(x);\n{filler}}}\n",
        ));
        let kept = kept(&src);
        assert!(kept.contains("case 1:"), "a switch is never cut: {kept}");
        assert!(
            kept.contains("if (x) quiet(); else console.log(x);"),
            "`; else` goes on with the `if`: {kept}"
        );
    }
}
