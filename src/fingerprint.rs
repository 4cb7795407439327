//! Reproducibility facts for the report's `fingerprint`: the versions of the runtimes the server
//! command uses (node, python, uv, ...) and the package being run, when detectable. Blocking I/O,
//! bounded: each `--version` call gets a short deadline and is killed past it.
//!
//! What the guard knows about launchers is data: [`LAUNCHERS`] (which program runs a package
//! named in its arguments, and under which package manager) and [`ENTRY_RUNTIMES`] (which
//! program runs a local entry script, whose package is found by walking up from the script).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One runtime the command uses, and what asking it for its version gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeVersion {
    /// `node`, `python`, `uv`, `npm`, `bun`, `deno`, `docker`.
    pub name: &'static str,
    /// The program asked (`python3.12`, `uv`).
    pub command: String,
    /// The first line it printed (`v22.1.0`, `Python 3.12.1`, `uv 0.5.1`): the version word when
    /// one is found, else the line; empty when it printed nothing.
    pub version: String,
    /// `launcher` (npx, uvx) or `target` (the interpreter that runs the server).
    pub role: &'static str,
    /// It ran, exited with status 0 and printed a version.
    pub available: bool,
    /// Its exit status (`None`: not started, killed, or ended by a signal).
    pub status: Option<i32>,
    /// The signal that ended it, by name (`SIGKILL` when the guard killed it past the deadline).
    pub signal: Option<&'static str>,
}

/// The package the command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageInfo {
    /// `npm`, `pnpm`, `yarn`, `bun`, `uv`, `pipx`, `docker`, or `local` (found on disk).
    pub manager: &'static str,
    pub name: String,
    /// The version the command asks for (`1.2.3`, `^1`, `latest`, an image tag), or the version
    /// of a local package; empty when none.
    pub version_spec: String,
    /// `npm`, `pypi`, `docker`.
    pub ecosystem: &'static str,
    /// Where it was found: `argv`, `package.json`, `pyproject.toml`.
    pub source: &'static str,
    /// The manifest file of a local package.
    pub manifest: Option<PathBuf>,
}

impl PackageInfo {
    /// The version, when one is pinned or known (`versionSpec`, or `None` when empty).
    pub fn version(&self) -> Option<&str> {
        (!self.version_spec.is_empty()).then_some(self.version_spec.as_str())
    }
}

const VERSION_DEADLINE: Duration = Duration::from_millis(3000);

/// The runtimes the command's program implies: `(runtime, program to ask, role)`; an empty
/// program means the command's own program.
fn implied(program: &str) -> Vec<(&'static str, &'static str, &'static str)> {
    match base(program) {
        "node" | "nodejs" => vec![("node", "", "target")],
        "npx" | "npm" | "pnpm" | "pnpx" | "yarn" | "tsx" | "ts-node" => {
            vec![("node", "node", "target"), ("npm", "npm", "launcher")]
        }
        "uv" | "uvx" => vec![("uv", "uv", "launcher"), ("python", "python3", "target")],
        "pipx" | "poetry" | "hatch" | "pdm" => vec![("python", "python3", "target")],
        "bun" | "bunx" => vec![("bun", "bun", "target")],
        "deno" => vec![("deno", "", "target")],
        "docker" | "podman" => vec![("docker", "", "launcher")],
        b if is_python(b) => vec![("python", "", "target")],
        _ => Vec::new(),
    }
}

