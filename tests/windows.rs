//! The Windows build, end to end, as a Windows user runs it: the guard spawns a native Windows
//! server (tests/fixtures/windows/stdio_server.rs) and must catch stdout pollution, CRLF endings,
//! a server deaf to stdin EOF (killed with its whole Job object), a child that holds stdout and
//! outlives the server, and every channel of the no-effect proof (process watch over the job,
//! effects log, canary proxy); the static scan must give the same findings as on Linux, with
//! `/`-separated SARIF paths. After each run, no process of it may be left.
//!
//! On Windows the tests run the binaries cargo built. On Linux they cross-build both for
//! `x86_64-pc-windows-gnu` (into target/wine) and run them under Wine, with its own prefix in
//! target/wine/prefix; Wine 8 lacks `ProcessPrng`, which Rust's standard library imports, so a
//! four-line stand-in DLL (tests/fixtures/windows/wine_bcryptprimitives.c) is built with MinGW
//! and put next to the executables. Without Wine, MinGW or the Rust target the tests say so
//! loudly on stderr and pass; `MCP_GUARD_REQUIRE_WINDOWS=1` turns that into a failure.
//! (Debian: `apt-get install wine64 gcc-mingw-w64-x86-64`, `rustup target add
//! x86_64-pc-windows-gnu`.)

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the Windows binaries are and how to start them.
struct Host {
    guard: PathBuf,
    fixture: PathBuf,
    /// The Wine prefix (Linux); `None` on Windows.
    wine_prefix: Option<PathBuf>,
}

impl Host {
    fn command(&self, program: &Path) -> Command {
        match &self.wine_prefix {
            Some(prefix) => {
                let mut cmd = Command::new("wine");
                cmd.arg(program)
                    .env("WINEPREFIX", prefix)
                    .env("WINEDEBUG", "-all");
                cmd
            }
            None => Command::new(program),
        }
    }

    /// Runs the guard (killed after two minutes: a hang is a failure).
    fn guard(&self, args: &[&str]) -> Output {
        let mut cmd = self.command(&self.guard);
        cmd.args(args)
            .current_dir(repo())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().expect("start the guard");
        let pid = child.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            if rx.recv_timeout(Duration::from_secs(120)).is_err() {
                kill(pid);
            }
        });
        let out = child.wait_with_output().expect("wait for the guard");
        let _ = tx.send(());
        out
    }

    /// The guard's JSON report on the fixture server in `mode`.
    fn check(&self, mode: &str, tag: &str, extra: &[&str]) -> (Option<i32>, Value) {
        let fixture = self.fixture.to_string_lossy().into_owned();
        let mut args = vec!["--format", "json"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", &fixture, mode, tag]);
        let out = self.guard(&args);
        let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{mode}: the guard's stdout is not JSON ({e}); exit {:?}\nstdout: {}\nstderr: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code(), report)
    }
}

/// The fixture in `mode` fails with exactly the `expected` codes (exit 1) and leaves nothing
/// alive; the report, for further checks.
fn assert_caught(host: &Host, mode: &str, expected: &[&str]) -> Value {
    let tag = format!("wintag-{mode}");
    let (exit, report) = host.check(mode, &tag, &[]);
    assert_eq!(exit, Some(1), "{report:#}");
    assert_eq!(codes(&report), expected);
    assert_no_survivor(&tag);
    report
}

#[cfg(unix)]
fn kill(pid: u32) {
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
}

#[cfg(windows)]
fn kill(pid: u32) {
    let _ = Command::new("taskkill")
        .args(["/F", "/T", "/PID", &pid.to_string()])
        .status();
}

/// The Windows binaries, built once per test process; `None` (said loudly) when this machine
/// cannot build or run them.
fn host() -> Option<&'static Host> {
    static HOST: OnceLock<Result<Host, String>> = OnceLock::new();
    match HOST.get_or_init(prepare) {
        Ok(host) => Some(host),
        Err(why) => {
            if std::env::var("MCP_GUARD_REQUIRE_WINDOWS").is_ok_and(|v| v == "1") {
                panic!("MCP_GUARD_REQUIRE_WINDOWS=1 but the Windows tests cannot run: {why}");
            }
            // Once, to the real stderr: the test harness captures `eprintln!`.
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                use std::io::Write as _;
                let _ = writeln!(
                    std::io::stderr(),
                    "\n*** SKIPPED: the Windows tests did not run: {why} (see tests/windows.rs) ***\n"
                );
            });
            None
        }
    }
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn run_ok(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .rev()
                .take(15)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n")
        ))
    }
}

