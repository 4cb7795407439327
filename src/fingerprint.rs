//! Reproducibility facts for the report's `fingerprint`: the versions of the runtimes the server
//! command uses (node, python, uv, ...) and the package being run, when detectable. Blocking I/O,
//! bounded: each `--version` call gets a short deadline and is killed past it.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One runtime the command uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeVersion {
    /// `node`, `python`, `uv`, `bun`, `deno`.
    pub name: &'static str,
    pub version: String,
    /// `launcher` (npx, uvx) or `target` (the interpreter that runs the server).
    pub role: &'static str,
}

/// The package the command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageInfo {
    pub name: String,
    pub version: Option<String>,
    /// `npm`, `pypi`.
    pub ecosystem: &'static str,
    /// Where it was found: `argv`, `package.json`, `pyproject.toml`.
    pub source: &'static str,
}

const VERSION_DEADLINE: Duration = Duration::from_millis(3000);

/// The runtimes the command's program implies: `(runtime, program to ask, role)`.
fn implied(program: &str) -> Vec<(&'static str, &'static str, &'static str)> {
    let base = program.rsplit('/').next().unwrap_or(program);
    match base {
        "node" | "nodejs" => vec![("node", "node", "target")],
        "npx" | "npm" | "pnpm" | "yarn" | "tsx" | "ts-node" => {
            vec![("node", "node", "target"), ("npm", "npm", "launcher")]
        }
        "uv" | "uvx" => vec![("uv", "uv", "launcher"), ("python", "python3", "target")],
        "pipx" | "poetry" | "hatch" | "pdm" => vec![("python", "python3", "target")],
        "bun" | "bunx" => vec![("bun", "bun", "target")],
        "deno" => vec![("deno", "deno", "target")],
        b if b.starts_with("python") => vec![("python", "", "target")],
        _ => Vec::new(),
    }
}

/// Asks each runtime the command uses for its version (the program itself for `python3.12`).
pub fn runtimes(argv: &[String], cwd: &Path, env: &[(OsString, OsString)]) -> Vec<RuntimeVersion> {
    let Some(program) = argv.first() else {
        return Vec::new();
    };
    implied(program)
        .into_iter()
        .filter_map(|(name, ask, role)| {
            let exe = if ask.is_empty() {
                program.as_str()
            } else {
                ask
            };
            version_of(exe, cwd, env).map(|version| RuntimeVersion {
                name,
                version,
                role,
            })
        })
        .collect()
}

fn version_of(exe: &str, cwd: &Path, env: &[(OsString, OsString)]) -> Option<String> {
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
    let mut child = cmd.spawn().ok()?;
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
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    let text = String::from_utf8_lossy(if out.stdout.is_empty() {
        &out.stderr
    } else {
        &out.stdout
    })
    .into_owned();
    let line = text.lines().next()?.trim();
    // "Python 3.12.1", "uv 0.5.1 (abc 2024-10-01)", "v22.1.0"
    let version = line
        .split_whitespace()
        .find(|w| {
            w.trim_start_matches('v')
                .starts_with(|c: char| c.is_ascii_digit())
        })
        .unwrap_or(line);
    (!version.is_empty()).then(|| version.to_string())
}

/// The package the command runs: from `npx pkg@1.2`/`uvx pkg==1.2` arguments, else the
/// `package.json` or `pyproject.toml` of the working directory.
pub fn package(argv: &[String], cwd: &Path) -> Option<PackageInfo> {
    let base = argv
        .first()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .unwrap_or("");
    let first_positional = || argv.iter().skip(1).find(|a| !a.starts_with('-')).cloned();
    match base {
        "npx" | "bunx" | "pnpx" => {
            if let Some(spec) = first_positional() {
                let (name, version) = split_npm(&spec);
                return Some(PackageInfo {
                    name,
                    version,
                    ecosystem: "npm",
                    source: "argv",
                });
            }
        }
        "uvx" | "pipx" => {
            let spec = if base == "pipx" {
                argv.iter().skip_while(|a| *a != "run").nth(1).cloned()
            } else {
                first_positional()
            };
            if let Some(spec) = spec {
                let (name, version) = match spec.split_once("==").or_else(|| spec.split_once('@')) {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (spec, None),
                };
                return Some(PackageInfo {
                    name,
                    version,
                    ecosystem: "pypi",
                    source: "argv",
                });
            }
        }
        _ => {}
    }
    if let Ok(text) = std::fs::read_to_string(cwd.join("package.json"))
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(name) = v.get("name").and_then(|n| n.as_str())
    {
        return Some(PackageInfo {
            name: name.to_string(),
            version: v
                .get("version")
                .and_then(|n| n.as_str())
                .map(str::to_string),
            ecosystem: "npm",
            source: "package.json",
        });
    }
    if let Ok(text) = std::fs::read_to_string(cwd.join("pyproject.toml"))
        && let Some((name, version)) = pyproject(&text)
    {
        return Some(PackageInfo {
            name,
            version,
            ecosystem: "pypi",
            source: "pyproject.toml",
        });
    }
    None
}

fn split_npm(spec: &str) -> (String, Option<String>) {
    // `@scope/name@1.2.3`: the version separator is the last `@` after the first character.
    match spec[1.min(spec.len())..].rfind('@') {
        Some(i) => (spec[..i + 1].to_string(), Some(spec[i + 2..].to_string())),
        None => (spec.to_string(), None),
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

    #[test]
    fn packages_are_read_from_launcher_arguments() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let p = package(
            &argv(&["npx", "-y", "@scope/srv@1.2.3"]),
            Path::new("/nonexistent"),
        )
        .unwrap();
        assert_eq!(
            (p.name.as_str(), p.version.as_deref(), p.ecosystem),
            ("@scope/srv", Some("1.2.3"), "npm")
        );
        let p = package(
            &argv(&["uvx", "mcp-server-time==0.6"]),
            Path::new("/nonexistent"),
        )
        .unwrap();
        assert_eq!(
            (p.name.as_str(), p.version.as_deref()),
            ("mcp-server-time", Some("0.6"))
        );
        assert_eq!(
            pyproject("[tool.x]\nname = \"no\"\n[project]\nname = \"srv\"\nversion = \"0.1\"\n"),
            Some(("srv".into(), Some("0.1".into())))
        );
    }

    #[test]
    #[cfg(unix)]
    fn python_reports_its_version() {
        let found = runtimes(&["python3".into(), "x.py".into()], Path::new("/"), &[]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].version.starts_with('3'), "{found:?}");
    }
}
