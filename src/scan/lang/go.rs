//! Go: the shared resolver ([`flow`](super::flow)) over Go's syntax. Package names come from
//! the file's imports (aliases and dot-imports included), so a local `fmt` value or another
//! package's `Println` is not mistaken for `fmt`; `:=`, `var` and assignments carry stream
//! facts (`w := bufio.NewWriter(os.Stdout)`), struct literals are constructions with named
//! fields (`exec.Cmd{Stdout: os.Stdout}`, `zap.Config{OutputPaths: ...}`). Go's builtin
//! `print`/`println` write to stderr and are not reported.

use super::flow::{Call, Engine, Expr, Shape, Syntax};
use super::{Field, FileFacts, text};
use crate::scan::sinks;
use std::collections::HashMap;
use tree_sitter::{Node, Tree};

pub fn analyze(tree: &Tree, src: &str) -> FileFacts {
    let table = sinks::table(super::Lang::Go).expect("Go has a sink table");
    let go = Go::new(tree.root_node(), src);
    Engine::new(go, src, table).run(tree.root_node())
}

struct Go<'t> {
    src: &'t [u8],
    /// Local package name → import path.
    packages: HashMap<String, String>,
    /// Import paths imported with `.`.
    dot: Vec<String>,
    /// Types with a method that serializes a JSON message and writes it (`func (f *frameWriter)
    /// WriteMessage(msg *Message) error { b, _ := json.Marshal(msg); f.w.Write(b) ... }`): the
    /// hand-written transport, whose stdout writer is the protocol's own; and functions that
    /// send one such message (`func writeResponse(w io.Writer, id int, result any)`).
    transports: Vec<&'t str>,
    /// Package variables an `init` function sets unconditionally (`out = os.Stderr`), with the
    /// value: init runs before every other function, so the variable holds that value there
    /// (wherever init sits in the file).
    init_sets: HashMap<&'t str, Node<'t>>,
}

