//! The shared resolver and checker of the Go, Rust, Java, Kotlin and C# analyzers.
//!
//! Each language says what its nodes are ([`Syntax`]: scopes, bindings, assignments, calls,
//! references, expressions); this module does the rest once: block scopes with bindings in
//! source order, fields (`this.out`), qualified names through the file's imports, stream facts
//! that flow through variables, fields and wrappers (`bufio.NewWriter(os.Stdout)`), redirections
//! in source order and scope (`Console.SetOut(Console.Error)`), configurations whose target is
//! set when built, later, or left to the default (a logback `ConsoleAppender`), and the sink rows
//! of the language's table applied by [`sinks::check`]. Values also flow through the one result
//! of same-file helpers, fields set by object literals, singleton members, several assignments
//! at once and choices (`if`/`match`); a local variable keeps the stream object it took, whatever
//! later redirections do. Writes inside a hand-written transport's send method (its signature
//! names a message, its body serializes JSON compactly) are the protocol, not findings. Nothing
//! here knows a library name.

use super::{FastMap, FileFacts, Finding, is_transport_name, snippet};
use crate::catalog::Rule;
use crate::catalog::scan::{
    STATIC_PRINT_CALL, STATIC_STDOUT_LOGGER, STATIC_STDOUT_REDIRECT, STATIC_STDOUT_WRITE,
};
use crate::scan::sinks::{self, Cond, Config, Dest, Means, Site, Table};
use tree_sitter::Node;

/// How deep evaluation follows variables and nested expressions.
/// Serializer calls whose own result is indented: named in a function, they say nothing about
/// another value the function serializes compactly (lowercase, as matched).
const PRETTY_SERIALIZERS: &[&str] = &[
    "to_string_pretty",
    "to_writer_pretty",
    "to_vec_pretty",
    "marshalindent",
    "writerwithdefaultprettyprinter",
];

const MAX_DEPTH: u32 = 24;

/// Nodes (of any grammar) that hold declarations: where same-file helpers are looked for.
const CONTAINERS: &[&str] = &[
    "class_declaration",
    "class_body",
    "object_declaration",
    "companion_object",
    "namespace_declaration",
    "file_scoped_namespace_declaration",
    "declaration_list",
    "impl_item",
    "mod_item",
    "struct_declaration",
    "record_declaration",
];

/// The one expression a function body results in: `{ return x; }`, `=> x`, `= x`, a block
/// whose only statement returns.
pub fn single_result(body: Node<'_>) -> Option<Node<'_>> {
    let mut body = body;
    for _ in 0..3 {
        match body.kind() {
            "block" | "function_body" | "statements" | "statement_list" => {
                let mut c = body.walk();
                let kids: Vec<Node> = body
                    .named_children(&mut c)
                    .filter(|k| !k.kind().contains("comment"))
                    .collect();
                let [one] = kids.as_slice() else {
                    return None;
                };
                body = *one;
            }
            "arrow_expression_clause" => return body.named_child(0),
            "return_statement" | "return_expression" | "jump_expression" => {
                return body.named_child(0);
            }
            _ => return body.kind().ends_with("expression").then_some(body),
        }
    }
    None
}

/// A value as far as the scan can tell.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// A qualified name, a stream, or a call result (`x()`).
    Path(String),
    Str(String),
    Int(i64),
    Bool(bool),
    Null,
    /// A configuration under construction (index into the engine's list).
    Config(usize),
    /// The object a stream that follows redirections (`System.out`) pointed to when a local
    /// variable took it: a later redirection does not move it (`PrintStream protocolOut =
    /// System.out; System.setOut(System.err); protocolOut.println(...)` is stdout).
    Held(String),
    Unknown,
}