/// The file name of a program, without a Windows extension.
fn base(program: &str) -> &str {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    [".exe", ".cmd", ".bat"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(name)
}

/// `python`, `python3`, `python3.12`.
fn is_python(base: &str) -> bool {
    base.strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Asks each runtime the command uses for its version (the program itself for `python3.12`).
/// A runtime that cannot answer is reported too, with `available: false` and why.
pub fn runtimes(argv: &[String], cwd: &Path, env: &[(OsString, OsString)]) -> Vec<RuntimeVersion> {
    let Some(program) = argv.first() else {
        return Vec::new();
    };
    implied(program)
        .into_iter()
        .map(|(name, ask, role)| {
            let exe = if ask.is_empty() {
                program.as_str()
            } else {
                ask
            };
            version_of(name, exe, role, cwd, env)
        })
        .collect()
}

fn version_of(
    name: &'static str,
    exe: &str,
    role: &'static str,
    cwd: &Path,
    env: &[(OsString, OsString)],
) -> RuntimeVersion {
    let mut rv = RuntimeVersion {
        name,
        command: exe.to_string(),
        version: String::new(),
        role,
        available: false,
        status: None,
        signal: None,
    };
    let mut cmd = Command::new(exe);
    cmd.arg("--version")
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        if k == "PATH" {
            cmd.env(k, v);
        }
    }
    let Ok(mut child) = cmd.spawn() else {
        return rv;
    };
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < VERSION_DEADLINE => {
                std::thread::sleep(Duration::from_millis(10))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                rv.signal = Some("SIGKILL");
                return rv;
            }
        }
    }
    let Ok(out) = child.wait_with_output() else {
        return rv;
    };
    rv.status = out.status.code();
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        rv.signal = out
            .status
            .signal()
            .map(crate::runtime::transport::signal_name);
    }
    let text = String::from_utf8_lossy(if out.stdout.is_empty() {
        &out.stderr
    } else {
        &out.stdout
    })
    .into_owned();
    let line = text.lines().next().unwrap_or("").trim();
    // "Python 3.12.1", "uv 0.5.1 (abc 2024-10-01)", "v22.1.0", "Docker version 28.2.2, build x"
    let version = line
        .split_whitespace()
        .map(|w| w.trim_end_matches(','))
        .find(|w| {
            w.trim_start_matches('v')
                .starts_with(|c: char| c.is_ascii_digit())
        })
        .unwrap_or(line);
    rv.version = version.to_string();
    rv.available = out.status.success() && !rv.version.is_empty();
    rv
}

/// How a launcher names the package it runs.
#[derive(Debug, Clone, Copy)]
enum Spec {
    /// `--package X`/`-p X`/`--package=X`, else the first positional argument (npx, bunx).
    PackageOrFirst,
    /// After a subcommand (`npm exec X`, `pnpm dlx X`, `pipx run X`, `uv tool run X`):
    /// `--package X` or the first positional after it.
    After(&'static [&'static str]),
    /// `docker run [options] IMAGE`: options that take a value are skipped with it.
    DockerImage,
}

/// A program that runs a package named in its arguments: (program, manager, ecosystem, how).
const LAUNCHERS: &[(&str, &str, &str, Spec)] = &[
    ("npx", "npm", "npm", Spec::PackageOrFirst),
    ("npm", "npm", "npm", Spec::After(&["exec", "x"])),
    ("pnpx", "pnpm", "npm", Spec::PackageOrFirst),
    ("pnpm", "pnpm", "npm", Spec::After(&["dlx", "exec"])),
    ("yarn", "yarn", "npm", Spec::After(&["dlx"])),
    ("bunx", "bun", "npm", Spec::PackageOrFirst),
    ("bun", "bun", "npm", Spec::After(&["x"])),
    ("uvx", "uv", "pypi", Spec::PackageOrFirst),
    ("uv", "uv", "pypi", Spec::After(&["tool run", "x"])),
    ("pipx", "pipx", "pypi", Spec::After(&["run"])),
    ("docker", "docker", "docker", Spec::DockerImage),
    ("podman", "docker", "docker", Spec::DockerImage),
];

/// `docker run` options that take a value as the next argument.
const DOCKER_VALUE_OPTIONS: &[&str] = &[
    "-e",
    "--env",
    "--env-file",
    "-h",
    "--hostname",
    "-p",
    "--publish",
    "-u",
    "--user",
    "-v",
    "--volume",
    "-w",
    "--workdir",
    "--entrypoint",
    "--name",
    "--network",
    "--net",
    "--platform",
    "-l",
    "--label",
    "--mount",
    "--add-host",
    "--cpus",
    "-m",
    "--memory",
    "--pull",
    "--cap-add",
    "--cap-drop",
    "--device",
    "--dns",
    "--ulimit",
    "--tmpfs",
    "--security-opt",
    "--shm-size",
    "--restart",
    "--runtime",
    "--gpus",
    "--ipc",
    "--pid",
    "--log-driver",
    "--log-opt",
    "-a",
    "--attach",
    "--cidfile",
    "--group-add",
    "--label-file",
    "--stop-signal",
    "--stop-timeout",
];

/// A program that runs a local entry script.
struct EntryRuntime {
    program: &'static str,
    /// Options that take a value as the next argument.
    with_value: &'static [&'static str],
    /// Options (or words) that mean there is no entry script (`-e code`).
    no_entry: &'static [&'static str],
    /// The subcommand before the script (`deno run`).
    subcommand: Option<&'static str>,
}

const NODE_EVAL: &[&str] = &["-e", "--eval", "-p", "--print"];

