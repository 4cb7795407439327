//! Java: the shared resolver ([`flow`](super::flow)) over Java's syntax: `System.out` prints and
//! writes (also through `import static java.lang.System.out`), streams and writers built on it
//! and held in locals or fields, method references (`forEach(System.out::println)`),
//! `System.setOut(...)` in source order and scope, logger appenders whose target is set or left
//! to its default, and child processes with `inheritIO()`. A println of
//! `writeValueAsString(...)`/`toJson(...)` is the hand-written JSON-RPC transport.

use super::flow::{Call, Engine, Expr, Shape, Syntax};
use super::{Field, FileFacts, text};
use crate::scan::sinks;
use tree_sitter::{Node, Tree};

pub fn analyze(tree: &Tree, src: &str) -> FileFacts {
    let table = sinks::table(super::Lang::Java).expect("Java has a sink table");
    Engine::new(Java::new(src), src, table).run(tree.root_node())
}

pub(super) struct Java<'t> {
    pub(super) src: &'t [u8],
    /// `import static java.lang.System.out;` → ("out", "System.out").
    statics: Vec<(String, String)>,
}

impl<'t> Java<'t> {
    pub(super) fn new(src: &'t str) -> Java<'t> {
        let mut statics = Vec::new();
        for line in src.lines() {
            let l = line.trim();
            let Some(rest) = l.strip_prefix("import static ") else {
                continue;
            };
            let path = rest.trim_end_matches(';').trim();
            if let Some(class) = path.strip_suffix(".*") {
                for member in ["out", "err", "setOut"] {
                    statics.push((member.to_string(), format!("{class}.{member}")));
                }
            } else if let Some((_, member)) = path.rsplit_once('.') {
                statics.push((member.to_string(), path.to_string()));
            }
        }
        Java {
            src: src.as_bytes(),
            statics,
        }
    }

    fn text(&self, n: Node<'t>) -> &'t str {
        text(n, self.src)
    }

    fn call(&self, node: Node<'t>) -> Option<Call<'t>> {
        let mut args = Vec::new();
        if let Some(list) = node.field("arguments") {
            let mut c = list.walk();
            for a in list
                .named_children(&mut c)
                .filter(|a| !a.kind().ends_with("comment"))
            {
                args.push((None, a, a));
            }
        }
        match node.kind() {
            "method_invocation" => {
                let name = self.text(node.field("name")?);
                match node.field("object") {
                    Some(o) => Some(Call {
                        node,
                        receiver: Some(o),
                        callee: None,
                        name,
                        args,
                    }),
                    None => Some(Call {
                        node,
                        receiver: None,
                        callee: node.field("name"),
                        name,
                        args,
                    }),
                }
            }
            "object_creation_expression" => {
                let ty = node.field("type")?;
                let written = self.text(ty);
                let name = written.split('<').next().unwrap_or(written);
                let name = name.rsplit('.').next().unwrap_or(name).trim();
                Some(Call {
                    node,
                    receiver: None,
                    callee: Some(ty),
                    name,
                    args,
                })
            }
            _ => None,
        }
    }
}

/// `a.b.C.d` → `C.d`: package names (lower case) in front of a class are dropped.
pub(super) fn drop_packages(path: String) -> String {
    let segments: Vec<&str> = path.split('.').collect();
    match segments
        .iter()
        .position(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))
    {
        Some(i)
            if i > 0
                && segments[..i]
                    .iter()
                    .all(|s| s.starts_with(|c: char| c.is_ascii_lowercase())) =>
        {
            segments[i..].join(".")
        }
        _ => path,
    }
}

impl<'t> Java<'t> {
    /// `Class.NAME` of a static field's declarator.
    fn static_field(&self, declarator: Node<'t>) -> Option<String> {
        let field = declarator
            .parent()
            .filter(|p| p.kind() == "field_declaration")?;
        let mut c = field.walk();
        let is_static = field.named_children(&mut c).any(|m| {
            m.kind() == "modifiers" && self.text(m).split_whitespace().any(|w| w == "static")
        });
        if !is_static {
            return None;
        }
        let class = field.parent()?.parent()?;
        let class_name = self.text(class.field("name")?);
        Some(format!(
            "{class_name}.{}",
            self.text(declarator.field("name")?)
        ))
    }
}

impl<'t> Syntax<'t> for Java<'t> {
    fn shape(&self, node: Node<'t>) -> Shape<'t> {
        match node.kind() {
            "method_declaration" => {
                let name = node.field("name").map(|n| self.text(n)).unwrap_or("");
                Shape::Scope {
                    function: true,
                    entry: name == "main",
                }
            }
            "static_initializer" => Shape::Scope {
                function: true,
                entry: true,
            },
            "constructor_declaration" | "lambda_expression" => Shape::Scope {
                function: true,
                entry: false,
            },
            "block" | "class_body" => Shape::Scope {
                function: false,
                entry: false,
            },
            "variable_declarator" => match (node.field("name"), self.static_field(node)) {
                // `static final PrintStream OUT = System.out;`: `Holder.OUT` anywhere.
                (Some(_), Some(q)) if node.field("value").is_some() => {
                    Shape::Static(q, node.field("value").unwrap_or(node))
                }
                (Some(n), _) => Shape::Bind(vec![(n, node.field("value"))]),
                (None, _) => Shape::Other,
            },
            // try-with-resources: `try (PrintWriter w = new PrintWriter(System.out)) { ... }`.
            "resource" => match node.field("name") {
                Some(n) => Shape::Bind(vec![(n, node.field("value"))]),
                None => Shape::Other,
            },
            "formal_parameter" | "spread_parameter" | "catch_formal_parameter" => {
                match node.field("name") {
                    Some(n) => Shape::Bind(vec![(n, None)]),
                    None => Shape::Other,
                }
            }
            "assignment_expression" => match (node.field("left"), node.field("right")) {
                (Some(l), Some(r))
                    if node.field("operator").is_none_or(|o| self.text(o) == "=") =>
                {
                    Shape::Assign(l, r)
                }
                _ => Shape::Other,
            },
            "method_invocation" | "object_creation_expression" => match self.call(node) {
                Some(c) => Shape::Call(c),
                None => Shape::Other,
            },
            "method_reference" => {
                let mut c = node.walk();
                let kids: Vec<Node> = node.named_children(&mut c).collect();
                match kids.as_slice() {
                    [recv, .., name] if name.kind() == "identifier" => {
                        Shape::Reference(Some(*recv), self.text(*name))
                    }
                    _ => Shape::Other,
                }
            }
            _ => Shape::Other,
        }
    }

    fn expr(&self, node: Node<'t>) -> Expr<'t> {
        match node.kind() {
            "identifier" | "type_identifier" => Expr::Ident(self.text(node)),
            "generic_type" => node.named_child(0).map_or(Expr::Unknown, |n| self.expr(n)),
            "scoped_type_identifier" | "scoped_identifier" => {
                let mut c = node.walk();
                let kids: Vec<Node> = node.named_children(&mut c).collect();
                match kids.as_slice() {
                    [scope, .., name] => Expr::Member(*scope, self.text(*name)),
                    _ => Expr::Unknown,
                }
            }
            "field_access" => match (node.field("object"), node.field("field")) {
                (Some(o), Some(f)) if o.kind() == "this" => Expr::Field(self.text(f)),
                (Some(o), Some(f)) => Expr::Member(o, self.text(f)),
                _ => Expr::Unknown,
            },
            "method_invocation" | "object_creation_expression" => Expr::Call,
            "parenthesized_expression" => node.named_child(0).map_or(Expr::Unknown, Expr::Inner),
            "cast_expression" => node.field("value").map_or(Expr::Unknown, Expr::Inner),
            // `v ? System.out : System.err`: stdout when a branch is.
            "ternary_expression" => Expr::Choice(
                [node.field("consequence"), node.field("alternative")]
                    .into_iter()
                    .flatten()
                    .collect(),
            ),
            "string_literal" => Expr::Str(self.text(node).trim_matches('"').to_string()),
            "decimal_integer_literal" => self.text(node).parse().map_or(Expr::Unknown, Expr::Int),
            "true" => Expr::Bool(true),
            "false" => Expr::Bool(false),
            "null_literal" => Expr::Null,
            _ => Expr::Unknown,
        }
    }

    fn qualify(&self, name: &str) -> Option<String> {
        self.statics
            .iter()
            .find(|(m, _)| m == name)
            .map(|(_, q)| drop_packages(q.clone()))
    }

    fn normalize(&self, path: String) -> String {
        drop_packages(path)
    }

    fn returned(&self, node: Node<'t>) -> Option<(&'t str, Node<'t>)> {
        if node.kind() != "method_declaration" {
            return None;
        }
        let name = self.text(node.field("name")?);
        Some((name, super::flow::single_result(node.field("body")?)?))
    }

    fn is_payload(&self, node: Node<'t>) -> bool {
        let t = self.text(node);
        ["writeValueAsString", "toJson(", "toJSONString"]
            .iter()
            .any(|w| t.contains(w))
    }
}
