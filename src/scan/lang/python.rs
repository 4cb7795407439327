//! Python: stdout writes found by name resolution, the way the interpreter would resolve them.
//!
//! Pass 1 builds the scopes (module, function, lambda, class) with every binding: imports (with
//! aliases), assignments (kept as the value expression), parameters (their default value),
//! definitions, loop and `with` targets, `global` declarations, `from m import *`. Pass 2 visits
//! every call, assignment and string and resolves the callee to a qualified name (`sys.stdout.write`,
//! `builtins.print`, `logging.StreamHandler`) through those bindings, so a shadowed `print`, a
//! `def print`, `obj.print()`, `from sys import stderr` and `out = sys.stdout; out.write(...)` all
//! come out right. Text in strings, comments and docstrings is never code, so it never matches.

use super::{Condition, FastMap, Field, FileFacts, Finding, Lang, snippet, text};
use crate::catalog::Rule;
use crate::catalog::scan::{
    STATIC_PRINT_CALL, STATIC_STDOUT_INHERIT, STATIC_STDOUT_LOGGER, STATIC_STDOUT_REDIRECT,
    STATIC_STDOUT_WRITE,
};
use crate::scan::sinks::{self, Cond, Dest, Means, Site};
use tree_sitter::{Node, Tree};

/// How deep value resolution follows assignments (`a = b`, `b = c`, ...).
const MAX_DEPTH: u32 = 12;

pub fn analyze(tree: &Tree, src: &str) -> FileFacts {
    let mut py = Py::new(src);
    py.collect(tree.root_node());
    py.check(tree.root_node());
    py.facts
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Module,
    Function,
    Class,
}

#[derive(Clone, Debug)]
enum Def<'t> {
    /// A qualified name (`import sys` → `sys`, `from os import write` → `os.write`).
    Import(String),
    /// The value expression, evaluated in the binding's scope.
    Value(Node<'t>),
    /// A definition or a value the scan cannot know (parameter without default, loop variable).
    Opaque,
}

#[derive(Clone, Debug)]
struct Binding<'t> {
    pos: usize,
    def: Def<'t>,
    scope: usize,
}

struct Scope<'t> {
    kind: Kind,
    /// The scope names are looked up in next (class scopes are skipped by nested functions).
    parent: Option<usize>,
    bindings: FastMap<&'t str, Vec<Binding<'t>>>,
    globals: Vec<&'t str>,
    /// For a method: the scope of the class whose body defines it (`self.x` lookups).
    class: Option<usize>,
    /// The function's name (`def send(...)`).
    name: Option<&'t str>,
}

/// What an expression evaluates to, as far as the scan can tell.
#[derive(Clone, Debug, PartialEq)]
enum Val<'t> {
    /// A qualified name; `()` marks a call result (`logging.getLogger()`).
    Path(String),
    Int(i64),
    Str(String),
    Bool(bool),
    None,
    /// `functools.partial(target, ...)`: calls get the partial's arguments too.
    Partial(String, Node<'t>, usize),
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

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stream {
    Stdout,
    Stderr,
    /// Some other value: a file, a buffer, a handler.
    Other,
    Unknown,
}

/// The arguments of a call, split by kind.
#[derive(Default)]
struct Args<'t> {
    positional: Vec<Node<'t>>,
    keywords: Vec<(&'t str, Node<'t>)>,
    star: bool,
    kwstar: bool,
}

impl<'t> Args<'t> {
    fn kw(&self, name: &str) -> Option<Node<'t>> {
        self.keywords
            .iter()
            .rev()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }
    /// A parameter given by keyword or at a position.
    fn get(&self, name: &str, position: Option<usize>) -> Option<Node<'t>> {
        self.kw(name)
            .or_else(|| position.and_then(|i| self.positional.get(i).copied()))
    }
    fn values(&self) -> impl Iterator<Item = Node<'t>> + '_ {
        self.positional
            .iter()
            .copied()
            .chain(self.keywords.iter().map(|(_, v)| *v))
    }
}

/// Builtins the rules care about; any other unbound name is unknown.
const BUILTINS: &[&str] = &[
    "print",
    "open",
    "input",
    "getattr",
    "__import__",
    "breakpoint",
    "isinstance",
    "hasattr",
    "setattr",
    "id",
    "type",
    "callable",
    "repr",
    "str",
    "map",
    "filter",
];

/// Stream objects that are the process's stdout.
fn is_stdout_path(p: &str) -> bool {
    matches!(
        p,
        "sys.stdout" | "sys.__stdout__" | "sys.stdout.buffer" | "sys.__stdout__.buffer"
    ) || p == "sys.stdout.buffer.raw"
}

fn is_stderr_path(p: &str) -> bool {
    p.starts_with("sys.stderr") || p.starts_with("sys.__stderr__")
}

/// Functions that write their arguments to stdout when called, so passing them as a callback
/// or storing them somewhere writes to stdout too.
fn is_writer_function(p: &str) -> bool {
    matches!(
        p,
        "builtins.print"
            | "rich.print"
            | "pprint.pprint"
            | "pprint.pp"
            | "click.echo"
            | "click.secho"
            | "typer.echo"
            | "typer.secho"
            | "sys.stdout.write"
            | "sys.stdout.writelines"
            | "sys.__stdout__.write"
            | "sys.stdout.buffer.write"
    )
}

