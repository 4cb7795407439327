//! Kotlin: the shared resolver ([`flow`](super::flow)) over Kotlin's syntax, with Java's rows
//! (Kotlin calls the same JVM libraries). The stdlib `println`/`print` (unless the file defines
//! its own), `System.out` prints and writes, function references (`forEach(::println)`,
//! `System.out::println`), `System.setOut(...)` in source order and scope, JVM logger
//! appenders, and child processes with `inheritIO()`. `logger.println(...)` is a method call,
//! not the stdlib function.

use super::flow::{Call, Engine, Expr, Shape, Syntax};
use super::java::drop_packages;
use super::{Field, FileFacts, text};
use crate::scan::sinks;
use tree_sitter::{Node, Tree};

pub fn analyze(tree: &Tree, src: &str) -> FileFacts {
    let table = sinks::table(super::Lang::Kotlin).expect("Kotlin has a sink table");
    let kt = Kt::new(tree.root_node(), src);
    Engine::new(kt, src, table).run(tree.root_node())
}

struct Kt<'t> {
    src: &'t [u8],
    /// Functions the file defines itself: they shadow the stdlib's.
    defined: Vec<&'t str>,
}

/// The stdlib functions a bare name reaches.
const STDLIB: &[&str] = &["println", "print"];

impl<'t> Kt<'t> {
    fn new(root: Node<'t>, src: &'t str) -> Kt<'t> {
        let mut kt = Kt {
            src: src.as_bytes(),
            defined: Vec::new(),
        };
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if n.kind() == "function_declaration"
                && let Some(name) = kt.name_of(n)
            {
                kt.defined.push(name);
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        kt
    }