/// What an expression node is, as the language's grammar says.
pub enum Expr<'t> {
    Ident(&'t str),
    /// `object.name` (or `object::name`).
    Member(Node<'t>, &'t str),
    /// `this.name` / `self.name`.
    Field(&'t str),
    Call,
    /// Parentheses, casts, `&x`, `await x`: the inner expression.
    Inner(Node<'t>),
    Str(String),
    Int(i64),
    Bool(bool),
    Null,
    /// A qualified name the language spelled out itself (a path inside a macro's tokens).
    Path(String),
    /// One of several values (`if v { io::stdout() } else { io::sink() }`, a `match`): a
    /// stdout stream if any branch is one.
    Choice(Vec<Node<'t>>),
    Unknown,
}

/// A call, a construction, a macro invocation or an object initializer.
pub struct Call<'t> {
    pub node: Node<'t>,
    /// The receiver of a method, or the package/type of a qualified call.
    pub receiver: Option<Node<'t>>,
    /// The callee expression when there is no receiver (an identifier, a type).
    pub callee: Option<Node<'t>>,
    /// The method, function, type or macro name as written (last segment).
    pub name: &'t str,
    /// (name of a named argument/field, value, node to report a field at).
    pub args: Vec<(Option<&'t str>, Node<'t>, Node<'t>)>,
}

/// What a node is.
pub enum Shape<'t> {
    /// A function, method, lambda or block. `entry`: `main`, a static initializer, top-level
    /// code: its redirections hold for the whole file.
    Scope {
        function: bool,
        entry: bool,
    },
    /// Names bound to values; `None` is a value the scan cannot know (a parameter).
    Bind(Vec<(Node<'t>, Option<Node<'t>>)>),
    Assign(Node<'t>, Node<'t>),
    Call(Call<'t>),
    /// A function passed by reference: receiver (`System.out`) or none, and the name.
    Reference(Option<Node<'t>>, &'t str),
    /// Several assignments at once (`a.Stdout, a.Stderr = os.Stdout, os.Stderr`).
    AssignMany(Vec<(Node<'t>, Node<'t>)>),
    /// Fields of the object under construction set by a literal (`Self { out: io::stdout() }`,
    /// `Self { verbose }`): `self.out` is that value in the file's methods.
    Fields(Vec<(&'t str, Node<'t>)>),
    /// A member of a singleton bound by its qualified name (Kotlin `object Console { val stream
    /// = System.out }` → `Console.stream`).
    Static(String, Node<'t>),
    Other,
}

/// What a language tells the engine.
pub trait Syntax<'t> {
    fn shape(&self, node: Node<'t>) -> Shape<'t>;
    fn expr(&self, node: Node<'t>) -> Expr<'t>;
    /// The qualified name of an unbound identifier: an import, a package, a builtin
    /// (`fmt` → `fmt`, `io` → `std::io`, `println` → `kotlin.io.println`).
    fn qualify(&self, name: &str) -> Option<String>;
    /// One spelling of a qualified name (`System.Console.WriteLine` → `Console.WriteLine`).
    fn normalize(&self, path: String) -> String {
        path
    }
    /// The separator of qualified names.
    fn sep(&self) -> &'static str {
        "."
    }
    /// A stdout write's payload is a single-line JSON serialization (the hand-written
    /// transport).
    fn is_payload(&self, _node: Node<'t>) -> bool {
        false
    }
    /// Calls the file handed stdout to, with no row of their own, are reported as writes.
    fn generic_stdout_args(&self) -> bool {
        true
    }
    /// A top-level function of the file whose result is one expression (`func stdout()
    /// io.Writer { return os.Stdout }`, `fn out() -> io::Stdout { io::stdout() }`): its name
    /// and that expression, so a call of it is the value the expression is.
    fn returned(&self, _node: Node<'t>) -> Option<(&'t str, Node<'t>)> {
        None
    }
    /// A type of the file that is a hand-written transport (its send method writes a
    /// serialized JSON message): stdout handed to it is the protocol channel.
    fn is_transport_type(&self, _name: &str) -> bool {
        false
    }
    /// Top-level variables are set before any code runs (Go's package variables), so one that
    /// takes a stream holds the object it took, whatever `main` redirects later.
    fn globals_hold(&self) -> bool {
        false
    }
    /// A function that only hands its argument to a lambda (Kotlin `with(System.out) { ... }`):
    /// stdout given to it is no write of its own.
    fn passes_through(&self, _name: &str) -> bool {
        false
    }
    /// A scope function whose lambda gets a value as its implicit receiver (Kotlin
    /// `with(System.err) { ... }`, `System.out.run { ... }`): the value and the lambda. A bare
    /// print or write call in the lambda is then that value's own method (a member wins over
    /// a top-level function of the same name).
    fn implicit_receiver(&self, _call: &Call<'t>) -> Option<(Node<'t>, Node<'t>)> {
        None
    }
}

/// Node kinds (by prefix, across the grammars) of code that runs on some paths only.
const BRANCHING: &[&str] = &[
    "if_",
    "else",
    "for_",
    "foreach",
    "enhanced_for",
    "while_",
    "do_",
    "switch",
    "expression_switch",
    "type_switch",
    "select_",
    "when_",
    "match_",
    "loop_",
    "catch",
    "lambda",
    "closure",
    "func_literal",
    "anonymous_function",
    "ternary",
    "conditional_expression",
    "expression_case",
    "default_case",
    "communication_case",
];

/// The binding name of a lambda's implicit receiver (no identifier can spell it).
const RECEIVER: &str = "<this>";

struct Scope<'t> {
    parent: Option<usize>,
    /// The innermost function scope (itself for a function).
    function: usize,
    entry: bool,
    /// The bytes of the scope's node.
    range: std::ops::Range<usize>,
    bindings: FastMap<&'t str, Vec<(usize, Val)>>,
}

struct Cfg<'t> {
    row: &'static Config,
    node: Node<'t>,
    /// Where the target was chosen: the construction, or the setter that chose stdout.
    at: Node<'t>,
    dest: Dest,
}

/// A redirection in force from `pos` on: in its own function, and everywhere when it runs at
/// an entry point.
struct Redirect {
    pos: usize,
    function: usize,
    entry: bool,
    dest: Dest,
}

pub struct Engine<'t, S: Syntax<'t>> {
    syn: S,
    src: &'t [u8],
    text: &'t str,
    table: &'static Table,
    scopes: Vec<Scope<'t>>,
    fields: FastMap<&'t str, Val>,
    redirects: Vec<Redirect>,
    configs: Vec<Cfg<'t>>,
    config_of: FastMap<usize, usize>,
    /// Same-file functions whose result is one expression, by name.
    returns: FastMap<&'t str, Vec<Node<'t>>>,
    /// Members of singletons by qualified name.
    statics: FastMap<String, Val>,
    /// A member's own name → its qualified name, when only one singleton has it.
    static_names: FastMap<String, Option<String>>,
    /// Function scopes by their node's byte range.
    function_at: FastMap<(usize, usize), usize>,
    /// Function scopes known to be (or not to be) a hand-written transport's send method.
    transport: FastMap<usize, bool>,
    /// Receivers (as written) made to pretty-print, with the method that then writes.
    pretty: Vec<(usize, &'t str, &'static str)>,
    /// Streams handed to a scope function as its lambda's implicit receiver, by the lambda's
    /// byte range (bound when the walk enters the lambda).
    receivers: FastMap<(usize, usize), Val>,
    pub facts: FileFacts,
}

impl<'t, S: Syntax<'t>> Engine<'t, S> {
    pub fn new(syn: S, text: &'t str, table: &'static Table) -> Self {
        Engine {
            syn,
            src: text.as_bytes(),
            text,
            table,
            scopes: vec![Scope {
                parent: None,
                function: 0,
                entry: true,
                range: 0..text.len(),
                bindings: FastMap::default(),
            }],
            fields: FastMap::default(),
            redirects: Vec::new(),
            configs: Vec::new(),
            config_of: FastMap::default(),
            returns: FastMap::default(),
            statics: FastMap::default(),
            static_names: FastMap::default(),
            pretty: Vec::new(),
            receivers: FastMap::default(),
            function_at: FastMap::default(),
            transport: FastMap::default(),
            facts: FileFacts::default(),
        }
    }

    /// One walk in document order, then the configurations still pointing at stdout.
    pub fn run(mut self, root: Node<'t>) -> FileFacts {
        // Functions at the top and in classes, objects, namespaces, `impl` blocks.
        let mut stack = vec![(root, 0u8)];
        while let Some((n, depth)) = stack.pop() {
            let mut c = n.walk();
            for k in n.named_children(&mut c) {
                if let Some((name, value)) = self.syn.returned(k) {
                    self.returns.entry(name).or_default().push(value);
                } else if depth < 6 && CONTAINERS.contains(&k.kind()) {
                    stack.push((k, depth + 1));
                }
            }
        }
        super::walk(root, 0, |node, _parent, scope| self.visit(node, scope));
        for c in std::mem::take(&mut self.configs) {
            if c.dest == Dest::Stdout && c.row.triggers.is_empty() {
                let name = snippet(c.node, self.src);
                self.report(c.row.rule, c.at, sinks::message(c.row.message, &name, ""));
            }
        }
        self.facts
    }

    /// Records that a row of the table took part in this file's analysis (for the test that
    /// every row is exercised by a fixture).
    fn note_row(&mut self, name: &'static str) {
        if !self.facts.rows.contains(&name) {
            self.facts.rows.push(name);
        }
    }

    fn report(&mut self, rule: &'static Rule, node: Node<'t>, message: String) {
        let write =
            std::ptr::eq(rule, &STATIC_PRINT_CALL) || std::ptr::eq(rule, &STATIC_STDOUT_WRITE);
        if write && !self.human_text(node) && self.in_transport_function(node) {
            return;
        }
        self.facts.findings.push(Finding::at(rule, node, message));
    }

    /// Is the node inside a function that sends one JSON-serialized message (its signature
    /// names a message, a frame or sending; its body serializes JSON compactly)? That is a
    /// hand-written JSON-RPC transport: its stdout writes are the protocol itself
    /// (`void send(JsonNode message) { out.println(mapper.writeValueAsString(message)); }`,
    /// `SendAsync(JsonRpcMessage message) { await JsonSerializer.SerializeAsync(_stdout, ...) }`).
    fn in_transport_function(&mut self, node: Node<'t>) -> bool {
        // The innermost function around the node: its nearest ancestor that opened a function
        // scope (a bounded climb: nesting deeper than that is no transport's send method).
        let mut f = None;
        let mut n = node.parent();
        for _ in 0..256 {
            let Some(a) = n else { break };
            if let Some(id) = self.function_at.get(&(a.start_byte(), a.end_byte())) {
                f = Some(*id);
                break;
            }
            n = a.parent();
        }
        let Some(f) = f else {
            return false;
        };
        if let Some(known) = self.transport.get(&f) {
            return *known;
        }
        let verdict = self.sends_one_message(f);
        self.transport.insert(f, verdict);
        verdict
    }

    /// Whether a call's first argument starts with human text (`"got " + message`,
    /// `"debug {}"`): never a frame, even in a transport's send method.
    fn human_text(&self, node: Node<'t>) -> bool {
        let t = self.text(node);
        let Some(open) = t.find('(') else {
            return false;
        };
        let args = t[open + 1..].trim_start();
        let args = args.trim_start_matches(['$', '@', 'f', 'b']);
        let Some(content) = args.strip_prefix('"') else {
            return false;
        };
        !(content.is_empty() || content.starts_with(['{', '%', '"', '\\']))
    }

    /// Whether a function scope's signature names a message, a frame or sending, and its body
    /// serializes JSON compactly.
    fn sends_one_message(&self, f: usize) -> bool {
        let text = self.text.get(self.scopes[f].range.clone()).unwrap_or("");
        let body_at = text.find(['{', '=']).unwrap_or(text.len());
        let signature = text[..body_at].to_ascii_lowercase();
        if !["send", "message", "frame"]
            .iter()
            .any(|w| signature.contains(w))
        {
            return false;
        }
        let lower = text.to_ascii_lowercase();
        let serializes = lower.contains("writevalueasstring")
            || (lower.contains("json")
                && [
                    "serializ",
                    "marshal",
                    "tojson",
                    "encodetostring",
                    "stringify",
                    "to_string",
                    "to_vec",
                    "to_writer",
                ]
                .iter()
                .any(|w| lower.contains(w)));
        serializes && !lower.contains("indent") && !lower.contains("pretty")
    }

    fn text(&self, node: Node<'t>) -> &'t str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    fn visit(&mut self, node: Node<'t>, scope: usize) -> usize {
        match self.syn.shape(node) {
            Shape::Scope { function, entry } => {
                let parent = &self.scopes[scope];
                let id = self.scopes.len();
                let function_scope = if function { id } else { parent.function };
                let entry = if function { entry } else { parent.entry };
                if function {
                    self.function_at
                        .insert((node.start_byte(), node.end_byte()), id);
                }
                self.scopes.push(Scope {
                    parent: Some(scope),
                    function: function_scope,
                    entry,
                    range: node.byte_range(),
                    bindings: FastMap::default(),
                });
                if let Some(v) = self.receivers.remove(&(node.start_byte(), node.end_byte())) {
                    self.scopes[id]
                        .bindings
                        .entry(RECEIVER)
                        .or_default()
                        .push((node.start_byte(), v));
                }
                return id;
            }
            Shape::Bind(list) => {
                for (name, value) in list {
                    let v = match value {
                        Some(v) => self.eval(v, scope, 0),
                        None => Val::Unknown,
                    };
                    self.bind(scope, name, v);
                }
            }
            Shape::Assign(target, value) => self.assign(node, target, value, scope),
            Shape::Call(call) => {
                if let Some((value, lambda)) = self.syn.implicit_receiver(&call) {
                    let v = self.eval(value, scope, 0);
                    if self.stream_of(&v).is_some() {
                        self.receivers
                            .insert((lambda.start_byte(), lambda.end_byte()), v);
                    }
                }
                self.call(&call, scope)
            }
            Shape::Fields(list) => {
                for (name, value) in list {
                    let v = self.eval(value, scope, 0);
                    if v != Val::Unknown {
                        self.fields.insert(name, v);
                    }
                }
            }
            Shape::Static(name, value) => {
                let v = self.eval(value, scope, 0);
                let own = super::last_segment(&name).to_string();
                self.static_names
                    .entry(own)
                    .and_modify(|q| {
                        if q.as_deref() != Some(name.as_str()) {
                            *q = None;
                        }
                    })
                    .or_insert_with(|| Some(name.clone()));
                self.statics.insert(name, v);
            }
            Shape::AssignMany(list) => {
                for (target, value) in list {
                    self.assign(node, target, value, scope);
                }
            }
            Shape::Reference(receiver, name) => self.reference(node, receiver, name, scope),
            Shape::Other => {}
        }
        scope
    }

    fn bind(&mut self, scope: usize, name: Node<'t>, v: Val) {
        self.bind_at(scope, name, name.start_byte(), v);
    }

    /// Binds a name from a position on (0: from the start of the scope).
    fn bind_at(&mut self, scope: usize, name: Node<'t>, pos: usize, v: Val) {
        let key = self.text(name);
        // A local variable holds the object itself, not the process's current stdout.
        let v = if (self.scopes[scope].function != 0 || self.syn.globals_hold())
            && !self.redirected(name, scope)
        {
            self.held(v)
        } else {
            v
        };
        if !key.is_empty() {
            self.scopes[scope]
                .bindings
                .entry(key)
                .or_default()
                .push((pos, v));
        }
    }

    /// A stream that follows redirections (`System.out`), taken as the object it is now.
    fn held(&self, v: Val) -> Val {
        match v {
            Val::Path(p)
                if self
                    .table
                    .stream_value(&p)
                    .is_some_and(|s| s.follows && s.dest == Dest::Stdout) =>
            {
                Val::Held(p)
            }
            v => v,
        }
    }

    /// Whether the nearest binding of a name is outside every function (a class body's field,
    /// a top-level variable).
    fn bound_outside_functions(&self, name: &str, scope: usize) -> bool {
        let mut s = Some(scope);
        while let Some(id) = s {
            let sc = &self.scopes[id];
            if sc.bindings.contains_key(name) {
                return sc.function == 0;
            }
            s = sc.parent;
        }
        false
    }

    /// The nearest scope that binds a name.
    fn declaring_scope(&self, name: &str, scope: usize) -> Option<usize> {
        let mut s = Some(scope);
        while let Some(id) = s {
            if self.scopes[id].bindings.contains_key(name) {
                return Some(id);
            }
            s = self.scopes[id].parent;
        }
        None
    }

    fn lookup(&self, name: &str, scope: usize, pos: usize) -> Option<&Val> {
        let mut s = Some(scope);
        while let Some(id) = s {
            let sc = &self.scopes[id];
            if let Some(list) = sc.bindings.get(name)
                && let Some((_, v)) = list.iter().rev().find(|(p, _)| *p < pos)
            {
                return Some(v);
            }
            s = sc.parent;
        }
        None
    }

    // ------------------------------------------------------------------------- values

    pub fn eval(&mut self, node: Node<'t>, scope: usize, depth: u32) -> Val {
        if depth > MAX_DEPTH {
            return Val::Unknown;
        }
        match self.syn.expr(node) {
            Expr::Ident(name) => {
                let bound = self.lookup(name, scope, node.start_byte());
                // A field declared without a value and set later (`this.writer = ...` in the
                // constructor) has that value.
                if let Some(v) = bound
                    && (*v != Val::Unknown || !self.fields.contains_key(name))
                {
                    return v.clone();
                }
                if let Some(v) = self.fields.get(name) {
                    return v.clone();
                }
                if bound.is_some() {
                    return Val::Unknown;
                }
                // A singleton member used by its own name (a companion object's `OUT` in
                // its class).
                if let Some(Some(q)) = self.static_names.get(name)
                    && let Some(v) = self.statics.get(q)
                {
                    return v.clone();
                }
                match self.syn.qualify(name) {
                    Some(q) => Val::Path(self.syn.normalize(q)),
                    None => Val::Path(name.to_string()),
                }
            }
            Expr::Field(name) => self.fields.get(name).cloned().unwrap_or(Val::Unknown),
            Expr::Member(obj, name) => match self.eval(obj, scope, depth + 1) {
                Val::Path(p) => {
                    let path = self.syn.normalize(format!("{p}{}{name}", self.syn.sep()));
                    match self.statics.get(&path) {
                        Some(v) => v.clone(),
                        None => Val::Path(path),
                    }
                }
                Val::Config(i) => Val::Config(i),
                _ => Val::Unknown,
            },
            Expr::Call => match self.syn.shape(node) {
                Shape::Call(call) => self.call_value(&call, scope, depth),
                _ => Val::Unknown,
            },
            // Parentheses nested any depth are one step (iterative: a hundred thousand of them
            // must neither overflow the stack nor exhaust the depth bound).
            Expr::Inner(mut inner) => {
                while let Expr::Inner(i) = self.syn.expr(inner) {
                    inner = i;
                }
                self.eval(inner, scope, depth + 1)
            }
            Expr::Str(s) => Val::Str(s),
            Expr::Int(i) => Val::Int(i),
            Expr::Bool(b) => Val::Bool(b),
            Expr::Null => Val::Null,
            Expr::Path(p) => Val::Path(self.syn.normalize(p)),
            Expr::Choice(branches) => {
                let mut first = None;
                for b in branches {
                    let v = self.eval(b, scope, depth + 1);
                    if self.stream_of(&v).is_some_and(|s| s.dest == Dest::Stdout) {
                        return v;
                    }
                    first.get_or_insert(v);
                }
                match first {
                    Some(v) if self.stream_of(&v).is_some() => v,
                    _ => Val::Unknown,
                }
            }
            Expr::Unknown => Val::Unknown,
        }
    }

    /// The qualified name a call goes to, and the receiver's value.
    fn callee(&mut self, call: &Call<'t>, scope: usize, depth: u32) -> (Option<String>, Val) {
        match (call.receiver, call.callee) {
            (Some(r), _) => {
                let recv = self.eval(r, scope, depth + 1);
                let path = match &recv {
                    Val::Path(p) => Some(self.syn.normalize(format!(
                        "{p}{}{}",
                        self.syn.sep(),
                        call.name
                    ))),
                    _ => None,
                };
                (path, recv)
            }
            (None, Some(c)) => match self.eval(c, scope, depth + 1) {
                Val::Path(p) => (Some(p), Val::Unknown),
                _ => (None, Val::Unknown),
            },
            (None, None) => (None, Val::Unknown),
        }
    }

    fn call_value(&mut self, call: &Call<'t>, scope: usize, depth: u32) -> Val {
        let (path, recv) = self.callee(call, scope, depth);
        if let Val::Config(i) = recv {
            // A builder chain: its setters take effect before what the chain ends with.
            let row = self.configs[i].row;
            if let Some(v) = self.setter_value(row, call, scope) {
                let d = self.config_dest(row, v, scope);
                self.set_config(i, d, call.node);
            }
            return Val::Config(i);
        }
        if call.receiver.is_some()
            && let Some(row) = self
                .table
                .config(&format!("*{}{}", self.syn.sep(), call.name))
        {
            // A configuration built by a method of any receiver (`builder.newAppender(...)`).
            self.note_row(row.name);
            return Val::Config(self.config_at(row, call, scope));
        }
        if call.receiver.is_some() {
            // A method of any receiver that returns a stream (`cmd.OutOrStdout()`).
            let any = format!("*{}{}()", self.syn.sep(), call.name);
            if self.table.stream_value(&any).is_some() {
                return Val::Path(any);
            }
        }
        if call
            .receiver
            .is_some_and(|r| matches!(self.text(r), "self" | "this"))
            && let Some(v) = self.helper_value(call.name, depth)
        {
            // A helper method of the same object (`self.out()`, `this.out()`).
            return v;
        }
        if path.is_none()
            && self.stream_of(&recv).is_some()
            && let Some(w) = self
                .table
                .wrapper(&format!("*{}{}", self.syn.sep(), call.name))
            && w.arg.pos.is_none()
            && w.arg.kw.is_none()
        {
            // A held stream's method that returns a writer on it (`out.bufferedWriter()`).
            self.note_row(w.name);
            return recv;
        }
        let Some(path) = path else {
            return Val::Unknown;
        };
        if call.receiver.is_none()
            && let Some(v) = self.helper_value(&path, depth)
        {
            // A same-file helper (`stdout()`): the value its one result expression is.
            return v;
        }
        if let Some(row) = self.table.config(&path) {
            self.note_row(row.name);
            return Val::Config(self.config_at(row, call, scope));
        }
        let wrapper = self.table.wrapper(&path).or_else(|| {
            self.stream_of(&recv).and_then(|_| {
                self.table
                    .wrapper(&format!("*{}{}", self.syn.sep(), call.name))
            })
        });
        if let Some(w) = wrapper {
            self.note_row(w.name);
            if w.arg.pos.is_none() && w.arg.kw.is_none() {
                return recv; // a method of a stream that returns the stream (`lock()`)
            }
            if w.arg.means == sinks::Means::Streams {
                // A tee: stdout among its streams, else the first stream it writes.
                let from = usize::from(w.arg.pos.unwrap_or(0));
                let mut first = None;
                for (_, a, _) in call.args.clone().into_iter().skip(from) {
                    let v = self.eval(a, scope, depth + 1);
                    match self.stream_of(&v) {
                        Some(s) if s.dest == Dest::Stdout => return v,
                        Some(_) if first.is_none() => first = Some(v),
                        _ => {}
                    }
                }
                if let Some(v) = first {
                    return v;
                }
            } else if let Some(a) = self.arg_of(call, w.arg.pos, w.arg.kw) {
                let v = self.eval(a, scope, depth + 1);
                if self.stream_of(&v).is_some() {
                    return v;
                }
            }
        }
        Val::Path(format!("{path}()"))
    }

    /// The stream a same-file helper of this name results in, when every helper of the name
    /// (in several classes or `impl` blocks) agrees on where it writes.
    fn helper_value(&mut self, name: &str, depth: u32) -> Option<Val> {
        let bodies = self.returns.get(name)?.clone();
        let mut found: Option<Val> = None;
        for body in bodies.into_iter().take(4) {
            let v = self.eval(body, 0, depth + 1);
            let dest = self.any_stream_of(&v)?.dest;
            match &found {
                Some(f) if self.any_stream_of(f).map(|s| s.dest) != Some(dest) => return None,
                Some(_) => {}
                None => found = Some(v),
            }
        }
        found
    }

    /// The text of the outermost function around a scope (below the file), or the whole file.
    fn outer_function_text(&self, scope: usize) -> &'t str {
        let mut f = self.scopes[scope].function;
        while let Some(parent) = self.scopes[f].parent {
            let up = self.scopes[parent].function;
            if up == 0 {
                break;
            }
            f = up;
        }
        self.text.get(self.scopes[f].range.clone()).unwrap_or("")
    }

    /// The stream row of a value, if it is one a write can go through (not a child's
    /// `Redirect.INHERIT`).
    fn stream_of(&self, v: &Val) -> Option<&'static sinks::StreamValue> {
        self.any_stream_of(v).filter(|s| !s.child)
    }

    /// The stream row of a value, child-only values included.
    fn any_stream_of(&self, v: &Val) -> Option<&'static sinks::StreamValue> {
        match v {
            Val::Path(p) | Val::Held(p) => self.table.stream_value(p),
            _ => None,
        }
    }

    fn config_at(&mut self, row: &'static Config, call: &Call<'t>, scope: usize) -> usize {
        if let Some(i) = self.config_of.get(&call.node.id()) {
            return *i;
        }
        let dest = match row.arg.kw.filter(|k| k.contains('|')) {
            // Several options that each can move the output (`RedirectStandardOutput = true`
            // or `UseShellExecute = true`), in any order: the first that moves it decides.
            Some(k) => {
                let given: Vec<Node<'t>> = call
                    .args
                    .iter()
                    .filter(|(n, _, _)| n.is_some_and(|n| k.split('|').any(|k| k == n)))
                    .map(|(_, v, _)| *v)
                    .collect();
                let mut dest = row.arg.default;
                for a in given {
                    let d = self.config_dest(row, a, scope);
                    if d != row.arg.default {
                        dest = d;
                        break;
                    }
                }
                dest
            }
            None => match self.arg_of(call, row.arg.pos, row.arg.kw) {
                Some(a) => self.config_dest(row, a, scope),
                None => row.arg.default,
            },
        };
        // A configuration whose conditions fail (another plugin type) is never a finding.
        let holds = {
            let site = FlowSite {
                engine: std::cell::RefCell::new(&mut *self),
                call,
                scope,
            };
            row.conds.iter().all(|c| site.holds(*c))
        };
        let dest = if holds { dest } else { Dest::Unknown };
        self.configs.push(Cfg {
            row,
            node: call.node,
            at: call.node,
            dest,
        });
        let i = self.configs.len() - 1;
        self.config_of.insert(call.node.id(), i);
        i
    }

    fn arg_of(&self, call: &Call<'t>, pos: Option<u8>, kw: Option<&str>) -> Option<Node<'t>> {
        if let Some(k) = kw
            && let Some((_, v, _)) = call
                .args
                .iter()
                .find(|(n, _, _)| n.is_some_and(|n| k.split('|').any(|k| k == n)))
        {
            return Some(*v);
        }
        let p = usize::from(pos?);
        call.args
            .iter()
            .filter(|(n, _, _)| n.is_none())
            .nth(p)
            .map(|(_, v, _)| *v)
    }

    /// Where a value sends output.
    fn dest(&mut self, value: Node<'t>, means: Means, default: Dest, scope: usize) -> Dest {
        let v = self.eval(value, scope, 0);
        match means {
            Means::Presence | Means::Threshold => Dest::Other,
            Means::StderrFlag => match v {
                Val::Bool(true) => Dest::Stderr,
                Val::Bool(false) => default,
                _ => Dest::Unknown,
            },
            Means::Fd | Means::FileOrFd => match v {
                Val::Int(1) => Dest::Stdout,
                Val::Str(s) if s == "/dev/stdout" => Dest::Stdout,
                _ => self.stream_of(&v).map_or(Dest::Other, |s| s.dest),
            },
            Means::ChildStdout if matches!(v, Val::Str(_)) => Dest::Stdout,
            Means::Stream | Means::Streams | Means::Sink | Means::ChildStdout => match &v {
                Val::Null => default,
                Val::Config(i) if means == Means::ChildStdout => self.configs[*i].dest,
                Val::Unknown | Val::Config(_) => Dest::Unknown,
                // A log sink named by a string (`"System.out"`).
                Val::Str(s) if means == Means::Sink => {
                    self.table.stream_value(s).map_or(Dest::Other, |s| s.dest)
                }
                _ => match self.any_stream_of(&v) {
                    Some(s) if !s.child || means == Means::ChildStdout => s.dest,
                    Some(_) => Dest::Other,
                    None if matches!(v, Val::Str(_) | Val::Int(_) | Val::Bool(_)) => Dest::Other,
                    // A name the table does not know: a parameter, a file, a buffer.
                    None => Dest::Unknown,
                },
            },
        }
    }

    /// The target a configuration's argument or setter value selects.
    fn config_dest(&mut self, row: &'static Config, value: Node<'t>, scope: usize) -> Dest {
        let written = self.text(value);
        let matches = |values: &[&str]| {
            values.iter().any(|x| {
                written == *x
                    || written.trim_matches(['"', '\'']) == *x
                    || written.ends_with(&format!(".{x}"))
                    || written.ends_with(&format!("::{x}"))
                    || written.contains(&format!("\"{x}\""))
            })
        };
        if matches(row.stdout_values) {
            return Dest::Stdout;
        }
        if matches(row.stderr_values) {
            return Dest::Stderr;
        }
        match row.arg.means {
            Means::Sink => Dest::Unknown,
            m => self.dest(value, m, row.arg.default, scope),
        }
    }

    // ------------------------------------------------------------------------- checks

    /// Is a redirection away from stdout in force at this position? One made earlier in the
    /// same function, or one made at an entry point (which runs before any other function).
    fn redirected(&self, node: Node<'t>, scope: usize) -> bool {
        let pos = node.start_byte();
        let function = self.scopes[scope].function;
        self.redirects
            .iter()
            .filter(|r| {
                if r.function == function {
                    r.pos <= pos
                } else {
                    r.entry
                }
            })
            .max_by_key(|r| r.pos)
            .is_some_and(|r| r.dest != Dest::Stdout)
    }

    fn call(&mut self, call: &Call<'t>, scope: usize) {
        let (path, recv) = self.callee(call, scope, 0);
        // A bare print or write inside a lambda whose implicit receiver is a stream
        // (`with(System.err) { println(...) }`): that stream's own method.
        let implicit = if call.receiver.is_none()
            && (self.table.print_methods.contains(&call.name)
                || self.table.write_methods.contains(&call.name))
        {
            self.lookup(RECEIVER, scope, call.node.start_byte())
                .cloned()
        } else {
            None
        };
        let (path, recv) = match implicit {
            Some(v) => {
                if self.stream_of(&v).is_none_or(|s| s.dest != Dest::Stdout) {
                    return;
                }
                (None, v)
            }
            None => (path, recv),
        };
        let sep = self.syn.sep();
        let any = format!("*{sep}{}", call.name);
        let name = snippet(call.receiver.or(call.callee).unwrap_or(call.node), self.src);
        let name = if let Some(r) = call.receiver {
            // Up to the argument list after the receiver (`out().println`).
            let full = self.text(call.node);
            let after = r
                .end_byte()
                .saturating_sub(call.node.start_byte())
                .min(full.len());
            let end = full
                .get(after..)
                .and_then(|rest| rest.find('('))
                .map_or(full.len(), |i| after + i);
            snippet_str(full.get(..end).unwrap_or(full))
        } else {
            name
        };
        if let Val::Config(i) = recv {
            self.config_method(i, call, scope);
            return;
        }
        let path_str = path.as_deref().unwrap_or("");
        if let Some(row) = self.table.redirect(path_str) {
            self.note_row(row.name);
            let dest = match self.arg_of(call, row.arg.pos, row.arg.kw) {
                Some(a) => self.dest(a, Means::Stream, row.arg.default, scope),
                None => row.arg.default,
            };
            self.redirect(call.node, row, dest, scope);
            return;
        }
        let row = self.table.sink(path_str).or_else(|| self.table.sink(&any));
        if let Some(row) = row {
            self.note_row(row.name);
            self.apply(row, call, scope, &name);
            return;
        }
        // A stdout stream's method taken as a value and called later (`write :=
        // os.Stdout.WriteString` ... `write(line)`).
        if call.receiver.is_none()
            && let Some((owner, method)) = path_str.rsplit_once(sep)
            && self.table.write_methods.contains(&method)
            && let Some(s) = self.table.stream_value(owner)
            && s.dest == Dest::Stdout
            && !s.child
            && !(s.follows && self.redirected(call.node, scope))
            && !call
                .args
                .first()
                .is_some_and(|(_, v, _)| self.payload(*v, scope))
        {
            self.report(
                &STATIC_STDOUT_WRITE,
                call.node,
                format!("`{name}(...)` writes to stdout"),
            );
            return;
        }
        if let Some(stream) = self.stream_of(&recv)
            && stream.dest == Dest::Stdout
        {
            let written = call.receiver.map_or("", |r| self.text(r));
            let function = self.scopes[scope].function;
            if let Some((_, writes)) = self.table.pretty.iter().find(|(p, _)| *p == call.name) {
                self.pretty.push((function, written, writes));
                return;
            }
            if self.pretty.contains(&(function, written, call.name)) {
                self.report(
                    &STATIC_STDOUT_WRITE,
                    call.node,
                    format!("`{name}(...)` writes indented, multi-line JSON to stdout"),
                );
                return;
            }
            let rule = if self.table.print_methods.contains(&call.name) {
                &STATIC_PRINT_CALL
            } else if self.table.write_methods.contains(&call.name) {
                &STATIC_STDOUT_WRITE
            } else {
                return;
            };
            let held = matches!(recv, Val::Held(_));
            if stream.follows && !held && self.redirected(call.node, scope) {
                return;
            }
            if call
                .args
                .first()
                .is_some_and(|(_, v, _)| self.payload(*v, scope))
            {
                return;
            }
            self.report(rule, call.node, format!("`{name}(...)` writes to stdout"));
            return;
        }
        if let Some(row) = self.table.config(path_str) {
            self.note_row(row.name);
            self.config_at(row, call, scope);
            return;
        }
        if self.table.wrapper(path_str).is_some()
            || self.table.stream_value(&format!("{path_str}()")).is_some()
        {
            return;
        }
        self.generic(call, path_str, scope, &name);
    }

    /// A single-line JSON serialization written to stdout: the hand-written transport.
    fn payload(&mut self, node: Node<'t>, scope: usize) -> bool {
        // Conversions keep the payload (`string(b)`, `append(b, '\n')`, `[]byte(s)`).
        let mut node = node;
        for _ in 0..4 {
            match self.syn.shape(node) {
                Shape::Call(c)
                    if c.receiver.is_none()
                        && c.callee.is_some_and(|f| {
                            matches!(self.text(f), "string" | "append" | "[]byte" | "String")
                        })
                        && !c.args.is_empty() =>
                {
                    node = c.args[0].1;
                }
                _ => break,
            }
        }
        // A lone line break after a message is the frame's terminator, no output of its own.
        let literal = self.text(node);
        let literal = literal.strip_prefix("(byte)").unwrap_or(literal).trim();
        let literal = literal.trim_start_matches('b').trim_start_matches('@');
        if matches!(literal, "\"\\n\"" | "'\\n'" | "\"\\r\\n\"") {
            return true;
        }
        // Options that indent, in the call (`Serialize(r, Pretty)`) or in the function that
        // writes (`new JsonSerializerOptions { WriteIndented = true }`, `Json { prettyPrint =
        // true }`): several lines, never a frame.
        let call_text = self.text(node).to_ascii_lowercase();
        // A pretty serializer called on some other value (`eprintln!("{}",
        // serde_json::to_string_pretty(&state)?)`) configures nothing.
        let mut around = self.outer_function_text(scope).to_ascii_lowercase();
        for other in PRETTY_SERIALIZERS {
            around = around.replace(other, "");
        }
        if ["pretty", "indent"]
            .iter()
            .any(|w| call_text.contains(w) || around.contains(w))
        {
            return false;
        }
        if self.syn.is_payload(node) {
            return true;
        }
        match self.eval(node, scope, 0) {
            Val::Path(p) => {
                let p = p.to_ascii_lowercase();
                // Jackson's `mapper.writeValueAsString(message)` (compact by default); a
                // pretty printer's output is several lines, never a frame.
                if p.contains("pretty") || p.contains("indent") {
                    return false;
                }

                p.contains("writevalueasstring")
                    || p.contains("json")
                        && [
                            "marshal",
                            "to_string",
                            "to_vec",
                            "serialize",
                            "stringify",
                            "writevalueasstring",
                            "tojson",
                            "encode",
                        ]
                        .iter()
                        .any(|w| p.contains(w))
            }
            _ => false,
        }
    }

    fn apply(&mut self, row: &'static sinks::Sink, call: &Call<'t>, scope: usize, name: &str) {
        let verdict = {
            let site = FlowSite {
                engine: std::cell::RefCell::new(&mut *self),
                call,
                scope,
            };
            sinks::check(&row.arg, row.conds, &site)
        };
        if verdict.is_some() {
            let why = match row.arg.kw {
                Some(kw) => format!("without `{kw}`"),
                None => String::new(),
            };
            self.report(row.rule, call.node, sinks::message(row.message, name, &why));
        }
    }

    /// The value a setter call gives the target: the first argument of a setter (`setTarget(x)`),
    /// the second of a keyed one whose first is the key (`addAttribute("target", x)` for a
    /// setter written `addAttribute(target)`); `None` when the call sets no target.
    fn setter_value(&mut self, row: &Config, call: &Call<'t>, scope: usize) -> Option<Node<'t>> {
        for s in row.setters {
            if *s == call.name {
                return call.args.first().map(|(_, v, _)| *v);
            }
            if let Some(key) = s
                .strip_prefix(call.name)
                .and_then(|k| k.strip_prefix('('))
                .and_then(|k| k.strip_suffix(')'))
                && let [(_, k, _), (_, v, _), ..] = call.args.as_slice()
                && matches!(self.eval(*k, scope, 0), Val::Str(given) if given.eq_ignore_ascii_case(key))
            {
                return Some(*v);
            }
        }
        None
    }

    fn config_method(&mut self, i: usize, call: &Call<'t>, scope: usize) {
        let row = self.configs[i].row;
        if let Some(v) = self.setter_value(row, call, scope) {
            let d = self.config_dest(row, v, scope);
            self.set_config(i, d, call.node);
        } else if row.triggers.contains(&call.name) && self.configs[i].dest == Dest::Stdout {
            let name = snippet(self.configs[i].node, self.src);
            self.report(
                row.rule,
                call.node,
                sinks::message(row.message, &name, call.name),
            );
        }
    }

    fn set_config(&mut self, i: usize, dest: Dest, at: Node<'t>) {
        let c = &mut self.configs[i];
        if c.row.arg.kw.is_some_and(|k| k.contains('|')) && dest == c.row.arg.default {
            // One of several options left as it was (`UseShellExecute = false`) does not undo
            // another that moved the output (`RedirectStandardOutput = true`).
            return;
        }
        c.dest = dest;
        if dest == Dest::Stdout {
            c.at = at;
        }
    }

    fn redirect(&mut self, node: Node<'t>, row: &'static sinks::Sink, dest: Dest, scope: usize) {
        let sc = &self.scopes[scope];
        self.redirects.push(Redirect {
            pos: node.end_byte(),
            function: sc.function,
            entry: sc.entry,
            dest,
        });
        if dest != Dest::Stdout && dest != Dest::Unknown && !row.conds.contains(&Cond::Quiet) {
            let what = snippet(node, self.src);
            self.report(
                &STATIC_STDOUT_REDIRECT,
                node,
                sinks::message(row.message, &what, ""),
            );
        }
    }

    /// A call with no row: stdout handed to it, or a stdout-writing function passed as a
    /// callback.
    fn generic(&mut self, call: &Call<'t>, path: &str, scope: usize, name: &str) {
        let last = super::last_segment(path.trim_end_matches("()"));
        let last = if last.is_empty() { call.name } else { last };
        // Given stdin too, it is a transport (`run(stdin(), stdout())`); a question about the
        // stream (`is_terminal(&stdout())`, `terminal_size_of(stdout())`, `flush(...)`) writes
        // nothing.
        let lower_last = last.to_ascii_lowercase();
        let query = (lower_last.starts_with("is")
            && !lower_last.starts_with("issue")
            && lower_last.len() > 2)
            || ["size", "flush", "tty", "color", "colour"]
                .iter()
                .any(|w| lower_last.contains(w));
        if query
            || call
                .args
                .iter()
                .any(|(_, v, _)| self.text(*v).to_ascii_lowercase().contains("stdin"))
        {
            return;
        }
        for (key, value, at) in call.args.clone() {
            let v = self.eval(value, scope, 0);
            if let Some(s) = self.stream_of(&v)
                && s.dest == Dest::Stdout
                && self.syn.generic_stdout_args()
                && !is_transport_name(last)
                && !is_transport_name(path)
                && !self.syn.is_transport_type(last)
                && !self.syn.passes_through(last)
            {
                if let Some(k) = key {
                    // `Stdout: os.Stdout` in an initializer: a child's or a logger's output.
                    let row = self.table.sink(&format!("*{}{k}", self.syn.sep()));
                    if let Some(r) = row {
                        self.note_row(r.name);
                    }
                    let rule = row.map_or(&STATIC_STDOUT_LOGGER, |r| r.rule);
                    self.report(
                        rule,
                        at,
                        format!("`{}` hands stdout to a writer", snippet(at, self.src)),
                    );
                    return;
                }
                let lower = format!("{path} {}", call.name).to_ascii_lowercase();
                // A JSON serializer writing one value compactly to stdout writes a frame
                // (`JsonSerializer.SerializeAsync(stdout, message)`, `mapper.writeValue(System.out,
                // reply)`); indented, it writes several lines.
                // Only a protocol message is a frame: `SerializeAsync(stdout, response)`, not
                // `Serialize(stdout, summary)`.
                let call_text = self.text(call.node).to_ascii_lowercase();
                let message = call.args.iter().any(|(_, v, _)| {
                    let t = self.text(*v).to_ascii_lowercase();
                    [
                        "message",
                        "msg",
                        "resp",
                        "reply",
                        "request",
                        "frame",
                        "notification",
                        "jsonrpc",
                    ]
                    .iter()
                    .any(|w| t.contains(w))
                });
                // So is a helper that sends one (`send(&mut stdout, &resp)`,
                // `writeFrame(os.Stdout, reply)`).
                if message
                    && [
                        "serializ",
                        "writevalue",
                        "encodetostream",
                        "to_writer",
                        "marshal",
                        "send",
                        "frame",
                        "reply",
                        "respond",
                    ]
                    .iter()
                    .any(|w| lower.contains(w))
                    && !["indent", "pretty"]
                        .iter()
                        .any(|w| lower.contains(w) || call_text.contains(w))
                {
                    return;
                }
                let rule = if ["log", "handler", "appender", "output", "sink"]
                    .iter()
                    .any(|w| lower.contains(w))
                {
                    &STATIC_STDOUT_LOGGER
                } else {
                    &STATIC_STDOUT_WRITE
                };
                self.report(
                    rule,
                    call.node,
                    format!("`{name}(...)` is given stdout and writes to it"),
                );
                return;
            }
            if let Val::Path(p) = &v
                && !matches!(self.syn.expr(value), Expr::Call)
                && let Some(row) = self.table.sink(p)
                && matches!(row.form, sinks::Form::Function | sinks::Form::Method)
                && row.arg.pos.is_none()
                && row.arg.kw.is_none()
                && row.arg.default == Dest::Stdout
                && !(row.conds.contains(&Cond::FollowsRedirect) && self.redirected(value, scope))
            {
                self.report(
                    &STATIC_PRINT_CALL,
                    value,
                    format!(
                        "`{}` is passed as a callback; every call of it writes to stdout",
                        snippet(value, self.src)
                    ),
                );
                return;
            }
            // A stdout stream's print or write method passed as a value
            // (`items.ForEach(Console.Out.WriteLine)`).
            let sep = self.syn.sep();
            if let Val::Path(p) = &v
                && matches!(self.syn.expr(value), Expr::Member(..))
                && let Some((owner, method)) = p.rsplit_once(sep)
                && (self.table.print_methods.contains(&method)
                    || self.table.write_methods.contains(&method))
                && let Some(s) = self.table.stream_value(owner)
                && s.dest == Dest::Stdout
                && !s.child
                && !(s.follows && self.redirected(value, scope))
            {
                self.report(
                    &STATIC_PRINT_CALL,
                    value,
                    format!(
                        "`{}` is passed as a callback; every call of it writes to stdout",
                        snippet(value, self.src)
                    ),
                );
                return;
            }
        }
    }

    fn reference(
        &mut self,
        node: Node<'t>,
        receiver: Option<Node<'t>>,
        name: &'t str,
        scope: usize,
    ) {
        let path = match receiver {
            Some(r) => {
                match self.eval(r, scope, 0) {
                    Val::Held(p) => {
                        if self
                            .table
                            .stream_value(&p)
                            .is_some_and(|s| s.dest == Dest::Stdout)
                            && self.table.print_methods.contains(&name)
                        {
                            self.report(&STATIC_PRINT_CALL, node, format!("`{}` is passed as a callback; every call of it writes to stdout", snippet(node, self.src)));
                        }
                        return;
                    }
                    Val::Path(p) => {
                        if let Some(s) = self.table.stream_value(&p)
                            && s.dest == Dest::Stdout
                            && (self.table.print_methods.contains(&name)
                                || self.table.write_methods.contains(&name))
                        {
                            if !(s.follows && self.redirected(node, scope)) {
                                self.report(&STATIC_PRINT_CALL, node, format!("`{}` is passed as a callback; every call of it writes to stdout", snippet(node, self.src)));
                            }
                            return;
                        }
                        format!("{p}{}{name}", self.syn.sep())
                    }
                    _ => return,
                }
            }
            None => match self.syn.qualify(name) {
                Some(q) => q,
                None => return,
            },
        };
        let path = self.syn.normalize(path);
        if let Some(row) = self.table.sink(&path)
            && row.arg.pos.is_none()
            && row.arg.kw.is_none()
            && row.arg.default == Dest::Stdout
            && !(row.conds.contains(&Cond::FollowsRedirect) && self.redirected(node, scope))
        {
            self.note_row(row.name);
            if row.form == sinks::Form::Property {
                // A configuration value written in place (`Target::Stdout`).
                let what = snippet(node, self.src);
                self.report(row.rule, node, sinks::message(row.message, &what, ""));
            } else {
                self.report(
                    &STATIC_PRINT_CALL,
                    node,
                    format!(
                        "`{}` is passed as a callback; every call of it writes to stdout",
                        snippet(node, self.src)
                    ),
                );
            }
        }
    }

    /// Whether a statement runs only on some paths of its function: inside a branch, a loop,
    /// a handler or a nested function literal (by the kinds of its ancestors).
    fn conditional(&self, node: Node<'t>, scope: usize) -> bool {
        let function = self.scopes[self.scopes[scope].function].range.clone();
        let mut n = node.parent();
        for _ in 0..256 {
            let Some(p) = n else { return false };
            if p.byte_range() == function {
                return false;
            }
            if BRANCHING.iter().any(|k| p.kind().starts_with(k)) {
                return true;
            }
            n = p.parent();
        }
        true
    }

    fn assign(&mut self, node: Node<'t>, target: Node<'t>, value: Node<'t>, scope: usize) {
        match self.syn.expr(target) {
            Expr::Ident(name) => {
                let v = self.eval(value, scope, 0);
                // A name bound outside the function (a class's field, `_out = Console.Out` in
                // the constructor) is that field.
                if self.scopes[scope].function != 0 && self.bound_outside_functions(name, scope) {
                    self.fields.insert(name, v.clone());
                }
                // A variable of an enclosing block of the same function given stdout in a
                // branch (`if debug { out = os.Stdout }`) may be stdout after the branch too.
                if self.stream_of(&v).is_some_and(|s| s.dest == Dest::Stdout)
                    && let Some(outer) = self.declaring_scope(name, scope)
                    && outer != scope
                    && self.scopes[outer].function == self.scopes[scope].function
                {
                    self.bind(outer, target, v.clone());
                }
                // A file-level variable set by an entry point (Go's `init`, Java's static
                // initializer, `main`), which runs before the file's other functions: that
                // value from the start, wherever the entry point sits in the file.
                let unconditional = self.scopes[scope].function != 0
                    && self.scopes[scope].entry
                    && !self.conditional(node, scope);
                if unconditional {
                    match self.declaring_scope(name, scope) {
                        Some(outer) if self.scopes[outer].function == 0 => {
                            self.bind_at(outer, target, 0, v.clone());
                        }
                        Some(_) => {}
                        // A static field (`static PrintStream out = System.out;`).
                        None => {
                            if let Some(Some(q)) = self.static_names.get(name).cloned() {
                                let held = self.held(v.clone());
                                self.statics.insert(q, held);
                            }
                        }
                    }
                }
                self.bind(scope, target, v);
            }
            Expr::Field(name) => {
                let v = self.eval(value, scope, 0);
                self.fields.insert(name, v);
            }
            Expr::Member(obj, name) => {
                let recv = self.eval(obj, scope, 0);
                if let Val::Config(i) = recv {
                    let row = self.configs[i].row;
                    if row.setters.contains(&name) || row.setters.contains(&setter(name).as_str()) {
                        let d = self.config_dest(row, value, scope);
                        self.set_config(i, d, node);
                    }
                    return;
                }
                let Val::Path(p) = recv else { return };
                let path = self.syn.normalize(format!("{p}{}{name}", self.syn.sep()));
                if let Some(row) = self.table.redirect(&path) {
                    self.note_row(row.name);
                    let d = self.dest(value, Means::Stream, Dest::Other, scope);
                    self.redirect(node, row, d, scope);
                    return;
                }
                let any = format!("*{}{name}", self.syn.sep());
                if let Some(row) = self.table.sink(&path).or_else(|| self.table.sink(&any))
                    && row.form == sinks::Form::Property
                {
                    self.note_row(row.name);
                    let d = self.dest(value, row.arg.means, row.arg.default, scope);
                    if d == Dest::Stdout {
                        let what = snippet(node, self.src);
                        self.report(row.rule, node, sinks::message(row.message, &what, ""));
                    }
                }
            }
            _ => {}
        }
    }
}

/// The JVM setter a property assignment calls (`target = x` → `setTarget(x)`).
fn setter(property: &str) -> String {
    let mut c = property.chars();
    match c.next() {
        Some(f) => format!("set{}{}", f.to_ascii_uppercase(), c.as_str()),
        None => String::new(),
    }
}

fn snippet_str(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    let compact: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
    compact.chars().take(60).collect()
}

/// One call as the generic sink checker sees it.
struct FlowSite<'a, 't, S: Syntax<'t>> {
    engine: std::cell::RefCell<&'a mut Engine<'t, S>>,
    call: &'a Call<'t>,
    scope: usize,
}

