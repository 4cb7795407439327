//! The static scan against its fixtures: every file under `tests/fixtures/scan/<lang>/` is
//! scanned on its own and its findings are compared with `<file>.expected` next to it (one
//! `rule line:column` per finding). `UPDATE_GOLDEN=1 cargo test` rewrites the expected files;
//! review the diff before committing.
//!
//! The fixtures also annotate themselves: a line carrying `expect: <rule>` in a comment must
//! produce exactly that finding, so an expected file cannot drift from the intent in the source.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

use mcp_stdio_guard::scan::{self, ScanOptions};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scan")
}

/// Every fixture source file (everything but the `.expected` files), sorted.
fn sources() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root()];
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

fn expected_path(source: &Path) -> PathBuf {
    let mut name = source.as_os_str().to_owned();
    name.push(".expected");
    PathBuf::from(name)
}

/// The findings of one file, one `rule line:column` per line.
fn scan_one(source: &Path, prefilter: bool) -> Vec<String> {
    scan_with(source, prefilter, scan::plan::DEFAULT_REGION_MIN_BYTES)
}

fn scan_with(source: &Path, prefilter: bool, region_min_bytes: usize) -> Vec<String> {
    let mut opts = ScanOptions::new(vec![source.to_path_buf()], root());
    opts.prefilter = prefilter;
    opts.region_min_bytes = region_min_bytes;
    opts.threads = 1;
    let result = scan::run(&opts).expect("fixture scans");
    result
        .issues
        .iter()
        .map(|i| match &i.location {
            Some(mcp_stdio_guard::issue::Location::Source { line, column, .. }) => {
                format!("{} {line}:{column}", i.code())
            }
            other => panic!("scan finding without a source location: {other:?}"),
        })
        .collect()
}

fn read_expected(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

fn diff(expected: &[String], actual: &[String]) -> String {
    let e: BTreeSet<&String> = expected.iter().collect();
    let a: BTreeSet<&String> = actual.iter().collect();
    let mut out = String::new();
    for line in e.difference(&a) {
        out.push_str(&format!("  - {line}   (expected, not found)\n"));
    }
    for line in a.difference(&e) {
        out.push_str(&format!("  + {line}   (found, not expected)\n"));
    }
    if out.is_empty() {
        out.push_str("  (same findings, different order or count)\n");
    }
    out
}

#[test]
fn every_fixture_gives_exactly_its_expected_findings() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = String::new();
    let files = sources();
    assert!(files.len() > 30, "fixtures are missing: {}", files.len());
    for source in &files {
        let actual = scan_one(source, true);
        let exp_path = expected_path(source);
        if update {
            let mut text = String::from(
                "# rule line:column (UPDATE_GOLDEN=1 cargo test rewrites this file)\n",
            );
            for line in &actual {
                text.push_str(line);
                text.push('\n');
            }
            std::fs::write(&exp_path, text).expect("write expected file");
            continue;
        }
        assert!(
            exp_path.is_file(),
            "{} has no expected file; run UPDATE_GOLDEN=1 cargo test and review it",
            source.display()
        );
        let expected = read_expected(&exp_path);
        if expected != actual {
            failures.push_str(&format!(
                "{}:\n{}",
                source.strip_prefix(root()).unwrap_or(source).display(),
                diff(&expected, &actual)
            ));
        }
    }
    assert!(failures.is_empty(), "fixture mismatches:\n{failures}");
}

#[test]
fn the_prefilter_never_hides_a_finding() {
    for source in sources() {
        assert_eq!(
            scan_one(&source, true),
            scan_one(&source, false),
            "{}: the byte prefilter changed the result",
            source.display()
        );
    }
}

#[test]
fn parsing_only_the_planned_statements_finds_the_same() {
    // Every fixture is small enough to be parsed whole by default; force statement-level
    // planning on all of them. Parse-error notes may differ (an unparsed statement cannot
    // fail to parse), every other finding must not.
    for source in sources() {
        let whole: Vec<String> = scan_one(&source, true)
            .into_iter()
            .filter(|f| !f.starts_with("static-parse-error"))
            .collect();
        let planned: Vec<String> = scan_with(&source, true, 0)
            .into_iter()
            .filter(|f| !f.starts_with("static-parse-error"))
            .collect();
        assert_eq!(
            planned,
            whole,
            "{}: planning changed the findings",
            source.display()
        );
    }
}

/// `(line, rule)` pairs announced by `expect: rule[, rule]` comments in a fixture.
fn markers(source: &Path) -> BTreeSet<(u32, String)> {
    let text = String::from_utf8_lossy(&std::fs::read(source).expect("fixture")).into_owned();
    let mut out = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let Some(at) = line.find("expect: ") else {
            continue;
        };
        for word in line[at + 8..].split([',', ' ', '*', '/', '}']) {
            if word.starts_with("static-") {
                out.insert((i as u32 + 1, word.to_string()));
            }
        }
    }
    out
}

