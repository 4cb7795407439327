//! File discovery, the way ripgrep and ruff walk: `.gitignore`, `.ignore` and git's exclude files
//! are respected (also outside a git repository), hidden files are skipped, and dependency,
//! virtualenv, build-output and vendored folders are skipped unless `--include-vendored`.
//! Files named on the command line are always scanned (pre-commit passes them one by one) unless
//! `--force-exclude` applies the same exclusions to them.

use super::lang::Lang;
use crate::exit::Failure;
use std::path::{Component, Path, PathBuf};

/// Folder names that hold other people's code or generated output.
pub const EXCLUDED_DIRS: &[&str] = &[
    "node_modules",
    "bower_components",
    "jspm_packages",
    "vendor",
    "third_party",
    "third-party",
    ".venv",
    "venv",
    "virtualenv",
    "site-packages",
    "__pycache__",
    ".tox",
    ".nox",
    ".eggs",
    "build",
    "dist",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".output",
    "coverage",
    ".gradle",
    "obj",
    "Pods",
];

/// One file to scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The path to open.
    pub path: PathBuf,
    /// The path reports show: relative to the working directory when the file is under it.
    pub display: PathBuf,
    /// Named on the command line (notes are shown for skipped explicit files).
    pub explicit: bool,
    /// From the extension; `None` means "look at the shebang".
    pub lang: Option<Lang>,
}

/// True for a folder the default walk skips.
pub fn is_excluded_dir(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if EXCLUDED_DIRS.contains(&name) || name.ends_with(".egg-info") {
        return true;
    }
    // A virtualenv under any name, and Cargo/Maven output folders.
    path.join("pyvenv.cfg").is_file()
        || (name == "target"
            && (path.join("CACHEDIR.TAG").is_file() || path.join("classes").is_dir()))
}

/// True for generated or bundled files the default walk skips.
pub fn is_excluded_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains(".min.") || lower.ends_with(".bundle.js")
}

fn display_path(path: &Path, cwd: &Path) -> PathBuf {
    let rel = path.strip_prefix(cwd).unwrap_or(path);
    // `./src` → `src`
    let cleaned: PathBuf = rel
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if cleaned.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        cleaned
    }
}

/// Extension-less files are scanned when their shebang names a supported interpreter.
fn lang_or_shebang(name: &str) -> Option<Option<Lang>> {
    match Lang::from_file_name(name) {
        Some(l) => Some(Some(l)),
        None if !name.contains('.') => Some(None),
        None => None,
    }
}

/// Finds every file to scan under the given paths, sorted and without duplicates.
pub fn discover(
    paths: &[PathBuf],
    cwd: &Path,
    include_vendored: bool,
    force_exclude: bool,
) -> Result<Vec<Candidate>, Failure> {
    let mut out = Vec::new();
    for given in paths {
        let full = cwd.join(given);
        let meta = std::fs::metadata(&full).map_err(|e| {
            Failure::usage(format!(
                "cannot scan {}: {}; pass an existing file or folder",
                given.display(),
                io_reason(&e)
            ))
        })?;
        if let Some(kind) = crate::input::special_kind(&meta) {
            return Err(Failure::usage(format!(
                "cannot scan {}: it is {kind}, not a file or folder; pass the server's source files",
                given.display()
            )));
        }
        if meta.is_file() {
            // A name that is not UTF-8 still has an extension (`caf\xe9.py`).
            let name = full
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            if force_exclude && excluded_explicit(&full, cwd, include_vendored) {
                continue;
            }
            out.push(Candidate {
                display: display_path(&full, cwd),
                path: full.clone(),
                explicit: true,
                // An explicit file with an unknown extension is still sniffed for a shebang.
                lang: Lang::from_file_name(&name),
            });
            continue;
        }
        if force_exclude && !include_vendored && has_excluded_component(&full, cwd) {
            continue;
        }
        let mut builder = ignore::WalkBuilder::new(&full);
        builder
            .standard_filters(true)
            .require_git(false)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b));
        if !include_vendored {
            builder.filter_entry(|entry| {
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                if entry.depth() == 0 {
                    return true;
                }
                if is_dir {
                    !is_excluded_dir(entry.path())
                } else {
                    !entry.file_name().to_str().is_some_and(is_excluded_file)
                }
            });
        }
        for entry in builder.build() {
            let entry = match entry {
                Ok(e) => e,
                Err(_) => continue, // an unreadable folder inside the tree: skip it, like rg
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let name = entry.file_name().to_string_lossy();
            let Some(lang) = lang_or_shebang(&name) else {
                continue;
            };
            out.push(Candidate {
                display: display_path(entry.path(), cwd),
                path: entry.path().to_path_buf(),
                explicit: false,
                lang,
            });
        }
    }
    out.sort_by(|a, b| a.display.cmp(&b.display));
    out.dedup_by(|a, b| a.path == b.path);
    Ok(out)
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

fn has_excluded_component(full: &Path, cwd: &Path) -> bool {
    let rel = full.strip_prefix(cwd).unwrap_or(full);
    let mut at = cwd.to_path_buf();
    for c in rel.components() {
        at.push(c);
        if matches!(c, Component::Normal(_)) && at.is_dir() && is_excluded_dir(&at) {
            return true;
        }
    }
    false
}

