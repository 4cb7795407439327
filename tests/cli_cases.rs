//! The command line as data: every `tests/cli/*.json` file is a list of cases, each a guard
//! invocation and what it must do. One harness runs them all (several at once) and reports every
//! mismatch at once.
//!
//! A case: `name`; the scratch folder it runs in, made fresh (`files`: path → text or a JSON
//! value written as JSON, `binary`: path → hexadecimal bytes, `dirs`,
//! `fifos`, `symlinks`: link → target); `cwd` (`"scratch"`, the default, or `"repo"`); `args`
//! (`[SCRATCH]` and `[REPO]` stand for the two folders); `stdin`; and what is expected:
//! `status`, `stdout` and `stderr` (exact, after the same placeholders replace the folders; `[..]`
//! matches within a line and a `...` line any lines), `json` (JSON pointer → the value at that
//! pointer of the stdout JSON, strings with the same wildcards, objects by the keys named; a `*`
//! step maps over an array), `lacks` (text that must appear in
//! neither stream, e.g. a secret) and `absent` (scratch files that must not exist after the run:
//! a server command that touches one proves it never ran).
//!
//! `UPDATE_GOLDEN=1` rewrites the `stdout`/`stderr` of the cases that no longer match with what
//! the guard printed (placeholders put back).
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{GUARD, Scratch, repo};

/// The expectations a case can name.
const KEYS: &[&str] = &[
    "name", "files", "binary", "dirs", "fifos", "symlinks", "cwd", "args", "stdin", "status",
    "stdout", "stderr", "json", "lacks", "absent",
];

struct Output {
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().expect("a string").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `[SCRATCH]` and `[REPO]` in a case's text → the folders.
fn expand(text: &str, scratch: &Path) -> String {
    text.replace("[SCRATCH]", &scratch.display().to_string())
        .replace("[REPO]", &repo().display().to_string())
}

/// The folders in the guard's output → `[SCRATCH]`, `[REPO]`.
fn redact(text: &str, scratch: &Path) -> String {
    // The scratch folder may sit inside the repository's: replace the longer path first.
    text.replace(&scratch.display().to_string(), "[SCRATCH]")
        .replace(&repo().display().to_string(), "[REPO]")
}

fn make_scratch(case: &Value, name: &str) -> Scratch {
    let s = Scratch::new(&format!(
        "cli-{}",
        name.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
    ));
    if let Some(files) = case.get("files").and_then(Value::as_object) {
        for (path, text) in files {
            let text = match text {
                Value::String(t) => expand(t, s.dir()),
                other => expand(&other.to_string(), s.dir()),
            };
            s.write(path, text);
        }
    }
    if let Some(files) = case.get("binary").and_then(Value::as_object) {
        for (path, hex) in files {
            let hex = hex.as_str().expect("hexadecimal bytes");
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hexadecimal"))
                .collect();
            s.write(path, bytes);
        }
    }
    for dir in strings(case.get("dirs")) {
        std::fs::create_dir_all(s.path(&dir)).unwrap();
    }
    for fifo in strings(case.get("fifos")) {
        s.fifo(&fifo);
    }
    if let Some(links) = case.get("symlinks").and_then(Value::as_object) {
        for (link, target) in links {
            s.symlink(target.as_str().expect("a symlink target"), link);
        }
    }
    s
}

/// Runs the guard; a hang past 120 s fails the case.
fn run(args: &[String], cwd: &Path, stdin: Option<&str>) -> Result<Output, String> {
    let mut cmd = Command::new(GUARD);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for k in ["GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"] {
        cmd.env_remove(k);
    }
    let mut child = cmd.spawn().map_err(|e| format!("spawn the guard: {e}"))?;
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let text = text.to_string();
        std::thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        });
    }
    let out_pipe = child.stdout.take().unwrap();
    let err_pipe = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || std::io::read_to_string(out_pipe).unwrap_or_default());
    let err_t = std::thread::spawn(move || std::io::read_to_string(err_pipe).unwrap_or_default());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the guard did not finish within 120 s: {args:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Output {
        status: status.code(),
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
    })
}

/// `actual` against `expected` with snapbox's wildcards.
fn matches(actual: &str, expected: &str) -> Result<(), String> {
    snapbox::Assert::new()
        .try_eq(None, actual.to_string().into(), expected.to_string().into())
        .map_err(|e| e.to_string())
}

/// `got` against `want`: strings with snapbox's wildcards, arrays element by element, objects
/// key by key (only the keys `want` names), anything else equal.
fn json_matches(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::String(g), Value::String(w)) => matches(g, w).is_ok(),
        (Value::Array(g), Value::Array(w)) => {
            g.len() == w.len() && g.iter().zip(w).all(|(g, w)| json_matches(g, w))
        }
        (Value::Object(g), Value::Object(w)) => w
            .iter()
            .all(|(k, w)| g.get(k).is_some_and(|g| json_matches(g, w))),
        (g, w) => g == w,
    }
}

