//! JavaScript, TypeScript and TSX: stdout writes found by name resolution.
//!
//! Pass 1 builds the scopes (program, functions, blocks, classes, catch clauses) with every
//! binding: imports and `require` (named, default, namespace, destructured), declarations (kept
//! as the value expression; `const { log } = console` as a member of it), parameters (their
//! default), and `console.log = ...` style overrides. Pass 2 resolves every call and `new` to a
//! qualified name (`console.log`, `process.stdout.write`, `fs.writeSync`, `pino`), so a local or
//! parameter named `console`, `obj.console.log()`, TS casts (`(console as any).log`), optional
//! chaining and aliases all come out right. Strings, templates, JSX text and comments are never
//! code, so they never match.

use super::{FastMap, Field, FileFacts, Finding, snippet};
use crate::catalog::Rule;
use crate::catalog::scan::{
    STATIC_CONSOLE_LOG, STATIC_PRINT_CALL, STATIC_STDOUT_INHERIT, STATIC_STDOUT_LOGGER,
    STATIC_STDOUT_REDIRECT, STATIC_STDOUT_WRITE,
};
use tree_sitter::{Node, Tree};

const MAX_DEPTH: u32 = 12;

pub fn analyze(tree: &Tree, src: &str) -> FileFacts {
    let mut js = Js::new(src);
    js.collect(tree.root_node());
    js.attach_reassignments();
    js.attach_overrides();
    js.check(tree.root_node());
    js.facts
}

#[derive(Clone, Debug)]
enum Def<'t> {
    Import(String),
    Value(Node<'t>),
    /// `const { name } = value`: the `name` member of the value.
    Member(Node<'t>, String),
    Opaque,
}

#[derive(Clone, Debug)]
struct Binding<'t> {
    pos: usize,
    def: Def<'t>,
    scope: usize,
}

struct Scope<'t> {
    parent: Option<usize>,
    function: bool,
    /// A class body: `this.x` in its methods is looked up here.
    class: bool,
    /// The function's name (`function send`, `send(msg) {}`, `const send = (msg) => ...`).
    name: Option<&'t str>,
    bindings: FastMap<&'t str, Vec<Binding<'t>>>,
}

#[derive(Clone, Debug, PartialEq)]
enum Val<'t> {
    Path(String),
    Int(i64),
    Str(String),
    Bool(bool),
    None,
    /// An object or array literal, for option checks.
    Lit(Node<'t>),
    Unknown,
}

impl Val<'_> {
    fn path(&self) -> Option<&str> {
        match self {
            Val::Path(p) => Some(p),
            _ => None,
        }
    }
}

/// Console methods that print to stdout in Node.js.
const CONSOLE_STDOUT: &[&str] = &[
    "log",
    "info",
    "debug",
    "table",
    "dir",
    "dirxml",
    "group",
    "groupCollapsed",
    "count",
    "timeEnd",
    "timeLog",
];

fn console_method(path: &str) -> Option<&str> {
    let m = path.strip_prefix("console.")?;
    CONSOLE_STDOUT.contains(&m).then_some(m)
}

/// A function value that writes to stdout when called.
fn is_writer_function(path: &str) -> bool {
    console_method(path).is_some()
        || matches!(path, "process.stdout.write" | "util.log" | "util.print")
}

fn normalize_module(m: &str) -> String {
    let m = m.strip_prefix("node:").unwrap_or(m);
    match m {
        "fs/promises" => "fs.promises".into(),
        "child_process" | "process" | "console" | "util" | "fs" | "os" | "readline" => m.into(),
        other => other.replace('/', "."),
    }
}

/// Collapses equivalent spellings of the same export.
fn normalize_path(p: String) -> String {
    for prefix in ["globalThis.", "global.", "window.", "self."] {
        if let Some(rest) = p.strip_prefix(prefix)
            && (rest.starts_with("console") || rest.starts_with("process"))
        {
            return normalize_path(rest.to_string());
        }
    }
    for (from, to) in [
        ("pino.pino", "pino"),
        ("pino.default", "pino"),
        ("execa.execa", "execa"),
        ("winston.default", "winston"),
        ("bunyan.default", "bunyan"),
        ("console.default", "console"),
        ("process.default", "process"),
        ("fs.default", "fs"),
        ("child_process.default", "child_process"),
        ("util.default", "util"),
    ] {
        if p == from {
            return to.to_string();
        }
        if let Some(rest) = p.strip_prefix(from)
            && rest.starts_with('.')
        {
            return format!("{to}{rest}");
        }
    }
    p
}

struct Js<'t> {
    src: &'t [u8],
    text: &'t str,
    scopes: Vec<Scope<'t>>,
    scope_of: FastMap<usize, usize>,
    overrides: FastMap<String, Vec<Binding<'t>>>,
    /// Member assignments seen in pass 1: (target, value, scope, position).
    pending_overrides: Vec<(Node<'t>, Node<'t>, usize, usize)>,
    /// `this.x = value` and class fields: (class body scope, name) → bindings.
    this_attrs: FastMap<(usize, String), Vec<Binding<'t>>>,
    /// `x = value` for names declared elsewhere: (name node, value, scope of the assignment).
    reassigned: Vec<(Node<'t>, Node<'t>, usize)>,
    facts: FileFacts,
    /// Nodes pass 2 checks, with their parent and scope, in document order.
    todo: Vec<(Node<'t>, Option<Node<'t>>, usize)>,
    /// How deep `bind_pattern` is in nested destructuring patterns.
    pattern_depth: u32,
}

/// Destructuring nested deeper than this binds nothing further: it bounds the recursion (a
/// pattern nested a hundred thousand deep must not overflow the stack).
const MAX_PATTERN_DEPTH: u32 = 256;

fn unwrap_expr(mut node: Node) -> Node {
    loop {
        match node.kind() {
            "parenthesized_expression"
            | "as_expression"
            | "non_null_expression"
            | "satisfies_expression"
            | "type_assertion"
            | "await_expression" => {
                // The expression is the first named child that is not a type.
                let mut c = node.walk();
                let inner = node.named_children(&mut c).find(|n| {
                    !n.kind().ends_with("type")
                        && n.kind() != "type_arguments"
                        && n.kind() != "type_identifier"
                        && n.kind() != "predefined_type"
                });
                match inner {
                    Some(i) => node = i,
                    None => return node,
                }
            }
            _ => return node,
        }
    }
}

