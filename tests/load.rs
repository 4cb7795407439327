//! Verdicts that do not depend on the machine's load: 200 copies of the bundled clean example
//! server in one `--registry` run with `--jobs 64` (far more servers at once than the machine
//! has cores) all pass, nothing is left running, the guard's memory stays bounded, and a server
//! that really ignores stdin EOF in the same list still fails with `shutdown-sigterm-required`.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::*;

const CLEAN: usize = 200;

#[test]
fn a_saturated_machine_turns_no_clean_server_into_a_failing_one() {
    let scratch = Scratch::new("load");
    let dir = scratch.0.clone();
    let marker = format!("GUARD_LOAD={}", std::process::id());
    let clean = repo().join("examples/hello-server/server.py");
    let deaf = repo().join("tests/fixtures/servers/ignores_eof.py");
    let entry = |name: String, script: &std::path::Path| json!({"name": name, "command": ["python3", script.display().to_string()], "env": {"GUARD_LOAD": std::process::id().to_string()}});
    let mut lines: Vec<Value> = (0..CLEAN)
        .map(|n| entry(format!("clean-{n:03}"), &clean))
        .collect();
    // In the middle of the list: it runs while the machine is at its busiest.
    lines.insert(CLEAN / 2, entry("ignores-eof".into(), &deaf));
    let registry = dir.join("servers.jsonl");
    std::fs::write(
        &registry,
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    let args: Vec<String> = [
        "--json",
        "--jobs",
        "64",
        "--registry",
        registry.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = guard(&args, &repo(), &[], &[], Duration::from_secs(600));
    let report = run.json();
    let servers = report["servers"].as_array().expect("servers[]");
    assert_eq!(servers.len(), CLEAN + 1);
    let mut failed = Vec::new();
    for s in servers {
        let name = s["name"].as_str().unwrap_or("");
        let codes: Vec<&str> = s["issues"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["severity"] != "note")
            .filter_map(|i| i["code"].as_str())
            .collect();
        if name == "ignores-eof" {
            assert!(
                codes.contains(&"shutdown-sigterm-required")
                    && s["issues"].as_array().unwrap().iter().any(|i| {
                        i["code"] == "shutdown-sigterm-required" && i["severity"] == "error"
                    }),
                "the server that ignores stdin EOF must still fail under load: {}",
                s["issues"]
            );
        } else if !codes.is_empty() || s["summary"]["status"] != "pass" {
            failed.push(format!("{name}: {codes:?} {}", s["issues"]));
        }
    }
    eprintln!(
        "load: {} servers with --jobs 64 in {:.1} s; guard peak RSS {:?} KiB (alone, last seen {:?} KiB)",
        CLEAN + 1,
        run.elapsed.as_secs_f64(),
        run.peak_rss_kib,
        run.guard_hwm_kib
    );
    assert!(
        failed.is_empty(),
        "{} of {CLEAN} clean servers did not pass under load:\n{}",
        failed.len(),
        failed.join("\n")
    );
    let hwm = run.guard_hwm_kib.expect("the guard's peak RSS");
    assert!(hwm <= 256 * 1024, "the guard peaked at {hwm} KiB");
    std::thread::sleep(Duration::from_millis(300));
    let left = processes_with_env(&marker);
    assert!(left.is_empty(), "left running: {left:?}");
}
