//! From the polluted byte to the line that wrote it: runtime stdout pollution matched against the
//! write calls of the server's own code.
//!
//! When the server's code is on disk (the `--scan` tree, else the tree found from its command:
//! [`root::infer`]), every stdout-pollution finding (`stdout-non-json`, `stdout-without-newline`,
//! `stdout-invalid-utf8`) is matched against the stdout writes the static scan finds in that tree
//! ([`sites`]: literals, f-strings and template literals with their holes, format strings), and
//! against the logger calls of a tree whose logger the scan found configured on stdout. Compiled
//! JavaScript is mapped back to its source through its source map ([`sourcemap`]).
//!
//! The finding gains `source` (in its fields, so every format and `merge` carry it): the file,
//! line, column, the write call (`sink`) and how sure the match is: `exact` (a literal equal to
//! the line), `pattern` (literal text around holes), `only-candidate` (no text matched, but the
//! tree has a single stdout write and its text is not a literal), or `ambiguous` (several calls
//! print this text: all are listed, none is chosen). No match leaves the finding as it was.
//! Findings traced to the same call are then one finding, with `occurrences` and `stdoutLines`.
//!
//! This module reads files (the tree, its source maps) and runs the scan; it never prints.

pub mod pattern;
pub mod root;
pub mod sites;
pub mod sourcemap;

use crate::catalog::{Rule, runtime as rules, scan as scan_rules};
use crate::issue::{Issue, Location};
pub use crate::report::source::{Confidence, Source, Written};
use crate::report::{Report, Target, locate};
use crate::scan::{ScanOptions, lang::Lang};
use serde_json::{Map, Value};
use sites::{Kind, Site};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The findings whose evidence is a line a program wrote to stdout.
const TRACED: [&Rule; 3] = [
    &rules::STDOUT_NON_JSON,
    &rules::STDOUT_WITHOUT_NEWLINE,
    &rules::STDOUT_INVALID_UTF8,
];

/// Files of a tree read for logger calls, at most (the scan's limits bound each one).
const MAX_LOGGER_FILES: usize = 5000;
/// Occurrences of one traced finding listed in `stdoutLines` (all are counted).
const MAX_LISTED_LINES: usize = 100;

/// Traces the stdout pollution of every target of the report to the server's code. `scan`: the
/// `--scan` path, whose findings are the report's scan section; else each target's tree is found
/// from its command. `cwd`: the guard's working directory (source paths are relative to it).
pub fn attribute(report: &mut Report, scan: Option<&Path>, cwd: &Path) {
    let cwd = locate::normalize(cwd);
    let mut indexes: HashMap<Vec<PathBuf>, Option<Index>> = HashMap::new();
    let given: Option<Vec<Issue>> = report.scan.as_ref().map(|s| s.issues.clone());
    for target in &mut report.targets {
        if !target
            .issues
            .iter()
            .chain(target.run_issues.iter().flatten())
            .any(is_traced)
        {
            continue;
        }
        let roots = match scan {
            Some(path) => vec![locate::normalize(&cwd.join(path))],
            None => {
                let server_cwd = locate::normalize(&cwd.join(&target.context.cwd_resolved));
                root::infer(&target.context.argv, &server_cwd)
            }
        };
        if roots.is_empty() {
            continue;
        }
        let index = indexes.entry(roots.clone()).or_insert_with(|| {
            let (findings, files) = match (scan, &given) {
                (Some(_), Some(found)) => {
                    let files = crate::scan::walk::discover(&roots, &cwd, false, false)
                        .map(|all| all.into_iter().map(|c| c.path).collect())
                        .unwrap_or_default();
                    (found.clone(), files)
                }
                _ => {
                    let files = traceable_files(&roots, &cwd);
                    if files.is_empty() {
                        return None;
                    }
                    // One worker: a trace runs once, after the servers, and a worker's stack
                    // (deep expressions recurse) is memory the guard keeps.
                    let mut options = ScanOptions::new(files.clone(), cwd.clone());
                    options.threads = 1;
                    (crate::scan::run(&options).ok()?.issues, files)
                }
            };
            Some(Index::build(&findings, &files, &cwd))
        });
        let Some(index) = index.as_ref() else {
            continue;
        };
        trace_target(target, index);
    }
}

