//! Rust: the shared resolver ([`flow`](super::flow)) over Rust's syntax. Paths go through the
//! file's `use` declarations (`use std::io::{self, Write}` makes `io` mean `std::io`); `let`
//! bindings carry stream facts (`let out = io::stdout().lock()`), `Command` builders carry
//! their stdout setting until `status()`/`spawn()`, and user `macro_rules!` macros whose body
//! prints (`println!`/`print!`) are print macros themselves. `eprint!`, `eprintln!` and `dbg!`
//! write to stderr. Writes whose payload is built with `serde_json` are the hand-written
//! transport.

use super::flow::{Call, Engine, Expr, Shape, Syntax};
use super::{Field, FileFacts, text};
use crate::scan::sinks;
use std::collections::HashMap;
use tree_sitter::{Node, Tree};

pub fn analyze(tree: &Tree, src: &str) -> FileFacts {
    let table = sinks::table(super::Lang::Rust).expect("Rust has a sink table");
    let mut rs = Rs::new(tree.root_node(), src);
    let tests = std::mem::take(&mut rs.tests);
    let mut facts = Engine::new(rs, src, table).run(tree.root_node());
    for f in &mut facts.findings {
        f.test = tests.iter().any(|r| r.contains(&f.start.0));
    }
    facts
}

struct Rs<'t> {
    src: &'t [u8],
    /// `use` names → full paths.
    uses: HashMap<String, String>,
    /// User macros whose expansion prints to stdout.
    print_macros: Vec<String>,
    /// Every `macro_rules!` name of the file.
    own_macros: Vec<String>,
    /// Rows of items compiled for tests only (`#[cfg(test)] mod tests { ... }`).
    tests: Vec<std::ops::RangeInclusive<usize>>,
}

/// Macros that need no `use`: the standard library's.
const PRELUDE_MACROS: &[&str] = &["print", "println", "write", "writeln"];

