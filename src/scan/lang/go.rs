//! Go: `fmt.Print*`, writes to `os.Stdout`, loggers pointed at it, child processes given it, and
//! `os.Stdout` reassigned. Package names come from the file's imports (aliases and dot-imports
//! included), so a local `fmt` value or another package's `Println` is not mistaken for `fmt`.
//! Go's builtin `print`/`println` write to stderr and are not reported.

use super::{Field, FileFacts, Finding, Lang, captured, is_transport_name, query, snippet, text};
use crate::catalog::scan::{
    STATIC_PRINT_CALL, STATIC_STDOUT_INHERIT, STATIC_STDOUT_LOGGER, STATIC_STDOUT_REDIRECT,
    STATIC_STDOUT_WRITE,
};
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;
use tree_sitter::{Node, Query, Tree};

static QUERY: LazyLock<Query> = LazyLock::new(|| {
    query(
        Lang::Go,
        "[(import_spec) (call_expression) (assignment_statement) (short_var_declaration) \
         (var_spec) (keyed_element)] @n",
    )
});

struct Go<'t> {
    src: &'t [u8],
    /// Local package name → import path.
    packages: HashMap<String, String>,
    /// Import paths imported with `.`.
    dot: HashSet<String>,
    /// Variables assigned `os.Stdout`.
    stdout_vars: HashSet<&'t str>,
    facts: FileFacts,
}

pub fn analyze(tree: &Tree, src: &[u8]) -> FileFacts {
    let nodes = captured(&QUERY, tree, src);
    let mut go = Go {
        src,
        packages: HashMap::new(),
        dot: HashSet::new(),
        stdout_vars: HashSet::new(),
        facts: FileFacts::default(),
    };
    for n in nodes.iter().filter(|n| n.kind() == "import_spec") {
        go.import(*n);
    }
    for n in nodes.iter().filter(|n| {
        matches!(
            n.kind(),
            "short_var_declaration" | "var_spec" | "assignment_statement"
        )
    }) {
        go.track_vars(*n);
    }
    for n in nodes {
        match n.kind() {
            "call_expression" => go.call(n),
            "assignment_statement" => go.assignment(n),
            "keyed_element" => go.keyed(n),
            _ => {}
        }
    }
    go.facts
}

