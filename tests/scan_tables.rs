//! The sink tables (`src/scan/sinks/`) against what is derived from them and what exercises
//! them: the prefilter and the plan keep every row's spelling, every row takes part in the
//! analysis of at least one fixture, and docs/scan.md's lists are the tables'
//! (`UPDATE_GOLDEN=1 cargo test --test scan_tables` rewrites them).
#![cfg(unix)]

use mcp_stdio_guard::scan::lang::{self, Lang};
use mcp_stdio_guard::scan::{plan, sinks};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// How a row's name is written in code: from its anchor on (`sys.stdout.write`,
/// `subprocess.run`, `Println`), without the markers the tables use (`*.`, `()`).
fn spelled(t: &sinks::Table, name: &'static str) -> String {
    let anchor = t.anchor(name);
    if name.starts_with('/') {
        return format!("'{name}'"); // a path, written as a string
    }
    let tail = match t.lang {
        Lang::Go => name.rsplit('/').next().unwrap_or(name),
        _ => name,
    };
    let from = tail.find(anchor).unwrap_or(0);
    tail[from..].replace("()", "")
}

/// A stdout value of the language as written, for rows that only report when handed one.
fn stdout_spelling(t: &sinks::Table) -> String {
    let s = t
        .streams
        .iter()
        .chain(t.base.map(|b| b.streams).unwrap_or(&[]))
        .find(|s| s.dest == sinks::Dest::Stdout)
        .expect("every table knows stdout");
    spelled(t, s.name)
}

/// Every row as a line of code that must reach the parser: its spelling with the argument it
/// reports with (nothing for a row whose default is stdout, `1` for a descriptor, a stdout
/// value for a configuration, a stdout stream for a row that only reports when handed one).
fn rows_as_lines(t: &'static sinks::Table) -> Vec<(&'static str, String)> {
    let stdout = stdout_spelling(t);
    let line = |name: &'static str, a: &sinks::Arg, values: &[&str]| {
        let sp = spelled(t, name);
        let arg = match a.means {
            sinks::Means::Fd | sinks::Means::FileOrFd if a.default != sinks::Dest::Stdout => {
                "1".to_string()
            }
            _ if a.default == sinks::Dest::Stdout => String::new(),
            _ if !values.is_empty() => {
                format!("'x', {{ {}: '{}' }}", a.kw.unwrap_or("v"), values[0])
            }
            sinks::Means::Stream | sinks::Means::Streams | sinks::Means::Sink => stdout.clone(),
            _ => String::new(),
        };
        (name, format!("{sp}({arg})"))
    };
    let mut out = Vec::new();
    for s in t.sinks.iter().chain(t.redirects) {
        out.push(line(s.name, &s.arg, &[]));
    }
    for w in t.wrappers {
        out.push(line(w.name, &w.arg, &[]));
    }
    for c in t.configs.iter().filter(|c| c.form != sinks::Form::Property) {
        out.push(line(c.name, &c.arg, c.stdout_values));
    }
    for s in t.streams.iter().filter(|s| s.dest == sinks::Dest::Stdout) {
        out.push((s.name, format!("f({})", spelled(t, s.name))));
    }
    out
}

/// Whether the plan keeps the statement at `at` of a file far over the region threshold.
fn plan_keeps(lang: Lang, src: &str, at: usize) -> bool {
    let plan = match lang {
        Lang::Python => plan::python(src.as_bytes(), 0),
        _ => plan::javascript_planned(src.as_bytes(), 0),
    };
    match plan {
        plan::Plan::Skip => false,
        plan::Plan::Whole => true,
        plan::Plan::Ranges(r) => r.iter().any(|(range, _)| range.contains(&at)),
    }
}

