//! Large kept statements (a bundle wrapped in one function, a big module function) planned
//! inside their function bodies, as one tree of statements.
//!
//! A statement of at least `min_bytes` with function bodies of at least `min_bytes` is split:
//! its header (everything outside those bodies) and the statements of each body, recursively.
//! Which statements are kept is decided over the whole tree, by name, until nothing changes:
//!
//! - a statement *carries* stdout when it holds a candidate or mentions a name a carrying
//!   statement writes (`const out = process.stdout` … `out.write(x)`); a function whose
//!   `return` statement carries stdout carries it too (`function out() { return ...; }`);
//! - a statement is kept when it carries stdout, or when it writes (declares or assigns) a name
//!   a kept statement mentions: the bindings the analyzer resolves those names to
//!   (`const opts = {}` for `pino(opts)`, a local named `console`);
//! - the headers around a kept statement are kept (a function's parameters are bindings too),
//!   and so are the short simple statements of a kept body.
//!
//! Names written only by kept statements that carry nothing are no candidates: what they are
//! bound to holds no candidate and mentions no name that carries stdout, so no statement that
//! reads them can find anything through them. Two statements that only read the same name
//! cannot change each other's findings. Names are matched without scopes (a local `root` in one
//! function pulls in a `root` of another): that keeps more than needed, never less.
//!
//! Splitting is lazy: a statement is split only when, taken whole, it would be kept (a part can
//! only be kept when the whole would), so large statements that never matter are not lexed
//! again.

use super::{Lexer, RESERVED, Rows};
use crate::scan::plan::{SHORT_STATEMENT, Stmt, WordSet, push_range};
use std::ops::Range;

/// How deep statements are split inside one another.
const MAX_DEPTH: u32 = 8;

/// Passes over the tree before the plan gives up (keeps the statement whole).
const MAX_ROUNDS: usize = 64;

/// One statement of the tree.
#[derive(Default)]
struct Node {
    span: Range<usize>,
    row: usize,
    parent: Option<usize>,
    depth: u32,
    /// Split: the planned function bodies; the rest of `span` is the header.
    bodies: Vec<Range<usize>>,
    /// The statements of `bodies`, as indices into the tree, in source order.
    children: Vec<usize>,
    /// The identifiers of the statement (split: of its header), and those it declares or
    /// assigns.
    idents: Vec<Range<usize>>,
    writes: Vec<Range<usize>>,
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
/// kept top-level statements bind. `None`: keep it whole.
pub(super) fn block_parts(
    src: &[u8],
    span: Range<usize>,
    row: usize,
    names: &WordSet,
    min_bytes: usize,
) -> Option<Vec<(Range<usize>, usize)>> {
    if span.len() < min_bytes {
        return None;
    }
    let mut tree = Tree {
        src,
        min_bytes,
        nodes: vec![Node {
            span,
            row,
            ..Node::default()
        }],
        used: names.clone(),
        carried: names.clone(),
    };
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
    min_bytes: usize,
    nodes: Vec<Node>,
    /// Every name the kept statements mention.
    used: WordSet<'s>,
    /// The names the statements that carry stdout write.
    carried: WordSet<'s>,
}

impl<'s> Tree<'s> {
    fn leaf(&self, s: Stmt, parent: usize, depth: u32) -> Node {
        Node {
            short: !s.block && s.end - s.start <= SHORT_STATEMENT,
            returns: s
                .idents
                .first()
                .is_some_and(|r| &self.src[r.clone()] == b"return"),
            span: s.start..s.end,
            row: s.row,
            parent: Some(parent),
            depth,
            idents: s.idents,
            writes: s.writes,
            hit: s.hit,
            ..Node::default()
        }
    }

