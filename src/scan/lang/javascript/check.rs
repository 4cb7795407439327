//! Pass 2 of the JavaScript/TypeScript analyzer: every call, `new` and member assignment is
//! resolved to a qualified name and checked against the sink table (`sinks/javascript.rs`). The
//! generic checker (`sinks::check`) applies a row; [`JsSite`] tells it where an argument or
//! option is and what a value means.

use super::{Def, Js, Val, unwrap_expr};
use crate::catalog::Rule;
use crate::catalog::scan::{STATIC_CONSOLE_LOG, STATIC_STDOUT_LOGGER, STATIC_STDOUT_WRITE};
use crate::scan::lang::{Field, Finding, is_transport_function, snippet};
use crate::scan::sinks::javascript::{GLOBAL_OBJECTS, GLOBALS, LOGGER_WORDS, TRANSPORT_WORDS};
use crate::scan::sinks::{self, Cond, Config, Dest, Form, Means, Site, Table};
use tree_sitter::Node;

/// Literals can refer to each other (`a = {x: b}; b = {y: a}`): the most nodes one option value
/// is read through.
const LITERAL_BUDGET: usize = 500;

fn table() -> &'static Table {
    &sinks::javascript::TABLE
}

impl<'t> Js<'t> {
    fn note_row(&self, name: &'static str) {
        let mut rows = self.rows.borrow_mut();
        if !rows.contains(&name) {
            rows.push(name);
        }
    }

    fn report(&mut self, rule: &'static Rule, node: Node<'t>, message: String) {
        self.facts.findings.push(Finding::at(rule, node, message));
    }

    pub(super) fn check(&mut self) {
        for (node, _parent, scope) in std::mem::take(&mut self.todo) {
            let scope = self.scope_of.get(&node.id()).copied().unwrap_or(scope);
            match node.kind() {
                "call_expression" => self.check_call(node, scope),
                "new_expression" => self.check_new(node, scope),
                "assignment_expression" => self.check_assignment(node, scope),
                _ => {}
            }
        }
    }

    /// Where a value known by the table points: a stream, a descriptor path.
    pub(super) fn stream_dest(&self, v: &Val) -> Option<Dest> {
        match v {
            Val::Path(p) | Val::Str(p) => table().stream(p),
            _ => None,
        }
    }

    /// The process's stdout stream object itself (`process.stdout`), not its descriptor.
    fn is_stdout_stream(&self, v: &Val) -> bool {
        v.path()
            .and_then(|p| table().stream_value(p))
            .is_some_and(|s| s.dest == Dest::Stdout && s.follows)
    }

    fn check_call(&mut self, call: Node<'t>, scope: usize) {
        let Some(func) = call.field("function") else {
            return;
        };
        let args = self.args(call);
        let Val::Path(mut path) = self.resolve(func, scope, 0) else {
            self.check_arguments(call, "", &args, scope);
            return;
        };
        // `console.log.call(console, x)` / `.apply(...)` call the function itself.
        let mut used = args.clone();
        for suffix in [".call", ".apply"] {
            if let Some(p) = path.strip_suffix(suffix)
                && table().writes_when_called(p).is_some()
            {
                path = p.to_string();
                used = args.iter().skip(1).copied().collect();
            }
        }
        let name = snippet(func, self.src);
        if let Some(row) = table().sink(&path) {
            self.note_row(row.name);
            let site = JsSite::call(self, call, &used, scope, &path, None);
            if sinks::check(&row.arg, row.conds, &site).is_some() {
                self.report(row.rule, call, sinks::message(row.message, &name, ""));
            }
            return;
        }
        if let Some(cfg) = table().config(&path) {
            self.check_config(cfg, call, &used, scope, &path, &name);
            return;
        }
        self.check_arguments(call, &path, &used, scope);
    }

