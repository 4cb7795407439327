//! Rules about the code itself, checked over `src/` (test-only): the layer order of the
//! top-level modules (ARCHITECTURE.md) and the length of functions.

use std::path::{Path, PathBuf};

/// The top-level modules, lowest layer first: a module may use only modules before it. The
/// binary (`main.rs`, `deliver.rs`) sits above them all.
const LAYERS: &[&str] = &[
    "catalog",
    "issue",
    "exit",
    "protocol",
    "input",
    "redact",
    "shard",
    "readme",
    "code_rules",
    "runtime",
    "fingerprint",
    "scan",
    "report",
    "trace",
    "cli",
    "settings",
    "run",
];

/// The longest a function may be, in lines from its `fn` to its closing brace.
const MAX_FN_LINES: usize = 150;

/// Functions allowed to be longer, and why.
const LONG_FNS: &[(&str, &str, &str)] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/`, with its path relative to `src/`.
fn sources() -> Vec<(String, String)> {
    let root = src();
    let mut stack = vec![root.clone()];
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The text of a file without comments, strings and character literals (each replaced by
/// spaces, newlines kept), so braces and paths are only code's.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let blank = |out: &mut Vec<u8>, s: &[u8]| {
        out.extend(s.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }))
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let end = if rest.starts_with(b"//") {
            rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            rest[2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(rest.len(), |p| p + 4)
        } else if !prev_ident && (rest.starts_with(b"r\"") || rest.starts_with(b"r#")) {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                0
            } else {
                let mut close = vec![b'"'];
                close.extend(std::iter::repeat_n(b'#', hashes));
                let from = 2 + hashes;
                rest[from..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(rest.len(), |p| from + p + close.len())
            }
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1).min(rest.len())
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{7f}'), not a lifetime ('a).
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = std::str::from_utf8(&rest[1..rest.len().min(5)])
                    .ok()
                    .or_else(|| std::str::from_utf8(&rest[1..2]).ok())
                    .and_then(|s| s.chars().next())
                    .map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(ch + 2)
            };
            len.unwrap_or(0)
        } else {
            0
        };
        if end == 0 {
            out.push(b[i]);
            i += 1;
        } else {
            blank(&mut out, &rest[..end]);
            i += end;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The layer a file belongs to: its top-level module.
fn module_of(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap();
    first.strip_suffix(".rs").unwrap_or(first)
}

/// The top-level modules a file's code names (`crate::x`, or `super::x` in a file of `src/`).
fn uses(rel: &str, code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let top_file = !rel.contains('/');
    for prefix in ["crate::", "super::"] {
        if prefix == "super::" && !top_file {
            continue;
        }
        for (at, _) in code.match_indices(prefix) {
            let before = code[..at].chars().last();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let name: String = code[at + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// No import cycle between top-level modules: each uses only the layers below it
/// (ARCHITECTURE.md, "Layers").
#[test]
fn modules_use_only_the_layers_below_them() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    for line in lib.lines() {
        let line = line.trim();
        if let Some(name) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("pub(crate) mod "))
            .or_else(|| line.strip_prefix("mod "))
        {
            let name = name.trim_end_matches(';');
            assert!(
                LAYERS.contains(&name),
                "lib.rs module {name} has no layer in LAYERS"
            );
        }
    }
    let mut wrong = Vec::new();
    for (rel, text) in sources() {
        if ["lib.rs", "main.rs", "deliver.rs", "progress.rs"].contains(&rel.as_str()) {
            continue;
        }
        let own = module_of(&rel);
        let level = LAYERS
            .iter()
            .position(|m| *m == own)
            .unwrap_or_else(|| panic!("{rel}: {own} has no layer"));
        for used in uses(&rel, &code_only(&text)) {
            let Some(theirs) = LAYERS.iter().position(|m| *m == used) else {
                continue;
            };
            if theirs > level {
                wrong.push(format!("{rel}: {own} uses {used}, a layer above it"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "layer order broken:\n{}",
        wrong.join("\n")
    );
}

/// Each function of `src/` (tests included) with its first line and length in lines.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(code.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else {
            continue;
        };
        let qualifiers = [
            "pub",
            "pub(crate)",
            "pub(super)",
            "const",
            "async",
            "unsafe",
            "extern",
            "\"C\"",
        ];
        if !words[..at].iter().all(|w| qualifiers.contains(w)) {
            continue;
        }
        let Some(name) = words.get(at + 1).map(|w| {
            w.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        }) else {
            continue;
        };
        // The body: the first `{` after the signature at bracket depth 0 (a `;` first means
        // a declaration without one).
        let mut depth = 0i32;
        let mut body = None;
        let mut prev = ' ';
        for (i, c) in code[starts[n]..].char_indices() {
            let arrow = c == '>' && prev == '-';
            prev = c;
            match c {
                '>' if arrow => {}
                '(' | '[' | '<' => depth += 1,
                ')' | ']' | '>' => depth -= 1,
                ';' if depth <= 0 => break,
                '{' if depth <= 0 => {
                    body = Some(starts[n] + i);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = body else { continue };
        let mut braces = 0i32;
        let mut close = code.len();
        for (i, c) in code[open..].char_indices() {
            match c {
                '{' => braces += 1,
                '}' => {
                    braces -= 1;
                    if braces == 0 {
                        close = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let last = code[..close].matches('\n').count();
        out.push((name, n + 1, last - n + 1));
    }
    out
}

/// No function over [`MAX_FN_LINES`] lines: orchestrators are split along their phases. The
/// exceptions are listed in [`LONG_FNS`] with their reason.
#[test]
fn no_function_is_longer_than_150_lines() {
    let mut long = Vec::new();
    let mut allowed_seen = Vec::new();
    for (rel, text) in sources() {
        for (name, line, len) in functions(&code_only(&text)) {
            if len <= MAX_FN_LINES {
                continue;
            }
            if LONG_FNS.iter().any(|(f, n, _)| *f == rel && *n == name) {
                allowed_seen.push((rel.clone(), name));
                continue;
            }
            long.push(format!("{rel}:{line}: fn {name} is {len} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them along their phases):\n{}",
        long.join("\n")
    );
    for (file, name, _) in LONG_FNS {
        assert!(
            allowed_seen.iter().any(|(f, n)| f == file && n == name),
            "{file}: fn {name} is allowed to be long but no longer is: drop it from LONG_FNS"
        );
    }
}

/// The scanners of these tests see what the compiler sees.
#[test]
fn the_scanners_skip_strings_comments_and_chars() {
    let code = code_only(
        "let a = \"crate::x {\"; // crate::y }\nlet c = '{'; let l: &'a str = r#\"}\"#; crate::z::f();\n",
    );
    assert_eq!(uses("a.rs", &code), ["z"]);
    assert!(!code.contains('{') && !code.contains('}'), "{code}");
    let fns = functions(&code_only(
        "pub(crate) fn a() {\n    if x { '}' } else { \"}\" }\n}\nfn decl();\nasync fn b<T: Into<u8>>(t: T) -> Result<(), ()> {\n}\n",
    ));
    let fns: Vec<(&str, usize, usize)> = fns.iter().map(|(n, l, c)| (n.as_str(), *l, *c)).collect();
    assert_eq!(fns, [("a", 1, 3), ("b", 5, 2)]);
}