    fn text(&self, n: Node<'t>) -> &'t str {
        text(n, self.src)
    }

    fn name_of(&self, n: Node<'t>) -> Option<&'t str> {
        n.field("name")
            .or_else(|| {
                let mut c = n.walk();
                n.named_children(&mut c)
                    .find(|k| matches!(k.kind(), "identifier" | "simple_identifier"))
            })
            .map(|k| self.text(k))
    }

    /// `receiver.name` (or `receiver?.name`): the receiver and the name's node.
    fn navigation(&self, n: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
        let mut c = n.walk();
        let kids: Vec<Node> = n.named_children(&mut c).collect();
        let recv = *kids.first()?;
        let mut last = *kids.last()?;
        if last.kind() == "navigation_suffix" {
            last = last.named_child(0)?;
        }
        (recv.id() != last.id()).then_some((recv, last))
    }

    fn call(&self, node: Node<'t>) -> Option<Call<'t>> {
        let callee = node.named_child(0)?;
        let mut args = Vec::new();
        let mut c = node.walk();
        for part in node.named_children(&mut c).skip(1) {
            match part.kind() {
                "value_arguments" => {
                    let mut k = part.walk();
                    for a in part
                        .named_children(&mut k)
                        .filter(|a| a.kind() == "value_argument")
                    {
                        let mut j = a.walk();
                        let kids: Vec<Node> = a.named_children(&mut j).collect();
                        let (name, value) = match kids.as_slice() {
                            [n, v]
                                if matches!(n.kind(), "identifier" | "simple_identifier")
                                    && self.text(a).contains('=') =>
                            {
                                (Some(self.text(*n)), *v)
                            }
                            [.., v] => (None, *v),
                            [] => continue,
                        };
                        args.push((name, value, a));
                    }
                }
                "annotated_lambda" | "lambda_literal" => args.push((None, part, part)),
                _ => {}
            }
        }
        match callee.kind() {
            "navigation_expression" => {
                let (recv, name) = self.navigation(callee)?;
                Some(Call {
                    node,
                    receiver: Some(recv),
                    callee: None,
                    name: self.text(name),
                    args,
                })
            }
            _ => Some(Call {
                node,
                receiver: None,
                callee: Some(callee),
                name: self.text(callee),
                args,
            }),
        }
    }
}

impl<'t> Syntax<'t> for Kt<'t> {
    fn shape(&self, node: Node<'t>) -> Shape<'t> {
        match node.kind() {
            "function_declaration" => {
                let top = node.parent().is_some_and(|p| p.kind() == "source_file");
                Shape::Scope {
                    function: true,
                    entry: top && self.name_of(node) == Some("main"),
                }
            }
            "anonymous_initializer" => Shape::Scope {
                function: true,
                entry: false,
            },
            "lambda_literal"
            | "anonymous_function"
            | "secondary_constructor"
            | "getter"
            | "setter" => Shape::Scope {
                function: true,
                entry: false,
            },
            "class_body" | "block" | "function_body" | "statements" => Shape::Scope {
                function: false,
                entry: false,
            },
            "property_declaration" => {
                let mut c = node.walk();
                let kids: Vec<Node> = node.named_children(&mut c).collect();
                let name = kids
                    .iter()
                    .find(|k| k.kind() == "variable_declaration")
                    .and_then(|v| {
                        let mut k = v.walk();
                        v.named_children(&mut k)
                            .find(|x| matches!(x.kind(), "identifier" | "simple_identifier"))
                    });
                let value = kids
                    .iter()
                    .rev()
                    .find(|k| {
                        !matches!(
                            k.kind(),
                            "variable_declaration"
                                | "modifiers"
                                | "type_constraints"
                                | "property_delegate"
                                | "getter"
                                | "setter"
                        ) && !k.kind().ends_with("type")
                    })
                    .copied();
                match name {
                    Some(n) => {
                        Shape::Bind(vec![(n, value.filter(|v| v.start_byte() > n.end_byte()))])
                    }
                    None => Shape::Other,
                }
            }
            "parameter" | "class_parameter" => match self.name_of(node).and_then(|_| {
                let mut c = node.walk();
                node.named_children(&mut c)
                    .find(|k| matches!(k.kind(), "identifier" | "simple_identifier"))
            }) {
                Some(n) => Shape::Bind(vec![(n, None)]),
                None => Shape::Other,
            },
            "assignment" => {
                let mut c = node.walk();
                let kids: Vec<Node> = node.named_children(&mut c).collect();
                match kids.as_slice() {
                    [l, r] if self.text(node).contains('=') => {
                        let l = if l.kind() == "directly_assignable_expression" {
                            l.named_child(0).unwrap_or(*l)
                        } else {
                            *l
                        };
                        Shape::Assign(l, *r)
                    }
                    _ => Shape::Other,
                }
            }
            "call_expression" => match self.call(node) {
                Some(c) => Shape::Call(c),
                None => Shape::Other,
            },
            "callable_reference" => {
                let mut c = node.walk();
                let kids: Vec<Node> = node.named_children(&mut c).collect();
                match kids.as_slice() {
                    [name] => Shape::Reference(None, self.text(*name)),
                    [recv, .., name] => Shape::Reference(Some(*recv), self.text(*name)),
                    [] => Shape::Other,
                }
            }
            _ => Shape::Other,
        }
    }

    fn expr(&self, node: Node<'t>) -> Expr<'t> {
        match node.kind() {
            "identifier" | "simple_identifier" | "type_identifier" => Expr::Ident(self.text(node)),
            "user_type" => {
                let t: String = self.text(node).split_whitespace().collect();
                Expr::Path(t.split('<').next().unwrap_or("").to_string())
            }
            "navigation_expression" => match self.navigation(node) {
                Some((r, n)) if r.kind() == "this_expression" || self.text(r) == "this" => {
                    Expr::Field(self.text(n))
                }
                Some((r, n)) => Expr::Member(r, self.text(n)),
                None => Expr::Unknown,
            },
            "call_expression" => Expr::Call,
            "parenthesized_expression" => node.named_child(0).map_or(Expr::Unknown, Expr::Inner),
            "string_literal" => {
                let t = self.text(node);
                if t.contains('$') {
                    Expr::Unknown
                } else {
                    Expr::Str(t.trim_matches('"').to_string())
                }
            }
            "integer_literal" => self.text(node).parse().map_or(Expr::Unknown, Expr::Int),
            "boolean_literal" => Expr::Bool(self.text(node) == "true"),
            "null" | "null_literal" => Expr::Null,
            _ => match self.text(node) {
                "true" => Expr::Bool(true),
                "false" => Expr::Bool(false),
                "null" => Expr::Null,
                _ => Expr::Unknown,
            },
        }
    }

    fn qualify(&self, name: &str) -> Option<String> {
        (STDLIB.contains(&name) && !self.defined.contains(&name))
            .then(|| format!("kotlin.io.{name}"))
    }

    fn normalize(&self, path: String) -> String {
        drop_packages(path)
    }

    fn is_payload(&self, node: Node<'t>) -> bool {
        let t = self.text(node);
        ["encodeToString", "writeValueAsString", "toJson("]
            .iter()
            .any(|w| t.contains(w))
    }
}