#[test]
fn the_prefilter_and_the_plan_keep_every_rows_spelling() {
    let mut failures = Vec::new();
    for t in sinks::tables() {
        let words = t.lang.prefilter();
        assert!(!words.is_empty(), "{:?}: no prefilter words", t.lang);
        for (name, line) in rows_as_lines(t) {
            if !words.iter().any(|w| line.contains(w)) {
                failures.push(format!(
                    "{:?} `{name}`: `{line}` is filtered out by {words:?}",
                    t.lang
                ));
            }
            let (import, line) = match t.lang {
                // Planned statement by statement: the line, fully qualified, must be kept.
                Lang::Python => {
                    let module = name.split('.').next().unwrap_or("");
                    let full = line.replacen(&spelled(t, name), &name.replace("()", ""), 1);
                    (format!("import {module}\n"), full)
                }
                // A module is named by its string and bound to any local name.
                Lang::JavaScript => {
                    let module = name.split('.').next().unwrap_or("");
                    if sinks::javascript::GLOBALS.contains(&module) || name.starts_with('/') {
                        (String::new(), line)
                    } else {
                        let call = line.replacen(&spelled(t, name), &name.replace("()", ""), 1);
                        let local = format!("m{}", &call[module.len()..]);
                        (format!("import m from '{module}';\n"), local)
                    }
                }
                _ => continue,
            };
            let filler = "x = 1\n".repeat(2000);
            let src = format!("{import}{filler}{line}\n{filler}");
            let at = src.find(&line).unwrap_or(0);
            if !plan_keeps(t.lang, &src, at) {
                failures.push(format!("{:?} `{name}`: the plan drops `{line}`", t.lang));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scan");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixture folder") {
            let path = entry.expect("fixture entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_none_or(|e| e != "expected") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_row_of_every_table_is_exercised_by_a_fixture() {
    let mut seen: BTreeSet<(String, &'static str)> = BTreeSet::new();
    for path in fixtures() {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let bytes = std::fs::read(&path).expect("fixture");
        let Some(l) = Lang::from_file_name(name).or_else(|| Lang::from_shebang(&bytes)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&l.grammar()).expect("grammar");
        let tree = parser.parse(text.as_bytes(), None).expect("parse");
        let facts = std::thread::Builder::new()
            .stack_size(mcp_stdio_guard::scan::WORKER_STACK_BYTES)
            .spawn(move || lang::analyze(l, &tree, &text).rows)
            .expect("thread")
            .join()
            .expect("no panic");
        let family = sinks::table(l).map(|t| t.lang).unwrap_or(l);
        for r in facts {
            seen.insert((format!("{family:?}"), r));
        }
    }
    let mut missing = Vec::new();
    for t in sinks::tables() {
        let rows = t
            .sinks
            .iter()
            .map(|s| s.name)
            .chain(t.redirects.iter().map(|s| s.name))
            .chain(t.wrappers.iter().map(|s| s.name))
            .chain(t.configs.iter().map(|s| s.name));
        for r in rows {
            if !seen.contains(&(format!("{:?}", t.lang), r)) {
                missing.push(format!("{:?}: `{r}`", t.lang));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "rows no fixture exercises (add a fixture line for each):\n{}",
        missing.join("\n")
    );
}

#[test]
fn docs_scan_md_lists_every_table_row() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scan.md");
    let doc = std::fs::read_to_string(&path).expect("docs/scan.md");
    let (begin, end) = (
        "<!-- sink tables: generated -->\n",
        "<!-- end of sink tables -->\n",
    );
    let (Some(a), Some(b)) = (doc.find(begin), doc.find(end)) else {
        panic!("docs/scan.md lacks the `{begin}` … `{end}` markers");
    };
    let generated = sinks::markdown();
    let current = &doc[a + begin.len()..b];
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let new = format!(
            "{}{begin}{generated}{end}{}",
            &doc[..a],
            &doc[b + end.len()..]
        );
        std::fs::write(&path, new).expect("write docs/scan.md");
        return;
    }
    assert!(
        current == generated,
        "docs/scan.md's sink tables are stale: run UPDATE_GOLDEN=1 cargo test --test scan_tables"
    );
}