    fn check_new(&mut self, node: Node<'t>, scope: usize) {
        let Some(ctor) = node.field("constructor") else {
            return;
        };
        let args = self.args(node);
        let Val::Path(path) = self.resolve(ctor, scope, 0) else {
            self.check_arguments(node, "", &args, scope);
            return;
        };
        match table().config(&path) {
            Some(cfg) => {
                let name = snippet(ctor, self.src);
                self.check_config(cfg, node, &args, scope, &path, &name);
            }
            None => self.check_arguments(node, &path, &args, scope),
        }
    }

    /// A logger, appender or child process built here: reported when its target is stdout.
    fn check_config(
        &mut self,
        cfg: &'static Config,
        node: Node<'t>,
        args: &[Node<'t>],
        scope: usize,
        path: &str,
        name: &str,
    ) {
        self.note_row(cfg.name);
        let site = JsSite::call(self, node, args, scope, path, Some(cfg));
        if sinks::check(&cfg.arg, cfg.conds, &site).is_some() {
            self.report(cfg.rule, node, sinks::message(cfg.message, name, ""));
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
        let exempt = TRANSPORT_WORDS.iter().any(|w| lower.contains(w));
        let logger = LOGGER_WORDS.iter().any(|w| lower.contains(w));
        let rule = if logger {
            &STATIC_STDOUT_LOGGER
        } else {
            &STATIC_STDOUT_WRITE
        };
        let handed = || {
            format!(
                "`{}(...)` is given process.stdout and writes to it",
                snippet_str(name)
            )
        };
        for a in args {
            let a = unwrap_expr(*a);
            match a.kind() {
                "object" | "array" if !exempt && self.mentions_stdout(a, scope) => {
                    self.report(rule, call, handed());
                    return;
                }
                "identifier" | "member_expression" | "subscript_expression" | "call_expression" => {
                    let v = self.resolve(a, scope, 0);
                    if self.is_stdout_stream(&v) {
                        if !exempt && !this_arg {
                            self.report(rule, call, handed());
                            return;
                        }
                        continue;
                    }
                    let Val::Path(p) = v else { continue };
                    if a.kind() != "call_expression" || self.is_bind(a) {
                        self.report_writer_value(a, &p, "is passed as a callback");
                        if table().writes_when_called(&p).is_some() {
                            return;
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// A function that writes to stdout passed or stored as a value: every call of it writes.
    fn report_writer_value(&mut self, a: Node<'t>, path: &str, how: &str) {
        let Some(row) = table().writes_when_called(path) else {
            return;
        };
        self.note_row(row.name);
        let rule = if row.rule == &STATIC_CONSOLE_LOG {
            &STATIC_CONSOLE_LOG
        } else {
            &STATIC_STDOUT_WRITE
        };
        self.report(
            rule,
            a,
            format!(
                "`{}` {how}; every call of it writes to stdout",
                snippet(a, self.src)
            ),
        );
    }

    fn is_bind(&self, call: Node<'t>) -> bool {
        call.field("function").is_some_and(|f| {
            f.kind() == "member_expression"
                && f.field("property").is_some_and(|p| self.text(p) == "bind")
        })
    }

    /// True when a literal (object/array tree) contains `process.stdout`.
    fn mentions_stdout(&self, node: Node<'t>, scope: usize) -> bool {
        let mut stack = vec![node];
        let mut budget = LITERAL_BUDGET;
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
                        Val::Lit(l) => stack.push(l),
                        v if self.is_stdout_stream(&v) => return true,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        false
    }

    fn check_assignment(&mut self, node: Node<'t>, scope: usize) {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            return;
        };
        if !matches!(left.kind(), "member_expression" | "subscript_expression") {
            return;
        }
        let target = self.static_path(left, scope).map(super::normalize_path);
        if let Some(t) = &target
            && let Some(row) = table().redirect(t).filter(|r| r.form == Form::Property)
        {
            self.note_row(row.name);
            let holds = row.conds.iter().all(|c| match c {
                // A filter that still calls the original keeps the transport working.
                Cond::NotFilter => !self.references(right, scope, t),
                _ => true,
            });
            if holds {
                let what = snippet(node, self.src);
                self.report(row.rule, node, sinks::message(row.message, &what, ""));
            }
            return;
        }
        // `console.log = ...`: an override of a global's member, applied by resolution.
        let root = target.as_deref().and_then(|t| t.split('.').next());
        if root.is_some_and(|r| GLOBALS.contains(&r) && !GLOBAL_OBJECTS.contains(&r)) {
            return;
        }
        if self.this_member(left, scope).is_some() {
            return; // `this.log = console.log`: calls of `this.log` are followed
        }
        let r = unwrap_expr(right);
        let is_ref = matches!(
            r.kind(),
            "identifier" | "member_expression" | "subscript_expression"
        ) || (r.kind() == "call_expression" && self.is_bind(r));
        if is_ref && let Val::Path(p) = self.resolve(r, scope, 0) {
            self.report_writer_value(r, &p, "is stored as a callable");
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

    /// Inside a replacement of `path` (`process.stdout.write = (chunk) => ...`).
    fn in_filter_of(&self, path: &str, pos: usize) -> bool {
        self.overrides.get(path).is_some_and(|list| {
            list.iter().any(|b| match b.def {
                Def::Value(v) => v.byte_range().contains(&pos),
                _ => false,
            })
        })
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
                self.args(node)
                    .into_iter()
                    .find_map(|a| self.find_stringify(a, scope, depth + 1))
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
        let s = self.function_scope(scope);
        if self.scopes[s].name.is_some_and(is_transport_function) {
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

    /// The expression a name was bound to (following `const a = b`), with its scope.
    fn definition(&self, node: Node<'t>, scope: usize) -> (Node<'t>, usize) {
        let (mut node, mut scope) = (unwrap_expr(node), scope);
        for _ in 0..super::MAX_DEPTH {
            if node.kind() != "identifier" {
                break;
            }
            let Some(b) = self.lookup(self.text(node), scope, node.start_byte()) else {
                break;
            };
            match b.def {
                Def::Value(v) if !v.byte_range().contains(&node.start_byte()) => {
                    (node, scope) = (unwrap_expr(v), b.scope);
                }
                _ => break,
            }
        }
        (node, scope)
    }

    /// Where a log sink option sends records: a stream, a writer function, a destination built
    /// by a wrapper (`pino.destination(2)`), a nested configuration named by a key
    /// (`{ target: 'pino-pretty' }`, `{ type: 'stdout' }`), or any of the values of an
    /// object/array literal (stdout if one of them is).
    fn sink_dest(
        &self,
        value: Node<'t>,
        scope: usize,
        row: Option<&'static Config>,
        budget: &mut usize,
    ) -> Dest {
        if *budget == 0 {
            return Dest::Unknown;
        }
        *budget -= 1;
        let (node, scope) = self.definition(value, scope);
        match node.kind() {
            "call_expression" | "new_expression" => {
                let callee = node.field("function").or_else(|| node.field("constructor"));
                let path = callee.and_then(|c| match self.resolve(c, scope, 0) {
                    Val::Path(p) => Some(p),
                    _ => None,
                });
                if let Some(w) = path.as_deref().and_then(|p| table().wrapper(p)) {
                    self.note_row(w.name);
                    let args = self.args(node);
                    let site = JsSite::call(self, node, &args, scope, w.name, row);
                    return sinks::destination(&w.arg, &site).0;
                }
            }
            "object" => return self.object_dest(node, scope, row, budget),
            "array" => {
                let mut c = node.walk();
                let items: Vec<Node> = node.named_children(&mut c).collect();
                return combine(
                    items
                        .into_iter()
                        .map(|i| self.sink_dest(i, scope, row, budget)),
                );
            }
            _ => {}
        }
        let v = self.resolve(node, scope, 0);
        if let Val::Str(s) = &v
            && let Some(r) = row
        {
            if r.stdout_values.contains(&s.as_str()) {
                return Dest::Stdout;
            }
            if r.stderr_values.contains(&s.as_str()) {
                return Dest::Stderr;
            }
        }
        match v {
            Val::Unknown => Dest::Unknown,
            Val::Path(p) if table().writes_when_called(&p).is_some() => Dest::Stdout,
            v => self.stream_dest(&v).unwrap_or(Dest::Other),
        }
    }

    fn object_dest(
        &self,
        obj: Node<'t>,
        scope: usize,
        row: Option<&'static Config>,
        budget: &mut usize,
    ) -> Dest {
        let mut c = obj.walk();
        let props: Vec<Node> = obj.named_children(&mut c).collect();
        if let Some(library) = row.map(|r| r.library) {
            for p in props.iter().filter(|p| p.kind() == "pair") {
                let key = p
                    .field("key")
                    .map(|k| self.text(k).trim_matches(['"', '\'']));
                let value = p
                    .field("value")
                    .and_then(|v| match self.resolve(v, scope, 0) {
                        Val::Str(s) => Some(s),
                        _ => None,
                    });
                if let (Some(k), Some(v)) = (key, value)
                    && let Some(target) = table().target(library, k, &v)
                {
                    self.note_row(target.name);
                    let site = JsSite::literal(self, obj, scope, Some(target));
                    return match sinks::check(&target.arg, target.conds, &site) {
                        Some(_) => Dest::Stdout,
                        None => sinks::destination(&target.arg, &site).0,
                    };
                }
            }
        }
        let values = props.into_iter().filter_map(|p| match p.kind() {
            "pair" => p.field("value"),
            "spread_element" => p.named_child(0),
            "shorthand_property_identifier" => Some(p),
            _ => None,
        });
        let values: Vec<Node> = values.collect();
        combine(
            values
                .into_iter()
                .map(|v| self.sink_dest(v, scope, row, budget)),
        )
    }
}

/// Stdout if any part is; else unknown if any part is; else stderr if every part is.
fn combine(parts: impl Iterator<Item = Dest>) -> Dest {
    let mut out: Option<Dest> = None;
    for d in parts {
        out = Some(match (out, d) {
            (_, Dest::Stdout) | (Some(Dest::Stdout), _) => return Dest::Stdout,
            (_, Dest::Unknown) | (Some(Dest::Unknown), _) => Dest::Unknown,
            (None | Some(Dest::Stderr), Dest::Stderr) => Dest::Stderr,
            _ => Dest::Other,
        });
    }
    out.unwrap_or(Dest::Other)
}

fn snippet_str(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    line.chars().take(60).collect()
}

/// One call (or one options literal) as the generic sink checker sees it. Positions count the
/// arguments; when a row names an option too, the options object (an object literal argument)
/// is not counted, and options are read from it (`a.b` nested, `a|b` alternatives).
struct JsSite<'a, 't> {
    js: &'a Js<'t>,
    node: Node<'t>,
    args: &'a [Node<'t>],
    /// The options object literal.
    opts: Option<Node<'t>>,
    scope: usize,
    /// The row's own name (for filters).
    path: &'a str,
    /// The configuration row whose values and library an option is read with.
    row: Option<&'static Config>,
}

impl<'a, 't> JsSite<'a, 't> {
    fn call(
        js: &'a Js<'t>,
        node: Node<'t>,
        args: &'a [Node<'t>],
        scope: usize,
        path: &'a str,
        row: Option<&'static Config>,
    ) -> JsSite<'a, 't> {
        let opts = args.iter().rev().find_map(|a| js.object_literal(*a, scope));
        JsSite {
            js,
            node,
            args,
            opts,
            scope,
            path,
            row,
        }
    }

    fn literal(
        js: &'a Js<'t>,
        obj: Node<'t>,
        scope: usize,
        row: Option<&'static Config>,
    ) -> JsSite<'a, 't> {
        JsSite {
            js,
            node: obj,
            args: &[],
            opts: Some(obj),
            scope,
            path: "",
            row,
        }
    }

    /// An option of the options object; `a.b` reads a nested object.
    fn option(&self, path: &str) -> Option<Node<'t>> {
        let mut obj = self.opts?;
        let mut parts = path.split('.').peekable();
        while let Some(part) = parts.next() {
            let v = self.js.property(obj, part)?;
            if parts.peek().is_none() {
                return Some(v);
            }
            obj = self.js.object_literal(v, self.scope)?;
        }
        None
    }
}

/// npm's log levels, most severe first: winston's defaults, and the levels a Console transport
/// must list in `stderrLevels` to keep them off stdout.
const NPM_LEVELS: &[&str] = &["error", "warn", "info", "http", "verbose", "debug", "silly"];

/// The level a winston logger or transport logs at when none is given.
const DEFAULT_LEVEL: &str = "info";

impl<'t> Js<'t> {
    /// Could this argument be an options object? Not a string, a number, a template, markup,
    /// a function, arithmetic or concatenation, a `new URL(...)` or a `String(...)`: a module
    /// path or a command (`fork(new URL('./w.mjs', import.meta.url))`, `render(<App />)`).
    fn could_be_options(&self, node: Node<'t>, scope: usize) -> bool {
        let node = unwrap_expr(node);
        match node.kind() {
            "string"
            | "template_string"
            | "number"
            | "binary_expression"
            | "jsx_element"
            | "jsx_self_closing_element"
            | "jsx_fragment"
            | "arrow_function"
            | "function_expression"
            | "function"
            | "array"
            | "regex" => false,
            "new_expression" => !node
                .field("constructor")
                .is_some_and(|c| matches!(self.text(c), "URL" | "String")),
            "call_expression" => !node.field("function").is_some_and(|f| {
                matches!(
                    self.resolve(f, scope, 0).path(),
                    Some(
                        "String"
                            | "path.join"
                            | "path.resolve"
                            | "url.fileURLToPath"
                            | "require.resolve"
                    )
                ) || self.text(f) == "String"
            }),
            _ => true,
        }
    }

    /// Where a winston Console transport with `stderrLevels: [...]` writes: stdout when a level
    /// it logs (its `level` option, else `info`, and every more severe one) is not listed;
    /// unknown when the list holds something other than strings.
    fn levels_dest(&self, arr: Node<'t>, value: Node<'t>) -> Dest {
        let mut c = arr.walk();
        let mut listed = Vec::new();
        for e in arr.named_children(&mut c).filter(|n| n.kind() != "comment") {
            match self.string_value(e) {
                Some(s) if e.kind() == "string" => listed.push(s),
                _ => return Dest::Other,
            }
        }
        // The transport's own `level`, read from the object the option sits in.
        let level = value
            .parent()
            .and_then(|pair| pair.parent())
            .filter(|o| o.kind() == "object")
            .and_then(|o| self.property(o, "level"))
            .and_then(|l| self.string_value(l));
        let level = level.as_deref().unwrap_or(DEFAULT_LEVEL);
        let Some(upto) = NPM_LEVELS.iter().position(|l| *l == level) else {
            return Dest::Other; // custom levels: the scan cannot tell
        };
        if NPM_LEVELS[..=upto]
            .iter()
            .all(|l| listed.iter().any(|s| s == l))
        {
            Dest::Other
        } else {
            Dest::Stdout
        }
    }

    /// The object literal an expression is (directly or through a binding).
    fn object_literal(&self, node: Node<'t>, scope: usize) -> Option<Node<'t>> {
        match self.resolve(node, scope, 0) {
            Val::Lit(o) if o.kind() == "object" => Some(o),
            _ => None,
        }
    }
}

impl<'t> Site<'t> for JsSite<'_, 't> {
    fn arg(&self, pos: Option<u8>, kw: Option<&str>) -> Option<Node<'t>> {
        if let Some(k) = kw
            && let Some(v) = k.split('|').find_map(|alt| self.option(alt))
        {
            return Some(v);
        }
        let p = usize::from(pos?);
        self.args
            .iter()
            .filter(|a| kw.is_none() || self.js.object_literal(**a, self.scope).is_none())
            .nth(p)
            .copied()
    }

    fn dest(&self, value: Node<'t>, means: Means, default: Dest) -> Dest {
        let js = self.js;
        if means == Means::Sink {
            return match js.resolve(value, self.scope, 0) {
                Val::None => default,
                _ => js.sink_dest(value, self.scope, self.row, &mut LITERAL_BUDGET.clone()),
            };
        }
        let v = js.resolve(value, self.scope, 0);
        match (means, &v) {
            // winston's `stderrLevels: ['error']`: the levels left out still go to stdout.
            (Means::Threshold, Val::Lit(arr)) if arr.kind() == "array" => {
                js.levels_dest(*arr, value)
            }
            (Means::Presence | Means::Threshold, _) => Dest::Other,
            (_, Val::None) => default,
            (_, Val::Unknown) => Dest::Unknown,
            (Means::StderrFlag, Val::Bool(true)) => Dest::Stderr,
            (Means::StderrFlag, Val::Bool(false)) => default,
            (Means::Fd | Means::FileOrFd | Means::ChildStdout, Val::Int(1)) => Dest::Stdout,
            (Means::Fd | Means::FileOrFd, Val::Int(2)) => Dest::Stderr,
            (Means::ChildStdout, Val::Str(s))
                if self
                    .row
                    .is_some_and(|r| r.stdout_values.contains(&s.as_str())) =>
            {
                Dest::Stdout
            }
            // `stdio: ['ignore', 'inherit', 'pipe']`: the child's stdout is the second.
            (Means::ChildStdout, Val::Lit(arr)) if arr.kind() == "array" => {
                let mut c = arr.walk();
                let second = arr.named_children(&mut c).nth(1);
                match second {
                    Some(s) => self.dest(s, means, default),
                    None => default,
                }
            }
            _ => js.stream_dest(&v).unwrap_or(Dest::Other),
        }
    }

    fn holds(&self, cond: Cond) -> bool {
        let js = self.js;
        match cond {
            Cond::NotJsonRpc => !js.is_jsonrpc_log(self.args, self.scope),
            Cond::Given(p, k) => self.arg(p, k).is_some(),
            Cond::NotPayload(p) => !self
                .args
                .get(usize::from(p))
                .is_some_and(|a| js.is_protocol_payload(*a, self.scope)),
            Cond::NotFilter => !js.in_filter_of(self.path, self.node.start_byte()),
            // Options the scan cannot read may hold the stream option: a spread in the options
            // literal, or a last argument (where Node APIs take options) it cannot resolve.
            Cond::NoSplat => {
                let spread = self.opts.is_some_and(|o| {
                    let mut c = o.walk();
                    o.named_children(&mut c)
                        .any(|p| p.kind() == "spread_element")
                });
                let opaque_last = self.args.last().is_some_and(|a| {
                    a.kind() == "spread_element"
                        || (js.resolve(*a, self.scope, 0) == Val::Unknown
                            && js.could_be_options(*a, self.scope))
                });
                !spread && !opaque_last
            }
            Cond::FlagOff(k) => match self.option(k) {
                None => true,
                Some(v) => js.resolve(v, self.scope, 0) == Val::Bool(false),
            },
            Cond::CallLacks(n) => !js.text(self.node).contains(n),
            // JS rows do not use it: never a finding on a condition it cannot read.
            Cond::ArgIs(..) => false,
            // JS rows do not use it: the file.
            Cond::FileLacks(n) | Cond::ScopeLacks(n) | Cond::ThenLacks(n) => !js.text.contains(n),
            Cond::FollowsRedirect
            | Cond::WriteMode(..)
            | Cond::NotCaptured(_)
            | Cond::FdNotSaved
            | Cond::Quiet
            | Cond::Satisfies(_)
            | Cond::Unless(_) => true,
        }
    }
}