    /// Splits node `i` into its header and the statements of its large function bodies; false
    /// (and nothing changed) when it has none or the lexer cannot read it.
    fn split(&mut self, i: usize) -> bool {
        self.nodes[i].settled = true;
        let (span, row, depth) = {
            let n = &self.nodes[i];
            (n.span.clone(), n.row, n.depth)
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
        let bodies: Vec<Range<usize>> = std::mem::take(&mut lexed.bodies)
            .into_iter()
            .filter(|b| b.len() >= self.min_bytes)
            .collect();
        if bodies.is_empty() {
            return false;
        }
        let rows = Rows::new(src, span.start, row);
        let mut members = Vec::new();
        for body in &bodies {
            let stmts = Lexer::span(src, body.clone(), rows.at(body.start), true).statements();
            if stmts.iter().any(|m| m.malformed) {
                return false;
            }
            members.extend(stmts);
        }
        let inside = |p: usize| bodies.iter().any(|b| b.contains(&p));
        let (mut idents, mut writes, mut hit) = (Vec::new(), Vec::new(), false);
        lexed.stmts.push(std::mem::take(&mut lexed.cur));
        for s in lexed.stmts {
            hit |= s.hits.iter().any(|&p| !inside(p));
            idents.extend(s.idents.into_iter().filter(|r| !inside(r.start)));
            writes.extend(s.writes.into_iter().filter(|r| !inside(r.start)));
        }
        let mut children = Vec::with_capacity(members.len());
        for m in members {
            children.push(self.nodes.len());
            let leaf = self.leaf(m, i, depth + 1);
            self.nodes.push(leaf);
        }
        let n = &mut self.nodes[i];
        (n.bodies, n.children) = (bodies, children);
        (n.idents, n.writes, n.hit, n.short) = (idents, writes, hit, false);
        true
    }

    /// Keeps node `i` (and whether it carries stdout) with every statement around it, and what
    /// they mention.
    fn keep(&mut self, i: usize, carries: bool) {
        let src = self.src;
        let name = |r: &Range<usize>| {
            let w = &src[r.clone()];
            (!RESERVED.contains(&w)).then_some(w)
        };
        let mut at = Some(i);
        let mut carries = carries;
        while let Some(k) = at {
            let n = &mut self.nodes[k];
            let (was_kept, was_carrying) = (n.kept, n.carries);
            n.kept = true;
            n.carries |= carries;
            if !was_kept {
                self.used.extend(n.idents.iter().filter_map(name));
            }
            if carries && !was_carrying {
                self.carried.extend(n.writes.iter().filter_map(name));
            }
            // A `return` that carries stdout: the function around it does.
            carries &= n.returns;
            if was_kept && !carries && k != i {
                break;
            }
            at = n.parent;
        }
    }

    /// Node `i` as it stands: (carries stdout, is kept) given what is kept so far.
    fn pulled(&self, i: usize) -> (bool, bool) {
        let n = &self.nodes[i];
        let src = self.src;
        let carries = !n.carries
            && (n.hit
                || n.idents
                    .iter()
                    .any(|r| self.carried.contains(&src[r.clone()])));
        let kept =
            !n.kept && (carries || n.writes.iter().any(|r| self.used.contains(&src[r.clone()])));
        (carries, kept)
    }

    /// Keeps what matters until nothing changes; false when that takes too long.
    fn settle(&mut self) -> bool {
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            let mut i = 0;
            while i < self.nodes.len() {
                let (carries, kept) = self.pulled(i);
                if !carries && !kept {
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

#[cfg(test)]
mod tests {
    use crate::scan::plan::{Plan, javascript_planned};

    fn kept(src: &str) -> String {
        match javascript_planned(src.as_bytes(), 1600) {
            Plan::Ranges(r) => r.iter().map(|(r, _)| &src[r.clone()]).collect(),
            other => format!("{other:?}"),
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
        let src = format!(
            "(function () {{\n\
             function loud(args) {{\n{filler}  console.log(args);\n}}\n\
             function local() {{\n{filler}  (function () {{ var args = [1]; }})();\n}}\n\
             function subscript(table) {{\n{filler}  table[args] = 1;\n}}\n\
             if (ready) {{\n{filler}  var args = [2];\n}}\n\
             }})();\n{}",
            "const pad = 1;\n".repeat(100)
        );
        let kept = kept(&src);
        assert!(kept.contains("console.log(args)"), "{kept}");
        assert!(!kept.contains("function local"), "{kept}");
        assert!(!kept.contains("function subscript"), "{kept}");
        assert!(
            kept.contains("var args = [2]"),
            "a `var` in an `if` block is the enclosing function's: {kept}"
        );
    }
}