#[cfg(windows)]
fn prepare() -> Result<Host, String> {
    let guard = PathBuf::from(env!("CARGO_BIN_EXE_mcp-stdio-guard"));
    run_ok(
        cargo()
            .args(["build", "--locked", "--example", "stdio-fixture-server"])
            .current_dir(repo()),
        "cargo build --example stdio-fixture-server",
    )?;
    let fixture = guard
        .parent()
        .expect("the guard's folder")
        .join("examples/stdio-fixture-server.exe");
    Ok(Host {
        guard,
        fixture,
        wine_prefix: None,
    })
}

#[cfg(unix)]
fn prepare() -> Result<Host, String> {
    const TARGET: &str = "x86_64-pc-windows-gnu";
    let on_path = |p: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    for (program, install) in [
        ("wine", "apt-get install wine64"),
        (
            "x86_64-w64-mingw32-gcc",
            "apt-get install gcc-mingw-w64-x86-64",
        ),
    ] {
        if !on_path(program) {
            return Err(format!("`{program}` is not on PATH ({install})"));
        }
    }
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("rustc: {e}"))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if !sysroot.join("lib/rustlib").join(TARGET).is_dir() {
        return Err(format!(
            "the Rust target {TARGET} is not installed (rustup target add {TARGET})"
        ));
    }
    let target_dir = repo().join("target/wine");
    let started = Instant::now();
    run_ok(
        cargo()
            .args([
                "build",
                "--locked",
                "--target",
                TARGET,
                "--bin",
                "mcp-stdio-guard",
                "--example",
                "stdio-fixture-server",
            ])
            .env("CARGO_TARGET_DIR", &target_dir)
            .current_dir(repo()),
        "cargo build --target x86_64-pc-windows-gnu",
    )?;
    {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "windows: cross-built the guard and the fixture server in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    let out = target_dir.join(TARGET).join("debug");
    let shim = repo().join("tests/fixtures/windows/wine_bcryptprimitives.c");
    for dir in [out.clone(), out.join("examples")] {
        run_ok(
            Command::new("x86_64-w64-mingw32-gcc").args([
                "-shared".as_ref(),
                "-O2".as_ref(),
                "-o".as_ref(),
                dir.join("bcryptprimitives.dll").as_os_str(),
                shim.as_os_str(),
                "-Wl,--export-all-symbols".as_ref(),
                "-ladvapi32".as_ref(),
            ]),
            "building the Wine stand-in for bcryptprimitives.dll",
        )?;
    }
    let prefix = target_dir.join("prefix");
    std::fs::create_dir_all(&prefix).map_err(|e| format!("{}: {e}", prefix.display()))?;
    let host = Host {
        guard: out.join("mcp-stdio-guard.exe"),
        fixture: out.join("examples/stdio-fixture-server.exe"),
        wine_prefix: Some(prefix),
    };
    // The first start creates the prefix (seconds); a failure here names Wine, not a test.
    let version = host.guard(&["--version"]);
    let shown = String::from_utf8_lossy(&version.stdout);
    if !shown.starts_with("mcp-stdio-guard ") {
        return Err(format!(
            "wine cannot run the Windows guard (exit {:?}): {}",
            version.status.code(),
            String::from_utf8_lossy(&version.stderr)
        ));
    }
    Ok(host)
}

/// Processes whose command line carries `tag` (the fixture passes it on to its children).
#[cfg(unix)]
fn tagged(tag: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
            continue;
        }
        if let Ok(raw) = std::fs::read(entry.path().join("cmdline")) {
            let line = String::from_utf8_lossy(&raw).replace('\0', " ");
            if line.split_whitespace().any(|w| w == tag) {
                found.push(format!("{name}: {}", line.trim()));
            }
        }
    }
    found
}

