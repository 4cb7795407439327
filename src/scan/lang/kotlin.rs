//! Kotlin: the stdlib `println`/`print` (unless the file defines its own), `System.out` prints and
//! writes, `System.setOut(...)`, and child processes with `inheritIO()`. `System.err` goes to
//! stderr and is not reported; `logger.println(...)` is a method call, not the stdlib function.

use super::{Field, FileFacts, Finding, Lang, captured, query, snippet, text};
use crate::catalog::scan::{
    STATIC_PRINT_CALL, STATIC_STDOUT_INHERIT, STATIC_STDOUT_REDIRECT, STATIC_STDOUT_WRITE,
};
use std::collections::HashSet;
use std::sync::LazyLock;
use tree_sitter::{Query, Tree};

static QUERY: LazyLock<Query> = LazyLock::new(|| {
    query(
        Lang::Kotlin,
        "[(call_expression) (function_declaration)] @n",
    )
});

pub fn analyze(tree: &Tree, src: &[u8]) -> FileFacts {
    let nodes = captured(&QUERY, tree, src);
    // Functions the file defines itself shadow the stdlib's.
    let defined: HashSet<&str> = nodes
        .iter()
        .filter(|n| n.kind() == "function_declaration")
        .filter_map(|n| {
            n.field("name").or_else(|| {
                let mut c = n.walk();
                n.named_children(&mut c).find(|k| k.kind() == "identifier")
            })
        })
        .map(|n| text(n, src))
        .collect();
    let mut facts = FileFacts::default();
    for n in nodes.into_iter().filter(|n| n.kind() == "call_expression") {
        let Some(callee) = n.named_child(0) else {
            continue;
        };
        let callee_text: String = text(callee, src).split_whitespace().collect();
        let args = {
            let mut c = n.walk();
            n.named_children(&mut c)
                .filter(|k| k.kind() == "value_arguments")
                .map(|k| text(k, src))
                .collect::<String>()
        };
        match callee_text.as_str() {
            "println" | "print" | "kotlin.io.println" | "kotlin.io.print"
                if (callee.kind() != "navigation_expression"
                    || callee_text.starts_with("kotlin.io"))
                    && !defined.contains(callee_text.as_str()) =>
            {
                facts.findings.push(Finding::at(
                    &STATIC_PRINT_CALL,
                    n,
                    format!("`{callee_text}(...)` writes to stdout"),
                ));
            }
            "System.out.println" | "System.out.print" | "System.out.printf"
            | "System.out.format" => facts.findings.push(Finding::at(
                &STATIC_PRINT_CALL,
                n,
                format!("`{callee_text}(...)` writes to stdout"),
            )),
            "System.out.write" | "System.out.append" => facts.findings.push(Finding::at(
                &STATIC_STDOUT_WRITE,
                n,
                format!("`{callee_text}(...)` writes to stdout"),
            )),
            "System.setOut"
                if !args.contains("FileDescriptor.out") && !args.contains("System.out") =>
            {
                facts.findings.push(Finding::at(
                    &STATIC_STDOUT_REDIRECT,
                    n,
                    format!(
                        "`{}` replaces System.out: the MCP transport's replies go there too",
                        snippet(n, src)
                    ),
                ));
            }
            t if t.ends_with(".inheritIO") => facts.findings.push(Finding::at(
                &STATIC_STDOUT_INHERIT,
                n,
                "`inheritIO()` gives the child process the server's stdout".to_string(),
            )),
            _ => {}
        }
    }
    facts
}