impl<'t> Js<'t> {
    fn new(text: &'t str) -> Js<'t> {
        let src = text.as_bytes();
        Js {
            src,
            text,
            scopes: vec![Scope {
                parent: None,
                function: true,
                class: false,
                name: None,
                bindings: FastMap::default(),
            }],
            scope_of: FastMap::default(),
            overrides: FastMap::default(),
            pending_overrides: Vec::new(),
            this_attrs: FastMap::default(),
            reassigned: Vec::new(),
            facts: FileFacts::default(),
            todo: Vec::new(),
            pattern_depth: 0,
        }
    }

    fn text(&self, node: Node<'t>) -> &'t str {
        // One validation per file, then O(1) boundary checks per node.
        self.text.get(node.byte_range()).unwrap_or("")
    }

    // ------------------------------------------------------------------------------ pass 1

    fn bind(&mut self, scope: usize, name: Node<'t>, def: Def<'t>, eval: usize) {
        let key = self.text(name);
        if key.is_empty() {
            return;
        }
        self.scopes[scope]
            .bindings
            .entry(key)
            .or_default()
            .push(Binding {
                pos: name.start_byte(),
                def,
                scope: eval,
            });
    }

    fn function_scope(&self, mut scope: usize) -> usize {
        while !self.scopes[scope].function {
            scope = self.scopes[scope].parent.unwrap_or(0);
        }
        scope
    }

    fn new_scope(&mut self, node: Node<'t>, parent: usize, function: bool) -> usize {
        self.scopes.push(Scope {
            parent: Some(parent),
            function,
            class: node.kind() == "class_body",
            name: None,
            bindings: FastMap::default(),
        });
        let id = self.scopes.len() - 1;
        self.scope_of.insert(node.id(), id);
        id
    }

    /// Binds a destructuring pattern; `source` is the value being destructured, if known.
    fn bind_pattern(
        &mut self,
        scope: usize,
        pattern: Node<'t>,
        source: Option<Node<'t>>,
        eval: usize,
    ) {
        if self.pattern_depth >= MAX_PATTERN_DEPTH {
            return;
        }
        self.pattern_depth += 1;
        self.bind_pattern_parts(scope, pattern, source, eval);
        self.pattern_depth -= 1;
    }

    fn bind_pattern_parts(
        &mut self,
        scope: usize,
        pattern: Node<'t>,
        source: Option<Node<'t>>,
        eval: usize,
    ) {
        match pattern.kind() {
            "identifier" => {
                let def = source.map(Def::Value).unwrap_or(Def::Opaque);
                self.bind(scope, pattern, def, eval);
            }
            "object_pattern" => {
                let mut c = pattern.walk();
                let props: Vec<Node> = pattern.named_children(&mut c).collect();
                for p in props {
                    match p.kind() {
                        "shorthand_property_identifier_pattern" => {
                            let def = match source {
                                Some(s) => Def::Member(s, self.text(p).to_string()),
                                None => Def::Opaque,
                            };
                            self.bind(scope, p, def, eval);
                        }
                        "object_assignment_pattern" => {
                            if let Some(left) = p.field("left") {
                                if left.kind() == "shorthand_property_identifier_pattern" {
                                    let def = match source {
                                        Some(s) => Def::Member(s, self.text(left).to_string()),
                                        None => Def::Opaque,
                                    };
                                    self.bind(scope, left, def, eval);
                                } else {
                                    self.bind_pattern(scope, left, None, eval);
                                }
                            }
                        }
                        "pair_pattern" => {
                            let key = p.field("key");
                            let mut value = p.field("value");
                            if let Some(v) = value
                                && v.kind() == "assignment_pattern"
                            {
                                value = v.field("left");
                            }
                            if let (Some(k), Some(v)) = (key, value) {
                                let key_text = match k.kind() {
                                    "property_identifier" => Some(self.text(k).to_string()),
                                    "string" => self.string_value(k),
                                    _ => None,
                                };
                                if v.kind() == "identifier" {
                                    let def = match (source, key_text) {
                                        (Some(s), Some(kt)) => Def::Member(s, kt),
                                        _ => Def::Opaque,
                                    };
                                    self.bind(scope, v, def, eval);
                                } else {
                                    self.bind_pattern(scope, v, None, eval);
                                }
                            }
                        }
                        _ => self.bind_pattern(scope, p, None, eval),
                    }
                }
            }
            "assignment_pattern" => {
                if let (Some(left), Some(right)) = (pattern.field("left"), pattern.field("right")) {
                    // A parameter default: the value when the caller passes nothing.
                    self.bind_pattern(scope, left, source.or(Some(right)), eval);
                }
            }
            _ => {
                let mut c = pattern.walk();
                let kids: Vec<Node> = pattern.named_children(&mut c).collect();
                for k in kids {
                    if matches!(
                        k.kind(),
                        "identifier"
                            | "object_pattern"
                            | "array_pattern"
                            | "rest_pattern"
                            | "assignment_pattern"
                            | "shorthand_property_identifier_pattern"
                    ) {
                        self.bind_pattern(scope, k, None, eval);
                    }
                }
            }
        }
    }

    fn bind_params(&mut self, params: Node<'t>, inner: usize, outer: usize) {
        if params.kind() == "identifier" {
            self.bind(inner, params, Def::Opaque, inner);
            return;
        }
        let mut c = params.walk();
        let list: Vec<Node> = params.named_children(&mut c).collect();
        for p in list {
            match p.kind() {
                "required_parameter" | "optional_parameter" => {
                    let Some(pat) = p.field("pattern") else {
                        continue;
                    };
                    let default = p.field("value");
                    if pat.kind() == "identifier" {
                        let def = default.map(Def::Value).unwrap_or(Def::Opaque);
                        self.bind(inner, pat, def, outer);
                    } else {
                        self.bind_pattern(inner, pat, None, outer);
                    }
                }
                "assignment_pattern" => {
                    if let (Some(left), Some(right)) = (p.field("left"), p.field("right")) {
                        if left.kind() == "identifier" {
                            self.bind(inner, left, Def::Value(right), outer);
                        } else {
                            self.bind_pattern(inner, left, None, outer);
                        }
                    }
                }
                _ => self.bind_pattern(inner, p, None, outer),
            }
        }
    }

    fn collect(&mut self, root: Node<'t>) {
        super::walk(root, 0, |node, parent, scope| {
            // Pass 2 only looks at these nodes: remember them instead of walking again.
            if matches!(
                node.kind(),
                "call_expression" | "new_expression" | "assignment_expression"
            ) {
                self.todo.push((node, parent, scope));
            }
            self.collect_node(node, parent, scope)
        });
    }

    /// Pass 1 for one node; returns the scope of its children.
    fn collect_node(&mut self, node: Node<'t>, parent: Option<Node<'t>>, scope: usize) -> usize {
        {
            let mut child_scope = scope;
            match node.kind() {
                "function_declaration" | "generator_function_declaration" => {
                    if let Some(name) = node.field("name") {
                        self.bind(scope, name, Def::Opaque, scope);
                    }
                    let inner = self.new_scope(node, scope, true);
                    self.scopes[inner].name = node.field("name").map(|n| self.text(n));
                    if let Some(p) = node.field("parameters") {
                        self.bind_params(p, inner, scope);
                    }
                    child_scope = inner;
                }
                "function_expression"
                | "function"
                | "generator_function"
                | "arrow_function"
                | "method_definition" => {
                    let inner = self.new_scope(node, scope, true);
                    // Its own name, or the variable or property it is assigned to.
                    let named = node.field("name").or_else(|| {
                        parent.and_then(|p| match p.kind() {
                            "variable_declarator" => p.field("name"),
                            "pair" => p.field("key"),
                            _ => None,
                        })
                    });
                    self.scopes[inner].name = named.map(|n| self.text(n));
                    if node.kind() != "method_definition"
                        && let Some(name) = node.field("name")
                    {
                        self.bind(inner, name, Def::Opaque, inner);
                    }
                    if let Some(p) = node.field("parameters").or_else(|| node.field("parameter")) {
                        self.bind_params(p, inner, scope);
                    }
                    child_scope = inner;
                }
                "class_declaration" | "abstract_class_declaration" => {
                    if let Some(name) = node.field("name") {
                        self.bind(scope, name, Def::Opaque, scope);
                    }
                    child_scope = self.new_scope(node, scope, false);
                }
                "statement_block" | "for_statement" | "for_in_statement" | "class_body"
                | "switch_body" | "class_static_block" => {
                    child_scope = self.new_scope(node, scope, false);
                    if node.kind() == "for_in_statement"
                        && let Some(left) = node.field("left")
                    {
                        self.bind_pattern(child_scope, left, None, child_scope);
                    }
                }
                "catch_clause" => {
                    child_scope = self.new_scope(node, scope, false);
                    if let Some(p) = node.field("parameter") {
                        self.bind_pattern(child_scope, p, None, child_scope);
                    }
                }
                "variable_declarator" => {
                    let is_var = parent.is_some_and(|p| p.kind() == "variable_declaration");
                    let target = if is_var {
                        self.function_scope(scope)
                    } else {
                        scope
                    };
                    if let Some(name) = node.field("name") {
                        let value = node.field("value");
                        self.bind_pattern(target, name, value, scope);
                    }
                }
                "import_statement" => self.collect_import(node, scope),
                "field_definition" | "public_field_definition" => {
                    let name = node.field("property").or_else(|| node.field("name"));
                    if let (Some(name), Some(value)) = (name, node.field("value"))
                        && self.scopes[scope].class
                    {
                        let key = (scope, self.text(name).to_string());
                        self.this_attrs.entry(key).or_default().push(Binding {
                            pos: node.start_byte(),
                            def: Def::Value(value),
                            scope,
                        });
                    }
                }
                "assignment_expression" => {
                    if let (Some(left), Some(right)) = (node.field("left"), node.field("right")) {
                        match left.kind() {
                            "identifier" => self.reassigned.push((left, right, scope)),
                            "member_expression" if self.this_member(left, scope).is_some() => {
                                if let Some(key) = self.this_member(left, scope) {
                                    self.this_attrs.entry(key).or_default().push(Binding {
                                        pos: node.start_byte(),
                                        def: Def::Value(right),
                                        scope,
                                    });
                                }
                            }
                            "member_expression" | "subscript_expression" => {
                                // Resolved once every binding is known (`attach_overrides`).
                                self.pending_overrides.push((
                                    left,
                                    right,
                                    scope,
                                    node.start_byte(),
                                ));
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            child_scope
        }
    }

    fn collect_import(&mut self, node: Node<'t>, scope: usize) {
        let Some(source) = node.field("source") else {
            // `import x = require('y')`
            let mut c = node.walk();
            let clause = node
                .named_children(&mut c)
                .find(|n| n.kind() == "import_require_clause");
            if let Some(clause) = clause {
                let name = clause.named_child(0);
                let src = clause.field("source");
                if let (Some(name), Some(src)) = (name, src)
                    && let Some(m) = self.string_value(src)
                {
                    self.bind(scope, name, Def::Import(normalize_module(&m)), scope);
                }
            }
            return;
        };
        let Some(module) = self.string_value(source) else {
            return;
        };
        let module = normalize_module(&module);
        let mut c = node.walk();
        let clause = node
            .named_children(&mut c)
            .find(|n| n.kind() == "import_clause");
        let Some(clause) = clause else { return };
        let mut c = clause.walk();
        let parts: Vec<Node> = clause.named_children(&mut c).collect();
        for part in parts {
            match part.kind() {
                "identifier" => self.bind(scope, part, Def::Import(module.clone()), scope),
                "namespace_import" => {
                    if let Some(id) = part.named_child(0) {
                        self.bind(scope, id, Def::Import(module.clone()), scope);
                    }
                }
                "named_imports" => {
                    let mut c = part.walk();
                    let specs: Vec<Node> = part.named_children(&mut c).collect();
                    for spec in specs {
                        if spec.kind() != "import_specifier" {
                            continue;
                        }
                        let Some(name) = spec.field("name") else {
                            continue;
                        };
                        let alias = spec.field("alias").unwrap_or(name);
                        let imported = if name.kind() == "string" {
                            self.string_value(name).unwrap_or_default()
                        } else {
                            self.text(name).to_string()
                        };
                        let path = normalize_path(format!("{module}.{imported}"));
                        self.bind(scope, alias, Def::Import(path), scope);
                    }
                }
                _ => {}
            }
        }
    }

    /// `this.name` inside a class: the class body scope and the property name.
    fn this_member(&self, node: Node<'t>, scope: usize) -> Option<(usize, String)> {
        let obj = node.field("object")?;
        if obj.kind() != "this" {
            return None;
        }
        let prop = self.text(node.field("property")?).to_string();
        let mut s = scope;
        loop {
            if self.scopes[s].class {
                return Some((s, prop));
            }
            s = self.scopes[s].parent?;
        }
    }

    fn attach_reassignments(&mut self) {
        let list = std::mem::take(&mut self.reassigned);
        for (name, value, scope) in list {
            let key = self.text(name);
            let mut s = scope;
            let target = loop {
                if self.scopes[s].bindings.contains_key(key) {
                    break Some(s);
                }
                match self.scopes[s].parent {
                    Some(p) => s = p,
                    None => break None,
                }
            };
            // An undeclared name assigned at the top is an implicit global.
            let target = target.unwrap_or(0);
            self.bind(target, name, Def::Value(value), scope);
        }
    }

    /// The spelled-out path of an assignment target rooted in a global (`console.log`,
    /// `process.stdout.write`); `None` when its root is a local (a parameter named `console`).
    fn static_path(&self, node: Node<'t>, scope: usize) -> Option<String> {
        // Iterative and capped: a chain of a million members must neither overflow the stack
        // nor cost quadratic time.
        let mut parts = Vec::new();
        let mut node = node;
        loop {
            let n = unwrap_expr(node);
            match n.kind() {
                "identifier" => {
                    let name = self.text(n);
                    if self.lookup(name, scope, n.start_byte()).is_some() {
                        return None;
                    }
                    break parts.push(name.to_string());
                }
                "member_expression" | "subscript_expression"
                    if parts.len() >= super::MAX_PATH_PARTS =>
                {
                    return None;
                }
                "member_expression" => {
                    let obj = n.field("object")?;
                    parts.push(self.text(n.field("property")?).to_string());
                    node = obj;
                }
                "subscript_expression" => {
                    let obj = n.field("object")?;
                    parts.push(self.string_value(n.field("index")?)?);
                    node = obj;
                }
                _ => return None,
            }
        }
        parts.reverse();
        Some(parts.join("."))
    }

    /// `console.log = ...` and friends, once every binding is known.
    fn attach_overrides(&mut self) {
        for (left, right, scope, pos) in std::mem::take(&mut self.pending_overrides) {
            if let Some(path) = self.static_path(left, scope) {
                self.overrides
                    .entry(normalize_path(path))
                    .or_default()
                    .push(Binding {
                        pos,
                        def: Def::Value(right),
                        scope,
                    });
            }
        }
    }

    // ------------------------------------------------------------------------------ lookup

    fn lookup(&self, name: &str, scope: usize, pos: usize) -> Option<&Binding<'t>> {
        let mut s = scope;
        loop {
            let sc = &self.scopes[s];
            if let Some(list) = sc.bindings.get(name) {
                // Declarations are hoisted (var, function) or in their dead zone (let, const):
                // either way the name is this binding everywhere in the scope.
                return list
                    .iter()
                    .rev()
                    .find(|b| b.pos < pos)
                    .or_else(|| list.first());
            }
            s = sc.parent?;
        }
    }

    fn string_value(&self, node: Node<'t>) -> Option<String> {
        match node.kind() {
            "string" => {
                let mut out = String::new();
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    match child.kind() {
                        "string_fragment" | "escape_sequence" => out.push_str(self.text(child)),
                        _ => {}
                    }
                }
                Some(out)
            }
            "template_string" => {
                let mut out = String::new();
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    match child.kind() {
                        "string_fragment" | "escape_sequence" => out.push_str(self.text(child)),
                        "template_substitution" => return None,
                        _ => {}
                    }
                }
                Some(out)
            }
            _ => None,
        }
    }

    fn resolve(&self, node: Node<'t>, scope: usize, depth: u32) -> Val<'t> {
        if depth > MAX_DEPTH {
            return Val::Unknown;
        }
        let node = unwrap_expr(node);
        let val = match node.kind() {
            "identifier" => {
                let name = self.text(node);
                match self.lookup(name, scope, node.start_byte()) {
                    Some(b) => match &b.def {
                        Def::Import(p) => Val::Path(p.clone()),
                        Def::Value(v) => {
                            if v.byte_range().contains(&node.start_byte()) {
                                return Val::Unknown;
                            }
                            self.resolve(*v, b.scope, depth + 1)
                        }
                        Def::Member(v, m) => match self.resolve(*v, b.scope, depth + 1) {
                            Val::Path(p) => Val::Path(normalize_path(format!("{p}.{m}"))),
                            Val::Lit(obj) => self.member_of_literal(obj, m, b.scope, depth),
                            _ => Val::Unknown,
                        },
                        Def::Opaque => Val::Unknown,
                    },
                    None => match name {
                        "console" | "process" | "globalThis" | "global" | "window" | "self"
                        | "require" | "JSON" | "Bun" | "Deno" => Val::Path(name.to_string()),
                        "Console" => Val::Path("console.Console".into()),
                        "undefined" => Val::None,
                        _ => Val::Unknown,
                    },
                }
            }
            "member_expression" | "subscript_expression" => {
                let Some(obj) = node.field("object") else {
                    return Val::Unknown;
                };
                let prop = if node.kind() == "member_expression" {
                    node.field("property").map(|p| self.text(p).to_string())
                } else {
                    node.field("index")
                        .and_then(|i| match self.resolve(i, scope, depth + 1) {
                            Val::Str(s) => Some(s),
                            _ => None,
                        })
                };
                let Some(prop) = prop else {
                    return Val::Unknown;
                };
                if let Some(key) = self.this_member(node, scope) {
                    let Some(b) = self.this_attrs.get(&key).and_then(|l| l.last()) else {
                        return Val::Unknown;
                    };
                    return match b.def {
                        Def::Value(v) if !v.byte_range().contains(&node.start_byte()) => {
                            self.resolve(v, b.scope, depth + 1)
                        }
                        _ => Val::Unknown,
                    };
                }
                match self.resolve(obj, scope, depth + 1) {
                    Val::Path(p) => Val::Path(normalize_path(format!("{p}.{prop}"))),
                    Val::Lit(o) => self.member_of_literal(o, &prop, scope, depth),
                    _ => Val::Unknown,
                }
            }
            "call_expression" => {
                let Some(func) = node.field("function") else {
                    return Val::Unknown;
                };
                let args = self.args(node);
                if func.kind() == "import" {
                    return match args.first().and_then(|a| self.string_value(*a)) {
                        Some(m) => Val::Path(normalize_module(&m)),
                        None => Val::Unknown,
                    };
                }
                let callee = self.resolve(func, scope, depth + 1);
                match callee.path() {
                    Some("require") => match args.first().and_then(|a| self.string_value(*a)) {
                        Some(m) => Val::Path(normalize_module(&m)),
                        None => Val::Unknown,
                    },
                    // `f.bind(thisArg)` is still `f`.
                    Some(p) if p.ends_with(".bind") => {
                        Val::Path(p.trim_end_matches(".bind").to_string())
                    }
                    Some(p) => Val::Path(format!("{p}()")),
                    None => Val::Unknown,
                }
            }
            "new_expression" => match node.field("constructor") {
                Some(c) => match self.resolve(c, scope, depth + 1) {
                    Val::Path(p) => Val::Path(format!("{p}()")),
                    _ => Val::Unknown,
                },
                None => Val::Unknown,
            },
            "string" | "template_string" => self
                .string_value(node)
                .map(Val::Str)
                .unwrap_or(Val::Unknown),
            "number" => self
                .text(node)
                .parse::<i64>()
                .map(Val::Int)
                .unwrap_or(Val::Unknown),
            "true" => Val::Bool(true),
            "false" => Val::Bool(false),
            "null" | "undefined" => Val::None,
            "object" | "array" => Val::Lit(node),
            // `verbose ? process.stdout : process.stderr`, `opts.out || process.stdout`: a
            // value that may be stdout is treated as stdout (the write happens on some path).
            "ternary_expression" | "binary_expression" => {
                let (a, b) = if node.kind() == "ternary_expression" {
                    (node.field("consequence"), node.field("alternative"))
                } else {
                    let op = node.field("operator").map(|o| self.text(o)).unwrap_or("");
                    if !matches!(op, "||" | "??" | "&&") {
                        return Val::Unknown;
                    }
                    (node.field("left"), node.field("right"))
                };
                let (Some(a), Some(b)) = (a, b) else {
                    return Val::Unknown;
                };
                let (va, vb) = (
                    self.resolve(a, scope, depth + 1),
                    self.resolve(b, scope, depth + 1),
                );
                let stdout = |v: &Val| matches!(v, Val::Path(p) if p == "process.stdout");
                if stdout(&va) {
                    va
                } else if stdout(&vb) {
                    vb
                } else if va == vb {
                    va
                } else {
                    Val::Unknown
                }
            }
            _ => Val::Unknown,
        };
        // `console.log = console.error` changes what the spelled-out path means from then on; an
        // alias taken earlier keeps the original function, so only spelled paths are checked.
        if let Val::Path(p) = &val
            && matches!(node.kind(), "member_expression" | "subscript_expression")
            && let Some(v) = self.overridden(p, node, scope, depth)
        {
            return v;
        }
        val
    }

    fn member_of_literal(&self, obj: Node<'t>, member: &str, scope: usize, depth: u32) -> Val<'t> {
        match self.property(obj, member) {
            Some(v) => self.resolve(v, scope, depth + 1),
            None => Val::Unknown,
        }
    }

    /// The value of a property of an object literal.
    fn property(&self, obj: Node<'t>, name: &str) -> Option<Node<'t>> {
        if obj.kind() != "object" {
            return None;
        }
        let mut c = obj.walk();
        let mut found = None;
        for p in obj.named_children(&mut c) {
            match p.kind() {
                "pair" => {
                    let Some(k) = p.field("key") else {
                        continue;
                    };
                    let key = match k.kind() {
                        "property_identifier" => Some(self.text(k).to_string()),
                        "string" => self.string_value(k),
                        _ => None,
                    };
                    if key.as_deref() == Some(name) {
                        found = p.field("value");
                    }
                }
                "shorthand_property_identifier" if self.text(p) == name => found = Some(p),
                _ => {}
            }
        }
        found
    }

    fn has_property(&self, obj: Node<'t>, name: &str) -> bool {
        self.property(obj, name).is_some()
    }

    fn has_spread(&self, obj: Node<'t>) -> bool {
        let mut c = obj.walk();
        obj.named_children(&mut c)
            .any(|p| p.kind() == "spread_element")
    }

    fn overridden(&self, path: &str, node: Node<'t>, scope: usize, depth: u32) -> Option<Val<'t>> {
        let list = self.overrides.get(path)?;
        let b = if scope == 0 {
            list.iter().rev().find(|b| b.pos < node.start_byte())?
        } else {
            list.last()?
        };
        match b.def {
            Def::Value(v) if !v.byte_range().contains(&node.start_byte()) => {
                Some(self.resolve(v, b.scope, depth + 1))
            }
            _ => Some(Val::Unknown),
        }
    }

    fn args(&self, call: Node<'t>) -> Vec<Node<'t>> {
        let Some(list) = call.field("arguments") else {
            return Vec::new();
        };
        if list.kind() != "arguments" {
            return Vec::new(); // a tagged template
        }
        let mut c = list.walk();
        list.named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .collect()
    }

    /// The stream a value designates.
    fn is_stdout(&self, v: &Val) -> bool {
        matches!(v, Val::Path(p) if p == "process.stdout")
    }

    fn is_stdout_fd(&self, v: &Val) -> bool {
        match v {
            Val::Int(1) => true,
            Val::Path(p) => p == "process.stdout.fd",
            Val::Str(s) => matches!(s.as_str(), "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1"),
            _ => false,
        }
    }

    // ------------------------------------------------------------------------------ pass 2

    fn report(&mut self, rule: &'static Rule, node: Node<'t>, message: String) {
        self.facts.findings.push(Finding::at(rule, node, message));
    }

    fn check(&mut self, _root: Node<'t>) {
        for (node, parent, scope) in std::mem::take(&mut self.todo) {
            self.check_node(node, parent, scope);
        }
    }

    /// Pass 2 for one node; returns the scope of its children.
    fn check_node(&mut self, node: Node<'t>, _parent: Option<Node<'t>>, scope: usize) -> usize {
        {
            let scope = self.scope_of.get(&node.id()).copied().unwrap_or(scope);
            match node.kind() {
                "call_expression" => self.check_call(node, scope),
                "new_expression" => self.check_new(node, scope),
                "assignment_expression" => self.check_assignment(node, scope),
                _ => {}
            }
            scope
        }
    }

    fn check_call(&mut self, call: Node<'t>, scope: usize) {
        let Some(func) = call.field("function") else {
            return;
        };
        let args = self.args(call);
        let callee = self.resolve(func, scope, 0);
        let Val::Path(mut path) = callee else {
            self.check_arguments(call, "", &args, scope);
            return;
        };
        // `console.log.call(console, x)` / `.apply(...)` call the function itself.
        let mut args_used = args.clone();
        for suffix in [".call", ".apply"] {
            if let Some(p) = path.strip_suffix(suffix)
                && is_writer_function(p)
            {
                path = p.to_string();
                args_used = args.iter().skip(1).copied().collect();
            }
        }
        let name = snippet(func, self.src);
        if let Some(method) = console_method(&path) {
            if matches!(method, "group" | "groupCollapsed") && args_used.is_empty() {
                return; // prints nothing without a label
            }
            if !self.is_jsonrpc_log(&args_used, scope) {
                self.report(
                    &STATIC_CONSOLE_LOG,
                    call,
                    format!(
                        "`{name}(...)` writes to stdout (console.{method} is stdout in Node.js)"
                    ),
                );
            }
            return;
        }
        match path.as_str() {
            "process.stdout.write" | "process.stdout.end" => {
                if path.ends_with(".end") && args_used.is_empty() {
                    return;
                }
                // Inside a replacement of process.stdout.write, calling the saved original is
                // the filter passing protocol lines through.
                let pos = call.start_byte();
                let in_filter = self
                    .overrides
                    .get("process.stdout.write")
                    .is_some_and(|list| {
                        list.iter().any(|b| match b.def {
                            Def::Value(v) => v.byte_range().contains(&pos),
                            _ => false,
                        })
                    });
                if in_filter {
                    return;
                }
                if args_used
                    .first()
                    .is_some_and(|p| self.is_protocol_payload(*p, scope))
                {
                    return;
                }
                self.report(
                    &STATIC_STDOUT_WRITE,
                    call,
                    format!("`{name}(...)` writes to stdout"),
                );
            }
            "util.log" | "util.print" | "util.puts" => {
                self.report(
                    &STATIC_PRINT_CALL,
                    call,
                    format!("`{name}(...)` writes to stdout"),
                );
            }
            "fs.writeSync"
            | "fs.write"
            | "fs.writeFileSync"
            | "fs.appendFileSync"
            | "fs.writeFile"
            | "fs.appendFile"
            | "fs.promises.writeFile"
            | "fs.promises.appendFile" => {
                let Some(target) = args_used.first() else {
                    return;
                };
                let t = self.resolve(*target, scope, 0);
                if self.is_stdout_fd(&t)
                    && !args_used
                        .get(1)
                        .is_some_and(|p| self.is_protocol_payload(*p, scope))
                {
                    self.report(
                        &STATIC_STDOUT_WRITE,
                        call,
                        format!(
                            "`{name}({}, ...)` writes to stdout",
                            snippet(*target, self.src)
                        ),
                    );
                }
            }
            "fs.createWriteStream" => {
                let target = args_used.first().map(|t| self.resolve(*t, scope, 0));
                let fd_opt = args_used.get(1).map(|o| self.resolve(*o, scope, 0));
                let by_fd = match fd_opt {
                    Some(Val::Lit(o)) => self
                        .property(o, "fd")
                        .is_some_and(|fd| self.is_stdout_fd(&self.resolve(fd, scope, 0))),
                    _ => false,
                };
                if target.is_some_and(|t| self.is_stdout_fd(&t)) || by_fd {
                    self.report(
                        &STATIC_STDOUT_WRITE,
                        call,
                        format!("`{name}(...)` opens stdout for writing"),
                    );
                }
            }
            "pino" => self.check_pino(call, &args_used, scope),
            "bunyan.createLogger" | "bunyan" => self.check_bunyan(call, &args_used, scope),
            "child_process.spawn"
            | "child_process.spawnSync"
            | "child_process.execSync"
            | "child_process.execFileSync"
            | "child_process.exec"
            | "child_process.execFile"
            | "child_process.fork"
            | "cross-spawn"
            | "cross-spawn.sync"
            | "execa"
            | "execa.execaSync"
            | "execa.execaCommand"
            | "execa.execaCommandSync"
            | "execa.execaNode" => self.check_child(call, &path, &args_used, scope),
            _ => self.check_arguments(call, &path, &args_used, scope),
        }
    }

    fn check_new(&mut self, node: Node<'t>, scope: usize) {
        let Some(ctor) = node.field("constructor") else {
            return;
        };
        let args = self.args(node);
        let path = match self.resolve(ctor, scope, 0) {
            Val::Path(p) => p,
            _ => {
                self.check_arguments(node, "", &args, scope);
                return;
            }
        };
        let name = snippet(ctor, self.src);
        match path.as_str() {
            "console.Console" => {
                let out = match args.first().map(|a| self.resolve(*a, scope, 0)) {
                    Some(Val::Lit(o)) => self
                        .property(o, "stdout")
                        .map(|s| self.resolve(s, scope, 0)),
                    other => other,
                };
                if out.is_some_and(|o| self.is_stdout(&o)) {
                    self.report(
                        &STATIC_STDOUT_LOGGER,
                        node,
                        format!("`new {name}(...)` on process.stdout prints to stdout"),
                    );
                }
            }
            "winston.transports.Console" => {
                let opts = args.first().map(|a| self.resolve(*a, scope, 0));
                let safe = match opts {
                    Some(Val::Lit(o)) => self.has_property(o, "stderrLevels") || self.has_spread(o),
                    Some(Val::Unknown) => true,
                    _ => false,
                };
                if !safe {
                    self.report(
                        &STATIC_STDOUT_LOGGER,
                        node,
                        format!("`new {name}(...)` without `stderrLevels` logs to stdout"),
                    );
                }
            }
            "bunyan" => self.check_bunyan(node, &args, scope),
            _ => self.check_arguments(node, &path, &args, scope),
        }
    }

    /// A destination for pino: true when it is stdout, false when elsewhere, None when unknown.
    fn pino_destination_is_stdout(&self, dest: Node<'t>, scope: usize) -> Option<bool> {
        let node = unwrap_expr(dest);
        if node.kind() == "call_expression" {
            let func = node.field("function")?;
            let p = self.resolve(func, scope, 0);
            if p.path() == Some("pino.destination") {
                let args = self.args(node);
                let Some(first) = args.first() else {
                    return Some(true);
                };
                let v = match self.resolve(*first, scope, 0) {
                    Val::Lit(o) => match self.property(o, "dest") {
                        Some(d) => self.resolve(d, scope, 0),
                        None => return Some(true),
                    },
                    v => v,
                };
                return Some(match v {
                    Val::Int(1) => true,
                    Val::Str(s) => s == "1" || s == "/dev/stdout",
                    Val::Path(p) => p == "process.stdout.fd",
                    _ => false,
                });
            }
            return None;
        }
        match self.resolve(node, scope, 0) {
            Val::Path(p) if p == "process.stdout" => Some(true),
            Val::Path(p) if p == "process.stderr" => Some(false),
            _ => None,
        }
    }

    fn transport_is_stdout(&self, t: Node<'t>, scope: usize) -> bool {
        match self.resolve(t, scope, 0) {
            Val::Lit(o) if o.kind() == "object" => {
                if let Some(targets) = self.property(o, "targets") {
                    if let Val::Lit(arr) = self.resolve(targets, scope, 0) {
                        let mut c = arr.walk();
                        return arr
                            .named_children(&mut c)
                            .any(|e| self.transport_is_stdout(e, scope));
                    }
                    return false;
                }
                let target =
                    self.property(o, "target")
                        .and_then(|t| match self.resolve(t, scope, 0) {
                            Val::Str(s) => Some(s),
                            _ => None,
                        });
                let Some(target) = target else { return false };
                if !matches!(target.as_str(), "pino/file" | "pino-pretty") {
                    return false;
                }
                let dest = self.property(o, "options").and_then(|opts| {
                    match self.resolve(opts, scope, 0) {
                        Val::Lit(oo) => Some(self.property(oo, "destination")),
                        _ => None,
                    }
                });
                match dest {
                    None => true,
                    Some(None) => true,
                    Some(Some(d)) => {
                        matches!(self.resolve(d, scope, 0), Val::Int(1))
                            || matches!(self.resolve(d, scope, 0), Val::Str(ref s) if s == "1" || s == "/dev/stdout")
                    }
                }
            }
            _ => false,
        }
    }

    fn check_pino(&mut self, call: Node<'t>, args: &[Node<'t>], scope: usize) {
        let verdict = if let Some(dest) = args.get(1) {
            self.pino_destination_is_stdout(*dest, scope)
        } else if let Some(first) = args.first() {
            match self.pino_destination_is_stdout(*first, scope) {
                Some(v) => Some(v),
                None => match self.resolve(*first, scope, 0) {
                    Val::Lit(o) => match self.property(o, "transport") {
                        Some(t) => Some(self.transport_is_stdout(t, scope)),
                        None => Some(!self.has_spread(o)),
                    },
                    Val::Str(_) | Val::Int(_) => None,
                    _ => Some(true),
                },
            }
        } else {
            Some(true)
        };
        if verdict == Some(true) {
            let name = call
                .field("function")
                .map(|f| snippet(f, self.src))
                .unwrap_or_default();
            self.report(
                &STATIC_STDOUT_LOGGER,
                call,
                format!("`{name}(...)` logs to its default destination, stdout"),
            );
        }
    }

    fn check_bunyan(&mut self, call: Node<'t>, args: &[Node<'t>], scope: usize) {
        let Some(Val::Lit(o)) = args.first().map(|a| self.resolve(*a, scope, 0)) else {
            return;
        };
        if self.has_spread(o) {
            return;
        }
        let stream = self
            .property(o, "stream")
            .or_else(|| self.property(o, "streams"));
        let to_stdout = match stream {
            None => true,
            Some(s) => self.mentions_stdout(s, scope),
        };
        if to_stdout {
            self.report(
                &STATIC_STDOUT_LOGGER,
                call,
                "bunyan logger without a stderr `stream` logs to stdout".to_string(),
            );
        }
    }

    /// True when a literal (object/array tree) contains `process.stdout`.
    fn mentions_stdout(&self, node: Node<'t>, scope: usize) -> bool {
        let mut stack = vec![node];
        // Literals can refer to each other (`a = {x: b}; b = {y: a}`): bound the work.
        let mut budget = 500;
        while let Some(n) = stack.pop() {
            budget -= 1;
            if budget == 0 {
                return false;
            }
            let n = unwrap_expr(n);
            match n.kind() {
                "object" | "array" | "pair" | "spread_element" => {
                    let mut c = n.walk();
                    stack.extend(n.named_children(&mut c));
                }
                "identifier" | "member_expression" | "subscript_expression" => {
                    match self.resolve(n, scope, 0) {
                        Val::Path(p) if p == "process.stdout" => return true,
                        Val::Lit(l) => stack.push(l),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        false
    }

    fn check_child(&mut self, call: Node<'t>, path: &str, args: &[Node<'t>], scope: usize) {
        // The options object: the last argument that is an object literal.
        let opts = args
            .iter()
            .rev()
            .find_map(|a| match self.resolve(*a, scope, 0) {
                Val::Lit(o) if o.kind() == "object" => Some(o),
                _ => None,
            });
        let inherits = |js: &Self, v: Node<'t>| -> bool {
            match js.resolve(v, scope, 0) {
                Val::Str(s) => s == "inherit",
                Val::Int(1) => true,
                Val::Path(p) => p == "process.stdout",
                _ => false,
            }
        };
        let stdio_inherits = |js: &Self, o: Node<'t>| -> Option<bool> {
            let stdio = js.property(o, "stdio")?;
            Some(match js.resolve(stdio, scope, 0) {
                Val::Str(s) => s == "inherit",
                Val::Lit(arr) if arr.kind() == "array" => {
                    let mut c = arr.walk();
                    let elems: Vec<Node> = arr.named_children(&mut c).collect();
                    elems.get(1).is_some_and(|e| inherits(js, *e))
                }
                _ => false,
            })
        };
        let flagged = match opts {
            Some(o) => {
                let via_stdio = stdio_inherits(self, o);
                let via_stdout = self.property(o, "stdout").map(|s| inherits(self, s));
                match (via_stdio, via_stdout) {
                    (Some(true), _) | (_, Some(true)) => true,
                    (Some(false), _) | (_, Some(false)) => false,
                    (None, None) => {
                        path == "child_process.fork"
                            && !self.has_spread(o)
                            && !self
                                .property(o, "silent")
                                .is_some_and(|s| self.resolve(s, scope, 0) == Val::Bool(true))
                    }
                }
            }
            // `fork(module, args, opts)` with opts the scan cannot see: not known to inherit.
            None => {
                path == "child_process.fork"
                    && !args
                        .iter()
                        .skip(1)
                        .any(|a| self.resolve(*a, scope, 0) == Val::Unknown)
            }
        };
        if flagged {
            let name = call
                .field("function")
                .map(|f| snippet(f, self.src))
                .unwrap_or_default();
            self.report(
                &STATIC_STDOUT_INHERIT,
                call,
                format!("`{name}(...)` gives the child the server's stdout"),
            );
        }
    }

    /// Any other call: `process.stdout` handed to a writer, or a stdout writer passed as a
    /// callback.
    fn check_arguments(&mut self, call: Node<'t>, path: &str, args: &[Node<'t>], scope: usize) {
        let name = call
            .field("function")
            .or_else(|| call.field("constructor"))
            .map(|f| self.text(f))
            .unwrap_or("");
        let last = if path.is_empty() { name } else { path };
        let last = last.trim_end_matches("()").rsplit('.').next().unwrap_or("");
        let lower = last.to_ascii_lowercase();
        // `f.bind(process.stdout)`, `f.call(thisArg, ...)`: the first argument is `this`.
        let this_arg = matches!(last, "bind" | "call" | "apply");
        let exempt = [
            "stdio",
            "transport",
            "connect",
            "serve",
            "server",
            "createinterface",
            "wrap",
        ]
        .iter()
        .any(|w| lower.contains(w));
        for a in args {
            let a = unwrap_expr(*a);
            if !matches!(
                a.kind(),
                "identifier"
                    | "member_expression"
                    | "subscript_expression"
                    | "call_expression"
                    | "object"
                    | "array"
            ) {
                continue;
            }
            if matches!(a.kind(), "object" | "array") {
                if !exempt && self.mentions_stdout(a, scope) {
                    let rule = logger_rule(&lower);
                    self.report(
                        rule,
                        call,
                        format!(
                            "`{}(...)` is given process.stdout and writes to it",
                            snippet_str(name)
                        ),
                    );
                    return;
                }
                continue;
            }
            let v = self.resolve(a, scope, 0);
            let Val::Path(p) = v else { continue };
            if p == "process.stdout" && !exempt && !this_arg {
                self.report(
                    logger_rule(&lower),
                    call,
                    format!(
                        "`{}(...)` is given process.stdout and writes to it",
                        snippet_str(name)
                    ),
                );
                return;
            }
            if is_writer_function(&p) && a.kind() != "call_expression"
                || a.kind() == "call_expression" && is_writer_function(&p) && self.is_bind(a)
            {
                let rule = if console_method(&p).is_some() {
                    &STATIC_CONSOLE_LOG
                } else {
                    &STATIC_STDOUT_WRITE
                };
                self.report(
                    rule,
                    a,
                    format!(
                        "`{}` is passed as a callback; every call of it writes to stdout",
                        snippet(a, self.src)
                    ),
                );
                return;
            }
        }
    }

    fn is_bind(&self, call: Node<'t>) -> bool {
        call.field("function").is_some_and(|f| {
            f.kind() == "member_expression"
                && f.field("property").is_some_and(|p| self.text(p) == "bind")
        })
    }

    fn check_assignment(&mut self, node: Node<'t>, scope: usize) {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            return;
        };
        if !matches!(left.kind(), "member_expression" | "subscript_expression") {
            return;
        }
        let target = self.static_path(left, scope).map(normalize_path);
        if target.as_deref() == Some("process.stdout.write") {
            // A filter that still calls the original write keeps the transport working.
            if self.references(right, scope, "process.stdout.write") {
                return;
            }
            self.report(
                &STATIC_STDOUT_REDIRECT,
                node,
                format!(
                    "`{}` replaces process.stdout.write: the MCP transport's replies go there too",
                    snippet(node, self.src)
                ),
            );
            return;
        }
        if target.as_deref().is_some_and(|t| t.starts_with("console.")) {
            return; // an override, handled by resolution
        }
        if self.this_member(left, scope).is_some() {
            return; // `this.log = console.log`: calls of `this.log` are followed
        }
        let r = unwrap_expr(right);
        let is_ref = matches!(
            r.kind(),
            "identifier" | "member_expression" | "subscript_expression"
        ) || (r.kind() == "call_expression" && self.is_bind(r));
        if is_ref
            && let Val::Path(p) = self.resolve(r, scope, 0)
            && is_writer_function(&p)
        {
            let rule = if console_method(&p).is_some() {
                &STATIC_CONSOLE_LOG
            } else {
                &STATIC_STDOUT_WRITE
            };
            self.report(
                rule,
                r,
                format!(
                    "`{}` is stored as a callable; every call of it writes to stdout",
                    snippet(r, self.src)
                ),
            );
        }
    }

    /// True when an expression tree refers to the given path (through resolution).
    fn references(&self, node: Node<'t>, scope: usize, path: &str) -> bool {
        let mut stack = vec![(node, scope)];
        let mut budget = 2000;
        while let Some((n, s)) = stack.pop() {
            budget -= 1;
            if budget == 0 {
                return true;
            }
            let s = self.scope_of.get(&n.id()).copied().unwrap_or(s);
            if matches!(
                n.kind(),
                "identifier" | "member_expression" | "call_expression"
            ) && let Val::Path(p) = self.resolve(n, s, 0)
                && (p == path || p.starts_with(&format!("{path}.")))
            {
                return true;
            }
            let mut c = n.walk();
            for child in n.named_children(&mut c) {
                stack.push((child, s));
            }
        }
        false
    }

    /// `JSON.stringify(msg)` (no indentation) somewhere in a payload: the hand-written transport.
    fn is_protocol_payload(&self, payload: Node<'t>, scope: usize) -> bool {
        self.find_stringify(payload, scope, 0).is_some()
    }

    fn find_stringify(&self, node: Node<'t>, scope: usize, depth: u32) -> Option<Node<'t>> {
        if depth > 6 {
            return None;
        }
        let node = unwrap_expr(node);
        match node.kind() {
            "call_expression" => {
                let func = node.field("function")?;
                if self.resolve(func, scope, 0).path() == Some("JSON.stringify") {
                    let args = self.args(node);
                    let indented = args.get(2).is_some_and(|s| {
                        !matches!(self.resolve(*s, scope, 0), Val::None | Val::Int(0))
                    });
                    return (!indented).then_some(node);
                }
                if func.kind() == "member_expression"
                    && let Some(obj) = func.field("object")
                    && let Some(n) = self.find_stringify(obj, scope, depth + 1)
                {
                    return Some(n);
                }
                for a in self.args(node) {
                    if let Some(n) = self.find_stringify(a, scope, depth + 1) {
                        return Some(n);
                    }
                }
                None
            }
            "binary_expression" | "template_string" | "template_substitution" => {
                let mut c = node.walk();
                let kids: Vec<Node> = node.named_children(&mut c).collect();
                kids.into_iter()
                    .find_map(|k| self.find_stringify(k, scope, depth + 1))
            }
            "identifier" => {
                let b = self.lookup(self.text(node), scope, node.start_byte())?;
                match b.def {
                    Def::Value(v) if !v.byte_range().contains(&node.start_byte()) => {
                        self.find_stringify(v, b.scope, depth + 1)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `console.log(JSON.stringify({ jsonrpc: '2.0', ... }))`: a hand-written JSON-RPC reply.
    fn is_jsonrpc_log(&self, args: &[Node<'t>], scope: usize) -> bool {
        let [payload] = args else { return false };
        let Some(call) = self.find_stringify(*payload, scope, 0) else {
            return false;
        };
        // `function send(msg) { console.log(JSON.stringify(msg)) }`: the transport itself.
        let mut s = scope;
        while !self.scopes[s].function {
            s = self.scopes[s].parent.unwrap_or(0);
        }
        if self.scopes[s]
            .name
            .is_some_and(super::is_transport_function)
        {
            return true;
        }
        let Some(first) = self.args(call).first().copied() else {
            return false;
        };
        match self.resolve(first, scope, 0) {
            Val::Lit(o) => self.has_property(o, "jsonrpc"),
            _ => false,
        }
    }
}

fn logger_rule(lower_name: &str) -> &'static Rule {
    if [
        "log",
        "console",
        "handler",
        "transport",
        "destination",
        "logger",
    ]
    .iter()
    .any(|w| lower_name.contains(w))
    {
        &STATIC_STDOUT_LOGGER
    } else {
        &STATIC_STDOUT_WRITE
    }
}

fn snippet_str(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    line.chars().take(60).collect()
}