/// The files of a tree found from a command that the trace reads: Python, JavaScript and
/// TypeScript (only the entry script's own language), and not tests (`tests/`, `test_*.py`,
/// `*.spec.ts`, ... as the scan defines them: they do not run in the server) unless they sit in
/// the entry script's own folder. The other languages' files are never scanned for a trace.
fn traceable_files(roots: &[PathBuf], cwd: &Path) -> Vec<PathBuf> {
    let js = |l: Lang| matches!(l, Lang::JavaScript | Lang::TypeScript | Lang::Tsx);
    let entry = roots
        .iter()
        .filter(|r| r.is_file())
        .find_map(|r| r.file_name()?.to_str().and_then(Lang::from_file_name));
    let wanted = |l: Lang| match entry {
        Some(Lang::Python) => l == Lang::Python,
        Some(e) if js(e) => js(l),
        _ => l == Lang::Python || js(l),
    };
    let Ok(found) = crate::scan::walk::discover(roots, cwd, false, false) else {
        return Vec::new();
    };
    let package = roots.iter().find(|r| r.is_dir());
    let entry_dir = roots.iter().find(|r| r.is_file()).and_then(|e| e.parent());
    let runs_in_server = |path: &Path| {
        let Some(package) = package else {
            return true;
        };
        if entry_dir.is_some_and(|d| path.starts_with(d)) {
            return true;
        }
        let rel = path.strip_prefix(package).unwrap_or(path);
        crate::scan::walk::Context::of(rel) != crate::scan::walk::Context::Test
    };
    found
        .into_iter()
        .filter(|c| c.lang.map_or(c.explicit, wanted))
        .filter(|c| c.explicit || runs_in_server(&locate::normalize(&cwd.join(&c.path))))
        .map(|c| c.path)
        .collect()
}

fn is_traced(issue: &Issue) -> bool {
    TRACED.iter().any(|r| issue.is(r)) && issue.evidence.is_some()
}

fn trace_target(target: &mut Target, index: &Index) {
    for issue in target
        .issues
        .iter_mut()
        .chain(target.run_issues.iter_mut().flatten())
    {
        if !is_traced(issue) || issue.fields.contains_key("source") {
            continue;
        }
        if let Some(source) = issue.evidence.as_deref().and_then(|e| index.trace(e)) {
            issue.fields.insert("source".into(), source.to_json());
        }
    }
    merge_same_call(&mut target.issues);
}

/// The write sites of one tree.
struct Index {
    sites: Vec<Site>,
    /// Sink sites of the tree, the ones whose text is not a literal included.
    sinks: usize,
    cwd: PathBuf,
}

impl Index {
    /// The sites of a tree: its scan's stdout writes, and when the scan found a logger
    /// configured on stdout, the logger calls of its `files` in that language.
    fn build(findings: &[Issue], files: &[PathBuf], cwd: &Path) -> Index {
        let mut by_file: BTreeMap<PathBuf, Vec<(u32, u32)>> = BTreeMap::new();
        let mut logger_langs: Vec<bool> = Vec::new(); // is_python, per configured logger
        for f in findings {
            let Some(Location::Source {
                file, line, column, ..
            }) = &f.location
            else {
                continue;
            };
            if f.is(&scan_rules::STATIC_STDOUT_LOGGER) {
                let lang = file
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(Lang::from_file_name);
                logger_langs.push(lang == Some(Lang::Python));
            } else if [
                &scan_rules::STATIC_PRINT_CALL,
                &scan_rules::STATIC_CONSOLE_LOG,
                &scan_rules::STATIC_STDOUT_WRITE,
            ]
            .iter()
            .any(|r| f.is(r))
            {
                by_file
                    .entry(file.clone())
                    .or_default()
                    .push((*line, *column));
            }
        }
        let mut sites = Vec::new();
        let mut sinks = 0;
        for (file, at) in &by_file {
            let Some(parsed) = sites::parse(&cwd.join(file), crate::scan::DEFAULT_MAX_FILE_SIZE)
            else {
                continue;
            };
            for (line, column) in at {
                if let Some(site) = parsed.sink_at(file, *line, *column) {
                    sinks += 1;
                    sites.push(site);
                }
            }
        }
        if !logger_langs.is_empty() {
            for file in files.iter().take(MAX_LOGGER_FILES) {
                let full = locate::normalize(&cwd.join(file));
                let Some(parsed) = sites::parse(&full, crate::scan::DEFAULT_MAX_FILE_SIZE) else {
                    continue;
                };
                if logger_langs.contains(&(parsed.lang == Lang::Python)) {
                    let shown = full
                        .strip_prefix(cwd)
                        .map_or(full.clone(), Path::to_path_buf);
                    sites.extend(parsed.logger_calls(&shown));
                }
            }
        }
        let mut index = Index {
            sites,
            sinks,
            cwd: cwd.to_path_buf(),
        };
        index.map_compiled();
        index
    }

