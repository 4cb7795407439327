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
    /// Functions the file defines itself: they shadow the stdlib's (a class's member
    /// functions shadow nothing outside the class).
    defined: Vec<&'t str>,
    /// The supertypes the file's classes extend (`class ListTools : CliktCommand()`): a bare
    /// call reaches their members (`echo(...)` is `CliktCommand.echo`).
    supertypes: Vec<&'t str>,
}

/// Scope functions whose lambda gets the receiver as `it` (or its one parameter).
const IT_RECEIVER: &[&str] = &["use", "let", "also", "takeIf", "takeUnless"];
/// Scope functions whose lambda gets the receiver as `this`: a bare property assignment in it
/// sets the receiver's property (`ConsoleAppender().apply { target = "System.err" }`).
const THIS_RECEIVER: &[&str] = &["apply", "run"];

/// The stdlib functions a bare name reaches.
const STDLIB: &[&str] = &["println", "print"];

impl<'t> Kt<'t> {
    fn new(root: Node<'t>, src: &'t str) -> Kt<'t> {
        let mut kt = Kt {
            src: src.as_bytes(),
            defined: Vec::new(),
            supertypes: Vec::new(),
        };
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if n.kind() == "function_declaration"
                && n.parent().is_none_or(|p| p.kind() != "class_body")
                && let Some(name) = kt.name_of(n)
            {
                kt.defined.push(name);
            }
            if n.kind() == "delegation_specifier"
                && let Some(t) = kt.user_type_name(n)
            {
                kt.supertypes.push(t);
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        kt
    }