/// `--force-exclude`: would the walk have skipped this explicitly named file?
fn excluded_explicit(full: &Path, cwd: &Path, include_vendored: bool) -> bool {
    let name = full.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !include_vendored && (has_excluded_component(full, cwd) || is_excluded_file(name)) {
        return true;
    }
    let Some(parent) = full.parent() else {
        return false;
    };
    // Walk the file's folder one level deep with the ignore rules: if the file does not come
    // out, an ignore file excludes it.
    let walker = ignore::WalkBuilder::new(parent)
        .standard_filters(true)
        .require_git(false)
        .max_depth(Some(1))
        .build();
    let target = std::fs::canonicalize(full).unwrap_or_else(|_| full.to_path_buf());
    !walker.flatten().any(|e| {
        std::fs::canonicalize(e.path()).unwrap_or_else(|_| e.path().to_path_buf()) == target
    })
}

/// Where a finding's severity is lowered: test files and dev scripts (see docs/scan.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Source,
    Test,
    DevScript,
}

impl Context {
    pub fn of(display: &Path) -> Context {
        let name = display
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        let stem = name.split('.').next().unwrap_or("");
        // JVM and .NET test classes: `ServerTest`, `ServerTests`, `Test` (not `Latest`).
        let original = display.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let original_stem = original.split('.').next().unwrap_or("");
        let test_class = original_stem
            .strip_suffix("Tests")
            .or_else(|| original_stem.strip_suffix("Test"))
            .is_some_and(|b| b.is_empty() || b.ends_with(|c: char| !c.is_ascii_uppercase()));
        let test_name = name.starts_with("test_")
            || stem.ends_with("_test")
            || stem.ends_with("_tests")
            || name == "conftest.py"
            || name.contains(".test.")
            || name.contains(".spec.")
            || test_class && (name.ends_with(".java") || name.ends_with(".kt"))
            || stem.ends_with("tests") && name.ends_with(".cs");
        let dirs: Vec<String> = display
            .parent()
            .map(|p| {
                p.components()
                    .filter_map(|c| match c {
                        Component::Normal(s) => s.to_str().map(str::to_ascii_lowercase),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        // .NET test projects are folders named `X.Tests`, `X.UnitTests`, `X.IntegrationTests`.
        let test_dir = dirs.iter().any(|d| {
            matches!(
                d.as_str(),
                "test" | "tests" | "__tests__" | "spec" | "specs" | "e2e"
            ) || d.ends_with(".tests")
                || d.ends_with(".test")
                || d.ends_with(".unittests")
                || d.ends_with(".integrationtests")
        });
        // Gradle/Kotlin Multiplatform test source sets: `src/jvmTest/`, `src/commonTest/`,
        // `src/integrationTest/` (a lowercase letter, then `Test`).
        let source_set = display.parent().is_some_and(|p| {
            p.components().any(|c| match c {
                Component::Normal(s) => s.to_str().is_some_and(|s| {
                    let stem = s.strip_suffix("Tests").or_else(|| s.strip_suffix("Test"));
                    stem.is_some_and(|b| b.ends_with(|c: char| c.is_ascii_lowercase()))
                }),
                _ => false,
            })
        });
        if test_name || test_dir || source_set {
            return Context::Test;
        }
        let dev_dir = dirs.iter().any(|d| {
            matches!(
                d.as_str(),
                "scripts" | "script" | "bench" | "benches" | "benchmarks"
            )
        });
        // Gradle's Kotlin build scripts (`build.gradle.kts`) run in the build, not the server.
        if dev_dir
            || name.ends_with(".gradle.kts")
            || matches!(
                name.as_str(),
                // A Rust build script's stdout is read by cargo (`cargo:rerun-if-changed=`).
                "setup.py" | "noxfile.py" | "tasks.py" | "fabfile.py" | "build.rs"
            )
        {
            return Context::DevScript;
        }
        Context::Source
    }

    pub fn label(self) -> Option<&'static str> {
        match self {
            Context::Source => None,
            Context::Test => Some("test file"),
            Context::DevScript => Some("dev script"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts() {
        assert_eq!(Context::of(Path::new("src/server.py")), Context::Source);
        assert_eq!(Context::of(Path::new("tests/helpers.py")), Context::Test);
        assert_eq!(Context::of(Path::new("pkg/test_server.py")), Context::Test);
        assert_eq!(Context::of(Path::new("src/server.test.ts")), Context::Test);
        assert_eq!(Context::of(Path::new("src/a_test.go")), Context::Test);
        assert_eq!(
            Context::of(Path::new("scripts/release.py")),
            Context::DevScript
        );
        assert_eq!(
            Context::of(Path::new("examples/noisy/server.py")),
            Context::Source
        );
        assert_eq!(
            Context::of(Path::new("src/tools/search.py")),
            Context::Source
        );
        assert_eq!(Context::of(Path::new("src/latest.py")), Context::Source);
        assert_eq!(Context::of(Path::new("build.rs")), Context::DevScript);
        assert_eq!(
            Context::of(Path::new("src/main/java/a/ClientTests.java")),
            Context::Test
        );
        assert_eq!(
            Context::of(Path::new("sdk/src/jvmTest/kotlin/a/Server.kt")),
            Context::Test
        );
        assert_eq!(
            Context::of(Path::new("src/main/kotlin/Latest.kt")),
            Context::Source
        );
        assert_eq!(Context::of(Path::new("src/latest/a.go")), Context::Source);
        assert_eq!(
            Context::of(Path::new("app/build.gradle.kts")),
            Context::DevScript
        );
        assert_eq!(Context::of(Path::new("src/build.rs")), Context::DevScript);
        assert_eq!(
            Context::of(Path::new("Server.Tests/ToolTests.cs")),
            Context::Test
        );
        assert_eq!(
            Context::of(Path::new("src/Server.UnitTests/Echo.cs")),
            Context::Test
        );
        assert_eq!(
            Context::of(Path::new("src/Server/Echo.cs")),
            Context::Source
        );
    }
}