impl<'t> Go<'t> {
    fn text(&self, n: Node<'t>) -> &'t str {
        text(n, self.src)
    }

    fn import(&mut self, spec: Node<'t>) {
        let Some(path) = spec.field("path") else {
            return;
        };
        let path = self.text(path).trim_matches(['"', '`']).to_string();
        match spec.field("name") {
            Some(n) if n.kind() == "dot" => {
                self.dot.insert(path);
            }
            Some(n) if n.kind() == "blank_identifier" => {}
            Some(n) => {
                self.packages.insert(self.text(n).to_string(), path);
            }
            None => {
                let mut name = path.rsplit('/').next().unwrap_or(&path).to_string();
                // `gopkg.in/yaml.v3` → `yaml`; `github.com/x/y/v2` → `y`.
                if name.starts_with('v') && name[1..].chars().all(|c| c.is_ascii_digit()) {
                    name = path.rsplit('/').nth(1).unwrap_or(&name).to_string();
                }
                let name = name.split('.').next().unwrap_or(&name).to_string();
                self.packages.insert(name, path);
            }
        }
    }

    /// The import path of a package-qualified selector's operand.
    fn package_of(&self, operand: Node<'t>) -> Option<&str> {
        if operand.kind() != "identifier" && operand.kind() != "package_identifier" {
            return None;
        }
        self.packages.get(self.text(operand)).map(String::as_str)
    }

    fn is_stdout(&self, mut n: Node<'t>) -> bool {
        // Through any number of parentheses, iteratively: `((((os.Stdout))))` nested a hundred
        // thousand deep must not overflow the stack.
        while n.kind() == "parenthesized_expression" {
            match n.named_child(0) {
                Some(inner) => n = inner,
                None => return false,
            }
        }
        match n.kind() {
            "selector_expression" => {
                let (Some(op), Some(f)) = (n.field("operand"), n.field("field")) else {
                    return false;
                };
                self.text(f) == "Stdout" && self.package_of(op) == Some("os")
            }
            "identifier" => {
                let t = self.text(n);
                self.stdout_vars.contains(t) || (t == "Stdout" && self.dot.contains("os"))
            }
            _ => false,
        }
    }

    fn track_vars(&mut self, n: Node<'t>) {
        let (left, right) = match n.kind() {
            "var_spec" => (n.field("name"), n.field("value")),
            _ => (n.field("left"), n.field("right")),
        };
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        let lefts: Vec<Node> = if left.kind() == "expression_list" {
            let mut c = left.walk();
            left.named_children(&mut c).collect()
        } else {
            vec![left]
        };
        let rights: Vec<Node> = if right.kind() == "expression_list" {
            let mut c = right.walk();
            right.named_children(&mut c).collect()
        } else {
            vec![right]
        };
        for (l, r) in lefts.iter().zip(rights.iter()) {
            if l.kind() == "identifier" && self.is_stdout(*r) {
                self.stdout_vars.insert(self.text(*l));
            }
        }
    }

    fn args(&self, call: Node<'t>) -> Vec<Node<'t>> {
        let Some(list) = call.field("arguments") else {
            return Vec::new();
        };
        let mut c = list.walk();
        list.named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .collect()
    }

    fn report(&mut self, rule: &'static crate::catalog::Rule, n: Node<'t>, msg: String) {
        self.facts.findings.push(Finding::at(rule, n, msg));
    }

    fn call(&mut self, call: Node<'t>) {
        let Some(func) = call.field("function") else {
            return;
        };
        let args = self.args(call);
        let name = snippet(func, self.src);
        let (pkg, fname) = match func.kind() {
            "selector_expression" => {
                let (Some(op), Some(f)) = (func.field("operand"), func.field("field")) else {
                    return;
                };
                if self.is_stdout(op) {
                    if matches!(
                        self.text(f),
                        "Write" | "WriteString" | "WriteAt" | "ReadFrom"
                    ) {
                        self.report(
                            &STATIC_STDOUT_WRITE,
                            call,
                            format!("`{name}(...)` writes to stdout"),
                        );
                    }
                    return;
                }
                (self.package_of(op).map(str::to_string), self.text(f))
            }
            "identifier" => {
                let t = self.text(func);
                if self.dot.contains("fmt")
                    && matches!(
                        t,
                        "Print" | "Printf" | "Println" | "Fprint" | "Fprintf" | "Fprintln"
                    )
                {
                    (Some("fmt".to_string()), t)
                } else {
                    (None, t)
                }
            }
            _ => (None, ""),
        };
        let stdout_arg = args.iter().position(|a| self.is_stdout(*a));
        match (pkg.as_deref(), fname) {
            (Some("fmt"), "Print" | "Printf" | "Println") => {
                self.report(
                    &STATIC_PRINT_CALL,
                    call,
                    format!("`{name}(...)` writes to stdout"),
                );
            }
            (Some("log"), "SetOutput" | "New")
            | (Some("log/slog"), "NewTextHandler" | "NewJSONHandler")
                if stdout_arg == Some(0) =>
            {
                self.report(
                    &STATIC_STDOUT_LOGGER,
                    call,
                    format!("`{name}(os.Stdout, ...)` sends log output to stdout"),
                );
            }
            (_, _) if stdout_arg.is_some() => {
                if is_transport_name(fname)
                    || matches!(fname, "NewWriter" | "NewWriterSize" | "NewEncoder")
                {
                    return;
                }
                let logger = pkg.as_deref().is_some_and(|p| p.contains("log"))
                    || ["Output", "Handler", "Logger", "Log"]
                        .iter()
                        .any(|w| fname.contains(w));
                let rule = if logger {
                    &STATIC_STDOUT_LOGGER
                } else {
                    &STATIC_STDOUT_WRITE
                };
                self.report(
                    rule,
                    call,
                    format!("`{name}(...)` is given os.Stdout and writes to it"),
                );
            }
            _ => {}
        }
    }

    fn assignment(&mut self, n: Node<'t>) {
        let (Some(left), Some(right)) = (n.field("left"), n.field("right")) else {
            return;
        };
        let (Some(l), Some(r)) = (left.named_child(0), right.named_child(0)) else {
            return;
        };
        if l.kind() != "selector_expression" {
            return;
        }
        if self.is_stdout(l) {
            if !self.text(r).contains("Stdout") {
                self.report(
                    &STATIC_STDOUT_REDIRECT,
                    n,
                    format!(
                        "`{}` replaces os.Stdout: the MCP transport's replies go there too",
                        snippet(n, self.src)
                    ),
                );
            }
            return;
        }
        let field = l.field("field").map(|f| self.text(f)).unwrap_or("");
        if self.is_stdout(r) {
            let rule = if matches!(field, "Stdout" | "Stderr") {
                &STATIC_STDOUT_INHERIT
            } else {
                &STATIC_STDOUT_WRITE
            };
            self.report(
                rule,
                n,
                format!("`{}` hands os.Stdout on", snippet(n, self.src)),
            );
        }
    }

    fn keyed(&mut self, n: Node<'t>) {
        let mut c = n.walk();
        let kids: Vec<Node> = n.named_children(&mut c).collect();
        let [key, value] = kids.as_slice() else {
            return;
        };
        let value = if value.kind() == "literal_element" {
            match value.named_child(0) {
                Some(v) => v,
                None => return,
            }
        } else {
            *value
        };
        if !self.is_stdout(value) {
            return;
        }
        let key = self.text(*key);
        let rule = if matches!(key, "Stdout" | "Stderr") {
            &STATIC_STDOUT_INHERIT
        } else {
            &STATIC_STDOUT_LOGGER
        };
        self.report(
            rule,
            n,
            format!("`{}` hands os.Stdout to a writer", snippet(n, self.src)),
        );
    }
}