struct Py<'t> {
    src: &'t [u8],
    text: &'t str,
    scopes: Vec<Scope<'t>>,
    /// Scope created by a function, lambda or class node (by node id).
    scope_of: FastMap<usize, usize>,
    /// Module-level star imports (module names), in order.
    star_imports: Vec<(usize, String)>,
    /// Function definitions by (scope, name): a call of one whose one result is a value is
    /// that value (`def out(): return sys.stdout`).
    functions: FastMap<(usize, &'t str), Node<'t>>,
    /// Classes by (defining scope, name): `Out.stream` reads a class attribute.
    classes: FastMap<(usize, &'t str), Node<'t>>,
    /// Names assigned through a subscript (`table[k] = v`): their dict literals are not trusted.
    subscripted: Vec<&'t str>,
    /// `builtins.print = ...` style overrides: path → bindings.
    overrides: FastMap<String, Vec<Binding<'t>>>,
    /// `self.attr = value` inside methods: (class scope, attr) → bindings.
    self_attrs: FastMap<(usize, &'t str), Vec<Binding<'t>>>,
    /// Byte offsets where `sys.stdout` is replaced by something that is not stdout, with the
    /// scope the assignment runs in.
    stdout_replaced: Vec<(usize, usize)>,
    /// Byte offsets where `sys.stdout` is put back (`sys.stdout = saved` after `saved =
    /// sys.stdout`, `sys.stdout = sys.__stdout__`), with the scope: a replacement restored in
    /// its own scope holds only between the two.
    stdout_restored: Vec<(usize, usize)>,
    /// Byte ranges whose body runs under `contextlib.redirect_stdout(<not stdout>)`.
    redirected: Vec<(usize, usize)>,
    /// True when fd 1 is saved with `os.dup(...)` before being redirected.
    saves_stdout_fd: bool,
    facts: FileFacts,
    /// Nodes pass 2 checks, with their parent and scope, in document order.
    todo: Vec<(Node<'t>, Option<Node<'t>>, usize)>,
}

impl<'t> Py<'t> {
    fn new(text: &'t str) -> Py<'t> {
        let src = text.as_bytes();
        Py {
            src,
            text,
            scopes: vec![Scope {
                kind: Kind::Module,
                parent: None,
                bindings: FastMap::default(),
                globals: Vec::new(),
                class: None,
                name: None,
            }],
            scope_of: FastMap::default(),
            star_imports: Vec::new(),
            functions: FastMap::default(),
            classes: FastMap::default(),
            subscripted: Vec::new(),
            overrides: FastMap::default(),
            self_attrs: FastMap::default(),
            stdout_replaced: Vec::new(),
            stdout_restored: Vec::new(),
            redirected: Vec::new(),
            saves_stdout_fd: memchr::memmem::find(src, b"dup(").is_some(),
            facts: FileFacts::default(),
            todo: Vec::new(),
        }
    }

    fn text(&self, node: Node<'t>) -> &'t str {
        // One validation per file, then O(1) boundary checks per node.
        self.text.get(node.byte_range()).unwrap_or("")
    }

    // ------------------------------------------------------------------------------ pass 1

    fn bind(&mut self, scope: usize, name: Node<'t>, def: Def<'t>, eval_scope: usize) {
        let key = self.text(name);
        if key.is_empty() {
            return;
        }
        // `global x` in a function: its assignments bind the module's `x` (and are evaluated
        // in the function).
        let scope = if self.scopes[scope].kind != Kind::Module
            && self.scopes[scope].globals.contains(&key)
        {
            0
        } else {
            scope
        };
        self.scopes[scope]
            .bindings
            .entry(key)
            .or_default()
            .push(Binding {
                pos: name.start_byte(),
                def,
                scope: eval_scope,
            });
    }

    fn new_scope(&mut self, node: Node<'t>, kind: Kind, enclosing: usize) -> usize {
        // Functions skip enclosing class scopes when they look names up.
        let mut parent = enclosing;
        while kind != Kind::Class && self.scopes[parent].kind == Kind::Class {
            parent = self.scopes[parent].parent.unwrap_or(0);
        }
        self.scopes.push(Scope {
            kind,
            parent: Some(if kind == Kind::Class {
                enclosing
            } else {
                parent
            }),
            bindings: FastMap::default(),
            globals: Vec::new(),
            class: (kind == Kind::Function && self.scopes[enclosing].kind == Kind::Class)
                .then_some(enclosing),
            name: (node.kind() == "function_definition")
                .then(|| node.field("name").map(|n| text(n, self.src)))
                .flatten(),
        });
        let id = self.scopes.len() - 1;
        self.scope_of.insert(node.id(), id);
        id
    }

    /// Binds every identifier of an assignment target pattern as opaque.
    fn bind_pattern_opaque(&mut self, scope: usize, pattern: Node<'t>) {
        let mut stack = vec![pattern];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "identifier" => self.bind(scope, n, Def::Opaque, scope),
                "attribute" | "subscript" => {}
                _ => {
                    let mut c = n.walk();
                    stack.extend(n.named_children(&mut c));
                }
            }
        }
    }

    fn bind_params(&mut self, params: Node<'t>, inner: usize, outer: usize) {
        let mut c = params.walk();
        for p in params.named_children(&mut c) {
            match p.kind() {
                "identifier" => self.bind(inner, p, Def::Opaque, inner),
                "default_parameter" | "typed_default_parameter" => {
                    if let (Some(name), Some(value)) = (p.field("name"), p.field("value"))
                        && name.kind() == "identifier"
                    {
                        self.bind(inner, name, Def::Value(value), outer);
                    }
                }
                _ => self.bind_pattern_opaque(inner, p),
            }
        }
    }

    fn collect(&mut self, root: Node<'t>) {
        super::walk(root, 0, |node, parent, scope| {
            // Pass 2 only looks at these nodes: remember them instead of walking again.
            let wanted = match node.kind() {
                "call" | "assignment" | "with_statement" | "print_statement" => true,
                "string" => node.byte_range().len() <= 40,
                _ => false,
            };
            if wanted {
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
                "function_definition" => {
                    if let Some(name) = node.field("name") {
                        self.bind(scope, name, Def::Opaque, scope);
                        self.functions.insert((scope, self.text(name)), node);
                    }
                    let inner = self.new_scope(node, Kind::Function, scope);
                    if let Some(params) = node.field("parameters") {
                        self.bind_params(params, inner, scope);
                    }
                    child_scope = inner;
                }
                "lambda" => {
                    let inner = self.new_scope(node, Kind::Function, scope);
                    if let Some(params) = node.field("parameters") {
                        self.bind_params(params, inner, scope);
                    }
                    child_scope = inner;
                }
                "class_definition" => {
                    if let Some(name) = node.field("name") {
                        self.bind(scope, name, Def::Opaque, scope);
                        self.classes.insert((scope, self.text(name)), node);
                    }
                    child_scope = self.new_scope(node, Kind::Class, scope);
                }
                "import_statement" => self.collect_import(node, scope),
                "import_from_statement" => self.collect_import_from(node, scope),
                "assignment" => self.collect_assignment(node, scope),
                "augmented_assignment" => {
                    if let Some(left) = node.field("left") {
                        self.bind_pattern_opaque(scope, left);
                    }
                }
                "for_statement" | "for_in_clause" => {
                    if let Some(left) = node.field("left") {
                        self.bind_pattern_opaque(scope, left);
                    }
                }
                "named_expression" => {
                    if let (Some(name), Some(value)) = (node.field("name"), node.field("value")) {
                        self.bind(scope, name, Def::Value(value), scope);
                    }
                }
                "as_pattern" => {
                    if let Some(alias) = node.field("alias") {
                        let in_with = parent.is_some_and(|p| p.kind() == "with_item");
                        match (in_with, node.named_child(0)) {
                            (true, Some(value)) => {
                                let mut c = alias.walk();
                                let names: Vec<Node> = alias.named_children(&mut c).collect();
                                if let [name] = names.as_slice() {
                                    if name.kind() == "identifier" {
                                        self.bind(scope, *name, Def::Value(value), scope);
                                    } else {
                                        self.bind_pattern_opaque(scope, *name);
                                    }
                                } else {
                                    self.bind_pattern_opaque(scope, alias);
                                }
                            }
                            _ => self.bind_pattern_opaque(scope, alias),
                        }
                    }
                }
                "except_clause" => {
                    // `except E as name`: older grammars put the name right after `as`.
                    let mut c = node.walk();
                    let mut after_as = false;
                    for child in node.children(&mut c) {
                        if child.kind() == "as" {
                            after_as = true;
                        } else if after_as && child.kind() == "identifier" {
                            self.bind(scope, child, Def::Opaque, scope);
                            break;
                        }
                    }
                }
                "global_statement" => {
                    let mut c = node.walk();
                    let names: Vec<&'t str> = node
                        .named_children(&mut c)
                        .filter(|n| n.kind() == "identifier")
                        .map(|n| text(n, self.src))
                        .collect();
                    self.scopes[scope].globals.extend(names);
                }
                _ => {}
            }
            child_scope
        }
    }

    fn dotted(&self, node: Node<'t>) -> String {
        // `dotted_name` text may contain spaces or comments in odd code; keep identifiers only.
        let mut c = node.walk();
        let parts: Vec<&str> = node
            .named_children(&mut c)
            .filter(|n| n.kind() == "identifier")
            .map(|n| self.text(n))
            .collect();
        if parts.is_empty() {
            self.text(node).to_string()
        } else {
            parts.join(".")
        }
    }

    fn collect_import(&mut self, node: Node<'t>, scope: usize) {
        let mut c = node.walk();
        let names: Vec<Node> = node.children_by_field_name("name", &mut c).collect();
        for name in names {
            match name.kind() {
                "dotted_name" => {
                    // `import os.path` binds `os`.
                    let full = self.dotted(name);
                    let first = name.named_child(0).unwrap_or(name);
                    let head = full.split('.').next().unwrap_or("").to_string();
                    self.bind(scope, first, Def::Import(head), scope);
                }
                "aliased_import" => {
                    if let (Some(module), Some(alias)) = (name.field("name"), name.field("alias")) {
                        let full = self.dotted(module);
                        self.bind(scope, alias, Def::Import(full), scope);
                    }
                }
                _ => {}
            }
        }
    }

    fn collect_import_from(&mut self, node: Node<'t>, scope: usize) {
        let Some(module) = node.field("module_name") else {
            return;
        };
        // Relative imports name project modules: their members are unknown.
        let base = if module.kind() == "relative_import" {
            None
        } else {
            Some(self.dotted(module))
        };
        let mut c = node.walk();
        let mut star = false;
        for child in node.named_children(&mut c) {
            if child.kind() == "wildcard_import" {
                star = true;
            }
        }
        if star {
            if let Some(base) = &base
                && scope == 0
            {
                self.star_imports.push((node.start_byte(), base.clone()));
            }
            return;
        }
        let mut c = node.walk();
        let names: Vec<Node> = node.children_by_field_name("name", &mut c).collect();
        for name in names {
            let (member, alias) = match name.kind() {
                "dotted_name" => (Some(name), name.named_child(0)),
                "aliased_import" => (name.field("name"), name.field("alias")),
                _ => (None, None),
            };
            let (Some(member), Some(alias)) = (member, alias) else {
                continue;
            };
            let def = match &base {
                Some(base) => Def::Import(format!("{base}.{}", self.dotted(member))),
                None => Def::Opaque,
            };
            self.bind(scope, alias, def, scope);
        }
    }

    fn collect_assignment(&mut self, node: Node<'t>, scope: usize) {
        let Some(left) = node.field("left") else {
            return;
        };
        // `a = b = value`: the innermost right-hand side is the value of every target.
        let mut right = node.field("right");
        while let Some(r) = right {
            if r.kind() == "assignment" {
                right = r.field("right");
            } else {
                break;
            }
        }
        match (left.kind(), right) {
            ("identifier", Some(value)) => self.bind(scope, left, Def::Value(value), scope),
            ("identifier", None) => {} // an annotation alone binds nothing
            ("attribute", Some(value)) if self.self_attr(left, scope).is_some() => {
                if let Some((class, attr)) = self.self_attr(left, scope) {
                    self.self_attrs
                        .entry((class, attr))
                        .or_default()
                        .push(Binding {
                            pos: node.start_byte(),
                            def: Def::Value(value),
                            scope,
                        });
                }
            }
            ("attribute", Some(value)) => {
                // `builtins.print = ...`: an override of a module attribute.
                if let Some(path) = self.static_path(left) {
                    self.overrides.entry(path).or_default().push(Binding {
                        pos: node.start_byte(),
                        def: Def::Value(value),
                        scope,
                    });
                }
            }
            ("subscript", _) => {
                if let Some(table) = left.field("value").filter(|t| t.kind() == "identifier") {
                    self.subscripted.push(self.text(table));
                }
            }
            ("pattern_list" | "tuple_pattern" | "list_pattern", Some(value))
                if matches!(value.kind(), "expression_list" | "tuple" | "list") =>
            {
                let mut c = left.walk();
                let targets: Vec<Node> = left.named_children(&mut c).collect();
                let mut c = value.walk();
                let values: Vec<Node> = value.named_children(&mut c).collect();
                if targets.len() == values.len() {
                    for (t, v) in targets.into_iter().zip(values) {
                        if t.kind() == "identifier" {
                            self.bind(scope, t, Def::Value(v), scope);
                        } else {
                            self.bind_pattern_opaque(scope, t);
                        }
                    }
                } else {
                    self.bind_pattern_opaque(scope, left);
                }
            }
            _ => self.bind_pattern_opaque(scope, left),
        }
        // The left side of a chained assignment binds too.
        let mut inner = node.field("right");
        while let Some(r) = inner {
            if r.kind() != "assignment" {
                break;
            }
            if let (Some(l), Some(v)) = (r.field("left"), right)
                && l.kind() == "identifier"
            {
                self.bind(scope, l, Def::Value(v), scope);
            }
            inner = r.field("right");
        }
    }

    /// The dotted text of an `a.b.c` chain of identifiers (no resolution), for overrides.
    fn static_path(&self, node: Node<'t>) -> Option<String> {
        // Iterative and capped: a chain of a million attributes must neither overflow the
        // stack nor cost quadratic time.
        let mut parts = Vec::new();
        let mut node = node;
        loop {
            match node.kind() {
                "identifier" => break parts.push(self.text(node)),
                "attribute" if parts.len() < super::MAX_PATH_PARTS => {
                    parts.push(self.text(node.field("attribute")?));
                    node = node.field("object")?;
                }
                _ => return None,
            }
        }
        parts.reverse();
        Some(parts.join("."))
    }

    /// `self.attr` inside a method: the class scope and the attribute name.
    fn self_attr(&self, node: Node<'t>, scope: usize) -> Option<(usize, &'t str)> {
        let obj = node.field("object")?;
        if obj.kind() != "identifier" || !matches!(self.text(obj), "self" | "cls") {
            return None;
        }
        let attr = self.text(node.field("attribute")?);
        // Nested functions and lambdas inside a method still see the method's `self`.
        let mut s = scope;
        loop {
            let sc = &self.scopes[s];
            if let Some(class) = sc.class {
                return Some((class, attr));
            }
            if sc.kind != Kind::Function {
                return None;
            }
            s = sc.parent?;
        }
    }

    /// The value of `self.attr`: an assignment in any method, else a class attribute.
    fn resolve_self_attr(&self, node: Node<'t>, scope: usize, depth: u32) -> Option<Val<'t>> {
        let (class, attr) = self.self_attr(node, scope)?;
        let binding = match self.self_attrs.get(&(class, attr)) {
            Some(list) => list.last()?,
            None => self.scopes[class].bindings.get(attr)?.last()?,
        };
        Some(match &binding.def {
            Def::Value(v) if !v.byte_range().contains(&node.start_byte()) => {
                self.resolve(*v, binding.scope, depth + 1)
            }
            Def::Import(q) => Val::Path(q.clone()),
            _ => Val::Unknown,
        })
    }

    // ------------------------------------------------------------------------------ lookup

    fn lookup(&self, name: &str, scope: usize, pos: usize) -> Option<&Binding<'t>> {
        let mut s = scope;
        let mut direct = true;
        loop {
            let sc = &self.scopes[s];
            if direct && sc.kind != Kind::Module && sc.globals.contains(&name) {
                s = 0;
                direct = false;
                continue;
            }
            if let Some(list) = sc.bindings.get(name) {
                let before = list.iter().rev().find(|b| b.pos < pos);
                if direct && sc.kind == Kind::Module {
                    // Module code runs top to bottom: only earlier bindings count.
                    return before;
                }
                if direct {
                    // A function-local name is local everywhere in the function.
                    return before.or_else(|| list.last());
                }
                // Enclosing scopes: their later definitions exist by the time the code runs.
                return before.or_else(|| list.first());
            }
            match sc.parent {
                Some(p) => {
                    // Class bodies are visible only to code directly inside them.
                    let mut p = p;
                    while self.scopes[p].kind == Kind::Class {
                        p = self.scopes[p].parent.unwrap_or(0);
                    }
                    s = p;
                    direct = false;
                }
                None => return None,
            }
        }
    }

    fn resolve(&self, node: Node<'t>, scope: usize, depth: u32) -> Val<'t> {
        if depth > MAX_DEPTH {
            return Val::Unknown;
        }
        match node.kind() {
            "identifier" => {
                let name = self.text(node);
                match self.lookup(name, scope, node.start_byte()) {
                    Some(b) => match &b.def {
                        Def::Import(q) => Val::Path(q.clone()),
                        Def::Value(v) => {
                            if v.byte_range().contains(&node.start_byte()) {
                                return Val::Unknown;
                            }
                            self.resolve(*v, b.scope, depth + 1)
                        }
                        Def::Opaque => Val::Unknown,
                    },
                    None => {
                        for (pos, module) in self.star_imports.iter().rev() {
                            if (*pos < node.start_byte() || scope != 0)
                                && let Some(p) = star_export(module, name)
                            {
                                return Val::Path(p);
                            }
                        }
                        if BUILTINS.contains(&name) {
                            let path = format!("builtins.{name}");
                            if let Some(v) = self.overridden(&path, node, scope, depth) {
                                return v;
                            }
                            Val::Path(path)
                        } else {
                            Val::Unknown
                        }
                    }
                }
            }
            "attribute" => {
                let (Some(obj), Some(attr)) = (node.field("object"), node.field("attribute"))
                else {
                    return Val::Unknown;
                };
                if let Some(v) = self.resolve_self_attr(node, scope, depth) {
                    return v;
                }
                if let Some(v) = self.class_attr(obj, attr, scope, depth) {
                    return v;
                }
                match self.resolve(obj, scope, depth + 1) {
                    Val::Path(p) => {
                        let path = format!("{p}.{}", self.text(attr));
                        if let Some(v) = self.overridden(&path, node, scope, depth) {
                            return v;
                        }
                        Val::Path(path)
                    }
                    _ => Val::Unknown,
                }
            }
            "call" => {
                let Some(func) = node.field("function") else {
                    return Val::Unknown;
                };
                if let Some(v) = self.helper_result(func, scope, depth) {
                    return v;
                }
                let callee = self.resolve(func, scope, depth + 1);
                let args = self.args(node);
                match callee.path() {
                    Some("builtins.getattr") => {
                        if let (Some(obj), Some(name)) =
                            (args.positional.first(), args.positional.get(1))
                            && let (Val::Path(p), Val::Str(s)) = (
                                self.resolve(*obj, scope, depth + 1),
                                self.resolve(*name, scope, depth + 1),
                            )
                        {
                            return Val::Path(format!("{p}.{s}"));
                        }
                        Val::Unknown
                    }
                    Some("builtins.__import__" | "importlib.import_module") => {
                        match args
                            .positional
                            .first()
                            .map(|a| self.resolve(*a, scope, depth + 1))
                        {
                            Some(Val::Str(s)) => Val::Path(s),
                            _ => Val::Unknown,
                        }
                    }
                    Some("functools.partial") => match args.positional.first() {
                        Some(target) => match self.resolve(*target, scope, depth + 1) {
                            Val::Path(p) => Val::Partial(p, node, scope),
                            _ => Val::Unknown,
                        },
                        None => Val::Unknown,
                    },
                    Some(p) => Val::Path(format!("{p}()")),
                    None => Val::Unknown,
                }
            }
            // `sys.stdout if verbose else sys.stderr`, `stream or sys.stdout`: a value that may
            // be stdout is treated as stdout (the write happens on some path).
            "conditional_expression" | "boolean_operator" => {
                let (a, b) = if node.kind() == "conditional_expression" {
                    (node.named_child(0), node.named_child(2))
                } else {
                    (node.field("left"), node.field("right"))
                };
                let (Some(a), Some(b)) = (a, b) else {
                    return Val::Unknown;
                };
                let (va, vb) = (
                    self.resolve(a, scope, depth + 1),
                    self.resolve(b, scope, depth + 1),
                );
                match (&va, &vb) {
                    (Val::Path(p), _) if is_stdout_path(p) => va,
                    (_, Val::Path(p)) if is_stdout_path(p) => vb,
                    _ if va == vb => va,
                    _ => Val::Unknown,
                }
            }
            // `STREAMS["out"]` of a dict literal with that key.
            "subscript" => self.dict_entry(node, scope, depth).unwrap_or(Val::Unknown),
            "parenthesized_expression" => match node.named_child(0) {
                Some(inner) => self.resolve(inner, scope, depth + 1),
                None => Val::Unknown,
            },
            "integer" => {
                let t = self.text(node).replace('_', "");
                t.parse().map(Val::Int).unwrap_or(Val::Unknown)
            }
            "string" => self
                .string_value(node)
                .map(Val::Str)
                .unwrap_or(Val::Unknown),
            "none" => Val::None,
            "true" => Val::Bool(true),
            "false" => Val::Bool(false),
            _ => Val::Unknown,
        }
    }

    /// `Out.stream` where `Out` is a class of this file: the class attribute's last value.
    fn class_attr(
        &self,
        obj: Node<'t>,
        attr: Node<'t>,
        scope: usize,
        depth: u32,
    ) -> Option<Val<'t>> {
        if obj.kind() != "identifier" {
            return None;
        }
        let name = self.text(obj);
        let b = self.lookup(name, scope, obj.start_byte())?;
        if !matches!(b.def, Def::Opaque) {
            return None;
        }
        let class = self.classes.get(&(b.scope, name))?;
        let inner = *self.scope_of.get(&class.id())?;
        let binding = self.scopes[inner].bindings.get(self.text(attr))?.last()?;
        Some(match binding.def {
            Def::Value(v) if !v.byte_range().contains(&obj.start_byte()) => {
                self.resolve(v, inner, depth + 1)
            }
            Def::Import(ref q) => Val::Path(q.clone()),
            _ => Val::Unknown,
        })
    }

    /// `table["key"]` where `table` is bound to a dict literal: the value under that key.
    fn dict_entry(&self, node: Node<'t>, scope: usize, depth: u32) -> Option<Val<'t>> {
        let table = node.field("value")?;
        let key = node.field("subscript")?;
        if table.kind() != "identifier" || self.subscripted.contains(&self.text(table)) {
            return None;
        }
        let Val::Str(key) = self.resolve(key, scope, depth + 1) else {
            return None;
        };
        let b = self.lookup(self.text(table), scope, table.start_byte())?;
        let Def::Value(dict) = b.def else {
            return None;
        };
        if dict.kind() != "dictionary" || dict.byte_range().contains(&node.start_byte()) {
            return None;
        }
        let mut c = dict.walk();
        let mut found = None;
        for pair in dict.named_children(&mut c) {
            if pair.kind() != "pair" {
                // `**other`: keys the scan cannot see.
                return None;
            }
            if let (Some(k), Some(v)) = (pair.field("key"), pair.field("value"))
                && self.resolve(k, b.scope, depth + 1) == Val::Str(key.clone())
            {
                found = Some(v);
            }
        }
        Some(self.resolve(found?, b.scope, depth + 1))
    }

    /// The value an override (`builtins.print = x`) gives a path at this use, if any.
    /// A same-file function called by name whose one result is a known value (`def out():
    /// return sys.stdout`): that value.
    fn helper_result(&self, func: Node<'t>, scope: usize, depth: u32) -> Option<Val<'t>> {
        if func.kind() != "identifier" {
            return None;
        }
        let name = self.text(func);
        let b = self.lookup(name, scope, func.start_byte())?;
        if !matches!(b.def, Def::Opaque) {
            return None;
        }
        let f = *self.functions.get(&(b.scope, name))?;
        let body = f.field("body")?;
        let mut c = body.walk();
        let kids: Vec<Node> = body
            .named_children(&mut c)
            .filter(|k| k.kind() != "comment")
            .collect();
        // A docstring first is no statement.
        let kids = match kids.as_slice() {
            [doc, rest @ ..]
                if doc.kind() == "expression_statement"
                    && doc.named_child(0).is_some_and(|s| s.kind() == "string") =>
            {
                rest
            }
            all => all,
        };
        let [ret] = kids else {
            return None;
        };
        if ret.kind() != "return_statement" {
            return None;
        }
        let result = ret.named_child(0)?;
        let inner = self.scope_of.get(&f.id()).copied().unwrap_or(b.scope);
        match self.resolve(result, inner, depth + 1) {
            v @ Val::Path(_) => Some(v),
            _ => None,
        }
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

    /// The literal content of a string without interpolations.
    fn string_value(&self, node: Node<'t>) -> Option<String> {
        let mut out = String::new();
        let mut c = node.walk();
        for child in node.named_children(&mut c) {
            match child.kind() {
                "string_content" => out.push_str(self.text(child)),
                "escape_sequence" => out.push_str(self.text(child)),
                "interpolation" => return None,
                _ => {}
            }
        }
        Some(out)
    }

    fn args(&self, call: Node<'t>) -> Args<'t> {
        let mut args = Args::default();
        let Some(list) = call.field("arguments") else {
            return args;
        };
        if list.kind() != "argument_list" {
            // `f(x for x in y)`: one generator argument.
            args.positional.push(list);
            return args;
        }
        let mut c = list.walk();
        for a in list.named_children(&mut c) {
            match a.kind() {
                "keyword_argument" => {
                    if let (Some(k), Some(v)) = (a.field("name"), a.field("value")) {
                        args.keywords.push((self.text(k), v));
                    }
                }
                "list_splat" => args.star = true,
                "dictionary_splat" => args.kwstar = true,
                "comment" => {}
                _ => args.positional.push(a),
            }
        }
        args
    }

    fn stream(&self, node: Node<'t>, scope: usize) -> Stream {
        match self.resolve(node, scope, 0) {
            Val::Path(p) if is_stdout_path(&p) => Stream::Stdout,
            Val::Path(p) if is_stderr_path(&p) => Stream::Stderr,
            Val::Unknown => Stream::Unknown,
            _ => Stream::Other,
        }
    }

    /// True for an fd argument that is stdout: `1`, `sys.stdout.fileno()`, `STDOUT_FILENO`.
    fn is_stdout_fd(&self, node: Node<'t>, scope: usize) -> bool {
        match self.resolve(node, scope, 0) {
            Val::Int(1) => true,
            Val::Path(p) => {
                matches!(
                    p.as_str(),
                    "sys.stdout.fileno()" | "sys.__stdout__.fileno()" | "pty.STDOUT_FILENO"
                )
            }
            _ => false,
        }
    }

    fn truthy(&self, node: Option<Node<'t>>, scope: usize) -> Option<bool> {
        match node.map(|n| self.resolve(n, scope, 0)) {
            None => Some(false),
            Some(Val::Bool(b)) => Some(b),
            Some(Val::None) => Some(false),
            Some(Val::Int(i)) => Some(i != 0),
            _ => None,
        }
    }

    // ------------------------------------------------------------------------------ pass 2

    fn note_row(&mut self, name: &'static str) {
        if !self.facts.rows.contains(&name) {
            self.facts.rows.push(name);
        }
    }

    fn report(&mut self, rule: &'static Rule, node: Node<'t>, message: String) {
        self.facts.findings.push(Finding::at(rule, node, message));
    }

    fn check(&mut self, _root: Node<'t>) {
        for (node, parent, scope) in std::mem::take(&mut self.todo) {
            self.check_node(node, parent, scope);
        }
    }

    /// Pass 2 for one node; returns the scope of its children.
    fn check_node(&mut self, node: Node<'t>, parent: Option<Node<'t>>, scope: usize) -> usize {
        {
            let scope = self.scope_of.get(&node.id()).copied().unwrap_or(scope);
            match node.kind() {
                "call" => self.check_call(node, scope),
                "assignment" => self.check_assignment(node, scope),
                "with_statement" => self.check_with(node, scope),
                "print_statement" => self.check_print_statement(node, scope),
                "string" => self.check_string(node, parent),
                _ => {}
            }
            scope
        }
    }

    /// True when `sys.stdout` has been replaced (by a reported redirect) before this code runs,
    /// or the code runs under `redirect_stdout(...)`.
    fn stdout_elsewhere(&self, node: Node<'t>, scope: usize) -> bool {
        let pos = node.start_byte();
        if self.redirected.iter().any(|(s, e)| (*s..*e).contains(&pos)) {
            return true;
        }
        self.stdout_replaced.iter().any(|(at, s)| {
            match self
                .stdout_restored
                .iter()
                .find(|(r, rs)| rs == s && r > at)
            {
                Some((r, _)) => *s == scope && *at < pos && pos < *r,
                None => *at < pos || (*s == 0 && scope != 0),
            }
        })
    }

    fn check_call(&mut self, call: Node<'t>, scope: usize) {
        let Some(func) = call.field("function") else {
            return;
        };
        let callee = self.resolve(func, scope, 0);
        let mut args = self.args(call);
        let path = match &callee {
            Val::Path(p) => p.clone(),
            Val::Partial(p, pcall, _) => {
                // The partial's own arguments come first.
                let mut merged = self.args(*pcall);
                if !merged.positional.is_empty() {
                    merged.positional.remove(0);
                }
                merged.positional.extend(args.positional);
                merged.keywords.extend(args.keywords);
                merged.star |= args.star;
                merged.kwstar |= args.kwstar;
                args = merged;
                p.clone()
            }
            _ => {
                self.check_generic(call, &callee, &args, scope);
                return;
            }
        };
        let name = snippet(func, self.src);
        if path == "os.dup2" {
            self.check_dup2(call, &args, scope);
            return;
        }
        let Some(row) = sinks::table(Lang::Python).and_then(|t| t.sink(&path)) else {
            self.check_generic(call, &callee, &args, scope);
            return;
        };
        if !self.facts.rows.contains(&row.name) {
            self.facts.rows.push(row.name);
        }
        if row
            .conds
            .contains(&Cond::Satisfies(Condition::StructlogConfigured))
        {
            self.facts.satisfies.push(Condition::StructlogConfigured);
        }
        let site = PySite {
            py: self,
            call,
            args: &args,
            scope,
        };
        match sinks::check(&row.arg, row.conds, &site) {
            Some(verdict) => {
                let why = match row.arg.kw {
                    Some(kw) if verdict.explicit => format!("with `{kw}=` set to stdout"),
                    Some(kw) => format!("without `{kw}=`"),
                    None => String::new(),
                };
                let mut f = Finding::at(row.rule, call, sinks::message(row.message, &name, &why));
                for c in row.conds {
                    if let Cond::Unless(u) = c {
                        f.unless = Some(*u);
                    }
                }
                self.facts.findings.push(f);
            }
            // A child process that does not inherit stdout may still be handed it another way.
            None if row.rule == &STATIC_STDOUT_INHERIT => {
                self.check_generic(call, &callee, &args, scope)
            }
            None => {}
        }
    }

    /// `os.dup2(fd, 1)`: fd 1 pointed elsewhere, unless it was saved first.
    fn check_dup2(&mut self, call: Node<'t>, args: &Args<'t>, scope: usize) {
        let Some(row) = sinks::table(Lang::Python).and_then(|t| t.redirect("os.dup2")) else {
            return;
        };
        if !self.facts.rows.contains(&row.name) {
            self.facts.rows.push(row.name);
        }
        let site = PySite {
            py: self,
            call,
            args,
            scope,
        };
        if sinks::check(&row.arg, row.conds, &site).is_some() {
            let what = snippet(call, self.src);
            self.report(row.rule, call, sinks::message(row.message, &what, ""));
        }
    }

    /// Any other call: a stdout stream or a stdout-writing function passed as an argument.
    fn check_generic(&mut self, call: Node<'t>, callee: &Val<'t>, args: &Args<'t>, scope: usize) {
        let path = callee.path().unwrap_or("");
        let last = match path {
            "" => call
                .field("function")
                .map(|f| self.text(f))
                .unwrap_or("")
                .rsplit('.')
                .next()
                .unwrap_or(""),
            p => p.trim_end_matches("()").rsplit('.').next().unwrap_or(""),
        };
        if matches!(
            path,
            "builtins.isinstance"
                | "builtins.hasattr"
                | "builtins.getattr"
                | "builtins.setattr"
                | "builtins.id"
                | "builtins.type"
                | "builtins.callable"
                | "builtins.repr"
                | "builtins.str"
                | "contextlib.redirect_stdout"
                | "functools.partial"
                | "functools.wraps"
                | "functools.update_wrapper"
        ) {
            return;
        }
        let lower = last.to_ascii_lowercase();
        if ["stdio", "transport", "wrap", "serve", "server", "connect"]
            .iter()
            .any(|w| lower.contains(w))
        {
            return;
        }
        let mut values: Vec<Node<'t>> = args.values().collect();
        while let Some(v) = values.pop() {
            match v.kind() {
                "list" | "tuple" | "set" | "dictionary" | "pair" | "parenthesized_expression" => {
                    let mut c = v.walk();
                    values.extend(v.named_children(&mut c));
                    continue;
                }
                "identifier" | "attribute" | "call" => {}
                _ => continue,
            }
            let val = self.resolve(v, scope, 0);
            let Val::Path(p) = val else { continue };
            if is_stdout_path(&p) {
                let logger = ["handler", "log", "console", "add", "config"]
                    .iter()
                    .any(|w| lower.contains(w));
                let rule = if logger {
                    &STATIC_STDOUT_LOGGER
                } else {
                    &STATIC_STDOUT_WRITE
                };
                let name = call
                    .field("function")
                    .map(|f| snippet(f, self.src))
                    .unwrap_or_default();
                self.report(
                    rule,
                    call,
                    format!(
                        "`{name}(...)` is given `{}` and writes to it",
                        snippet(v, self.src)
                    ),
                );
                return;
            }
            if is_writer_function(&p) && v.kind() != "call" {
                self.report(
                    &STATIC_PRINT_CALL,
                    v,
                    format!(
                        "`{}` is passed as a callback; every call of it writes to stdout",
                        snippet(v, self.src)
                    ),
                );
                return;
            }
        }
    }

    /// True when a stdout write carries a single-line JSON serialization: the hand-written
    /// JSON-RPC transport, not pollution.
    fn is_protocol_payload(&self, payload: Node<'t>, scope: usize) -> bool {
        self.find_serialization(payload, scope).is_some()
    }

    fn find_serialization(&self, payload: Node<'t>, scope: usize) -> Option<Node<'t>> {
        let mut stack = vec![(payload, 0u32)];
        while let Some((n, depth)) = stack.pop() {
            if depth > 6 {
                continue;
            }
            match n.kind() {
                "call" => {
                    let func = n.field("function")?;
                    let callee = self.resolve(func, scope, 0);
                    let p = callee.path().unwrap_or("");
                    let is_dump = matches!(
                        p,
                        "json.dumps"
                            | "orjson.dumps"
                            | "ujson.dumps"
                            | "simplejson.dumps"
                            | "rapidjson.dumps"
                    ) || (func.kind() == "attribute"
                        && func.field("attribute").is_some_and(|a| {
                            matches!(self.text(a), "model_dump_json" | "to_json")
                        }));
                    if is_dump {
                        let args = self.args(n);
                        let indented = args
                            .kw("indent")
                            .is_some_and(|i| self.resolve(i, scope, 0) != Val::None);
                        return (!indented).then_some(n);
                    }
                    // `json.dumps(m).encode()`: look into the receiver and the arguments.
                    if func.kind() == "attribute"
                        && let Some(obj) = func.field("object")
                    {
                        stack.push((obj, depth + 1));
                    }
                    if let Some(a) = n.field("arguments") {
                        stack.push((a, depth + 1));
                    }
                }
                "binary_operator"
                | "parenthesized_expression"
                | "argument_list"
                | "string"
                | "interpolation"
                | "concatenated_string" => {
                    let mut c = n.walk();
                    for child in n.named_children(&mut c) {
                        stack.push((child, depth + 1));
                    }
                }
                "identifier" => {
                    // `line = json.dumps(msg) + "\n"; sys.stdout.write(line)`
                    if let Some(b) = self.lookup(self.text(n), scope, n.start_byte())
                        && let Def::Value(v) = b.def
                        && !v.byte_range().contains(&n.start_byte())
                    {
                        stack.push((v, depth + 1));
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// `print(json.dumps({"jsonrpc": "2.0", ...}))`: a hand-written JSON-RPC reply.
    fn is_jsonrpc_print(&self, args: &Args<'t>, scope: usize) -> bool {
        let [payload] = args.positional.as_slice() else {
            return false;
        };
        let Some(dump) = self.find_serialization(*payload, scope) else {
            return false;
        };
        // `def send(message): print(json.dumps(message), flush=True)`: the transport itself.
        if self.scopes[scope]
            .name
            .is_some_and(super::is_transport_function)
        {
            return true;
        }
        let dumped = self.args(dump).positional.first().copied();
        let mut value = dumped;
        for _ in 0..4 {
            match value {
                Some(v) if v.kind() == "identifier" => {
                    value = match self.lookup(self.text(v), scope, v.start_byte()) {
                        Some(Binding {
                            def: Def::Value(x), ..
                        }) => Some(*x),
                        _ => None,
                    };
                }
                _ => break,
            }
        }
        let Some(dict) = value.filter(|v| v.kind() == "dictionary") else {
            return false;
        };
        let mut c = dict.walk();
        dict.named_children(&mut c).any(|pair| {
            pair.field("key").is_some_and(|k| {
                k.kind() == "string" && self.string_value(k).as_deref() == Some("jsonrpc")
            })
        })
    }

    fn check_assignment(&mut self, node: Node<'t>, scope: usize) {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            return;
        };
        if left.kind() != "attribute" {
            return;
        }
        let target = self.static_path(left);
        let resolved = match left.field("object") {
            Some(obj) => match self.resolve(obj, scope, 0) {
                Val::Path(p) => left
                    .field("attribute")
                    .map(|a| format!("{p}.{}", self.text(a))),
                _ => None,
            },
            None => None,
        };
        let is_stdout = resolved
            .as_deref()
            .or(target.as_deref())
            .is_some_and(|p| p == "sys.stdout" || p == "sys.__stdout__");
        if is_stdout && resolved.is_some() {
            // Rewrapping stdout (`io.TextIOWrapper(sys.stdout.buffer, ...)`) keeps fd 1; anything
            // else sends the SDK's replies elsewhere.
            // A variable that saved the stream before (`saved = sys.stdout`) puts it back.
            let saved = right.kind() == "identifier"
                && self
                    .lookup(self.text(right), scope, right.start_byte())
                    .is_some_and(
                        |b| matches!(b.def, Def::Value(v) if self.text(v).contains("stdout")),
                    );
            // So does an attribute that saved it (`self._old = sys.stdout` in `__enter__`,
            // `sys.stdout = self._old` in `__exit__`).
            let saved_attr = right.kind() == "attribute"
                && self
                    .self_attr(right, scope)
                    .and_then(|k| self.self_attrs.get(&k))
                    .is_some_and(|list| {
                        list.iter().any(
                            |b| matches!(b.def, Def::Value(v) if self.text(v).contains("stdout")),
                        )
                    });
            let put_back = saved || saved_attr || self.text(right).contains("stdout");
            if put_back {
                if !self.stdout_replaced.is_empty() {
                    self.stdout_restored.push((node.start_byte(), scope));
                }
                return;
            }
            self.stdout_replaced.push((node.end_byte(), scope));
            self.note_row("sys.stdout");
            self.report(
                &STATIC_STDOUT_REDIRECT,
                node,
                format!(
                    "`{}` replaces stdout for the whole process: the MCP transport's replies go there too",
                    snippet(node, self.src)
                ),
            );
            return;
        }
        // `self.log = print`: a stdout writer stored where calls cannot be followed (calls of
        // `self.attr` are followed, so those are reported where they are called).
        if matches!(right.kind(), "identifier" | "attribute")
            && self.self_attr(left, scope).is_none()
            && let Val::Path(p) = self.resolve(right, scope, 0)
            && is_writer_function(&p)
        {
            self.report(
                &STATIC_PRINT_CALL,
                right,
                format!(
                    "`{}` is stored as a callable; every call of it writes to stdout",
                    snippet(right, self.src)
                ),
            );
        }
    }

    fn check_with(&mut self, node: Node<'t>, scope: usize) {
        let Some(body) = node.field("body") else {
            return;
        };
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.kind() == "call" {
                let callee = n.field("function").map(|f| self.resolve(f, scope, 0));
                if callee.as_ref().and_then(Val::path) == Some("contextlib.redirect_stdout") {
                    self.note_row("contextlib.redirect_stdout");
                    let target = self.args(n).positional.first().copied();
                    if target.is_none_or(|t| self.stream(t, scope) != Stream::Stdout) {
                        self.redirected.push((body.start_byte(), body.end_byte()));
                    }
                }
                continue;
            }
            if n.id() == body.id() {
                continue;
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
    }

    fn check_print_statement(&mut self, node: Node<'t>, scope: usize) {
        let mut c = node.walk();
        let chevron = node.named_children(&mut c).find(|n| n.kind() == "chevron");
        if let Some(ch) = chevron {
            let target = ch.named_child(0);
            if target.is_some_and(|t| self.stream(t, scope) != Stream::Stdout) {
                return;
            }
        }
        if self.stdout_elsewhere(node, scope) {
            return;
        }
        self.report(
            &STATIC_PRINT_CALL,
            node,
            "a Python 2 `print` statement writes to stdout".to_string(),
        );
    }

    fn check_string(&mut self, node: Node<'t>, parent: Option<Node<'t>>) {
        // Only short strings can be `ext://sys.stdout`; docstrings and other bare strings are
        // not configuration values.
        if node.byte_range().len() > 40 || parent.is_none_or(|p| p.kind() == "expression_statement")
        {
            return;
        }
        if let Some(s) = self.string_value(node)
            && (s == "ext://sys.stdout" || s == "ext://sys.__stdout__")
        {
            self.report(
                &STATIC_STDOUT_LOGGER,
                node,
                format!("logging config stream `{s}` sends log records to stdout"),
            );
        }
    }
}

/// One Python call as the generic sink checker sees it.
struct PySite<'a, 't> {
    py: &'a Py<'t>,
    call: Node<'t>,
    args: &'a Args<'t>,
    scope: usize,
}

impl<'t> Site<'t> for PySite<'_, 't> {
    fn arg(&self, pos: Option<u8>, kw: Option<&str>) -> Option<Node<'t>> {
        match kw {
            Some(k) => self.args.get(k, pos.map(usize::from)),
            None => pos.and_then(|p| self.args.positional.get(usize::from(p)).copied()),
        }
    }

    fn dest(&self, value: Node<'t>, means: Means, default: Dest) -> Dest {
        let py = self.py;
        let scope = self.scope;
        match means {
            Means::Stream | Means::Streams => match py.resolve(value, scope, 0) {
                Val::None => default,
                Val::Path(p) if is_stdout_path(&p) => Dest::Stdout,
                Val::Path(p) if is_stderr_path(&p) => Dest::Stderr,
                Val::Unknown => Dest::Unknown,
                _ => Dest::Other,
            },
            Means::Fd | Means::FileOrFd => {
                let stdout = py.is_stdout_fd(value, scope)
                    || (means == Means::FileOrFd
                        && matches!(
                            py.resolve(value, scope, 0),
                            Val::Str(ref s) if matches!(s.as_str(), "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1")
                        ));
                if stdout { Dest::Stdout } else { Dest::Other }
            }
            Means::Presence | Means::StderrFlag | Means::Threshold => Dest::Other,
            Means::Sink => match py.resolve(value, scope, 0) {
                Val::Path(p) if is_stdout_path(&p) || is_writer_function(&p) => Dest::Stdout,
                Val::Str(s) if s == "ext://sys.stdout" => Dest::Stdout,
                _ => Dest::Other,
            },
            Means::ChildStdout => {
                if matches!(py.resolve(value, scope, 0), Val::None | Val::Int(1))
                    || py.stream(value, scope) == Stream::Stdout
                {
                    Dest::Stdout
                } else {
                    Dest::Other
                }
            }
        }
    }

    fn holds(&self, cond: Cond) -> bool {
        let (py, args, scope) = (self.py, self.args, self.scope);
        match cond {
            Cond::FollowsRedirect => !py.stdout_elsewhere(self.call, scope),
            Cond::FlagOff(k) => py.truthy(args.kw(k), scope) == Some(false),
            Cond::NoSplat => !args.kwstar,
            Cond::Given(p, k) => self.arg(p, k).is_some(),
            Cond::WriteMode(p, k) => !matches!(
                args.get(k, Some(usize::from(p))).map(|m| py.resolve(m, scope, 0)),
                Some(Val::Str(m)) if !m.contains(['w', 'a', '+', 'x'])
            ),
            Cond::NotPayload(p) => !args
                .positional
                .get(usize::from(p))
                .is_some_and(|v| py.is_protocol_payload(*v, scope)),
            Cond::NotJsonRpc => !py.is_jsonrpc_print(args, scope),
            Cond::NotCaptured(k) => {
                args.kw("stdout").is_some()
                    || (!args.kwstar && py.truthy(args.kw(k), scope) == Some(false))
            }
            Cond::FdNotSaved => !py.saves_stdout_fd,
            // Python rows do not use it: the file.
            Cond::FileLacks(n) | Cond::ScopeLacks(n) | Cond::ThenLacks(n) => !py.text.contains(n),
            Cond::CallLacks(n) => !py.text(self.call).contains(n),
            Cond::Quiet | Cond::NotFilter => true,
            // Python rows do not use it: never a finding on a condition it cannot read.
            Cond::ArgIs(..) => false,
            Cond::Satisfies(_) | Cond::Unless(_) => true,
        }
    }
}

/// Names a `from module import *` brings in that the rules care about.
fn star_export(module: &str, name: &str) -> Option<String> {
    let known: &[&str] = match module {
        "sys" => &["stdout", "stderr", "__stdout__", "__stderr__"],
        "os" => &["write", "system", "dup2", "fdopen"],
        "rich" => &["print", "print_json", "inspect"],
        "pprint" => &["pprint", "pp", "PrettyPrinter"],
        "click" | "typer" => &["echo", "secho"],
        "subprocess" => &["run", "call", "check_call", "Popen", "PIPE", "DEVNULL"],
        "logging" => &["basicConfig", "StreamHandler"],
        _ => &[],
    };
    known.contains(&name).then(|| format!("{module}.{name}"))
}
