//! The static scan against the held-out labelled corpus of issue 17
//! (`tests/fixtures/scan-eval/<lang>/`, described in its README.md): realistic MCP servers and
//! CLI tools per language, each source file with a `<file>.labels` of the lines that write to
//! stdout. Per language the findings of one `mcp-stdio-guard scan --format json` over the
//! language's files are scored against the labels, and the issue's thresholds are asserted:
//! F1 >= 0.90 and precision >= 0.95 on Go, Rust, Java, Kotlin and C#; F1 >= 0.97 on Python,
//! JavaScript and TypeScript.
//!
//! Scoring (the same as `python3 tests/fixtures/scan-eval/measure.py`, which also lists every
//! false positive and miss with its source line):
//! - a label is `LINE`, or `LINE,LINE,...` for one stdout writer or logger that may be reported
//!   where it is built or where it is used (a finding on any of its lines satisfies it);
//!   `~LINE` is neutral (a finding there is neither right nor wrong);
//! - a finding counts when its severity is `error`, or `warning` outside a test file; notes
//!   (`static-parse-error`, `static-file-skipped`) never count;
//! - TP = labels satisfied, FN = labels not satisfied, FP = distinct lines with a counted
//!   finding that are neither labelled nor neutral.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Languages held to F1 >= 0.90 and precision >= 0.95.
const STRICT: &[&str] = &["go", "rust", "java", "kotlin", "csharp"];
/// Languages held to F1 >= 0.97.
const LENIENT: &[&str] = &["python", "javascript", "typescript"];

// Languages that do not reach the issue's thresholds yet would be held here to the level they
// reached (language, minimum F1, minimum precision), loudly, until they do. Every language
// meets issue 17's target on this corpus: none is listed.
const FLOORS: &[(&str, f64, f64)] = &[];

fn root() -> PathBuf {
    support::repo().join("tests/fixtures/scan-eval")
}

fn labels_path(source: &Path) -> PathBuf {
    let mut name = source.as_os_str().to_owned();
    name.push(".labels");
    PathBuf::from(name)
}

/// The labelled source files of one language, relative to the corpus root, sorted.
fn sources(lang: &str) -> Vec<PathBuf> {
    let base = root();
    let mut out = Vec::new();
    let mut stack = vec![base.join(lang)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("corpus folder") {
            let path = entry.expect("corpus entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_none_or(|e| e != "labels") && labels_path(&path).is_file()
            {
                out.push(
                    path.strip_prefix(&base)
                        .expect("under the corpus")
                        .to_path_buf(),
                );
            }
        }
    }
    out.sort();
    out
}

struct Labels {
    /// One entry per expected finding: the lines where it may be reported.
    groups: Vec<BTreeSet<u64>>,
    /// Lines where a finding is neither right nor wrong.
    neutral: BTreeSet<u64>,
}

fn read_labels(path: &Path) -> Labels {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut groups = Vec::new();
    let mut neutral = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let number = |s: &str| -> u64 {
            s.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{}: bad label line {line:?}", path.display()))
        };
        if let Some(rest) = line.strip_prefix('~') {
            neutral.insert(number(rest));
        } else {
            groups.push(line.split(',').map(number).collect());
        }
    }
    Labels { groups, neutral }
}

/// Whether a finding is a positive prediction (see the module docs).
fn counts(finding: &Value) -> bool {
    let rule = finding["rule"].as_str().unwrap_or("");
    if matches!(rule, "static-parse-error" | "static-file-skipped") {
        return false;
    }
    match finding["severity"].as_str() {
        Some("error") => true,
        Some("warning") => finding["context"].as_str() != Some("test file"),
        _ => false,
    }
}

