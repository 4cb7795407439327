//! C#: `Console.Write*` (also under `using static System.Console`), `Console.Out` writes,
//! `Console.OpenStandardOutput()`, `Console.SetOut(...)`, and `AddConsole()` logging without
//! `LogToStandardErrorThreshold` (Microsoft.Extensions.Logging's console logger writes to stdout).
//! `Console.Error` goes to stderr and is not reported.

use super::{Field, FileFacts, Finding, Lang, captured, query, snippet, text};
use crate::catalog::scan::{
    STATIC_PRINT_CALL, STATIC_STDOUT_LOGGER, STATIC_STDOUT_REDIRECT, STATIC_STDOUT_WRITE,
};
use std::sync::LazyLock;
use tree_sitter::{Node, Query, Tree};

static QUERY: LazyLock<Query> = LazyLock::new(|| query(Lang::CSharp, "(invocation_expression) @n"));

pub fn analyze(tree: &Tree, src: &[u8]) -> FileFacts {
    let using_static = memchr::memmem::find(src, b"using static System.Console;").is_some();
    let mut facts = FileFacts::default();
    for n in captured(&QUERY, tree, src) {
        check(n, src, using_static, &mut facts);
    }
    facts
}

fn check(n: Node, src: &[u8], using_static: bool, facts: &mut FileFacts) {
    let Some(func) = n.field("function") else {
        return;
    };
    let args = n.field("arguments").map(|a| text(a, src)).unwrap_or("");
    let (object, name) = match func.kind() {
        "member_access_expression" => (
            func.field("expression").map(|e| text(e, src)).unwrap_or(""),
            func.field("name").map(|e| text(e, src)).unwrap_or(""),
        ),
        "identifier" if using_static => ("Console", text(func, src)),
        "generic_name" | "identifier" => ("", text(func, src)),
        _ => return,
    };
    let console = matches!(
        object,
        "Console" | "System.Console" | "global::System.Console"
    );
    let out = matches!(object, "Console.Out" | "System.Console.Out");
    match name {
        "Write" | "WriteLine" if console => facts.findings.push(Finding::at(
            &STATIC_PRINT_CALL,
            n,
            format!("`{}(...)` writes to stdout", snippet(func, src)),
        )),
        "Write" | "WriteLine" | "WriteAsync" | "WriteLineAsync" if out => {
            facts.findings.push(Finding::at(
                &STATIC_STDOUT_WRITE,
                n,
                format!("`{}(...)` writes to stdout", snippet(func, src)),
            ))
        }
        "OpenStandardOutput" if console => facts.findings.push(Finding::at(
            &STATIC_STDOUT_WRITE,
            n,
            "`Console.OpenStandardOutput()` opens stdout for writing".to_string(),
        )),
        "SetOut" if console && !args.contains("OpenStandardOutput") => {
            facts.findings.push(Finding::at(
                &STATIC_STDOUT_REDIRECT,
                n,
                format!(
                    "`{}` replaces Console.Out: the MCP transport's replies go there too",
                    snippet(n, src)
                ),
            ));
        }
        "AddConsole" if !args.contains("LogToStandardErrorThreshold") => {
            facts.findings.push(Finding::at(
                &STATIC_STDOUT_LOGGER,
                n,
                "`AddConsole()` without `LogToStandardErrorThreshold` logs to stdout".to_string(),
            ))
        }
        _ => {}
    }
}