impl<'t, S: Syntax<'t>> Site<'t> for FlowSite<'_, 't, S> {
    fn arg(&self, pos: Option<u8>, kw: Option<&str>) -> Option<Node<'t>> {
        self.engine.borrow().arg_of(self.call, pos, kw)
    }

    fn dest(&self, value: Node<'t>, means: Means, default: Dest) -> Dest {
        self.engine
            .borrow_mut()
            .dest(value, means, default, self.scope)
    }

    fn holds(&self, cond: Cond) -> bool {
        let mut e = self.engine.borrow_mut();
        match cond {
            Cond::FollowsRedirect => !e.redirected(self.call.node, self.scope),
            Cond::FlagOff(k) => match e.arg_of(self.call, None, Some(k)) {
                None => true,
                Some(v) => e.eval(v, self.scope, 0) == Val::Bool(false),
            },
            Cond::NoSplat
            | Cond::Satisfies(_)
            | Cond::Unless(_)
            | Cond::Quiet
            | Cond::NotFilter
            | Cond::FdNotSaved => true,
            Cond::Given(p, k) => e.arg_of(self.call, p, k).is_some(),
            Cond::WriteMode(..) | Cond::NotJsonRpc | Cond::NotCaptured(_) => true,
            Cond::NotPayload(p) => !e
                .arg_of(self.call, Some(p), None)
                .is_some_and(|v| e.payload(v, self.scope)),
            Cond::FileLacks(n) => !e.text.contains(n),
            Cond::CallLacks(n) => !e.text(self.call.node).contains(n),
            // The literal, or a named constant that holds it (`"a.b|Holder.KEY"`).
            Cond::ArgIs(p, v) => e.arg_of(self.call, Some(p), None).is_some_and(|a| {
                let (literal, constants) = v.split_once('|').unwrap_or((v, ""));
                match e.eval(a, self.scope, 0) {
                    Val::Str(s) => s.eq_ignore_ascii_case(literal),
                    Val::Path(q) => constants.split('|').any(|c| !c.is_empty() && c == q),
                    _ => false,
                }
            }),
            Cond::ScopeLacks(n) => !e.outer_function_text(self.scope).contains(n),
            Cond::ThenLacks(n) => {
                let call = self.call.node;
                // The chain the call is part of: its ancestors up to the statement.
                let mut top = call;
                for _ in 0..64 {
                    match top.parent() {
                        Some(p)
                            if !p.kind().ends_with("statement")
                                && !p.kind().ends_with("declaration")
                                && !p.kind().ends_with("declarator")
                                && !matches!(
                                    p.kind(),
                                    "block" | "statements" | "lambda_literal" | "source_file"
                                ) =>
                        {
                            top = p
                        }
                        _ => break,
                    }
                }
                let after = e.text.get(call.end_byte()..top.end_byte()).unwrap_or("");
                let on_variable = self.call.receiver.is_some_and(|r| {
                    let name = e.text(r);
                    !name.is_empty()
                        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                        && e.text
                            .get(call.end_byte()..)
                            .unwrap_or("")
                            .contains(&format!("{name}.{n}"))
                        && e.outer_function_text(self.scope)
                            .contains(&format!("{name}.{n}"))
                });
                !after.contains(n) && !on_variable
            }
        }
    }
}