const ENTRY_RUNTIMES: &[EntryRuntime] = &[
    EntryRuntime {
        program: "node",
        with_value: NODE_VALUE_OPTIONS,
        no_entry: NODE_EVAL,
        subcommand: None,
    },
    EntryRuntime {
        program: "nodejs",
        with_value: NODE_VALUE_OPTIONS,
        no_entry: NODE_EVAL,
        subcommand: None,
    },
    EntryRuntime {
        program: "tsx",
        with_value: NODE_VALUE_OPTIONS,
        no_entry: NODE_EVAL,
        subcommand: None,
    },
    EntryRuntime {
        program: "ts-node",
        with_value: NODE_VALUE_OPTIONS,
        no_entry: NODE_EVAL,
        subcommand: None,
    },
    EntryRuntime {
        program: "bun",
        with_value: &["-r", "--preload", "--cwd"],
        no_entry: NODE_EVAL,
        subcommand: None,
    },
    EntryRuntime {
        program: "deno",
        with_value: &["--config", "-c", "--import-map"],
        no_entry: &["-e", "eval"],
        subcommand: Some("run"),
    },
];

/// Node options that take a value as the next argument.
const NODE_VALUE_OPTIONS: &[&str] = &[
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "-C",
    "--conditions",
    "--cpu-prof-dir",
    "--diagnostic-dir",
    "--heap-prof-dir",
    "--redirect-warnings",
    "--title",
    "--env-file",
    "--inspect-port",
    "--input-type",
    "--report-dir",
    "--tls-cipher-list",
    "--secure-heap",
    "--icu-data-dir",
    "--openssl-config",
    "--disable-warning",
];

/// The package the command runs: named in a launcher's arguments (`npx pkg@1.2`, `npm exec
/// --package pkg`, `uvx pkg==1.2`, `docker run ... IMAGE`), else the `package.json` found by
/// walking up from a Node entry script (or the `pyproject.toml` from a Python one), else the
/// manifest of the working directory.
pub fn package(argv: &[String], cwd: &Path) -> Option<PackageInfo> {
    let program = base(argv.first()?);
    let args = &argv[1..];
    for (name, manager, ecosystem, how) in LAUNCHERS {
        if *name != program {
            continue;
        }
        if let Some(spec) = launcher_spec(args, *how) {
            let (name, version_spec) = match *ecosystem {
                "pypi" => split_pypi(&spec),
                "docker" => split_image(&spec),
                _ => split_npm(&spec),
            };
            return Some(PackageInfo {
                manager,
                name,
                version_spec,
                ecosystem,
                source: "argv",
                manifest: None,
            });
        }
    }
    let start = entry_script(program, args)
        .map(|entry| cwd.join(entry))
        .map(|entry| match entry.is_dir() {
            true => entry,
            false => entry.parent().map(Path::to_path_buf).unwrap_or(entry),
        });
    match start {
        Some(dir) => nearest_manifest(&dir),
        None => manifest_in(cwd),
    }
}

fn launcher_spec(args: &[String], how: Spec) -> Option<String> {
    match how {
        Spec::PackageOrFirst => package_or_first(args),
        Spec::After(subcommands) => {
            let words: Vec<&str> = args.iter().map(String::as_str).collect();
            subcommands.iter().find_map(|sub| {
                let sub: Vec<&str> = sub.split(' ').collect();
                let at = words.iter().position(|w| !w.starts_with('-'))?;
                (words.len() >= at + sub.len() && words[at..at + sub.len()] == sub[..])
                    .then(|| package_or_first(&args[at + sub.len()..]))
                    .flatten()
            })
        }
        Spec::DockerImage => {
            let run = args.iter().position(|a| a == "run")?;
            let mut i = run + 1;
            while i < args.len() {
                let a = args[i].as_str();
                if a == "--" {
                    i += 1;
                    continue;
                }
                if a.starts_with('-') {
                    let name = a.split('=').next().unwrap_or(a);
                    if DOCKER_VALUE_OPTIONS.contains(&name) && !a.contains('=') {
                        i += 1;
                    }
                    i += 1;
                    continue;
                }
                return Some(a.to_string());
            }
            None
        }
    }
}

/// `--package X`, `-p X`, `--package=X`, else the first argument that is not an option.
fn package_or_first(args: &[String]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if let Some(v) = a.strip_prefix("--package=") {
            return Some(v.to_string());
        }
        if a == "--package" || a == "-p" {
            return args.get(i + 1).cloned();
        }
        if a != "--" && !a.starts_with('-') {
            return Some(a.to_string());
        }
        i += 1;
    }
    None
}

