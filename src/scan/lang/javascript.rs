//! JavaScript, TypeScript and TSX: stdout writes found by name resolution.
//!
//! Pass 1 builds the scopes (program, functions, blocks, classes, catch clauses) with every
//! binding: imports and `require` (named, default, namespace, destructured), declarations (kept
//! as the value expression; `const { log } = console` as a member of it), parameters (their
//! default), and `console.log = ...` style overrides. Pass 2 (`check`) resolves every call and
//! `new` to a qualified name (`console.log`, `process.stdout.write`, `fs.writeSync`, `pino`), so a
//! local or parameter named `console`, `obj.console.log()`, TS casts (`(console as any).log`),
//! optional chaining and aliases all come out right, and applies the row of that name from the
//! sink table (`sinks/javascript.rs`). Strings, templates, JSX text and comments are never code,
//! so they never match.

mod check;

use super::{FastMap, Field, FileFacts};
use crate::scan::sinks::Dest;
use crate::scan::sinks::javascript::{
    EXPORT_ALIASES, GLOBAL_ALIASES, GLOBAL_OBJECTS, GLOBALS, MODULE_ALIASES,
};
use std::cell::RefCell;
use tree_sitter::{Node, Tree};

const MAX_DEPTH: u32 = 12;

pub fn analyze(tree: &Tree, src: &str) -> FileFacts {
    let mut js = Js::new(src);
    js.collect(tree.root_node());
    js.attach_reassignments();
    js.attach_overrides();
    js.check();
    js.facts.rows = js.rows.into_inner();
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

fn normalize_module(m: &str) -> String {
    let m = m.strip_prefix("node:").unwrap_or(m);
    match MODULE_ALIASES.iter().find(|(from, _)| *from == m) {
        Some((_, to)) => (*to).to_string(),
        None => m.replace('/', "."),
    }
}

/// Collapses equivalent spellings of the same export (`globalThis.console.log`,
/// `require('pino').default`).
fn normalize_path(p: String) -> String {
    for prefix in GLOBAL_OBJECTS {
        if let Some(rest) = p.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')) {
            let root = rest.split('.').next().unwrap_or(rest);
            if GLOBALS.contains(&root) && !GLOBAL_OBJECTS.contains(&root) {
                return normalize_path(rest.to_string());
            }
        }
    }
    for (from, to) in EXPORT_ALIASES {
        if p == *from {
            return (*to).to_string();
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
    /// The table rows pass 2 consulted (for the fixture coverage test).
    rows: RefCell<Vec<&'static str>>,
    /// Nodes pass 2 checks, with their parent and scope, in document order.
    todo: Vec<(Node<'t>, Option<Node<'t>>, usize)>,
    /// How deep `bind_pattern` is in nested destructuring patterns.
    pattern_depth: u32,
    /// Function declarations by (scope, name): a call of one whose one result is a value is
    /// that value (`function out() { return process.stdout; }`).
    functions: FastMap<(usize, &'t str), Node<'t>>,
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
            rows: RefCell::new(Vec::new()),
            todo: Vec::new(),
            pattern_depth: 0,
            functions: FastMap::default(),
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
                        self.functions.insert((scope, self.text(name)), node);
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

    /// What an expression designates: a qualified path, a literal, or unknown.
    fn resolve(&self, node: Node<'t>, scope: usize, depth: u32) -> Val<'t> {
        if depth > MAX_DEPTH {
            return Val::Unknown;
        }
        let node = unwrap_expr(node);
        let val = match node.kind() {
            "identifier" => self.resolve_identifier(node, scope, depth),
            "member_expression" | "subscript_expression" => {
                match self.resolve_member(node, scope, depth) {
                    Ok(v) => v,
                    Err(v) => return v,
                }
            }
            "call_expression" => self.resolve_call(node, scope, depth),
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
            "ternary_expression" | "binary_expression" => self.resolve_choice(node, scope, depth),
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

    /// A name: its binding in scope, else a global the table knows.
    fn resolve_identifier(&self, node: Node<'t>, scope: usize, depth: u32) -> Val<'t> {
        let name = self.text(node);
        let Some(b) = self.lookup(name, scope, node.start_byte()) else {
            if GLOBALS.contains(&name) {
                return Val::Path(name.to_string());
            }
            if let Some((_, to)) = GLOBAL_ALIASES.iter().find(|(from, _)| *from == name) {
                return Val::Path((*to).to_string());
            }
            return if name == "undefined" {
                Val::None
            } else {
                Val::Unknown
            };
        };
        match &b.def {
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
        }
    }

    /// `a.b`, `a['b']`, `this.b`: `Err` is final (no override applies to it).
    fn resolve_member(&self, node: Node<'t>, scope: usize, depth: u32) -> Result<Val<'t>, Val<'t>> {
        let Some(obj) = node.field("object") else {
            return Err(Val::Unknown);
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
            return Err(Val::Unknown);
        };
        if let Some(key) = self.this_member(node, scope) {
            let Some(b) = self.this_attrs.get(&key).and_then(|l| l.last()) else {
                return Err(Val::Unknown);
            };
            return Err(match b.def {
                Def::Value(v) if !v.byte_range().contains(&node.start_byte()) => {
                    self.resolve(v, b.scope, depth + 1)
                }
                _ => Val::Unknown,
            });
        }
        Ok(match self.resolve(obj, scope, depth + 1) {
            Val::Path(p) => Val::Path(normalize_path(format!("{p}.{prop}"))),
            Val::Lit(o) => self.member_of_literal(o, &prop, scope, depth),
            _ => Val::Unknown,
        })
    }

    /// `require('m')`, `import('m')`, `f.bind(x)` (still `f`), any other call: `f()`.
    fn resolve_call(&self, node: Node<'t>, scope: usize, depth: u32) -> Val<'t> {
        let Some(func) = node.field("function") else {
            return Val::Unknown;
        };
        let module = |js: &Self| match js.args(node).first().and_then(|a| js.string_value(*a)) {
            Some(m) => Val::Path(normalize_module(&m)),
            None => Val::Unknown,
        };
        if func.kind() == "import" {
            return module(self);
        }
        if let Some(v) = self.helper_result(func, scope, depth) {
            return v;
        }
        match self.resolve(func, scope, depth + 1).path() {
            Some("require") => module(self),
            Some(p) if p.ends_with(".bind") => Val::Path(p.trim_end_matches(".bind").to_string()),
            Some(p) => Val::Path(format!("{p}()")),
            None => Val::Unknown,
        }
    }

    /// A same-file function called by name whose one result is a known value (`function out() {
    /// return process.stdout; }`, `const out = () => process.stdout`): that value.
    fn helper_result(&self, func: Node<'t>, scope: usize, depth: u32) -> Option<Val<'t>> {
        if func.kind() != "identifier" {
            return None;
        }
        let name = self.text(func);
        let b = self.lookup(name, scope, func.start_byte())?;
        let f = match b.def {
            Def::Value(v)
                if matches!(
                    v.kind(),
                    "arrow_function" | "function_expression" | "function"
                ) =>
            {
                v
            }
            Def::Opaque => *self.functions.get(&(b.scope, name))?,
            _ => return None,
        };
        let body = f.field("body")?;
        let result = if body.kind() == "statement_block" {
            let mut c = body.walk();
            let kids: Vec<Node> = body
                .named_children(&mut c)
                .filter(|k| k.kind() != "comment")
                .collect();
            match kids.as_slice() {
                [r] if r.kind() == "return_statement" => r.named_child(0)?,
                _ => return None,
            }
        } else {
            body
        };
        if result.byte_range().contains(&func.start_byte()) {
            return None;
        }
        match self.resolve(result, b.scope, depth + 1) {
            v @ Val::Path(_) => Some(v),
            _ => None,
        }
    }

    /// `verbose ? process.stdout : process.stderr`, `opts.out || process.stdout`: a value that
    /// may be stdout is treated as stdout (the write happens on some path).
    fn resolve_choice(&self, node: Node<'t>, scope: usize, depth: u32) -> Val<'t> {
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
        if self.stream_dest(&va) == Some(Dest::Stdout) {
            va
        } else if self.stream_dest(&vb) == Some(Dest::Stdout) {
            vb
        } else if va == vb {
            va
        } else {
            Val::Unknown
        }
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

    /// The value a spelled-out path has at a use after `path = value` assignments, in source order
    /// and scope: one made earlier in the same function, or one made in a function when the use
    /// is in another function (functions run after start-up, which is where such overrides are
    /// made); an override inside a function never applies to top-level code, which runs first.
    fn overridden(&self, path: &str, node: Node<'t>, scope: usize, depth: u32) -> Option<Val<'t>> {
        let list = self.overrides.get(path)?;
        let pos = node.start_byte();
        let here = self.function_scope(scope);
        let b = list
            .iter()
            .filter(|b| {
                let there = self.function_scope(b.scope);
                if there == here {
                    b.pos < pos
                } else {
                    here != 0
                }
            })
            .max_by_key(|b| b.pos)?;
        match b.def {
            Def::Value(v) if !v.byte_range().contains(&pos) => {
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
}