impl<'t> Rs<'t> {
    fn new(root: Node<'t>, src: &'t str) -> Rs<'t> {
        let mut rs = Rs {
            src: src.as_bytes(),
            uses: HashMap::new(),
            print_macros: Vec::new(),
            own_macros: Vec::new(),
            tests: Default::default(),
        };
        let mut defs: Vec<(String, &'t str)> = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "use_declaration" => {
                    if let Some(arg) = n.field("argument") {
                        rs.collect_use(arg, "");
                    }
                }
                "macro_definition" => {
                    if let Some(name) = n.field("name") {
                        defs.push((rs.text(name).to_string(), rs.text(n)));
                    }
                }
                "attribute_item" => {
                    let compact: String = rs.text(n).split_whitespace().collect();
                    // `#[cfg(test)]` items and `#[test]`/`#[tokio::test]` functions are compiled
                    // for tests only.
                    let path = compact
                        .strip_prefix("#[")
                        .and_then(|a| a.split(['(', ']']).next())
                        .unwrap_or("");
                    // `#[cfg(test)]`, `#[cfg(all(test, ...))]`; not `any(...)` or `not(test)`.
                    let cfg = compact
                        .strip_prefix("#[cfg(")
                        .and_then(|c| c.strip_suffix(")]"))
                        .unwrap_or("");
                    let words = |c: &str| {
                        c.split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                            .any(|w| w == "test")
                    };
                    let cfg_test = cfg == "test"
                        || (cfg.starts_with("all(") && words(cfg) && !cfg.contains("not(test"));
                    let test = cfg_test || path == "test" || path.ends_with("::test");
                    if test && let Some(item) = n.next_named_sibling() {
                        let rows = n.start_position().row..=item.end_position().row;
                        rs.tests.push(rows);
                    }
                }
                _ => {
                    if n.child_count() > 0 && !n.kind().ends_with("expression") {
                        let mut c = n.walk();
                        stack.extend(n.named_children(&mut c));
                    }
                }
            }
        }
        rs.own_macros = defs.iter().map(|(n, _)| n.clone()).collect();
        // A macro that expands to a printing macro prints too (to a fixed point).
        let prints = |body: &str, known: &[String]| {
            let compact: String = body.split_whitespace().collect();
            let bytes = compact.as_bytes();
            let has = |m: &str| {
                compact.match_indices(m).any(|(i, _)| {
                    i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')
                })
            };
            // A body that takes `io::stdout()` and writes to it prints as much.
            let writes = has("stdout()") && (has("writeln!") || has("write!"));
            has("println!")
                || has("print!")
                || writes
                || known.iter().any(|k| has(&format!("{k}!")))
        };
        for _ in 0..4 {
            let before = rs.print_macros.len();
            for (name, body) in &defs {
                if !rs.print_macros.contains(name) && prints(body, &rs.print_macros) {
                    rs.print_macros.push(name.clone());
                }
            }
            if rs.print_macros.len() == before {
                break;
            }
        }
        rs
    }

    fn text(&self, n: Node<'t>) -> &'t str {
        text(n, self.src)
    }

    fn collect_use(&mut self, n: Node<'t>, prefix: &str) {
        let join = |p: &str, t: &str| {
            if p.is_empty() {
                t.to_string()
            } else {
                format!("{p}::{t}")
            }
        };
        match n.kind() {
            "identifier" | "scoped_identifier" => {
                let full = join(prefix, self.text(n));
                let last = full.rsplit("::").next().unwrap_or(&full).to_string();
                self.uses.insert(last, full);
            }
            "self" => {
                let last = prefix.rsplit("::").next().unwrap_or(prefix).to_string();
                self.uses.insert(last, prefix.to_string());
            }
            "use_as_clause" => {
                if let (Some(p), Some(a)) = (n.field("path"), n.field("alias")) {
                    self.uses
                        .insert(self.text(a).to_string(), join(prefix, self.text(p)));
                }
            }
            "scoped_use_list" => {
                let base = n
                    .field("path")
                    .map(|p| join(prefix, self.text(p)))
                    .unwrap_or_else(|| prefix.to_string());
                if let Some(list) = n.field("list") {
                    self.collect_use(list, &base);
                }
            }
            "use_list" => {
                let mut c = n.walk();
                let kids: Vec<Node> = n.named_children(&mut c).collect();
                for k in kids {
                    self.collect_use(k, prefix);
                }
            }
            _ => {}
        }
    }

    /// The arguments of a macro: the token groups between top-level commas, each given by its
    /// first token.
    fn macro_args(&self, tt: Node<'t>) -> Vec<(Option<&'t str>, Node<'t>, Node<'t>)> {
        let mut out = Vec::new();
        let mut c = tt.walk();
        let mut start = true;
        for k in tt.children(&mut c) {
            let t = self.text(k);
            if matches!(t, "(" | ")" | "[" | "]" | "{" | "}") && k.child_count() == 0 {
                continue;
            }
            if t == "," {
                start = true;
                continue;
            }
            if start {
                out.push((None, k, k));
                start = false;
            }
        }
        out
    }

    fn call(&self, node: Node<'t>) -> Option<Call<'t>> {
        match node.kind() {
            "call_expression" => {
                let f = node.field("function")?;
                let mut args = Vec::new();
                if let Some(list) = node.field("arguments") {
                    let mut c = list.walk();
                    for a in list
                        .named_children(&mut c)
                        .filter(|a| !a.kind().ends_with("comment") && a.kind() != "attribute_item")
                    {
                        args.push((None, a, a));
                    }
                }
                let f = if f.kind() == "generic_function" {
                    f.field("function").unwrap_or(f)
                } else {
                    f
                };
                match f.kind() {
                    "field_expression" => Some(Call {
                        node,
                        receiver: f.field("value"),
                        callee: None,
                        name: self.text(f.field("field")?),
                        args,
                    }),
                    _ => {
                        let name = self.text(f).rsplit("::").next().unwrap_or("");
                        Some(Call {
                            node,
                            receiver: None,
                            callee: Some(f),
                            name,
                            args,
                        })
                    }
                }
            }
            "macro_invocation" => {
                let m = node.field("macro")?;
                let tt = node
                    .named_children(&mut node.walk())
                    .find(|c| c.kind() == "token_tree");
                let args = tt.map(|t| self.macro_args(t)).unwrap_or_default();
                let name = self.text(m).rsplit("::").next().unwrap_or("");
                Some(Call {
                    node,
                    receiver: None,
                    callee: Some(m),
                    name,
                    args,
                })
            }
            _ => None,
        }
    }

    /// `format!("{}\n", x)`, `format!("{x}")`: a line made of one value is that value (a
    /// serialized message stays one).
    fn format_value(&self, node: Node<'t>) -> Option<Expr<'t>> {
        let m = node.field("macro")?;
        if self.text(m).rsplit("::").next()? != "format" {
            return None;
        }
        let tt = node
            .named_children(&mut node.walk())
            .find(|c| c.kind() == "token_tree")?;
        let args = self.macro_args(tt);
        let (_, fmt, _) = args.first()?;
        if fmt.kind() != "string_literal" {
            return None;
        }
        let inner = self.text(*fmt).strip_prefix('"')?.strip_suffix('"')?;
        let inner = inner.strip_suffix("\\n").unwrap_or(inner);
        let name = inner.strip_prefix('{')?.strip_suffix('}')?;
        match (name, args.as_slice()) {
            ("", [_, (_, value, _)]) => Some(Expr::Inner(*value)),
            (n, [_]) if !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                Some(Expr::Ident(n))
            }
            _ => None,
        }
    }

    /// The text of a macro argument's token group, from its first token to the next
    /// top-level comma.
    fn group_text(&self, first: Node<'t>) -> String {
        let mut out = String::new();
        let mut n = Some(first);
        while let Some(k) = n {
            let t = self.text(k);
            if t == ","
                || (k.child_count() == 0
                    && matches!(t, ")" | "]" | "}")
                    && k.next_sibling().is_none())
            {
                break;
            }
            out.push_str(t);
            n = k.next_sibling();
        }
        out
    }
}

impl<'t> Syntax<'t> for Rs<'t> {
    fn sep(&self) -> &'static str {
        "::"
    }

    fn shape(&self, node: Node<'t>) -> Shape<'t> {
        match node.kind() {
            "function_item" => {
                let name = node.field("name").map(|n| self.text(n)).unwrap_or("");
                Shape::Scope {
                    function: true,
                    entry: name == "main",
                }
            }
            "closure_expression" => Shape::Scope {
                function: true,
                entry: false,
            },
            "block" => Shape::Scope {
                function: false,
                entry: false,
            },
            "let_declaration" => {
                let Some(pat) = node.field("pattern") else {
                    return Shape::Other;
                };
                let name = if pat.kind() == "identifier" {
                    Some(pat)
                } else {
                    let mut c = pat.walk();
                    pat.named_children(&mut c)
                        .find(|k| k.kind() == "identifier")
                };
                match name {
                    Some(n) => Shape::Bind(vec![(n, node.field("value"))]),
                    None => Shape::Other,
                }
            }
            "parameter" => match node.field("pattern") {
                Some(p) if p.kind() == "identifier" => Shape::Bind(vec![(p, None)]),
                _ => Shape::Other,
            },
            "assignment_expression" => match (node.field("left"), node.field("right")) {
                (Some(l), Some(r)) => Shape::Assign(l, r),
                _ => Shape::Other,
            },
            "call_expression" | "macro_invocation" => match self.call(node) {
                Some(c) => Shape::Call(c),
                None => Shape::Other,
            },
            "struct_expression" => {
                let Some(body) = node.field("body") else {
                    return Shape::Other;
                };
                let mut c = body.walk();
                let fields = body
                    .named_children(&mut c)
                    .filter_map(|f| match f.kind() {
                        "field_initializer" => {
                            Some((self.text(f.field("field")?), f.field("value")?))
                        }
                        "shorthand_field_initializer" => {
                            let id = f.named_child(0)?;
                            Some((self.text(id), id))
                        }
                        _ => None,
                    })
                    .collect();
                Shape::Fields(fields)
            }
            "scoped_identifier" => {
                // A configuration value written in place (`env_logger::Target::Stdout`).
                let standalone = node.parent().is_none_or(|p| {
                    !matches!(
                        p.kind(),
                        "scoped_identifier"
                            | "use_declaration"
                            | "scoped_use_list"
                            | "use_as_clause"
                            | "use_list"
                    ) && p.field("function").is_none_or(|f| f.id() != node.id())
                        && p.field("macro").is_none_or(|f| f.id() != node.id())
                });
                match (standalone, node.field("path"), node.field("name")) {
                    (true, Some(p), Some(n)) => Shape::Reference(Some(p), self.text(n)),
                    _ => Shape::Other,
                }
            }
            _ => Shape::Other,
        }
    }

    fn expr(&self, node: Node<'t>) -> Expr<'t> {
        if node.parent().is_some_and(|p| p.kind() == "token_tree") {
            // A format string that is one captured name (`"{text}"`) is that name's value.
            if node.kind() == "string_literal"
                && let Some(name) = self
                    .text(node)
                    .strip_prefix("\"{")
                    .and_then(|t| t.strip_suffix("}\""))
                && !name.is_empty()
                && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            {
                return Expr::Ident(name);
            }
            // A macro argument: its token group as a path (`io::stdout()`, `out`).
            let g = self.group_text(node);
            if g.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Expr::Ident(self.text(node));
            }
            // `self.out`: the field.
            if node.kind() == "self"
                && let Some(dot) = node.next_sibling().filter(|d| self.text(*d) == ".")
                && let Some(field) = dot.next_sibling().filter(|f| f.kind() == "identifier")
                && g == format!("self.{}", self.text(field))
            {
                return Expr::Field(self.text(field));
            }
            let g = g.trim_start_matches("&mut").trim_start_matches('&');
            // `&mut out`: the variable.
            if !g.is_empty() && g.chars().all(|c| c.is_alphanumeric() || c == '_') {
                let mut k = Some(node);
                while let Some(t) = k {
                    if t.kind() == "identifier" && self.text(t) == g {
                        return Expr::Ident(self.text(t));
                    }
                    k = t.next_sibling().filter(|n| self.text(*n) != ",");
                }
            }
            if g.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '(' | ')' | '.'))
            {
                let head = g.split("::").next().unwrap_or("");
                let rest = &g[head.len()..];
                let head = self
                    .uses
                    .get(head)
                    .cloned()
                    .unwrap_or_else(|| head.to_string());
                let path = format!("{head}{rest}").replace('.', "::");
                return Expr::Path(path.replace("::lock()", ""));
            }
            return Expr::Unknown;
        }
        match node.kind() {
            "identifier" | "type_identifier" | "crate" | "self" | "super" => {
                Expr::Ident(self.text(node))
            }
            "scoped_identifier" | "scoped_type_identifier" => {
                match (node.field("path"), node.field("name")) {
                    (Some(p), Some(n)) => Expr::Member(p, self.text(n)),
                    (None, Some(n)) => Expr::Ident(self.text(n)),
                    _ => Expr::Unknown,
                }
            }
            "field_expression" => match (node.field("value"), node.field("field")) {
                (Some(v), Some(f)) if v.kind() == "self" => Expr::Field(self.text(f)),
                (Some(v), Some(f)) => Expr::Member(v, self.text(f)),
                _ => Expr::Unknown,
            },
            "macro_invocation" => self.format_value(node).unwrap_or(Expr::Call),
            "call_expression" => Expr::Call,
            "if_expression" => {
                let mut branches = Vec::new();
                let mut n = Some(node);
                while let Some(i) = n.filter(|i| i.kind() == "if_expression") {
                    branches.extend(i.field("consequence"));
                    let alt = i.field("alternative").and_then(|e| e.named_child(0));
                    n = alt;
                    if let Some(b) = alt.filter(|b| b.kind() == "block") {
                        branches.push(b);
                    }
                }
                Expr::Choice(branches)
            }
            "match_expression" => {
                let mut branches = Vec::new();
                if let Some(body) = node.field("body") {
                    let mut c = body.walk();
                    branches.extend(body.named_children(&mut c).filter_map(|a| a.field("value")));
                }
                Expr::Choice(branches)
            }
            "block" => {
                let mut c = node.walk();
                match node.named_children(&mut c).last() {
                    Some(last) if last.kind().ends_with("expression") => Expr::Inner(last),
                    _ => Expr::Unknown,
                }
            }
            "parenthesized_expression"
            | "reference_expression"
            | "try_expression"
            | "await_expression" => node
                .field("value")
                .or_else(|| node.named_child(0))
                .map_or(Expr::Unknown, Expr::Inner),
            "string_literal" | "raw_string_literal" => {
                Expr::Str(self.text(node).trim_matches(['"', 'r', '#']).to_string())
            }
            "integer_literal" => self.text(node).parse().map_or(Expr::Unknown, Expr::Int),
            "boolean_literal" => Expr::Bool(self.text(node) == "true"),
            _ => Expr::Unknown,
        }
    }

    fn qualify(&self, name: &str) -> Option<String> {
        if self.print_macros.iter().any(|m| m == name) {
            return Some("std::println".to_string());
        }
        if self.own_macros.iter().any(|m| m == name) {
            // A `macro_rules!` of the file that does not print shadows the prelude's
            // (`macro_rules! println { ... => eprintln!(...) }`).
            return None;
        }
        if let Some(p) = self.uses.get(name) {
            return Some(p.clone());
        }
        PRELUDE_MACROS
            .contains(&name)
            .then(|| format!("std::{name}"))
    }

    fn normalize(&self, path: String) -> String {
        // `std::io::Stdout::lock` and friends spell the same things; `::std::` is `std::`.
        path.strip_prefix("::").map(str::to_string).unwrap_or(path)
    }

    fn is_payload(&self, node: Node<'t>) -> bool {
        let t = if node.parent().is_some_and(|p| p.kind() == "token_tree") {
            let parent = node.parent().map(|p| self.text(p)).unwrap_or("");
            parent.to_string()
        } else {
            self.text(node).to_string()
        };
        t.contains("serde_json")
    }

    fn generic_stdout_args(&self) -> bool {
        true
    }

    fn returned(&self, node: Node<'t>) -> Option<(&'t str, Node<'t>)> {
        if node.kind() != "function_item" {
            return None;
        }
        let name = self.text(node.field("name")?);
        let body = node.field("body")?;
        let mut c = body.walk();
        let last = body.named_children(&mut c).last()?;
        match last.kind() {
            "expression_statement" => {
                let r = last.named_child(0)?;
                (r.kind() == "return_expression").then_some((name, r.named_child(0)?))
            }
            k if k.ends_with("expression") => Some((name, last)),
            _ => None,
        }
    }
}