/// The entry script a runtime is given, skipping its options (and their values).
fn entry_script(program: &str, args: &[String]) -> Option<String> {
    if is_python(program) {
        // `python -m module` runs no script file: the working directory's project is the package.
        return args
            .iter()
            .take_while(|a| *a != "-m" && *a != "-c")
            .find(|a| !a.starts_with('-'))
            .cloned();
    }
    let rt = ENTRY_RUNTIMES.iter().find(|r| r.program == program)?;
    let (with_value, no_entry) = (rt.with_value, rt.no_entry);
    let mut rest = args;
    if let Some(sub) = rt.subcommand {
        let at = rest.iter().position(|a| a == sub)?;
        rest = &rest[at + 1..];
    }
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i].as_str();
        if a == "--" {
            return rest.get(i + 1).cloned();
        }
        if a.starts_with('-') {
            let name = a.split('=').next().unwrap_or(a);
            if no_entry.contains(&name) {
                return None;
            }
            if with_value.contains(&name) && !a.contains('=') {
                i += 1;
            }
            i += 1;
            continue;
        }
        if no_entry.contains(&a) {
            return None;
        }
        return Some(a.to_string());
    }
    None
}

/// The nearest `package.json` (or `pyproject.toml`) in `dir` or a parent.
fn nearest_manifest(dir: &Path) -> Option<PackageInfo> {
    dir.ancestors().find_map(manifest_in)
}

fn manifest_in(dir: &Path) -> Option<PackageInfo> {
    let json = dir.join("package.json");
    if let Ok(text) = crate::input::read_text(&json)
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
    {
        let field = |k: &str| v.get(k).and_then(|n| n.as_str()).unwrap_or("").to_string();
        return Some(PackageInfo {
            manager: "local",
            name: field("name"),
            version_spec: field("version"),
            ecosystem: "npm",
            source: "package.json",
            manifest: Some(json),
        });
    }
    let toml = dir.join("pyproject.toml");
    if let Ok(text) = crate::input::read_text(&toml)
        && let Some((name, version)) = pyproject(&text)
    {
        return Some(PackageInfo {
            manager: "local",
            name,
            version_spec: version.unwrap_or_default(),
            ecosystem: "pypi",
            source: "pyproject.toml",
            manifest: Some(toml),
        });
    }
    None
}

/// `@scope/name@1.2.3` → (`@scope/name`, `1.2.3`): the version separator is the last `@` after
/// the first character.
fn split_npm(spec: &str) -> (String, String) {
    match spec
        .char_indices()
        .skip(1)
        .filter(|(_, c)| *c == '@')
        .last()
    {
        Some((i, _)) => (spec[..i].to_string(), spec[i + 1..].to_string()),
        None => (spec.to_string(), String::new()),
    }
}

/// `name==1.2`, `name@1.2`, `name>=1` → (name, spec): `==`/`@` drop the separator, other
/// comparisons keep it (`>=1`).
fn split_pypi(spec: &str) -> (String, String) {
    if let Some((n, v)) = spec.split_once("==").or_else(|| spec.split_once('@')) {
        return (n.to_string(), v.to_string());
    }
    match spec.find(['<', '>', '~', '!', '=']) {
        Some(i) => (spec[..i].to_string(), spec[i..].to_string()),
        None => (spec.to_string(), String::new()),
    }
}

/// `ghcr.io/org/img:1.2` → (`ghcr.io/org/img`, `1.2`); `img@sha256:...` keeps the digest.
fn split_image(spec: &str) -> (String, String) {
    if let Some((n, d)) = spec.split_once('@') {
        return (n.to_string(), d.to_string());
    }
    let last = spec.rfind('/').map_or(0, |i| i + 1);
    match spec[last..].rfind(':') {
        Some(i) => (
            spec[..last + i].to_string(),
            spec[last + i + 1..].to_string(),
        ),
        None => (spec.to_string(), String::new()),
    }
}

