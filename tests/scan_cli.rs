//! `mcp-stdio-guard scan` end to end through the binary: the repo's example servers, exit codes,
//! the JSON shape, file discovery (ignore files, vendored folders, explicit files,
//! `--force-exclude`), awkward files (binary, non-UTF-8, huge, unparsable), severity in test
//! files, `--select/--ignore`, and `--scan` merged into a runtime report.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-stdio-guard");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn guard(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run the guard")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// A fresh temporary folder (removed at the end of the test when it passes).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcp-guard-scan-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `file line:column rule` for every finding of a JSON scan.
fn findings(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .expect("findings[]")
        .iter()
        .map(|f| {
            format!(
                "{} {}:{} {}",
                f["file"].as_str().unwrap_or("?"),
                f["line"],
                f["column"],
                f["rule"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

#[test]
fn the_example_servers_give_exactly_the_expected_findings() {
    let out = guard(&repo(), &["scan", "--format", "json", "examples"]);
    assert_eq!(out.status.code(), Some(1), "findings fail the scan");
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![
            "examples/noisy-server/server.py 7:1 static-print-call",
            "examples/noisy-server/server.py 27:9 static-print-call",
        ]
    );
    let clean = guard(&repo(), &["scan", "examples/hello-server/server.py"]);
    assert_eq!(clean.status.code(), Some(0), "{clean:?}");
    let text = String::from_utf8_lossy(&clean.stdout);
    assert!(text.contains("PASS static scan: 0 errors"), "{text}");
}

#[test]
fn json_findings_have_the_documented_shape() {
    let out = guard(
        &repo(),
        &["scan", "--json", "examples/noisy-server/server.py"],
    );
    let v = json(&out);
    assert_eq!(v["schemaVersion"], 1);
    assert_eq!(v["ok"], false);
    assert_eq!(v["staticScan"]["enabled"], true);
    assert_eq!(v["staticScan"]["failOnFindings"], true);
    assert_eq!(v["summary"]["status"], "fail");
    let f = &v["findings"][0];
    for (key, kind) in [
        ("file", "string"),
        ("line", "number"),
        ("column", "number"),
        ("endLine", "number"),
        ("endColumn", "number"),
        ("rule", "string"),
        ("severity", "string"),
        ("message", "string"),
        ("help", "string"),
        ("language", "string"),
    ] {
        let ok = match kind {
            "string" => f[key].is_string(),
            _ => f[key].is_u64(),
        };
        assert!(ok, "findings[0].{key} should be a {kind}: {f}");
    }
    assert_eq!(f["file"], "examples/noisy-server/server.py");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["endLine"], 7);
    assert_eq!(f["endColumn"], 39);
    assert!(f["message"].as_str().unwrap().contains("print"));
    assert!(v["stats"]["files"].as_u64() == Some(1) && v["stats"]["parsed"].as_u64() == Some(1));
}

#[test]
fn exit_codes_and_one_line_usage_errors() {
    let t = TempDir::new("exit");
    t.write("clean.py", "import sys\nprint('x', file=sys.stderr)\n");
    t.write("dirty.py", "print('x')\n");
    assert_eq!(guard(&t.0, &["scan", "clean.py"]).status.code(), Some(0));
    assert_eq!(guard(&t.0, &["scan", "dirty.py"]).status.code(), Some(1));
    assert_eq!(
        guard(&t.0, &["scan"]).status.code(),
        Some(1),
        "default path is ."
    );
    for args in [
        vec!["scan", "missing.py"],
        vec!["scan", "--select", "no-such-rule", "."],
        vec!["scan", "--ignore", "stdout-non-json", "."],
        vec!["scan", "--format", "xml", "."],
    ] {
        let out = guard(&t.0, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: one line: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
    let missing = guard(&t.0, &["scan", "missing.py"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("missing.py"));
}

#[test]
fn select_and_ignore_take_rule_ids() {
    let t = TempDir::new("select");
    t.write(
        "a.py",
        "import sys\nprint('a')\nsys.stdout.write('b')\nsys.stdout = sys.stderr\n",
    );
    let all = json(&guard(&t.0, &["scan", "--json", "a.py"]));
    assert_eq!(findings(&all).len(), 3, "{:?}", findings(&all));
    let only = json(&guard(
        &t.0,
        &["scan", "--json", "--select", "static-stdout-write", "a.py"],
    ));
    assert_eq!(findings(&only), vec!["a.py 3:1 static-stdout-write"]);
    let out = guard(
        &t.0,
        &[
            "scan",
            "--json",
            "--ignore",
            "static-print-call,static-stdout-redirect",
            "a.py",
        ],
    );
    assert_eq!(findings(&json(&out)), vec!["a.py 3:1 static-stdout-write"]);
    let none = guard(
        &t.0,
        &[
            "scan",
            "--ignore",
            "static-print-call",
            "--ignore",
            "static-stdout-write",
            "--ignore",
            "static-stdout-redirect",
            "a.py",
        ],
    );
    assert_eq!(none.status.code(), Some(0));
}

#[test]
fn the_walk_respects_ignore_files_and_skips_vendored_code() {
    let t = TempDir::new("walk");
    let bad = "console.log('x');\n";
    t.write(".gitignore", "generated/\nignored.js\n");
    t.write("src/app.js", bad);
    t.write("src/ignored.js", bad);
    t.write("generated/out.js", bad);
    t.write("node_modules/dep/index.js", bad);
    t.write("vendor/lib.js", bad);
    t.write("dist/bundle.js", bad);
    t.write("src/app.min.js", bad);
    t.write("env/pyvenv.cfg", "home = /usr\n");
    t.write("env/lib/site.py", "print('x')\n");
    t.write(".venv/lib/x.py", "print('x')\n");
    t.write(".hidden/x.js", bad);
    t.write("bin/serve", "#!/usr/bin/env node\nconsole.log('x');\n");
    t.write("bin/README", "console.log('not code')\n");
    t.write("src/types.d.ts", "declare function log(): void;\n");
    t.write("notes.txt", bad);
    let v = json(&guard(&t.0, &["scan", "--json"]));
    assert_eq!(
        findings(&v),
        vec![
            "bin/serve 2:1 static-console-log",
            "src/app.js 1:1 static-console-log",
        ]
    );
    let v = json(&guard(&t.0, &["scan", "--json", "--include-vendored"]));
    let all = findings(&v);
    for f in [
        "node_modules/dep/index.js",
        "vendor/lib.js",
        "dist/bundle.js",
        "src/app.min.js",
        "env/lib/site.py",
    ] {
        assert!(all.iter().any(|x| x.starts_with(f)), "{f} missing: {all:?}");
    }
    assert!(
        !all.iter()
            .any(|x| x.contains("ignored.js") || x.contains("generated/")),
        ".gitignore still applies: {all:?}"
    );
    // Explicit files are scanned whatever the ignore rules say...
    for f in [
        "src/ignored.js",
        "node_modules/dep/index.js",
        "src/app.min.js",
    ] {
        let v = json(&guard(&t.0, &["scan", "--json", f]));
        assert_eq!(findings(&v).len(), 1, "{f}: {v}");
        // ...unless --force-exclude.
        let v = json(&guard(&t.0, &["scan", "--json", "--force-exclude", f]));
        assert_eq!(findings(&v).len(), 0, "{f} with --force-exclude: {v}");
    }
    let v = json(&guard(
        &t.0,
        &["scan", "--json", "--force-exclude", "src/app.js"],
    ));
    assert_eq!(findings(&v).len(), 1, "a normal file stays");
    // A folder given explicitly is walked with the same rules.
    let v = json(&guard(&t.0, &["scan", "--json", "src"]));
    assert_eq!(findings(&v), vec!["src/app.js 1:1 static-console-log"]);
}

#[test]
fn awkward_files_never_crash_the_scan() {
    let t = TempDir::new("awkward");
    t.write("binary.py", b"print('x')\0\x01\x02\xff");
    t.write("latin1.py", b"# caf\xe9\nprint('caf\xe9')\n");
    t.write("big.py", "x = 1\n".repeat(400) + "print('x')\n");
    t.write(
        "broken.py",
        "print('before')\ndef broken(:\n    pass\nprint('after')\n",
    );
    t.write("empty.py", "");
    let v = json(&guard(
        &t.0,
        &["scan", "--json", "--max-file-size", "1000", "."],
    ));
    let got = findings(&v);
    assert_eq!(
        got,
        vec![
            "big.py 1:1 static-file-skipped",
            "broken.py 1:1 static-print-call",
            "broken.py 2:12 static-parse-error",
            "broken.py 4:1 static-print-call",
            "latin1.py 2:1 static-print-call",
        ],
        "binary files are skipped silently in a walk"
    );
    let notes: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "note")
        .collect();
    assert_eq!(notes.len(), 2, "the skip and the parse error are notes");
    // Named explicitly, a binary file gets a note; notes never fail the scan.
    let out = guard(&t.0, &["scan", "--json", "binary.py"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        findings(&json(&out)),
        vec!["binary.py 1:1 static-file-skipped"]
    );
}

#[test]
fn test_files_and_dev_scripts_report_warnings_but_redirects_stay_errors() {
    let t = TempDir::new("context");
    t.write("tests/test_server.py", "print('x')\n");
    t.write("scripts/release.py", "print('x')\n");
    let out = guard(&t.0, &["scan", "--json"]);
    assert_eq!(out.status.code(), Some(0), "warnings do not fail");
    let v = json(&out);
    for f in v["findings"].as_array().unwrap() {
        assert_eq!(f["severity"], "warning", "{f}");
        assert!(f["context"].is_string(), "{f}");
    }
    assert_eq!(findings(&v).len(), 2);
    t.write("tests/conftest.py", "import sys\nsys.stdout = sys.stderr\n");
    let out = guard(&t.0, &["scan", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "replacing stdout is an error anywhere"
    );
}

#[test]
fn text_output_names_file_line_and_rule() {
    let out = guard(&repo(), &["scan", "examples/noisy-server"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "[error] static-print-call: examples/noisy-server/server.py:7:1: `print(...)` without `file=` writes to stdout"
        ),
        "{text}"
    );
    assert!(text.contains("  help: Print to stderr"), "{text}");
    assert!(
        text.contains("FAIL static scan: 2 errors, 0 warnings in 1 file"),
        "{text}"
    );
}

#[test]
fn runtime_scan_merges_findings_as_warnings_unless_fail_on_static() {
    let args = [
        "--scan",
        "examples/noisy-server",
        "--quiet-ms",
        "100",
        "--json",
        "--",
        "python3",
        "examples/hello-server/server.py",
    ];
    let out = guard(&repo(), &args);
    let v = json(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "scan findings are warnings: {v}"
    );
    assert_eq!(v["staticScan"]["enabled"], true);
    assert_eq!(v["staticScan"]["path"], "examples/noisy-server");
    assert_eq!(v["staticScan"]["failOnFindings"], false);
    assert_eq!(v["fingerprint"]["staticScan"]["enabled"], true);
    let sf = v["staticFindings"].as_array().expect("staticFindings[]");
    assert_eq!(sf.len(), 2);
    assert_eq!(sf[0]["language"], "python");
    assert_eq!(sf[0]["file"], "examples/noisy-server/server.py");
    assert_eq!(sf[0]["line"], 7);
    assert_eq!(sf[0]["reason"], "static-print-call");
    assert_eq!(sf[0]["severity"], "warning");
    assert_eq!(v["checks"]["staticScan"]["status"], "warning");
    assert_eq!(v["summary"]["status"], "warning");
    assert_eq!(v["issueClasses"]["stdioTransport"]["status"], "warning");

    let mut strict: Vec<&str> = vec!["--fail-on-static"];
    strict.extend_from_slice(&args);
    let out = guard(&repo(), &strict);
    let v = json(&out);
    assert_eq!(out.status.code(), Some(1), "{v}");
    assert_eq!(v["staticScan"]["failOnFindings"], true);
    assert_eq!(v["checks"]["staticScan"]["status"], "fail");

    let bad = guard(
        &repo(),
        &["--scan", "nowhere", "--", "python3", "-c", "pass"],
    );
    assert_eq!(bad.status.code(), Some(2));
    let without = guard(
        &repo(),
        &["--fail-on-static", "--", "python3", "-c", "pass"],
    );
    assert_eq!(
        without.status.code(),
        Some(2),
        "--fail-on-static needs --scan"
    );
}