#[cfg(windows)]
fn tagged(tag: &str) -> Vec<String> {
    // The pattern is built inside PowerShell, so its own command line does not match.
    let script = format!(
        "$t = '{}' + '{}'; Get-CimInstance Win32_Process | Where-Object {{ $_.CommandLine -like \"* $t*\" }} | ForEach-Object {{ \"$($_.ProcessId): $($_.CommandLine)\" }}",
        &tag[..1],
        &tag[1..]
    );
    let out = Command::new("powershell")
        .args(["-NoProfile", "-Command", &script])
        .output()
        .expect("powershell");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Nothing of the run tagged `tag` is alive (a process may take a moment to be gone).
fn assert_no_survivor(tag: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = tagged(tag);
        if left.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            for line in &left {
                if let Some(pid) = line.split(':').next().and_then(|p| p.parse().ok()) {
                    kill(pid);
                }
            }
            panic!("processes of run {tag} outlived the guard: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn codes(report: &Value) -> Vec<String> {
    let mut codes: Vec<String> = report["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .map(|i| i["code"].as_str().expect("code").to_string())
        .collect();
    codes.sort();
    codes.dedup();
    codes
}

#[test]
fn a_clean_native_server_passes_with_no_issue() {
    let Some(host) = host() else { return };
    let (exit, report) = host.check("clean", "wintag-clean", &["--request", "tools/list"]);
    assert_eq!(exit, Some(0), "{report:#}");
    assert_eq!(report["ok"], true, "{report:#}");
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(report["process"]["shutdown"]["stage"], "stdin-eof");
    assert_eq!(
        report["operations"][0]["method"], "tools/list",
        "{report:#}"
    );
    assert_no_survivor("wintag-clean");
}

#[test]
fn a_banner_on_stdout_is_caught() {
    let Some(host) = host() else { return };
    assert_caught(host, "banner", &["stdout-non-json"]);
}

#[test]
fn crlf_line_endings_are_caught() {
    let Some(host) = host() else { return };
    assert_caught(host, "crlf", &["stdout-crlf"]);
}

/// No SIGTERM on Windows: without a console to send CTRL_BREAK through, the guard terminates
/// the server's Job object, which takes the child the server started with it.
#[test]
fn a_server_deaf_to_stdin_eof_is_killed_with_its_whole_job() {
    let Some(host) = host() else { return };
    let report = assert_caught(host, "linger", &["shutdown-sigkill-required"]);
    assert_eq!(report["process"]["killedByGuard"], true, "{report:#}");
}

/// A child that inherited stdout keeps it open after the server exits: it is found in the job,
/// named, and killed.
#[test]
fn a_child_holding_stdout_is_found_in_the_job_and_killed() {
    let Some(host) = host() else { return };
    let report = assert_caught(
        host,
        "orphan",
        &["shutdown-descendants-left", "shutdown-stdout-held-open"],
    );
    let killed = &report["process"]["shutdown"]["descendantsKilled"];
    assert_eq!(killed.as_array().map(Vec::len), Some(1), "{report:#}");
    assert_eq!(killed[0]["argv"][0], "stdio-fixture-server.exe");
}

/// A handler that acts on frames it should have refused: a process (seen in the job), a log
/// entry and a proxy connection, each tied to the probe that caused it.
#[test]
fn effects_of_rejected_frames_are_seen_on_every_channel() {
    let Some(host) = host() else { return };
    let (exit, report) = host.check(
        "acts",
        "wintag-acts",
        &["--adversarial-probes", "all", "--effects"],
    );
    assert_eq!(exit, Some(1), "{report:#}");
    let codes = codes(&report);
    for code in [
        "adversarial-side-effect-http",
        "adversarial-side-effect-logged",
        "adversarial-side-effect-process",
    ] {
        assert!(codes.iter().any(|c| c == code), "{code} in {codes:?}");
    }
    let channels = &report["effects"]["channels"];
    assert_eq!(
        (
            &channels["canary"],
            &channels["log"],
            &channels["processWatch"]
        ),
        (&Value::Bool(true), &Value::Bool(true), &Value::Bool(true)),
        "{report:#}"
    );
    let effects: Vec<(&str, &str)> = report["adversarial"]["probes"]
        .as_array()
        .expect("probes")
        .iter()
        .flat_map(|p| p["effects"].as_array().into_iter().flatten())
        .map(|e| {
            let kind = e["kind"].as_str().unwrap_or_default();
            (kind, e["summary"].as_str().unwrap_or_default())
        })
        .collect();
    for expected in [
        ("logged", "deploy preview"),
        ("http", "CONNECT deploy.example.invalid:443"),
    ] {
        assert!(effects.contains(&expected), "{expected:?} in {effects:?}");
    }
    // A process is named by its program, unless it was gone before the process table was read
    // (the 300 ms child can be first seen as it exits).
    let processes: Vec<&str> = effects
        .iter()
        .filter(|(kind, _)| *kind == "process")
        .map(|(_, summary)| *summary)
        .collect();
    assert!(!processes.is_empty(), "no process effect in {effects:?}");
    assert!(
        processes.iter().all(|s| *s == "`stdio-fixture-server.exe`"
            || s.ends_with("exited before its argv could be read")),
        "{processes:?}"
    );
    assert!(
        processes.contains(&"`stdio-fixture-server.exe`"),
        "{processes:?}"
    );
    assert_no_survivor("wintag-acts");
}

/// The static scan finds exactly what the host build finds, with `\`-separated input paths and
/// `/`-separated SARIF locations.
#[test]
fn the_static_scan_matches_the_host_build() {
    let Some(host) = host() else { return };
    let results = |sarif: &[u8]| -> Vec<(String, String, u64)> {
        let sarif: Value = serde_json::from_slice(sarif).expect("SARIF is JSON");
        let mut rows: Vec<(String, String, u64)> = sarif["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| {
                let loc = &r["locations"][0]["physicalLocation"];
                (
                    r["ruleId"].as_str().unwrap_or_default().to_string(),
                    loc["artifactLocation"]["uri"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    loc["region"]["startLine"].as_u64().unwrap_or_default(),
                )
            })
            .collect();
        rows.sort();
        rows
    };
    for lang in ["javascript", "typescript", "python"] {
        let windows_path = format!("tests\\fixtures\\scan\\{lang}");
        let on_windows = host.guard(&["scan", &windows_path, "--format", "sarif"]);
        let native = Command::new(env!("CARGO_BIN_EXE_mcp-stdio-guard"))
            .args([
                "scan",
                &format!("tests/fixtures/scan/{lang}"),
                "--format",
                "sarif",
            ])
            .current_dir(repo())
            .output()
            .expect("the host guard");
        assert_eq!(
            on_windows.status.code(),
            native.status.code(),
            "{lang}: exit"
        );
        let (windows, native) = (results(&on_windows.stdout), results(&native.stdout));
        assert!(!windows.is_empty(), "{lang}: no finding");
        assert!(
            windows.iter().all(|(_, uri, _)| !uri.contains('\\')),
            "{lang}: {windows:?}"
        );
        assert_eq!(windows, native, "{lang}");
    }
}

/// A bare name that is only a batch script (`npx` is `npx.cmd` on Windows) is a one-line usage
/// error that says how MCP clients start it.
#[test]
fn a_batch_script_named_without_cmd_is_explained() {
    let Some(host) = host() else { return };
    let dir = repo().join("target/wine-batch");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("fakeserver.cmd"), "@echo off\r\n").unwrap();
    let out = host.guard(&[
        "--cwd",
        &dir.to_string_lossy(),
        "--env",
        &format!("PATH={}", dir.to_string_lossy()),
        "--",
        "fakeserver",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("fakeserver.cmd") && stderr.contains("cmd /c fakeserver"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

/// The library's unit tests, cross-built and run under Wine (on Windows the CI row runs
/// `cargo test --lib` natively).
#[cfg(unix)]
#[test]
fn the_library_unit_tests_pass_under_wine() {
    let Some(host) = host() else { return };
    let target_dir = repo().join("target/wine");
    let built = cargo()
        .args([
            "test",
            "--locked",
            "--lib",
            "--no-run",
            "--target",
            "x86_64-pc-windows-gnu",
            "--message-format=json",
        ])
        .env("CARGO_TARGET_DIR", &target_dir)
        .current_dir(repo())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("cargo test --no-run");
    assert!(built.status.success(), "cargo test --lib --no-run failed");
    let exe = String::from_utf8_lossy(&built.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|m| {
            (m["reason"] == "compiler-artifact" && m["profile"]["test"] == true)
                .then(|| m["executable"].as_str().map(PathBuf::from))
                .flatten()
        })
        .expect("the unit-test executable");
    let dll = host.guard.with_file_name("bcryptprimitives.dll");
    std::fs::copy(&dll, exe.with_file_name("bcryptprimitives.dll")).expect("the Wine stand-in");
    let out = host
        .command(&exe)
        .current_dir(repo())
        .stdin(Stdio::null())
        .output()
        .expect("run the unit tests under wine");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("test result: ok."), "{text}");
}

/// SARIF from a Windows run: the source root is a `file:///C:/…` URI and every location is
/// `/`-separated (GitHub code scanning matches them against the repository's paths).
#[test]
fn runtime_sarif_uses_slash_uris_and_a_drive_root() {
    let Some(host) = host() else { return };
    let fixture = host.fixture.to_string_lossy().into_owned();
    let out = host.guard(&[
        "--format",
        "sarif",
        "--",
        &fixture,
        "banner",
        "wintag-sarif",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let sarif: Value = serde_json::from_slice(&out.stdout).expect("SARIF is JSON");
    let root = sarif["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .expect("%SRCROOT%");
    let drive = root.strip_prefix("file:///").unwrap_or_default();
    assert!(
        drive.len() > 3 && drive.as_bytes()[1] == b':' && root.ends_with('/'),
        "{root}"
    );
    assert!(!root.contains('\\') && !root.contains("%5C"), "{root}");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert!(!results.is_empty());
    for r in results {
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .expect("uri");
        assert!(!uri.contains('\\') && !uri.contains("%5C"), "{uri}");
    }
    assert_no_survivor("wintag-sarif");
}

/// A relative program runs from `--cwd`, as `check_program` checked it (Windows itself would
/// resolve it against the guard's folder).
#[test]
fn a_relative_program_is_found_from_the_server_cwd() {
    let Some(host) = host() else { return };
    let debug = host
        .fixture
        .parent()
        .and_then(Path::parent)
        .expect("the build folder");
    let out = host.guard(&[
        "--format",
        "json",
        "--cwd",
        &debug.to_string_lossy(),
        "--",
        "examples\\stdio-fixture-server.exe",
        "clean",
        "wintag-relative",
    ]);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["ok"], true, "{report:#}");
    assert_no_survivor("wintag-relative");
}

/// A server deaf to stdin EOF that keeps the default CTRL_BREAK handling: with a console (a
/// terminal, a GitHub Actions step) the guard's CTRL_BREAK ends it (`shutdown-sigterm-required`,
/// naming CTRL_BREAK); without one (Wine here) the job is terminated and the finding says why.
/// Either way nothing is left.
#[test]
fn the_polite_stop_is_ctrl_break_or_says_why_not() {
    let Some(host) = host() else { return };
    let (exit, report) = host.check("deaf", "wintag-deaf", &[]);
    let stage = report["process"]["shutdown"]["stage"]
        .as_str()
        .unwrap_or_default();
    let issues = report["issues"].as_array().expect("issues");
    assert_eq!(issues.len(), 1, "{report:#}");
    let message = issues[0]["message"].as_str().unwrap_or_default();
    match stage {
        "sigterm" => {
            assert_eq!(issues[0]["code"], "shutdown-sigterm-required", "{report:#}");
            assert!(message.contains("only exited on CTRL_BREAK"), "{message}");
            assert_eq!(exit, Some(1));
        }
        "sigkill" => {
            assert_eq!(issues[0]["code"], "shutdown-sigkill-required", "{report:#}");
            assert!(
                message.contains("CTRL_BREAK could not be sent")
                    && message.contains("terminated its Job object"),
                "{message}"
            );
            assert_eq!(exit, Some(1));
        }
        other => panic!("stage {other}: {report:#}"),
    }
    assert_no_survivor("wintag-deaf");
}