/// The values at a pointer, `*` steps mapping over arrays.
fn at(v: &Value, pointer: &str) -> Option<Value> {
    match pointer.split_once("/*") {
        None => v.pointer(pointer).cloned(),
        Some((head, rest)) => {
            let items = v.pointer(head)?.as_array()?;
            Some(Value::Array(
                items
                    .iter()
                    .map(|item| at(item, rest).unwrap_or(Value::Null))
                    .collect(),
            ))
        }
    }
}

/// One case: `Ok(None)` when it passes, `Ok(Some(updates))` with the fields to rewrite under
/// UPDATE_GOLDEN=1, `Err` with what is wrong.
fn check(case: &Value, update: bool) -> Result<Map<String, Value>, String> {
    let name = case["name"].as_str().expect("every case has a name");
    if let Some(obj) = case.as_object() {
        for key in obj.keys() {
            assert!(
                KEYS.contains(&key.as_str()),
                "case {name}: unknown key {key:?}"
            );
        }
    }
    let s = make_scratch(case, name);
    let cwd: PathBuf = match case.get("cwd").and_then(Value::as_str) {
        None | Some("scratch") => s.dir().to_path_buf(),
        Some("repo") => repo(),
        Some(other) => panic!("case {name}: cwd {other:?} is scratch or repo"),
    };
    let args: Vec<String> = strings(case.get("args"))
        .iter()
        .map(|a| expand(a, s.dir()))
        .collect();
    let out = run(&args, &cwd, case.get("stdin").and_then(Value::as_str))?;
    let (stdout, stderr) = (redact(&out.stdout, s.dir()), redact(&out.stderr, s.dir()));
    let mut problems = Vec::new();
    let mut updates = Map::new();
    if let Some(want) = case.get("status").and_then(Value::as_i64)
        && out.status != Some(want as i32)
    {
        problems.push(format!("exit status {:?}, expected {want}", out.status));
    }
    for (field, actual) in [("stdout", &stdout), ("stderr", &stderr)] {
        if let Some(want) = case.get(field).and_then(Value::as_str)
            && let Err(diff) = matches(actual, want)
        {
            if update {
                updates.insert(field.into(), Value::from(actual.as_str()));
            } else {
                problems.push(format!("{field} differs:\n{diff}"));
            }
        }
    }
    if let Some(pointers) = case.get("json").and_then(Value::as_object) {
        match serde_json::from_str::<Value>(&stdout) {
            Err(e) => problems.push(format!("stdout is not JSON ({e}):\n{stdout}")),
            Ok(report) => {
                for (pointer, want) in pointers {
                    let got = at(&report, pointer);
                    // `null` also stands for a key the report does not have.
                    let ok = match &got {
                        None => want.is_null(),
                        Some(g) => json_matches(g, want),
                    };
                    if !ok {
                        problems.push(format!(
                            "{pointer}: {}, expected {want}",
                            got.map_or("missing".to_string(), |g| g.to_string())
                        ));
                    }
                }
            }
        }
    }
    for text in strings(case.get("lacks")) {
        let text = expand(&text, s.dir());
        if out.stdout.contains(&text) || out.stderr.contains(&text) {
            problems.push(format!("the output contains {text:?}"));
        }
    }
    for file in strings(case.get("absent")) {
        if s.path(&file).exists() {
            problems.push(format!("{file} exists: the server command ran"));
        }
    }
    if problems.is_empty() {
        Ok(updates)
    } else {
        Err(format!(
            "case {name} ({args:?}):\n  {}\n  stderr: {stderr}",
            problems.join("\n  ")
        ))
    }
}

/// Every case file, 4 cases at a time.
#[test]
fn cli_cases() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1");
    let dir = repo().join("tests/cli");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "tests/cli lost its case files");
    let mut queue = Vec::new();
    let mut documents = Vec::new();
    for (f, path) in files.iter().enumerate() {
        let text = std::fs::read_to_string(path).unwrap();
        let cases: Vec<Value> = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
        for i in 0..cases.len() {
            queue.push((f, i));
        }
        documents.push(cases);
    }
    let documents = Arc::new(Mutex::new(documents));
    let queue = Arc::new(Mutex::new(queue));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let changed = Arc::new(Mutex::new(Vec::<usize>::new()));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (documents, queue, failures, changed) = (
                documents.clone(),
                queue.clone(),
                failures.clone(),
                changed.clone(),
            );
            std::thread::spawn(move || {
                loop {
                    let Some((f, i)) = queue.lock().unwrap().pop() else {
                        return;
                    };
                    let case = documents.lock().unwrap()[f][i].clone();
                    match check(&case, update) {
                        Ok(updates) if updates.is_empty() => {}
                        Ok(updates) => {
                            let mut docs = documents.lock().unwrap();
                            docs[f][i].as_object_mut().unwrap().extend(updates);
                            changed.lock().unwrap().push(f);
                        }
                        Err(problem) => failures.lock().unwrap().push(problem),
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let changed = changed.lock().unwrap();
    for (f, (path, cases)) in files
        .iter()
        .zip(documents.lock().unwrap().iter())
        .enumerate()
    {
        if changed.contains(&f) {
            std::fs::write(path, serde_json::to_string_pretty(cases).unwrap() + "\n").unwrap();
        }
    }
    let failures = failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "{} CLI case(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