    /// Sites in compiled JavaScript with a source map move to the original source's line.
    fn map_compiled(&mut self) {
        let mut maps: HashMap<PathBuf, Option<sourcemap::SourceMap>> = HashMap::new();
        for site in &mut self.sites {
            let ext = site.file.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !matches!(ext, "js" | "mjs" | "cjs") {
                continue;
            }
            let full = self.cwd.join(&site.file);
            let map = maps.entry(full.clone()).or_insert_with(|| {
                let text = std::fs::read_to_string(&full).ok()?;
                sourcemap::SourceMap::for_file(&full, &text)
            });
            let Some(original) = map
                .as_ref()
                .and_then(|m| m.lookup(site.line - 1, site.column - 1))
            else {
                continue;
            };
            let shown = original
                .source
                .strip_prefix(&self.cwd)
                .map(Path::to_path_buf)
                .unwrap_or(original.source.clone());
            site.compiled = Some((site.file.clone(), site.line, site.column));
            site.file = shown;
            site.line = original.line + 1;
            site.column = original.column + 1;
            site.end_line = site.line;
            site.end_column = site.column;
        }
    }

    /// The source of a polluted line, from the finding's evidence.
    fn trace(&self, evidence: &str) -> Option<Source> {
        let (bytes, cut) = crate::issue::unescape_evidence(evidence)?;
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if cut {
            while text.ends_with('\u{fffd}') {
                text.pop();
            }
        } else {
            if text.ends_with('\n') {
                text.pop();
            }
            if text.ends_with('\r') {
                text.pop();
            }
        }
        if text.trim().is_empty() {
            return None;
        }
        let mut exact: Vec<&Site> = Vec::new();
        let mut patterned: Vec<&Site> = Vec::new();
        for site in &self.sites {
            let hit = site
                .lines
                .iter()
                .filter(|l| l.is_specific() && l.matches(&text, true, cut))
                .map(|l| l.has_holes() || site.kind == Kind::Logger)
                .min();
            match hit {
                Some(false) => exact.push(site),
                Some(true) => patterned.push(site),
                None => {}
            }
        }
        let (found, confidence) = if exact.is_empty() {
            (patterned, Confidence::Pattern)
        } else {
            (exact, Confidence::Exact)
        };
        let mut written: Vec<Written> = Vec::new();
        for site in found {
            let w = self.written(site, confidence);
            // The same call seen twice (a compiled file and its source, mapped to one line).
            if !written.iter().any(|o| o.file == w.file && o.line == w.line) {
                written.push(w);
            }
        }
        match written.len() {
            0 if self.sinks == 1 => self
                .sites
                .iter()
                .find(|s| s.kind == Kind::Sink && !s.is_specific())
                .map(|s| Source::One(self.written(s, Confidence::OnlyCandidate))),
            0 => None,
            1 => written.pop().map(Source::One),
            _ => Some(Source::Ambiguous(written)),
        }
    }

    fn written(&self, site: &Site, confidence: Confidence) -> Written {
        let show = |p: &Path| p.display().to_string();
        Written {
            file: show(&site.file),
            line: site.line,
            column: site.column,
            end_line: site.end_line,
            end_column: site.end_column,
            sink: site.sink.clone(),
            confidence,
            compiled: site.compiled.as_ref().map(|(f, l, c)| (show(f), *l, *c)),
        }
    }
}

/// Findings of one rule traced to the same call (or the same candidates) are one finding: the
/// first keeps its message and gains `occurrences` (every line counted) and `stdoutLines` (where
/// each was seen). A finding of a probe process stays apart from the main run's.
fn merge_same_call(issues: &mut Vec<Issue>) {
    let key = |i: &Issue| -> Option<(usize, String, Option<Value>)> {
        let source = i.fields.get("source")?;
        Some((
            i.rule as *const Rule as usize,
            source.to_string(),
            i.fields.get("probe").cloned(),
        ))
    };
    let mut out: Vec<Issue> = Vec::with_capacity(issues.len());
    for issue in issues.drain(..) {
        let k = key(&issue);
        match k
            .as_ref()
            .and_then(|k| out.iter_mut().find(|o| key(o).as_ref() == Some(k)))
        {
            Some(first) => absorb(first, &issue),
            None => out.push(issue),
        }
    }
    *issues = out;
}

fn occurrence(issue: &Issue) -> Value {
    let mut v = Map::new();
    if let Some(Location::Stream {
        line, byte_offset, ..
    }) = &issue.location
    {
        v.insert("line".into(), Value::from(*line));
        v.insert("byteOffset".into(), Value::from(*byte_offset));
    }
    if let Some(run) = issue.run {
        v.insert("run".into(), Value::from(run));
    }
    if let Some(p) = issue.phase {
        v.insert("phase".into(), Value::from(p.contract_str()));
    }
    if let Some(e) = &issue.evidence {
        v.insert("evidence".into(), Value::from(e.clone()));
    }
    Value::Object(v)
}

fn count(issue: &Issue) -> u64 {
    issue
        .fields
        .get("occurrences")
        .and_then(Value::as_u64)
        .unwrap_or(1)
}

