//! The data-driven fixture harness: a JSON file of cases, each naming a fixture server, extra
//! guard flags and the exact issues expected (code, severity, detail code, stdout line and byte
//! offset). Cases run in parallel; every mismatch is reported at once. After each run, no process
//! that carries the case's environment marker may be left alive.
//!
//! Optional expectations besides `ok` and `issues`: `shutdownStage`, `maxSeconds` (the guard's
//! wall time: a generous bound, never a benchmark), `maxRssMiB` (the guard's peak resident set,
//! measured with `wait4`, so an upper bound that includes the server's own peak), `json` (a map
//! of JSON pointers to the exact value expected in the report).
//! Optional inputs: `env` (variables set for the guard, which the server inherits) and `unsetEnv`
//! (variables removed, e.g. `PYTHONUNBUFFERED`, which developers' shells export).

use super::*;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Runs every case of `dir/file` with `base_args` before each case's own flags, 8 at a time.
pub fn run_cases(dir: &Path, file: &str, base_args: &[&str], min_cases: usize) {
    run_cases_with(dir, file, base_args, min_cases, 8);
}

/// [`run_cases`] with `workers` cases at a time (cases that start many processes each, such as
/// adversarial probes, need fewer at once on a small machine).
pub fn run_cases_with(
    dir: &Path,
    file: &str,
    base_args: &[&str],
    min_cases: usize,
    workers: usize,
) {
    run_cases_checked(dir, file, base_args, min_cases, workers, |_| Vec::new());
}

/// [`run_cases_with`], and every case's JSON report also goes through `check`, whose complaints
/// fail the case (the contract test validates every report against the JSON contract).
pub fn run_cases_checked(
    dir: &Path,
    file: &str,
    base_args: &[&str],
    min_cases: usize,
    workers: usize,
    check: fn(&Value) -> Vec<String>,
) {
    let cases: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("read {file}: {e}")),
    )
    .unwrap_or_else(|e| panic!("{file} is not JSON: {e}"));
    assert!(cases.len() >= min_cases, "{file} lost cases");
    let base: Vec<String> = base_args.iter().map(|s| s.to_string()).collect();
    let queue = Arc::new(Mutex::new(cases));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let workers: Vec<_> = (0..workers)
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
                    match std::panic::catch_unwind(|| run_case(&dir, &base, &case, check)) {
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

/// The interpreter `python3` on PATH stands for, resolved once: a version-manager shim (pyenv,
/// asdf) is a shell script that costs several processes per start, which on a loaded machine
/// turns into seconds across the dozens of fixture processes a suite starts (the adversarial
/// probes start one per probe).
fn python3() -> &'static str {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON.get_or_init(|| {
        std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "python3".to_string())
    })
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

fn run_case(
    dir: &Path,
    base: &[String],
    case: &Value,
    check: fn(&Value) -> Vec<String>,
) -> Result<(), String> {
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
        args.extend([python3().to_string(), server.to_string()]);
    }
    args.extend(strings(case.get("serverArgs")));
    let env: Vec<(String, String)> = case
        .get("env")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().expect("env values are strings").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let unset = strings(case.get("unsetEnv"));
    let run = guard(&args, dir, &env, &unset, Duration::from_secs(90));
    let json = run.json();
    let mut problems = check(&json);

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
    if let Some(max) = case.get("maxRssMiB").and_then(Value::as_u64) {
        match run.peak_rss_kib {
            Some(kib) if kib <= max * 1024 => {}
            Some(kib) => problems.push(format!(
                "peak RSS {} KiB (guard alone, last seen: {:?} KiB), more than {max} MiB",
                kib, run.guard_hwm_kib
            )),
            None => problems.push("peak RSS unknown".to_string()),
        }
    }
    // Measurements, for `--nocapture` runs and the suite's documentation.
    eprintln!(
        "case {name}: {:.2} s, peak RSS {} KiB (guard alone, polled: {} KiB)",
        run.elapsed.as_secs_f64(),
        run.peak_rss_kib.map_or("?".into(), |k| k.to_string()),
        run.guard_hwm_kib.map_or("?".into(), |k| k.to_string()),
    );
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
