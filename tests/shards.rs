//! `--shard K/N` through the command line: for N in 1..=8 the shards of a registry hold every
//! server exactly once, and the same servers when the registry's lines are reordered; bad specs
//! are one-line errors. (The slices themselves are proptested in `src/shard.rs`; `merge` is
//! tested against one run in tests/reports.rs, where the SARIF and JUnit validators are.)
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use support::*;

/// A registry of servers whose commands do not exist: each is checked in milliseconds (a
/// `spawn-failed` finding of its own), which is all a test of the slicing needs.
fn registry(path: &Path, names: &[String]) {
    let lines: Vec<String> = names
        .iter()
        .map(|n| {
            serde_json::json!({"name": n, "command": [format!("/nonexistent/{n}")]}).to_string()
        })
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// The names of the servers of one shard's JSON report.
fn shard_names(dir: &Path, registry: &Path, shard: &str) -> Vec<String> {
    let run = guard(
        &[
            "--json".to_string(),
            "--registry".into(),
            registry.display().to_string(),
            "--shard".into(),
            shard.into(),
        ],
        dir,
        &[],
        &[],
        Duration::from_secs(60),
    );
    let report = run.json();
    assert_eq!(
        report["shard"]["index"].as_u64(),
        shard.split('/').next().unwrap().parse().ok()
    );
    report["servers"]
        .as_array()
        .expect("a shard always has the servers[] shape")
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn shards_hold_every_server_once_whatever_the_order() {
    let scratch = Scratch::new("shards-union");
    let dir = scratch.0.clone();
    let names: Vec<String> = (1..=13).map(|i| format!("server-{i:02}")).collect();
    let mut reordered = names.clone();
    reordered.reverse();
    reordered.swap(2, 9);
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    registry(&a, &names);
    registry(&b, &reordered);
    for n in 1..=8 {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        let mut sizes = Vec::new();
        for k in 1..=n {
            let spec = format!("{k}/{n}");
            let mut mine = shard_names(&dir, &a, &spec);
            let mut theirs = shard_names(&dir, &b, &spec);
            sizes.push(mine.len());
            for name in &mine {
                *seen.entry(name.clone()).or_default() += 1;
            }
            mine.sort();
            theirs.sort();
            assert_eq!(
                mine, theirs,
                "shard {spec}: reordering the registry moved servers"
            );
        }
        assert_eq!(seen.len(), names.len(), "N={n}: every server in a shard");
        assert!(
            seen.values().all(|c| *c == 1),
            "N={n}: a server in two shards: {seen:?}"
        );
        let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(hi - lo <= 1, "N={n}: unbalanced {sizes:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_shard_specs_are_one_line_errors() {
    let scratch = Scratch::new("shards-bad");
    let dir = scratch.0.clone();
    let reg = dir.join("r.jsonl");
    registry(&reg, &["a".to_string(), "b".to_string()]);
    for spec in ["0/2", "3/2", "1/0", "two/three", "1"] {
        let run = guard(
            &[
                "--registry".to_string(),
                reg.display().to_string(),
                "--shard".into(),
                spec.into(),
            ],
            &dir,
            &[],
            &[],
            Duration::from_secs(30),
        );
        assert_eq!(run.status, Some(2), "--shard {spec}");
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains("--shard"), "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    // A shard with no server is a valid, empty report.
    let names: Vec<String> = shard_names(&dir, &reg, "3/3");
    assert!(names.is_empty(), "{names:?}");
    let report: Value = serde_json::from_str(
        &guard(
            &[
                "--json".to_string(),
                "--registry".into(),
                reg.display().to_string(),
                "--shard".into(),
                "3/3".into(),
            ],
            &dir,
            &[],
            &[],
            Duration::from_secs(30),
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(report["ok"], true);
    let _ = std::fs::remove_dir_all(&dir);
}
