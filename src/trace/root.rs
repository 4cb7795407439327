//! Where a server's code is, when no `--scan` tree was given: found from its command the way a
//! launcher runs it. The entry script (`node dist/index.js`, `python server.py`, `uv run
//! server.py`, `python -m pkg.server`; see [`crate::report::locate::entry_candidates`]) and the
//! package around it: the nearest folder above it with a manifest of the script's own language
//! (`package.json` for JavaScript, `pyproject.toml`/`setup.py` for Python, ...). A package
//! script (`npm run start`, `npm start`, `pnpm run x`, `yarn x`) or `npx`/`npm exec` of the
//! local package (its name, one of its `bin` names, or a path) is the package in the working
//! directory. A registry package (`npx -y @scope/server`, `uvx name`) has no code on disk: no
//! tree, so nothing is traced.

use crate::report::locate::{entry_candidates, normalize};
use crate::scan::lang::Lang;
use std::path::{Path, PathBuf};

/// The paths to scan for a server: the package folder and the entry script itself (it may sit
/// in a build folder the walk skips, such as `dist/`), absolute.
pub fn infer(argv: &[String], cwd: &Path) -> Vec<PathBuf> {
    let entries = entry_candidates(argv, cwd, &|p| p.is_file(), &|p| p.is_dir());
    // The program itself is a candidate when it is a path: a script (`./server.py`, or a
    // `#!/usr/bin/env node` file), not an interpreter (`.venv/bin/python server.py`).
    let is_source = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .and_then(Lang::from_file_name)
            .is_some()
            || head(p).is_some_and(|h| Lang::from_shebang(&h).is_some())
    };
    if let Some(entry) = entries.iter().find(|e| is_source(e)) {
        let mut out = Vec::new();
        if let Some(root) = entry.parent().and_then(|d| package_root(d, family(entry))) {
            out.push(root);
        }
        out.push(entry.clone());
        return out;
    }
    if runs_local_package(argv, cwd) {
        return package_root(cwd, Family::JavaScript).into_iter().collect();
    }
    if runs_uv_project(argv) {
        return package_root(cwd, Family::Python).into_iter().collect();
    }
    Vec::new()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    JavaScript,
    Python,
    Go,
    Rust,
    Other,
}

fn family(entry: &Path) -> Family {
    let lang = entry
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(Lang::from_file_name)
        .or_else(|| Lang::from_shebang(&head(entry)?));
    match lang {
        Some(Lang::JavaScript | Lang::TypeScript | Lang::Tsx) => Family::JavaScript,
        Some(Lang::Python) => Family::Python,
        Some(Lang::Go) => Family::Go,
        Some(Lang::Rust) => Family::Rust,
        _ => Family::Other,
    }
}

/// The first bytes of a file (where its `#!` line is).
fn head(path: &Path) -> Option<Vec<u8>> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut buf = [0u8; 128];
    let n = std::io::Read::read(&mut f, &mut buf).ok()?;
    Some(buf[..n].to_vec())
}

fn manifests(f: Family) -> &'static [&'static str] {
    match f {
        Family::JavaScript => &["package.json", "deno.json", "deno.jsonc"],
        Family::Python => &["pyproject.toml", "setup.py", "setup.cfg"],
        Family::Go => &["go.mod"],
        Family::Rust => &["Cargo.toml"],
        Family::Other => &[],
    }
}

/// The nearest folder at or above `dir` with a manifest of the family.
fn package_root(dir: &Path, f: Family) -> Option<PathBuf> {
    let names = manifests(f);
    let mut at = Some(normalize(dir));
    while let Some(d) = at {
        if names.iter().any(|m| d.join(m).is_file()) {
            return Some(d);
        }
        at = d.parent().map(Path::to_path_buf);
    }
    None
}

/// `npm run x`, `npm start`, `pnpm x`, `yarn x`, `bun run x`, or `npx`/`npm exec`/`pnpm exec`
/// of the package in the working directory (a path, its name or one of its `bin` names).
fn runs_local_package(argv: &[String], cwd: &Path) -> bool {
    let Some(program) = argv.first() else {
        return false;
    };
    let name = Path::new(program)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("");
    let words: Vec<&str> = argv[1..]
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let package_json = || {
        package_root(cwd, Family::JavaScript)
            .and_then(|r| std::fs::read_to_string(r.join("package.json")).ok())
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    };
    let is_local = |what: &str| {
        if what.starts_with('.') || what.starts_with('/') {
            return cwd.join(what).join("package.json").is_file();
        }
        let Some(pkg) = package_json() else {
            return false;
        };
        pkg.get("name").and_then(|n| n.as_str()) == Some(what)
            || pkg
                .get("bin")
                .and_then(|b| b.as_object())
                .is_some_and(|b| b.contains_key(what))
    };
    match (name, words.as_slice()) {
        ("npx" | "bunx", [what, ..]) => is_local(what),
        ("npm" | "pnpm" | "bun", ["exec" | "x" | "dlx", what, ..]) => is_local(what),
        ("npm" | "pnpm" | "yarn" | "bun", ["run" | "run-script" | "start" | "test", ..]) => true,
        ("pnpm" | "yarn", [script, ..]) => package_json()
            .and_then(|p| p.get("scripts").cloned())
            .is_some_and(|s| s.get(*script).is_some()),
        _ => false,
    }
}

/// `uv run <project script>`: the project in the working directory.
fn runs_uv_project(argv: &[String]) -> bool {
    let name = argv
        .first()
        .and_then(|p| Path::new(p).file_stem())
        .and_then(|s| s.to_str());
    name == Some("uv") && argv.get(1).is_some_and(|a| a == "run")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_follow_the_command() {
        let tmp = std::env::temp_dir().join(format!("mcp-guard-trace-root-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.join("pkg/dist")).unwrap();
        std::fs::create_dir_all(tmp.join("py/src/app")).unwrap();
        std::fs::write(
            tmp.join("pkg/package.json"),
            r#"{"name": "@me/srv", "bin": {"srv": "dist/index.js"}, "scripts": {"serve": "node dist/index.js"}}"#,
        )
        .unwrap();
        std::fs::write(tmp.join("pkg/dist/index.js"), "").unwrap();
        std::fs::write(tmp.join("py/pyproject.toml"), "").unwrap();
        std::fs::write(tmp.join("py/src/app/server.py"), "").unwrap();
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let pkg = tmp.join("pkg");
        assert_eq!(
            infer(&argv(&["node", "dist/index.js"]), &pkg),
            [pkg.clone(), pkg.join("dist/index.js")]
        );
        for cmd in [
            &["npm", "run", "serve"][..],
            &["npm", "start"],
            &["npx", "srv"],
            &["npx", "-y", "@me/srv"],
            &["pnpm", "serve"],
            &["npx", "."],
        ] {
            assert_eq!(infer(&argv(cmd), &pkg), vec![pkg.clone()], "{cmd:?}");
        }
        assert!(infer(&argv(&["npx", "-y", "@other/server"]), &pkg).is_empty());
        assert!(infer(&argv(&["uvx", "mcp-server-git"]), &pkg).is_empty());
        let py = tmp.join("py");
        assert_eq!(
            infer(&argv(&["uv", "run", "src/app/server.py"]), &py),
            [py.clone(), py.join("src/app/server.py")]
        );
        assert_eq!(infer(&argv(&["uv", "run", "app"]), &py), vec![py.clone()]);
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
