//! C#: the shared resolver ([`flow`](super::flow)) over C#'s syntax: `Console` calls (also under
//! `using static System.Console`), writers held in locals and fields, object initializers as
//! named arguments (`new ConsoleTarget { StdErr = true }`), `Console.SetOut(...)` in source
//! order and scope, and method groups passed as callbacks (`items.ForEach(Console.WriteLine)`).

use super::flow::{Call, Engine, Expr, Shape, Syntax};
use super::{Field, FileFacts, text};
use crate::scan::sinks;
use tree_sitter::{Node, Tree};

pub fn analyze(tree: &Tree, src: &str) -> FileFacts {
    let table = sinks::table(super::Lang::CSharp).expect("C# has a sink table");
    let cs = Cs {
        src: src.as_bytes(),
        using_static: src.contains("using static System.Console;"),
    };
    Engine::new(cs, src, table).run(tree.root_node())
}

struct Cs<'t> {
    src: &'t [u8],
    using_static: bool,
}

/// Namespaces written before the names the table knows.
const NAMESPACES: &[&str] = &[
    "global::",
    "System.Diagnostics.",
    "System.IO.",
    "System.",
    "NLog.Targets.",
    "NLog.",
    "log4net.Appender.",
    "log4net.",
];

impl<'t> Cs<'t> {
    fn text(&self, n: Node<'t>) -> &'t str {
        text(n, self.src)
    }

    fn arguments(
        &self,
        list: Option<Node<'t>>,
        out: &mut Vec<(Option<&'t str>, Node<'t>, Node<'t>)>,
    ) {
        let Some(list) = list else { return };
        let mut c = list.walk();
        for a in list
            .named_children(&mut c)
            .filter(|a| a.kind() == "argument")
        {
            let mut k = a.walk();
            let kids: Vec<Node> = a.named_children(&mut k).collect();
            let name_node = a.field("name");
            let name = name_node
                .or_else(|| {
                    kids.iter()
                        .find(|k| k.kind() == "name_colon")
                        .and_then(|nc| nc.named_child(0))
                })
                .map(|n| self.text(n));
            if let Some(value) = kids
                .iter()
                .rev()
                .find(|k| k.kind() != "name_colon" && name_node.is_none_or(|n| n.id() != k.id()))
            {
                out.push((name, *value, a));
            }
        }
    }

    fn call(&self, node: Node<'t>) -> Option<Call<'t>> {
        let mut args = Vec::new();
        match node.kind() {
            "invocation_expression" => {
                let f = node.field("function")?;
                self.arguments(node.field("arguments"), &mut args);
                let (receiver, callee, name) = match f.kind() {
                    "member_access_expression" => {
                        (f.field("expression"), None, self.text(f.field("name")?))
                    }
                    _ => (None, Some(f), self.text(f)),
                };
                let name = name.split('<').next().unwrap_or(name).trim();
                Some(Call {
                    node,
                    receiver,
                    callee,
                    name,
                    args,
                })
            }
            "object_creation_expression" | "implicit_object_creation_expression" => {
                // `StreamWriter w = new(...)`: the type is the declaration's.
                let ty = match node.field("type") {
                    Some(t) => t,
                    None => node
                        .parent()
                        .filter(|d| d.kind() == "variable_declarator")
                        .and_then(|d| d.parent())
                        .filter(|d| d.kind() == "variable_declaration")
                        .and_then(|d| d.field("type"))
                        .filter(|t| self.text(*t) != "var")?,
                };
                let mut c = node.walk();
                let list = node.field("arguments").or_else(|| {
                    node.named_children(&mut c)
                        .find(|k| k.kind() == "argument_list")
                });
                self.arguments(list, &mut args);
                let mut c = node.walk();
                let init = node.field("initializer").or_else(|| {
                    node.named_children(&mut c)
                        .find(|k| k.kind() == "initializer_expression")
                });
                if let Some(init) = init {
                    let mut c = init.walk();
                    for a in init
                        .named_children(&mut c)
                        .filter(|a| a.kind() == "assignment_expression")
                    {
                        if let (Some(l), Some(r)) = (a.field("left"), a.field("right")) {
                            args.push((Some(self.text(l)), r, a));
                        }
                    }
                }
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

impl<'t> Cs<'t> {
    /// `Class.Name` of a static field's declarator.
    fn static_field(&self, declarator: Node<'t>, name: Node<'t>) -> Option<String> {
        let declaration = declarator
            .parent()
            .filter(|p| p.kind() == "variable_declaration")?;
        let field = declaration
            .parent()
            .filter(|p| p.kind() == "field_declaration")?;
        let mut c = field.walk();
        let is_static = field
            .named_children(&mut c)
            .any(|m| m.kind() == "modifier" && matches!(self.text(m), "static" | "const"));
        if !is_static {
            return None;
        }
        let class = field.parent()?.parent()?;
        let class_name = self.text(class.field("name")?);
        Some(format!("{class_name}.{}", self.text(name)))
    }
}

impl<'t> Syntax<'t> for Cs<'t> {
    fn shape(&self, node: Node<'t>) -> Shape<'t> {
        match node.kind() {
            "method_declaration" | "local_function_statement" => {
                let name = node.field("name").map(|n| self.text(n)).unwrap_or("");
                Shape::Scope {
                    function: true,
                    entry: name == "Main",
                }
            }
            "constructor_declaration" => {
                let is_static = self
                    .text(node)
                    .split('(')
                    .next()
                    .unwrap_or("")
                    .contains("static ");
                Shape::Scope {
                    function: true,
                    entry: is_static,
                }
            }
            "lambda_expression" | "anonymous_method_expression" | "accessor_declaration" => {
                Shape::Scope {
                    function: true,
                    entry: false,
                }
            }
            "block" | "class_declaration" | "struct_declaration" | "record_declaration" => {
                Shape::Scope {
                    function: false,
                    entry: false,
                }
            }
            "variable_declarator" => {
                let Some(name) = node.field("name").or_else(|| node.named_child(0)) else {
                    return Shape::Other;
                };
                let mut c = node.walk();
                let value = node
                    .named_children(&mut c)
                    .filter(|k| k.id() != name.id() && k.kind() != "bracketed_argument_list")
                    .last()
                    .map(|v| {
                        if v.kind() == "equals_value_clause" {
                            v.named_child(0).unwrap_or(v)
                        } else {
                            v
                        }
                    });
                // `static readonly TextWriter Out = Console.Out;`: `Holder.Out` anywhere.
                if let (Some(q), Some(v)) = (self.static_field(node, name), value) {
                    return Shape::Static(q, v);
                }
                Shape::Bind(vec![(name, value)])
            }
            "parameter" => match node.field("name") {
                Some(n) => Shape::Bind(vec![(n, None)]),
                None => Shape::Other,
            },
            "assignment_expression" => {
                // Initializer members are the construction's named arguments.
                if node
                    .parent()
                    .is_some_and(|p| p.kind() == "initializer_expression")
                {
                    return Shape::Other;
                }
                match (node.field("left"), node.field("right")) {
                    (Some(l), Some(r))
                        if node.field("operator").is_none_or(|o| self.text(o) == "=") =>
                    {
                        Shape::Assign(l, r)
                    }
                    _ => Shape::Other,
                }
            }
            "invocation_expression"
            | "object_creation_expression"
            | "implicit_object_creation_expression" => match self.call(node) {
                Some(c) => Shape::Call(c),
                None => Shape::Other,
            },
            _ => Shape::Other,
        }
    }

    fn expr(&self, node: Node<'t>) -> Expr<'t> {
        match node.kind() {
            "identifier" | "predefined_type" => Expr::Ident(self.text(node)),
            "generic_name" => node
                .named_child(0)
                .map_or(Expr::Unknown, |n| Expr::Ident(self.text(n))),
            "member_access_expression" => match (node.field("expression"), node.field("name")) {
                (Some(e), Some(n)) if e.kind() == "this_expression" || self.text(e) == "this" => {
                    Expr::Field(self.text(n))
                }
                (Some(e), Some(n)) => Expr::Member(e, self.text(n)),
                _ => Expr::Unknown,
            },
            "qualified_name" => match (node.field("qualifier"), node.field("name")) {
                (Some(q), Some(n)) => Expr::Member(q, self.text(n)),
                _ => Expr::Unknown,
            },
            "alias_qualified_name" => Expr::Path(self.text(node).to_string()),
            "invocation_expression"
            | "object_creation_expression"
            | "implicit_object_creation_expression" => Expr::Call,
            // `v ? Console.Out : Console.Error`: stdout when a branch is.
            "conditional_expression" => Expr::Choice(
                [node.field("consequence"), node.field("alternative")]
                    .into_iter()
                    .flatten()
                    .collect(),
            ),
            "parenthesized_expression" | "await_expression" => {
                node.named_child(0).map_or(Expr::Unknown, Expr::Inner)
            }
            "cast_expression" => node.field("value").map_or(Expr::Unknown, Expr::Inner),
            "string_literal" | "verbatim_string_literal" | "raw_string_literal" => Expr::Str(
                self.text(node)
                    .trim_start_matches('@')
                    .trim_matches('"')
                    .to_string(),
            ),
            "integer_literal" => self.text(node).parse().map_or(Expr::Unknown, Expr::Int),
            "boolean_literal" => Expr::Bool(self.text(node) == "true"),
            "null_literal" => Expr::Null,
            _ => Expr::Unknown,
        }
    }

    fn qualify(&self, name: &str) -> Option<String> {
        let console = [
            "Write",
            "WriteLine",
            "SetOut",
            "Out",
            "Error",
            "OpenStandardOutput",
            "OpenStandardError",
        ];
        (self.using_static && console.contains(&name)).then(|| format!("Console.{name}"))
    }

    fn normalize(&self, path: String) -> String {
        // A namespace on its own (`System.Diagnostics` on the way to
        // `System.Diagnostics.Process`) stays whole.
        if NAMESPACES.iter().any(|ns| {
            ns.strip_suffix('.')
                .is_some_and(|n| n == path || n.ends_with(&format!("::{path}")))
        }) {
            return path;
        }
        let mut p = path.as_str();
        for ns in NAMESPACES {
            if let Some(rest) = p.strip_prefix(ns) {
                p = rest;
            }
        }
        p.to_string()
    }

    fn returned(&self, node: Node<'t>) -> Option<(&'t str, Node<'t>)> {
        if !matches!(
            node.kind(),
            "method_declaration" | "local_function_statement"
        ) {
            return None;
        }
        let name = self.text(node.field("name")?);
        Some((name, super::flow::single_result(node.field("body")?)?))
    }

    fn is_payload(&self, node: Node<'t>) -> bool {
        let t = self.text(node);
        t.contains("JsonSerializer.Serialize") || t.contains("JsonConvert.SerializeObject")
    }
}