/// `name` and `version` of the `[project]` table (a line scan: enough for the common layout).
fn pyproject(text: &str) -> Option<(String, Option<String>)> {
    let mut in_project = false;
    let (mut name, mut version) = (None, None);
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_project = t == "[project]";
            continue;
        }
        if !in_project {
            continue;
        }
        let Some((key, value)) = t.split_once('=') else {
            continue;
        };
        let value = value
            .trim()
            .trim_matches('"')
            .trim_matches('\'')
            .to_string();
        match key.trim() {
            "name" => name = Some(value),
            "version" => version = Some(value),
            _ => {}
        }
    }
    name.map(|n| (n, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn pkg(a: &[&str]) -> Option<(&'static str, String, String)> {
        package(&argv(a), Path::new("/nonexistent")).map(|p| (p.manager, p.name, p.version_spec))
    }

    fn row(m: &'static str, n: &str, v: &str) -> Option<(&'static str, String, String)> {
        Some((m, n.to_string(), v.to_string()))
    }

    #[test]
    fn packages_are_read_from_launcher_arguments() {
        assert_eq!(
            pkg(&["npx", "-y", "@scope/srv@1.2.3"]),
            row("npm", "@scope/srv", "1.2.3")
        );
        assert_eq!(
            pkg(&["npx", "--package", "srv@2", "srv-bin"]),
            row("npm", "srv", "2")
        );
        assert_eq!(
            pkg(&["npm", "exec", "--package=@a/b", "--", "b"]),
            row("npm", "@a/b", "")
        );
        assert_eq!(
            pkg(&["npm", "x", "-y", "srv@latest"]),
            row("npm", "srv", "latest")
        );
        assert_eq!(pkg(&["pnpm", "dlx", "srv@1"]), row("pnpm", "srv", "1"));
        assert_eq!(
            pkg(&["uvx", "mcp-server-time==0.6"]),
            row("uv", "mcp-server-time", "0.6")
        );
        assert_eq!(pkg(&["uvx", "--from", "x", "srv>=1"]), row("uv", "x", ""));
        assert_eq!(pkg(&["pipx", "run", "srv"]), row("pipx", "srv", ""));
        assert_eq!(
            pkg(&[
                "docker",
                "run",
                "-i",
                "--rm",
                "-e",
                "TOKEN",
                "-v",
                "/a:/b",
                "ghcr.io/o/srv:1.4",
                "--flag"
            ]),
            row("docker", "ghcr.io/o/srv", "1.4")
        );
        assert_eq!(
            pkg(&["docker", "run", "--env=A=1", "localhost:5000/srv"]),
            row("docker", "localhost:5000/srv", "")
        );
        assert_eq!(pkg(&["npm", "start"]), None);
        assert_eq!(
            pyproject("[tool.x]\nname = \"no\"\n[project]\nname = \"srv\"\nversion = \"0.1\"\n"),
            Some(("srv".into(), Some("0.1".into())))
        );
    }

    #[test]
    fn a_node_entry_script_finds_its_package_by_walking_up() {
        let tmp = std::env::temp_dir().join(format!("mcp-guard-fp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.join("pkg/dist/bin")).unwrap();
        std::fs::write(
            tmp.join("pkg/package.json"),
            r#"{"name":"srv","version":"3.1.0"}"#,
        )
        .unwrap();
        std::fs::write(tmp.join("pkg/dist/bin/index.js"), "").unwrap();
        let found = package(
            &argv(&[
                "node",
                "--require",
                "./x.js",
                "--enable-source-maps",
                "pkg/dist/bin/index.js",
            ]),
            &tmp,
        )
        .unwrap();
        assert_eq!(
            (
                found.manager,
                found.name.as_str(),
                found.version_spec.as_str()
            ),
            ("local", "srv", "3.1.0")
        );
        assert_eq!(found.manifest, Some(tmp.join("pkg/package.json")));
        assert_eq!(entry_script("node", &argv(&["-e", "x"])), None);
        assert_eq!(
            entry_script("deno", &argv(&["run", "-A", "main.ts"])),
            Some("main.ts".into())
        );
        assert_eq!(
            entry_script("python3", &argv(&["-u", "server.py"])),
            Some("server.py".into())
        );
        assert_eq!(entry_script("python3", &argv(&["-m", "srv"])), None);
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    #[cfg(unix)]
    fn python_reports_its_version() {
        let found = runtimes(&["python3".into(), "x.py".into()], Path::new("/"), &[]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].version.starts_with('3'), "{found:?}");
        assert!(
            found[0].available && found[0].status == Some(0),
            "{found:?}"
        );
    }

    #[test]
    #[cfg(unix)]
    fn a_runtime_that_cannot_answer_is_reported_unavailable() {
        let found = runtimes(&["python3.99".into()], Path::new("/"), &[]);
        assert_eq!(found.len(), 1, "{found:?}");
        let r = &found[0];
        assert!(
            !r.available && r.status.is_none() && r.version.is_empty(),
            "{r:?}"
        );
        assert_eq!(r.command, "python3.99");
    }
}