fn absorb(first: &mut Issue, other: &Issue) {
    let total = count(first) + count(other);
    let mut lines = match first.fields.get("stdoutLines").and_then(Value::as_array) {
        Some(l) => l.clone(),
        None => vec![occurrence(first)],
    };
    match other.fields.get("stdoutLines").and_then(Value::as_array) {
        Some(more) => lines.extend(more.iter().cloned()),
        None => lines.push(occurrence(other)),
    }
    lines.truncate(MAX_LISTED_LINES);
    let more = |i: &Issue| {
        i.fields
            .get("moreOccurrences")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let extra = more(first) + more(other);
    first.fields.insert("occurrences".into(), total.into());
    first
        .fields
        .insert("stdoutLines".into(), Value::from(lines));
    if extra > 0 {
        first.fields.insert("moreOccurrences".into(), extra.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polluted(line: u64, text: &[u8]) -> Issue {
        Issue::new(
            &rules::STDOUT_NON_JSON,
            format!("stdout line {line} is not JSON"),
        )
        .at_stdout(line, line * 10)
        .evidence(crate::issue::escape_bytes(text, 120))
    }

    fn site(file: &str, line: u32, sink: &str, kind: Kind, lines: Vec<pattern::Pattern>) -> Site {
        Site {
            file: PathBuf::from(file),
            line,
            column: 1,
            end_line: line,
            end_column: 10,
            sink: sink.into(),
            kind,
            lines,
            compiled: None,
        }
    }

    fn index(sites: Vec<Site>) -> Index {
        Index {
            sinks: sites.iter().filter(|s| s.kind == Kind::Sink).count(),
            sites,
            cwd: PathBuf::from("/repo"),
        }
    }

    #[test]
    fn exact_beats_pattern_several_exact_are_ambiguous_nothing_is_nothing() {
        let mut debug = pattern::Pattern::lit("debug: ");
        debug.push_hole();
        let idx = index(vec![
            site(
                "a.py",
                3,
                "print",
                Kind::Sink,
                vec![pattern::Pattern::lit("debug: ready")],
            ),
            site("b.py", 9, "print", Kind::Sink, vec![debug]),
        ]);
        let ev = |t: &[u8]| crate::issue::escape_bytes(t, 120);
        match idx.trace(&ev(b"debug: ready\n")) {
            Some(Source::One(w)) => {
                assert_eq!(
                    (w.file.as_str(), w.line, w.confidence),
                    ("a.py", 3, Confidence::Exact)
                )
            }
            other => panic!("{other:?}"),
        }
        match idx.trace(&ev(b"debug: 3 tools\n")) {
            Some(Source::One(w)) => assert_eq!((w.line, w.confidence), (9, Confidence::Pattern)),
            other => panic!("{other:?}"),
        }
        assert_eq!(idx.trace(&ev(b"something else\n")), None);
        let twice = index(vec![
            site(
                "a.py",
                3,
                "print",
                Kind::Sink,
                vec![pattern::Pattern::lit("starting")],
            ),
            site(
                "b.py",
                4,
                "print",
                Kind::Sink,
                vec![pattern::Pattern::lit("starting")],
            ),
        ]);
        match twice.trace(&ev(b"starting\n")) {
            Some(Source::Ambiguous(all)) => assert_eq!(all.len(), 2),
            other => panic!("{other:?}"),
        }
        // One stdout write whose text is not a literal: the only candidate, said so.
        let only = index(vec![site(
            "a.py",
            7,
            "print",
            Kind::Sink,
            vec![pattern::Pattern::hole()],
        )]);
        match only.trace(&ev(b"anything\n")) {
            Some(Source::One(w)) => assert_eq!(w.confidence, Confidence::OnlyCandidate),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn findings_traced_to_one_call_are_one_finding() {
        let src = Source::One(Written {
            file: "server.py".into(),
            line: 28,
            column: 9,
            end_line: 28,
            end_column: 38,
            sink: "print".into(),
            confidence: Confidence::Exact,
            compiled: None,
        });
        let mut issues: Vec<Issue> = [4, 6]
            .iter()
            .map(|&l| polluted(l, b"debug: listing tools\n").field("source", src.to_json()))
            .collect();
        issues.insert(1, polluted(1, b"banner\n"));
        merge_same_call(&mut issues);
        assert_eq!(issues.len(), 2);
        let merged = &issues[0];
        assert_eq!(merged.fields["occurrences"], 2);
        let lines = merged.fields["stdoutLines"].as_array().unwrap();
        assert_eq!(
            (lines[0]["line"].as_u64(), lines[1]["line"].as_u64()),
            (Some(4), Some(6))
        );
        assert_eq!(Source::of(merged), Some(src));
    }
}
