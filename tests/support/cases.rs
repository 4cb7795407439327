//! The data-driven fixture harness: a JSON file of cases, each naming a fixture server, extra
//! guard flags and the exact issues expected (code, severity, detail code, stdout line and byte
//! offset). Cases run in parallel; every mismatch is reported at once. After each run, no process
//! that carries the case's environment marker may be left alive.
//!
//! Optional expectations besides `ok` and `issues`: `shutdownStage`, `maxSeconds` (the guard's
//! wall time), `json` (a map of JSON pointers to the exact value expected in the report).

use super::*;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Runs every case of `dir/file` with `base_args` before each case's own flags.
pub fn run_cases(dir: &Path, file: &str, base_args: &[&str], min_cases: usize) {
    let cases: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("read {file}: {e}")),
    )
    .unwrap_or_else(|e| panic!("{file} is not JSON: {e}"));
    assert!(cases.len() >= min_cases, "{file} lost cases");
    let base: Vec<String> = base_args.iter().map(|s| s.to_string()).collect();
    let queue = Arc::new(Mutex::new(cases));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let queue = queue.clone();
            let failures = failures.clone();
            let dir = dir.to_path_buf();
            let base = base.clone();
            std::thread::spawn(move || {
                loop {
                    let case = match queue.lock().unwrap().pop() {
                        Some(c) => c,
                        None => return,
                    };
                    let name = case["name"].to_string();
                    match std::panic::catch_unwind(|| run_case(&dir, &base, &case)) {
                        Ok(Ok(())) => {}
                        Ok(Err(msg)) => failures.lock().unwrap().push(msg),
                        Err(panic) => failures.lock().unwrap().push(format!(
                            "case {name} panicked: {}",
                            panic
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_default()
                        )),
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let failures = failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().expect("strings").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn run_case(dir: &Path, base: &[String], case: &Value) -> Result<(), String> {
    let name = case["name"].as_str().expect("case name");
    let marker = format!("GUARD_CASE={name}-{}", std::process::id());
    let mut args: Vec<String> = base.to_vec();
    args.extend(strings(case.get("args")));
    args.extend(["--env".to_string(), marker.clone(), "--".to_string()]);
    let server = case["server"].as_str().expect("server");
    if case.get("direct").and_then(Value::as_bool).unwrap_or(false) {
        // Executed directly (its shebang decides), not through python3.
        args.push(format!("./{server}"));
    } else {
        args.extend(["python3".to_string(), server.to_string()]);
    }
    args.extend(strings(case.get("serverArgs")));
    let run = guard(&args, dir, &[], &[], Duration::from_secs(90));
    let json = run.json();
    let mut problems = Vec::new();

    let expected_ok = case["ok"].as_bool().expect("ok");
    if json["ok"] != Value::Bool(expected_ok) {
        problems.push(format!("ok: expected {expected_ok}, got {}", json["ok"]));
    }
    let expected_status = if expected_ok { 0 } else { 1 };
    if run.status != Some(expected_status) {
        problems.push(format!(
            "exit status: expected {expected_status}, got {:?}",
            run.status
        ));
    }
    let mut expected: Vec<Value> = case["issues"].as_array().expect("issues").clone();
    let mut actual: Vec<Value> = json["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .map(issue_row)
        .filter(|row| !load_dependent(row, &expected))
        .collect();
    let key = |v: &Value| v.to_string();
    actual.sort_by_key(key);
    expected.sort_by_key(key);
    if actual != expected {
        let show = |rows: &[Value]| {
            rows.iter()
                .map(|r| format!("    {r}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        problems.push(format!(
            "issues differ\n  expected:\n{}\n  actual:\n{}",
            show(&expected),
            show(&actual)
        ));
    }
    if let Some(stage) = case.get("shutdownStage")
        && json["process"]["shutdown"]["stage"] != *stage
    {
        problems.push(format!(
            "shutdown stage: expected {stage}, got {}",
            json["process"]["shutdown"]["stage"]
        ));
    }
    if let Some(max) = case.get("maxSeconds").and_then(Value::as_f64)
        && run.elapsed.as_secs_f64() > max
    {
        problems.push(format!(
            "took {:.2} s, more than {max} s",
            run.elapsed.as_secs_f64()
        ));
    }
    if let Some(Value::Object(expect)) = case.get("json") {
        for (pointer, want) in expect {
            let got = json.pointer(pointer).cloned().unwrap_or(Value::Null);
            if &got != want {
                problems.push(format!("{pointer}: expected {want}, got {got}"));
            }
        }
    }
    // Fixtures that count across processes keep a file named after the marker: drop it.
    let value = marker.trim_start_matches("GUARD_CASE=");
    if let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) {
        for entry in dir.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("guard-") && name.ends_with(value) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    // Nothing of the server may outlive the guard.
    let left = processes_with_env(&marker);
    if !left.is_empty() {
        problems.push(format!("processes left running: {left:?}"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "case {name} ({}):\n  {}\n  stderr: {}",
            case["server"],
            problems.join("\n  "),
            run.stderr.trim()
        ))
    }
}

/// `deadline-extended` notes depend on the machine's load (a slow start on a busy CI runner), not
/// on the server: they are compared only when a case expects one.
pub fn load_dependent(row: &Value, expected: &[Value]) -> bool {
    row["code"] == "deadline-extended" && !expected.iter().any(|e| e["code"] == "deadline-extended")
}
