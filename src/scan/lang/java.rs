//! Java: `System.out` prints and writes (also through `import static java.lang.System.out`),
//! streams built on `System.out`/`FileDescriptor.out`, `System.setOut(...)`, and child processes
//! with `inheritIO()`. `System.err` and `printStackTrace()` go to stderr and are not reported.
//! A println of `writeValueAsString(...)`/`toJson(...)` is the hand-written JSON-RPC transport.

use super::{Field, FileFacts, Finding, Lang, captured, is_transport_name, query, snippet, text};
use crate::catalog::scan::{
    STATIC_PRINT_CALL, STATIC_STDOUT_INHERIT, STATIC_STDOUT_LOGGER, STATIC_STDOUT_REDIRECT,
    STATIC_STDOUT_WRITE,
};
use std::sync::LazyLock;
use tree_sitter::{Node, Query, Tree};

static QUERY: LazyLock<Query> = LazyLock::new(|| {
    query(
        Lang::Java,
        "[(method_invocation) (object_creation_expression) (method_reference)] @n",
    )
});

pub fn analyze(tree: &Tree, src: &[u8]) -> FileFacts {
    let static_out = memchr::memmem::find(src, b"import static java.lang.System.out;").is_some()
        || memchr::memmem::find(src, b"import static java.lang.System.*;").is_some();
    let mut facts = FileFacts::default();
    for n in captured(&QUERY, tree, src) {
        check(n, src, static_out, &mut facts);
    }
    facts
}

fn is_system_out(t: &str, static_out: bool) -> bool {
    matches!(t, "System.out" | "java.lang.System.out") || (static_out && t == "out")
}

fn json_payload(args: &str) -> bool {
    [
        "writeValueAsString",
        "toJson(",
        "JSON.toJSONString",
        "toJSONString",
    ]
    .iter()
    .any(|w| args.contains(w))
}

fn check(n: Node, src: &[u8], static_out: bool, facts: &mut FileFacts) {
    if n.kind() == "method_reference" {
        // `list.forEach(System.out::println)`: every call of the reference prints to stdout.
        let t: String = text(n, src).split_whitespace().collect();
        if let Some((object, _)) = t.split_once("::")
            && is_system_out(object, static_out)
        {
            facts.findings.push(Finding::at(
                &STATIC_PRINT_CALL,
                n,
                format!("`{t}` is passed as a callback; every call of it writes to stdout"),
            ));
        }
        return;
    }
    let args_node = n.field("arguments");
    let args = args_node.map(|a| text(a, src)).unwrap_or("");
    let arg_list: Vec<&str> = args_node
        .map(|a| {
            let mut c = a.walk();
            a.named_children(&mut c).map(|x| text(x, src)).collect()
        })
        .unwrap_or_default();
    let gives_stdout = arg_list
        .iter()
        .any(|a| is_system_out(a, static_out) || *a == "FileDescriptor.out");
    if n.kind() == "object_creation_expression" {
        let ty = n.field("type").map(|t| text(t, src)).unwrap_or("");
        if gives_stdout && !is_transport_name(ty) {
            let rule = if ty.contains("Handler") || ty.contains("Appender") || ty.contains("Log") {
                &STATIC_STDOUT_LOGGER
            } else {
                &STATIC_STDOUT_WRITE
            };
            facts.findings.push(Finding::at(
                rule,
                n,
                format!("`new {ty}(...)` is given stdout and writes to it"),
            ));
        }
        return;
    }
    let object = n.field("object").map(|o| text(o, src)).unwrap_or("");
    let name = n.field("name").map(|o| text(o, src)).unwrap_or("");
    if is_system_out(object, static_out) {
        let rule = match name {
            "print" | "println" | "printf" | "format" => &STATIC_PRINT_CALL,
            "write" | "append" | "writeBytes" => &STATIC_STDOUT_WRITE,
            _ => return,
        };
        if !json_payload(args) {
            facts.findings.push(Finding::at(
                rule,
                n,
                format!("`{object}.{name}(...)` writes to stdout"),
            ));
        }
        return;
    }
    match name {
        "setOut"
            if matches!(object, "System" | "java.lang.System")
                && !args.contains("FileDescriptor.out")
                && !args.contains("System.out") =>
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
        "inheritIO" => facts.findings.push(Finding::at(
            &STATIC_STDOUT_INHERIT,
            n,
            "`inheritIO()` gives the child process the server's stdout".to_string(),
        )),
        "redirectOutput" if args.contains("INHERIT") => facts.findings.push(Finding::at(
            &STATIC_STDOUT_INHERIT,
            n,
            "`redirectOutput(Redirect.INHERIT)` gives the child process the server's stdout"
                .to_string(),
        )),
        _ if gives_stdout && !is_transport_name(name) && !is_transport_name(object) => {
            facts.findings.push(Finding::at(
                &STATIC_STDOUT_WRITE,
                n,
                format!(
                    "`{}(...)` is given stdout and writes to it",
                    snippet(n, src)
                ),
            ));
        }
        _ => {}
    }
}