impl<'t> Go<'t> {
    fn new(root: Node<'t>, src: &'t str) -> Go<'t> {
        let mut go = Go {
            src: src.as_bytes(),
            packages: HashMap::new(),
            dot: Vec::new(),
            transports: Vec::new(),
            init_sets: HashMap::new(),
        };
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "source_file" | "import_declaration" | "import_spec_list" => {
                    let mut c = n.walk();
                    stack.extend(n.named_children(&mut c));
                }
                "import_spec" => go.import(n),
                "method_declaration" => {
                    if let Some(t) = go.transport_type(n) {
                        go.transports.push(t);
                    }
                }
                "function_declaration" => {
                    if n.field("name").is_some_and(|f| go.text(f) == "init") {
                        go.init_assignments(n);
                    }
                    // A helper that sends one message (`func writeResponse(w *bufio.Writer, id
                    // int, result any) error { b, _ := json.Marshal(...); w.Write(b) ... }`):
                    // stdout handed to it is the protocol channel.
                    if go.sends_json(n)
                        && let Some(name) = n.field("name")
                    {
                        go.transports.push(go.text(name));
                    }
                }
                _ => {}
            }
        }
        go
    }

    fn text(&self, n: Node<'t>) -> &'t str {
        text(n, self.src)
    }

    /// The unconditional `name = value` statements of an `init` function's body.
    fn init_assignments(&mut self, init: Node<'t>) {
        let Some(body) = init.field("body") else {
            return;
        };
        let mut c = body.walk();
        let mut statements: Vec<Node<'t>> = body.named_children(&mut c).collect();
        if let [list] = statements.as_slice()
            && list.kind() == "statement_list"
        {
            let list = *list;
            let mut c = list.walk();
            statements = list.named_children(&mut c).collect();
        }
        for st in statements {
            if st.kind() != "assignment_statement"
                || st.field("operator").is_none_or(|o| self.text(o) != "=")
            {
                continue;
            }
            let left = self.list(st.field("left"));
            let right = self.list(st.field("right"));
            if left.len() != right.len() {
                continue;
            }
            for (l, r) in left.into_iter().zip(right) {
                if l.kind() == "identifier" {
                    self.init_sets.insert(self.text(l), r);
                }
            }
        }
    }

    /// Whether a `var` spec is at the package level.
    fn package_level(&self, spec: Node<'t>) -> bool {
        let mut n = spec.parent();
        while let Some(p) = n {
            match p.kind() {
                "var_spec_list" | "var_declaration" => n = p.parent(),
                "source_file" => return true,
                _ => return false,
            }
        }
        false
    }

    /// The receiver type of a method that sends a JSON-serialized message.
    fn transport_type(&self, method: Node<'t>) -> Option<&'t str> {
        if !self.sends_json(method) {
            return None;
        }
        let receiver = self.text(method.field("receiver")?);
        let ty = receiver
            .trim_matches(['(', ')'])
            .split_whitespace()
            .last()?
            .trim_start_matches('*');
        let ty = ty.split('[').next().unwrap_or(ty);
        Some(ty)
    }

    /// Whether a function or method sends one compact JSON-serialized message: its name and
    /// parameters say so, its body marshals or encodes JSON without indenting.
    fn sends_json(&self, method: Node<'t>) -> bool {
        let Some(body_node) = method.field("body") else {
            return false;
        };
        let body = self.text(body_node);
        // The name and parameters say it sends a protocol message (`WriteMessage(msg
        // *Message)`, `Send(resp Response)`): a JSON log writer (`Write(p []byte)`) is not one.
        let signature = self
            .src
            .get(method.start_byte()..body_node.start_byte())
            .map(|b| String::from_utf8_lossy(b).to_ascii_lowercase())
            .unwrap_or_default();
        let sends = [
            "send", "message", "msg", "frame", "reply", "respon", "notif", "rpc",
        ]
        .iter()
        .any(|w| signature.contains(w));
        sends
            && (body.contains("json.Marshal") || body.contains(".Encode("))
            && !body.contains("Indent")
    }

    fn import(&mut self, spec: Node<'t>) {
        let Some(path) = spec.field("path") else {
            return;
        };
        let path = self.text(path).trim_matches(['"', '`']).to_string();
        match spec.field("name") {
            Some(n) if n.kind() == "dot" => self.dot.push(path),
            Some(n) if n.kind() == "blank_identifier" => {}
            Some(n) => {
                self.packages.insert(self.text(n).to_string(), path);
            }
            None => {
                let mut name = path.rsplit('/').next().unwrap_or(&path);
                // `gopkg.in/yaml.v3` → `yaml`; `github.com/x/y/v2` → `y`.
                if name.len() > 1
                    && name.starts_with('v')
                    && name[1..].chars().all(|c| c.is_ascii_digit())
                {
                    name = path.rsplit('/').nth(1).unwrap_or(name);
                }
                let name = name.split('.').next().unwrap_or(name).to_string();
                self.packages.insert(name, path.clone());
            }
        }
    }

    fn list(&self, n: Option<Node<'t>>) -> Vec<Node<'t>> {
        let Some(n) = n else { return Vec::new() };
        if n.kind() == "expression_list" {
            let mut c = n.walk();
            n.named_children(&mut c)
                .filter(|k| k.kind() != "comment")
                .collect()
        } else {
            vec![n]
        }
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
                        .filter(|a| a.kind() != "comment")
                    {
                        args.push((None, a, a));
                    }
                }
                let (receiver, callee, name) = match f.kind() {
                    "selector_expression" => {
                        (f.field("operand"), None, self.text(f.field("field")?))
                    }
                    _ => (None, Some(f), self.text(f)),
                };
                Some(Call {
                    node,
                    receiver,
                    callee,
                    name,
                    args,
                })
            }
            "composite_literal" => {
                let ty = node.field("type")?;
                let body = node.field("body")?;
                let mut args = Vec::new();
                let mut c = body.walk();
                for el in body.named_children(&mut c) {
                    if el.kind() != "keyed_element" {
                        continue;
                    }
                    let mut k = el.walk();
                    let kids: Vec<Node> = el.named_children(&mut k).collect();
                    let [key, value] = kids.as_slice() else {
                        continue;
                    };
                    let unwrap = |n: Node<'t>| {
                        if n.kind() == "literal_element" {
                            n.named_child(0).unwrap_or(n)
                        } else {
                            n
                        }
                    };
                    args.push((Some(self.text(unwrap(*key))), unwrap(*value), el));
                }
                let name = match ty.kind() {
                    "qualified_type" => self.text(ty.field("name")?),
                    _ => self.text(ty),
                };
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

impl<'t> Syntax<'t> for Go<'t> {
    fn shape(&self, node: Node<'t>) -> Shape<'t> {
        match node.kind() {
            "function_declaration" => {
                let name = node.field("name").map(|n| self.text(n)).unwrap_or("");
                Shape::Scope {
                    function: true,
                    entry: matches!(name, "main" | "init"),
                }
            }
            "method_declaration" | "func_literal" => Shape::Scope {
                function: true,
                entry: false,
            },
            "block" => Shape::Scope {
                function: false,
                entry: false,
            },
            "parameter_declaration" | "variadic_parameter_declaration" => {
                let mut c = node.walk();
                Shape::Bind(
                    node.children_by_field_name("name", &mut c)
                        .map(|n| (n, None))
                        .collect(),
                )
            }
            "short_var_declaration" | "assignment_statement" | "var_spec" | "const_spec" => {
                let (left, right) = if matches!(node.kind(), "var_spec" | "const_spec") {
                    let mut c = node.walk();
                    let names: Vec<Node> = node.children_by_field_name("name", &mut c).collect();
                    (names, self.list(node.field("value")))
                } else {
                    (
                        self.list(node.field("left")),
                        self.list(node.field("right")),
                    )
                };
                let pairs: Vec<(Node, Option<Node>)> = if left.len() == right.len() {
                    left.into_iter().zip(right.into_iter().map(Some)).collect()
                } else {
                    // `logger, err := zap.NewProduction()`: the first name is the call's value.
                    let first = right.first().copied();
                    left.into_iter()
                        .enumerate()
                        .map(|(i, l)| (l, if i == 0 { first } else { None }))
                        .collect()
                };
                if node.kind() == "assignment_statement" {
                    // An assignment, not a declaration: `out = os.Stdout` in a branch sets the
                    // variable of the enclosing block.
                    match pairs.as_slice() {
                        [(l, Some(r))] => Shape::Assign(*l, *r),
                        _ if pairs.iter().all(|(_, r)| r.is_some())
                            || pairs
                                .iter()
                                .any(|(l, r)| r.is_some() && l.kind() != "identifier") =>
                        {
                            Shape::AssignMany(
                                pairs
                                    .into_iter()
                                    .filter_map(|(l, r)| Some((l, r?)))
                                    .collect(),
                            )
                        }
                        _ => Shape::Bind(
                            pairs
                                .into_iter()
                                .filter(|(l, _)| l.kind() == "identifier")
                                .collect(),
                        ),
                    }
                } else {
                    let package = node.kind() == "var_spec" && self.package_level(node);
                    Shape::Bind(
                        pairs
                            .into_iter()
                            .filter(|(l, _)| l.kind() == "identifier")
                            .map(|(l, r)| match self.init_sets.get(self.text(l)) {
                                Some(v) if package => (l, Some(*v)),
                                _ => (l, r),
                            })
                            .collect(),
                    )
                }
            }
            "call_expression" | "composite_literal" => match self.call(node) {
                Some(c) => Shape::Call(c),
                None => Shape::Other,
            },
            _ => Shape::Other,
        }
    }

    fn expr(&self, node: Node<'t>) -> Expr<'t> {
        match node.kind() {
            "identifier" | "package_identifier" | "type_identifier" | "field_identifier" => {
                Expr::Ident(self.text(node))
            }
            "selector_expression" => match (node.field("operand"), node.field("field")) {
                (Some(o), Some(f)) => Expr::Member(o, self.text(f)),
                _ => Expr::Unknown,
            },
            "qualified_type" => match (node.field("package"), node.field("name")) {
                (Some(p), Some(n)) => Expr::Member(p, self.text(n)),
                _ => Expr::Unknown,
            },
            // Conversions and `append` keep their operand's value (`out = append(out, '\n')`
            // after `out, _ := json.Marshal(msg)` is still the serialized message).
            "type_conversion_expression" => {
                node.field("operand").map_or(Expr::Unknown, Expr::Inner)
            }
            "call_expression"
                if node
                    .field("function")
                    .is_some_and(|f| matches!(self.text(f), "append" | "string")) =>
            {
                node.field("arguments")
                    .and_then(|a| a.named_child(0))
                    .map_or(Expr::Unknown, Expr::Inner)
            }
            "call_expression" | "composite_literal" => Expr::Call,
            // A concatenation starts with its left operand: `string(b) + "\n"` is the message,
            // `"got " + string(b)` human text.
            "binary_expression"
                if node
                    .child_by_field_name("operator")
                    .is_some_and(|o| self.text(o) == "+") =>
            {
                node.field("left").map_or(Expr::Unknown, Expr::Inner)
            }
            "parenthesized_expression" => node.named_child(0).map_or(Expr::Unknown, Expr::Inner),
            "unary_expression" => match node.field("operand") {
                Some(o)
                    if matches!(
                        node.field("operator").map(|o| self.text(o)),
                        Some("&" | "*")
                    ) =>
                {
                    Expr::Inner(o)
                }
                _ => Expr::Unknown,
            },
            "interpreted_string_literal" | "raw_string_literal" => {
                Expr::Str(self.text(node).trim_matches(['"', '`']).to_string())
            }
            "int_literal" => self.text(node).parse().map_or(Expr::Unknown, Expr::Int),
            "true" => Expr::Bool(true),
            "false" => Expr::Bool(false),
            "nil" => Expr::Null,
            _ => Expr::Unknown,
        }
    }

    fn qualify(&self, name: &str) -> Option<String> {
        if let Some(p) = self.packages.get(name) {
            return Some(p.clone());
        }
        let table = sinks::table(super::Lang::Go)?;
        self.dot
            .iter()
            .map(|d| format!("{d}.{name}"))
            .find(|q| table.names().any(|n| n == q))
    }

    fn is_payload(&self, node: Node<'t>) -> bool {
        let t = self.text(node);
        t.contains("json.Marshal") || t.contains("Encode(")
    }

    fn globals_hold(&self) -> bool {
        true
    }

    fn is_transport_type(&self, name: &str) -> bool {
        self.transports.contains(&name)
    }

    fn returned(&self, node: Node<'t>) -> Option<(&'t str, Node<'t>)> {
        if node.kind() != "function_declaration" {
            return None;
        }
        let name = self.text(node.field("name")?);
        let mut body = node.field("body")?;
        if let Some(list) = body.named_child(0).filter(|l| l.kind() == "statement_list") {
            body = list;
        }
        let mut c = body.walk();
        let statements: Vec<Node> = body
            .named_children(&mut c)
            .filter(|k| k.kind() != "comment")
            .collect();
        let [ret] = statements.as_slice() else {
            return None;
        };
        if ret.kind() != "return_statement" {
            return None;
        }
        let list = ret.named_child(0)?;
        match self.list(Some(list)).as_slice() {
            [one] => Some((name, *one)),
            _ => None,
        }
    }
}