    fn text(&self, n: Node<'t>) -> &'t str {
        text(n, self.src)
    }

    /// The last identifier of the first `user_type` under a node.
    fn user_type_name(&self, n: Node<'t>) -> Option<&'t str> {
        let mut stack = vec![n];
        while let Some(k) = stack.pop() {
            if k.kind() == "user_type" {
                let mut c = k.walk();
                return k
                    .named_children(&mut c)
                    .filter(|x| x.kind() == "identifier")
                    .last()
                    .map(|x| self.text(x));
            }
            let mut c = k.walk();
            let kids: Vec<Node> = k.named_children(&mut c).collect();
            stack.extend(kids.into_iter().rev());
        }
        None
    }

    /// The receiver of the scope function a lambda is passed to (`x.use { ... }` → `x`), if
    /// the function is one of `names`.
    fn scope_receiver(&self, lambda: Node<'t>, names: &[&str]) -> Option<Node<'t>> {
        let annotated = lambda.parent().filter(|p| p.kind() == "annotated_lambda")?;
        let call = annotated
            .parent()
            .filter(|p| p.kind() == "call_expression")?;
        let callee = call.named_child(0)?;
        if callee.kind() != "navigation_expression" {
            return None;
        }
        let (recv, name) = self.navigation(callee)?;
        names.contains(&self.text(name)).then_some(recv)
    }

    /// Whether an enclosing class declares a member function of the identifier's name.
    fn member_of_class(&self, ident: Node<'t>) -> bool {
        let name = self.text(ident);
        let mut n = ident.parent();
        for _ in 0..256 {
            let Some(p) = n else { return false };
            if p.kind() == "class_body" {
                let mut c = p.walk();
                if p.named_children(&mut c)
                    .any(|m| m.kind() == "function_declaration" && self.name_of(m) == Some(name))
                {
                    return true;
                }
            }
            n = p.parent();
        }
        false
    }

    /// The innermost lambda around a node, within its function.
    fn enclosing_lambda(&self, mut n: Node<'t>) -> Option<Node<'t>> {
        // A bounded climb: deeper nesting is no scope function's lambda worth following.
        for _ in 0..256 {
            let p = n.parent()?;
            match p.kind() {
                "lambda_literal" => return Some(p),
                "function_declaration" | "class_body" | "source_file" => return None,
                _ => n = p,
            }
        }
        None
    }

    /// The qualified name of a singleton member declared by a property (`object Console {
    /// val stream = ... }` → `Console.stream`; a companion object's → `Outer.stream`).
    fn static_name(&self, property: Node<'t>, name: Node<'t>) -> Option<String> {
        let body = property.parent().filter(|p| p.kind() == "class_body")?;
        let owner = body.parent()?;
        let owner_name = match owner.kind() {
            "object_declaration" => self.name_of(owner)?,
            "companion_object" => {
                let class = owner.parent()?.parent()?;
                if class.kind() != "class_declaration" {
                    return None;
                }
                self.name_of(class)?
            }
            _ => return None,
        };
        Some(format!("{owner_name}.{}", self.text(name)))
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

/// Whether a property's value comes after its name (not the type or a modifier).
fn n_after(value: &Node, name: Option<Node>) -> bool {
    name.is_none_or(|n| value.start_byte() > n.end_byte())
}

impl<'t> Syntax<'t> for Kt<'t> {
    fn shape(&self, node: Node<'t>) -> Shape<'t> {
        match node.kind() {
            "function_declaration" => {
                // `main` at the top, or `@JvmStatic fun main` in an object or a companion.
                let top = node.parent().is_some_and(|p| {
                    p.kind() == "source_file"
                        || (p.kind() == "class_body"
                            && p.parent().is_some_and(|o| {
                                matches!(o.kind(), "object_declaration" | "companion_object")
                            }))
                });
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
                let value = value.filter(|v| n_after(v, name));
                match name {
                    Some(n) => match (self.static_name(node, n), value) {
                        (Some(q), Some(v)) => Shape::Static(q, v),
                        _ => Shape::Bind(vec![(n, value)]),
                    },
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
            "lambda_parameters" => {
                let mut c = node.walk();
                let params: Vec<Node> = node
                    .named_children(&mut c)
                    .filter_map(|v| {
                        let mut k = v.walk();
                        v.named_children(&mut k).find(|x| x.kind() == "identifier")
                    })
                    .collect();
                let recv = node
                    .parent()
                    .and_then(|l| self.scope_receiver(l, IT_RECEIVER));
                match params.as_slice() {
                    [one] => Shape::Bind(vec![(*one, recv)]),
                    many => Shape::Bind(many.iter().map(|p| (*p, None)).collect()),
                }
            }
            // `System.out::println` parses as a navigation with `::`.
            "navigation_expression" => match self.navigation(node) {
                Some((recv, name))
                    if self
                        .src
                        .get(recv.end_byte()..name.start_byte())
                        .is_some_and(|b| b.windows(2).any(|w| w == b"::")) =>
                {
                    Shape::Reference(Some(recv), self.text(name))
                }
                _ => Shape::Other,
            },
            "callable_reference" => {
                let mut c = node.walk();
                let kids: Vec<Node> = node.named_children(&mut c).collect();
                match kids.as_slice() {
                    // `::println` in a class with its own `println` is the member.
                    [name] if self.member_of_class(*name) => Shape::Other,
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
            "identifier" if self.text(node) == "it" => {
                match self
                    .enclosing_lambda(node)
                    .filter(|l| {
                        l.named_child(0)
                            .is_none_or(|k| k.kind() != "lambda_parameters")
                    })
                    .and_then(|l| self.scope_receiver(l, IT_RECEIVER))
                {
                    Some(recv) => Expr::Inner(recv),
                    None => Expr::Ident("it"),
                }
            }
            "identifier"
                if node.parent().is_some_and(|p| {
                    p.kind() == "directly_assignable_expression"
                        || (p.kind() == "assignment"
                            && p.named_child(0).is_some_and(|l| l.id() == node.id()))
                }) =>
            {
                // `target = x` inside `receiver.apply { ... }` sets the receiver's property.
                match self
                    .enclosing_lambda(node)
                    .and_then(|l| self.scope_receiver(l, THIS_RECEIVER))
                {
                    Some(recv) => Expr::Member(recv, self.text(node)),
                    None => Expr::Ident(self.text(node)),
                }
            }
            // Inside a class that declares its own `println`, a bare call is the member.
            "identifier" if STDLIB.contains(&self.text(node)) && self.member_of_class(node) => {
                Expr::Unknown
            }
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
            // `if (v) System.out else System.err`, `when { ... }`: stdout when a branch is.
            "if_expression" => {
                let cond = node.field("condition").map(|c| c.id());
                let mut c = node.walk();
                Expr::Choice(
                    node.named_children(&mut c)
                        .filter(|k| Some(k.id()) != cond && !k.kind().contains("comment"))
                        .collect(),
                )
            }
            "when_expression" => {
                let mut c = node.walk();
                let entries: Vec<Node> = node
                    .named_children(&mut c)
                    .filter(|k| k.kind() == "when_entry")
                    .collect();
                Expr::Choice(
                    entries
                        .into_iter()
                        .filter_map(|e| {
                            let mut c = e.walk();
                            e.named_children(&mut c)
                                .filter(|k| !k.kind().contains("comment"))
                                .last()
                                .filter(|b| Some(b.id()) != e.field("condition").map(|c| c.id()))
                        })
                        .collect(),
                )
            }
            // A branch's block results in its last statement.
            "block" => {
                let mut c = node.walk();
                node.named_children(&mut c)
                    .filter(|k| !k.kind().contains("comment"))
                    .last()
                    .map_or(Expr::Unknown, Expr::Inner)
            }
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
        if self.defined.contains(&name) {
            return None;
        }
        if STDLIB.contains(&name) {
            return Some(format!("kotlin.io.{name}"));
        }
        let table = sinks::table(super::Lang::Kotlin)?;
        self.supertypes
            .iter()
            .map(|t| format!("{t}.{name}"))
            .find(|q| table.sink(q).is_some())
    }

    fn normalize(&self, path: String) -> String {
        drop_packages(path)
    }

    fn passes_through(&self, name: &str) -> bool {
        IT_RECEIVER.contains(&name) || THIS_RECEIVER.contains(&name) || name == "with"
    }

    fn implicit_receiver(&self, call: &Call<'t>) -> Option<(Node<'t>, Node<'t>)> {
        let (value, lambda) = match (call.receiver, call.name) {
            // `with(x) { ... }` parses as the call `with(x)` called with a trailing lambda;
            // `with(x, { ... })` as one call.
            (None, _) => {
                let inner = call
                    .callee
                    .filter(|c| c.kind() == "call_expression")
                    .and_then(|c| self.call(c));
                let (outer, args) = match &inner {
                    Some(i) if i.name == "with" && i.receiver.is_none() => (true, &i.args),
                    _ if call.name == "with" => (false, &call.args),
                    _ => return None,
                };
                let mut positional = args.iter().filter(|(n, _, _)| n.is_none());
                let value = positional.next()?.1;
                let lambda = if outer {
                    call.args.last()?.1
                } else {
                    positional.next()?.1
                };
                (value, lambda)
            }
            (Some(r), name) if THIS_RECEIVER.contains(&name) => (r, call.args.last()?.1),
            _ => return None,
        };
        let lambda = match lambda.kind() {
            "lambda_literal" => lambda,
            "annotated_lambda" => {
                let mut c = lambda.walk();
                lambda
                    .named_children(&mut c)
                    .find(|k| k.kind() == "lambda_literal")?
            }
            _ => return None,
        };
        (value.id() != lambda.id()).then_some((value, lambda))
    }

    fn returned(&self, node: Node<'t>) -> Option<(&'t str, Node<'t>)> {
        if node.kind() != "function_declaration" {
            return None;
        }
        let name = self.name_of(node)?;
        let mut c = node.walk();
        let body = node
            .named_children(&mut c)
            .find(|k| k.kind() == "function_body")?;
        Some((name, super::flow::single_result(body)?))
    }

    fn is_payload(&self, node: Node<'t>) -> bool {
        let t = self.text(node);
        ["encodeToString", "writeValueAsString", "toJson("]
            .iter()
            .any(|w| t.contains(w))
    }
}