fn source_line(rel: &Path, line: u64) -> String {
    std::fs::read_to_string(root().join(rel))
        .ok()
        .and_then(|t| {
            t.split('\n')
                .nth(line.saturating_sub(1) as usize)
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_else(|| "?".to_string())
}

struct Score {
    lang: &'static str,
    files: usize,
    labels: usize,
    tp: usize,
    fp: usize,
    fn_: usize,
    /// `file:line [rule] source` of each false positive, then `file:lines source` of each miss.
    details: Vec<String>,
}

impl Score {
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
    fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
    /// (minimum F1, minimum precision) of issue 17, or the floor a language is held to until it
    /// reaches them (see [`FLOORS`]).
    fn thresholds(&self) -> (f64, f64) {
        if let Some((_, f1, p)) = FLOORS.iter().find(|(l, _, _)| *l == self.lang) {
            return (*f1, *p);
        }
        if STRICT.contains(&self.lang) {
            (0.90, 0.95)
        } else {
            (0.97, 0.0)
        }
    }
    fn passes(&self) -> bool {
        let (f1_min, p_min) = self.thresholds();
        self.f1() >= f1_min && self.precision() >= p_min
    }
}

fn score(lang: &'static str) -> Score {
    let files = sources(lang);
    assert!(
        files.len() >= 2,
        "the {lang} corpus is missing: {} files",
        files.len()
    );
    let mut args: Vec<String> = ["scan", "--format", "json", "--no-github"]
        .map(String::from)
        .to_vec();
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    let run = support::guard(&args, &root(), &[], &[], Duration::from_secs(300));
    assert!(
        matches!(run.status, Some(0) | Some(1)),
        "scan of the {lang} corpus failed ({:?}):\n{}",
        run.status,
        run.stderr
    );
    let report = run.json();
    // file -> line -> rule of the first counted finding there.
    let mut found: BTreeMap<PathBuf, BTreeMap<u64, String>> = BTreeMap::new();
    let mut details = Vec::new();
    for f in report["findings"].as_array().expect("findings[]") {
        let file = f["file"].as_str().unwrap_or("?");
        let file = PathBuf::from(file.strip_prefix("./").unwrap_or(file));
        let line = f["line"].as_u64().unwrap_or(0);
        let rule = f["rule"].as_str().unwrap_or("?");
        if rule == "static-parse-error" {
            details.push(format!("  NOTE {}:{line} {rule}", file.display()));
        }
        if counts(f) {
            found
                .entry(file)
                .or_default()
                .entry(line)
                .or_insert_with(|| rule.to_string());
        }
    }
    let (mut tp, mut fp, mut fn_, mut labels) = (0, 0, 0, 0);
    let empty = BTreeMap::new();
    for rel in &files {
        let l = read_labels(&root().join(labels_path(rel)));
        let lines = found.get(rel).unwrap_or(&empty);
        let labelled: BTreeSet<u64> = l.groups.iter().flatten().copied().collect();
        labels += l.groups.len();
        for g in &l.groups {
            if g.iter().any(|n| lines.contains_key(n)) {
                tp += 1;
            } else {
                fn_ += 1;
                let first = *g.iter().next().expect("a label has a line");
                let all: Vec<String> = g.iter().map(u64::to_string).collect();
                details.push(format!(
                    "  MISS {}:{}  {}",
                    rel.display(),
                    all.join(","),
                    source_line(rel, first)
                ));
            }
        }
        for (n, rule) in lines {
            if !labelled.contains(n) && !l.neutral.contains(n) {
                fp += 1;
                details.push(format!(
                    "  FP   {}:{n} [{rule}]  {}",
                    rel.display(),
                    source_line(rel, *n)
                ));
            }
        }
    }
    Score {
        lang,
        files: files.len(),
        labels,
        tp,
        fp,
        fn_,
        details,
    }
}

#[test]
fn the_held_out_corpus_meets_the_thresholds_of_issue_17() {
    let scores: Vec<Score> = STRICT.iter().chain(LENIENT).copied().map(score).collect();
    let mut table = String::from("language    files labels   TP   FP   FN      P      R     F1\n");
    for s in &scores {
        let _ = writeln!(
            table,
            "{:11} {:5} {:6} {:4} {:4} {:4} {:6.3} {:6.3} {:6.3}  {}",
            s.lang,
            s.files,
            s.labels,
            s.tp,
            s.fp,
            s.fn_,
            s.precision(),
            s.recall(),
            s.f1(),
            if s.passes() { "ok" } else { "BELOW THRESHOLD" }
        );
    }
    for s in &scores {
        if !s.details.is_empty() {
            let _ = writeln!(table, "== {}", s.lang);
            for d in &s.details {
                let _ = writeln!(table, "{d}");
            }
        }
    }
    println!("{table}");
    let failing: Vec<&str> = scores
        .iter()
        .filter(|s| !s.passes())
        .map(|s| s.lang)
        .collect();
    assert!(
        failing.is_empty(),
        "below the thresholds of issue 17 (F1 >= 0.90 and P >= 0.95 for Go/Rust/Java/Kotlin/C#, \
         F1 >= 0.97 for Python/JS/TS): {failing:?}\n{table}"
    );
}

#[test]
fn every_label_points_into_its_file() {
    for lang in STRICT.iter().chain(LENIENT) {
        for rel in sources(lang) {
            let lines = std::fs::read_to_string(root().join(&rel))
                .expect("source")
                .split('\n')
                .count() as u64;
            let l = read_labels(&root().join(labels_path(&rel)));
            for n in l.groups.iter().flatten().chain(&l.neutral) {
                assert!(
                    *n >= 1 && *n <= lines,
                    "{}: label line {n} is outside the file",
                    rel.display()
                );
            }
        }
    }
}