#[test]
fn expected_files_agree_with_the_expect_comments_in_the_sources() {
    let mut failures = String::new();
    for source in sources() {
        let found: BTreeSet<(u32, String)> = read_expected(&expected_path(&source))
            .iter()
            .filter_map(|l| {
                let (rule, pos) = l.split_once(' ')?;
                let line = pos.split(':').next()?.parse().ok()?;
                Some((line, rule.to_string()))
            })
            .collect();
        let announced = markers(&source);
        if found != announced {
            let missing: Vec<_> = announced.difference(&found).collect();
            let extra: Vec<_> = found.difference(&announced).collect();
            failures.push_str(&format!(
                "{}: announced but not expected {missing:?}; expected but not announced {extra:?}\n",
                source.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn every_language_has_fixtures_with_findings_and_clean_lines() {
    for lang in [
        "python",
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "java",
        "kotlin",
        "csharp",
    ] {
        let dir = root().join(lang);
        let files: Vec<PathBuf> = sources()
            .into_iter()
            .filter(|p| p.starts_with(&dir))
            .collect();
        assert!(!files.is_empty(), "no fixtures for {lang}");
        let findings: usize = files
            .iter()
            .map(|f| read_expected(&expected_path(f)).len())
            .sum();
        let clean = files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap_or_default())
            .filter(|t| t.contains("ok: "))
            .count();
        assert!(findings > 0, "{lang}: no fixture finds anything");
        assert!(
            clean > 0,
            "{lang}: no fixture shows a line that must not be flagged"
        );
    }
}

/// The same equivalence on a large real tree: the one `scripts/bench-scan` builds (the Python
/// wheels and npm packages of MCP servers and SDKs, with their dependencies). Slow, so ignored
/// by default:
/// `cargo test --release --test scan_fixtures -- --ignored`.
#[test]
#[ignore = "needs the tree scripts/bench-scan builds; run with --ignored"]
fn the_prefilter_and_plan_change_nothing_on_the_benchmark_tree() {
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-scan/tree");
    assert!(
        tree.is_dir(),
        "run scripts/bench-scan first to build {}",
        tree.display()
    );
    let run = |prefilter: bool, region_min_bytes: usize| -> BTreeSet<String> {
        let mut opts = ScanOptions::new(vec![tree.clone()], tree.clone());
        opts.include_vendored = true;
        opts.max_file_size = 1 << 30;
        opts.prefilter = prefilter;
        opts.region_min_bytes = region_min_bytes;
        scan::run(&opts)
            .expect("tree scans")
            .issues
            .iter()
            .filter(|i| i.code() != "static-parse-error")
            .map(|i| format!("{:?} {} {}", i.location, i.code(), i.message))
            .collect()
    };
    let everything = run(false, 0);
    // The default, and planning forced on every file whatever its size.
    for min in [scan::plan::DEFAULT_REGION_MIN_BYTES, 0] {
        let planned = run(true, min);
        let lost: Vec<&String> = everything.difference(&planned).collect();
        let added: Vec<&String> = planned.difference(&everything).collect();
        assert!(
            lost.is_empty() && added.is_empty(),
            "region_min_bytes {min}: lost {lost:#?}\nadded {added:#?}"
        );
    }
}

/// The inputs the `scan_source` fuzz target once failed on (`fuzz/regressions/scan_source/`),
/// decoded as the target decodes them (first byte: file name and plan threshold): the planned
/// scan and the scan with the prefilter and plan off give the same findings.
#[test]
fn saved_fuzz_inputs_scan_the_same_with_and_without_the_plan() {
    const NAMES: [&str; 10] = mcp_stdio_guard::scan::FUZZ_FILE_NAMES;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/scan_source");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fuzz regression folder")
        .map(|e| e.expect("fuzz regression entry").path())
        .collect();
    inputs.sort();
    assert!(
        inputs
            .iter()
            .any(|p| p.ends_with("plan-drops-a-python-write")),
        "the saved plan finding is missing: {inputs:?}"
    );
    for input in inputs {
        let data = std::fs::read(&input).expect("fuzz regression input");
        let Some((&pick, source)) = data.split_first() else {
            continue;
        };
        let path = Path::new(NAMES[pick as usize % NAMES.len()]);
        let mut opts = ScanOptions::new(Vec::new(), "/".into());
        opts.region_min_bytes = [0, 16, 64, 256, 4096, usize::MAX][(pick as usize / 10) % 6];
        // On a scan worker's stack, as the fuzz target and `scan::run` do.
        let findings = |opts: ScanOptions| -> Vec<String> {
            let source = source.to_vec();
            std::thread::Builder::new()
                .stack_size(scan::WORKER_STACK_BYTES)
                .spawn(move || {
                    scan::scan_source(path, source, &opts)
                        .iter()
                        .filter(|i| i.code() != "static-parse-error")
                        .map(|i| match &i.location {
                            Some(mcp_stdio_guard::issue::Location::Source {
                                line, column, ..
                            }) => format!("{} {line}:{column}", i.code()),
                            other => panic!("scan finding without a source location: {other:?}"),
                        })
                        .collect()
                })
                .expect("spawn a scan thread")
                .join()
                .expect("the scan does not panic")
        };
        let planned = findings(opts.clone());
        opts.prefilter = false;
        let whole = findings(opts);
        assert!(
            !whole.is_empty(),
            "{}: finds nothing at all, so it proves nothing",
            input.display()
        );
        assert_eq!(
            planned,
            whole,
            "{}: the prefilter or the plan changed a finding",
            input.display()
        );
    }
}
