//! Where CI reports anchor findings: the one step before rendering that looks at the file system
//! (the renderers themselves do no I/O).
//!
//! GitHub code scanning rejects a SARIF upload if a single result has no location, and annotations
//! only show on a file of the repository. Source findings of the scan have their own file and
//! region; runtime findings happen on a process's stdout, not in a file, so each checked server
//! gets an *anchor*: the first of
//!
//! 1. the file that defines its command: the `--mcp-config` file at the line of the server's key,
//!    or the `--config` file at the line of `"command"` (when the command comes from it);
//! 2. the server's entry script, resolved from the command as a client would run it
//!    (`node ./server.js`, `python -m pkg.server`, `uv run server.py`, `npx tsx src/index.ts`,
//!    `./server.py`, `go run ./cmd/server`): the first argument that names a source file in the
//!    repository;
//! 3. the `--config` file when it did not define the command;
//! 4. the project manifest in the server's working directory (`package.json`, `pyproject.toml`,
//!    `Cargo.toml`, `go.mod`, ...);
//! 5. the repository's `README.md`;
//! 6. the program name itself, relative to the repository: not a file, but still a location, so
//!    no result is ever emitted without one.
//!
//! Runtime anchors use line 1 unless a config line was found. Every path is made relative to the
//! source root (`%SRCROOT%`): `$GITHUB_WORKSPACE` when it holds the working directory (the
//! checkout GitHub resolves SARIF URIs against), else the enclosing git work tree, else the
//! working directory. Files outside it keep an absolute `file://` URI.

use super::{Report, linehash};
use crate::issue::{Issue, Location};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Files larger than this are not read for line hashes (the upload action would hash them; a
/// missing hash only means GitHub computes it itself).
const MAX_HASHED_FILE: u64 = 16 * 1024 * 1024;

/// A file a finding points at.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileRef {
    /// Relative to the source root with `/` separators when `in_root`, else absolute.
    pub path: String,
    pub in_root: bool,
}

impl FileRef {
    /// The SARIF `artifactLocation.uri`: percent-encoded, relative, or a `file://` URI.
    pub fn uri(&self) -> String {
        if self.in_root {
            percent_encode(&self.path)
        } else {
            file_uri(Path::new(&self.path))
        }
    }
}

/// How a runtime anchor was chosen (reported in SARIF result properties).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnchorKind {
    McpConfig,
    ConfigFile,
    EntryScript,
    Manifest,
    Readme,
    Command,
}

impl AnchorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AnchorKind::McpConfig => "mcp-config",
            AnchorKind::ConfigFile => "config-file",
            AnchorKind::EntryScript => "entry-script",
            AnchorKind::Manifest => "manifest",
            AnchorKind::Readme => "readme",
            AnchorKind::Command => "command",
        }
    }
}

/// Where a checked server's runtime findings are anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    pub file: FileRef,
    pub line: u32,
    pub kind: AnchorKind,
}

/// A finding's place in a file, 1-based (`end_column` exclusive, as in SARIF).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub file: FileRef,
    pub start_line: u32,
    /// Columns and end, when the finding has a span (source findings).
    pub span: Option<(u32, u32, u32)>,
    /// How a runtime anchor was chosen; `None` for source findings.
    pub anchor: Option<AnchorKind>,
}

/// Everything the CI renderers need to know about files.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `%SRCROOT%`: absolute.
    pub root: PathBuf,
    /// The directory scan findings' relative paths start from.
    pub cwd: PathBuf,
    /// One anchor per target of the report, same order.
    pub anchors: Vec<Anchor>,
    /// `primaryLocationLineHash` of every in-root (path, line) the report's findings use.
    pub line_hashes: BTreeMap<(String, u32), String>,
}

impl Sources {
    /// Looks at the file system once for every location `report` needs.
    pub fn gather(report: &Report, cwd: &Path, workspace: Option<&Path>) -> Sources {
        let cwd = normalize(cwd);
        let root = source_root(&cwd, workspace);
        let mut sources = Sources {
            root,
            cwd,
            anchors: Vec::new(),
            line_hashes: BTreeMap::new(),
        };
        sources.anchors = report
            .targets
            .iter()
            .map(|t| sources.anchor(&t.context))
            .collect();
        let mut wanted: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for a in &sources.anchors {
            if a.file.in_root {
                wanted.entry(a.file.path.clone()).or_default().push(a.line);
            }
        }
        // Runtime findings traced to the line that wrote them are shown on that line.
        let traced = report.targets.iter().enumerate().flat_map(|(i, t)| {
            t.issues
                .iter()
                .filter(|issue| issue.fields.contains_key("source"))
                .map(move |issue| (Some(i), issue))
        });
        for (target, issue) in report
            .scan_issues()
            .iter()
            .map(|issue| (None, issue))
            .chain(traced)
        {
            let place = sources.place(target, issue);
            if place.file.in_root {
                wanted
                    .entry(place.file.path)
                    .or_default()
                    .push(place.start_line);
            }
        }
        for (path, lines) in wanted {
            let full = sources.root.join(&path);
            let Ok(meta) = std::fs::metadata(&full) else {
                continue;
            };
            if !meta.is_file() || meta.len() > MAX_HASHED_FILE {
                continue;
            }
            let Ok(bytes) = std::fs::read(&full) else {
                continue;
            };
            let hashes = linehash::line_hashes(&bytes);
            for line in lines {
                if let Some(h) = (line as usize).checked_sub(1).and_then(|i| hashes.get(i)) {
                    sources.line_hashes.insert((path.clone(), line), h.clone());
                }
            }
        }
        sources
    }

    /// Where an issue is shown: its own source position, or its target's anchor.
    pub fn place(&self, target: Option<usize>, issue: &Issue) -> Place {
        if let Some(Location::Source {
            file,
            line,
            column,
            end_line,
            end_column,
        }) = &issue.location
        {
            let start_line = (*line).max(1);
            let span = (*end_line > *line || (*end_line == *line && *end_column > *column))
                .then_some((*column, *end_line, *end_column));
            return Place {
                file: self.file_ref(&self.cwd.join(file)),
                start_line,
                span,
                anchor: None,
            };
        }
        if target.is_some()
            && let Some(w) = super::source::Source::of(issue).and_then(|s| s.unique().cloned())
        {
            return self.written_place(&w);
        }
        self.anchor_place(target)
    }

    /// Where else a finding points: a traced finding's server anchor (the place it would have
    /// had), or, when several calls print its text, each of them (the anchor stays its place).
    pub fn related(&self, target: Option<usize>, issue: &Issue) -> Vec<(Place, String)> {
        if target.is_none() {
            return Vec::new();
        }
        match super::source::Source::of(issue) {
            Some(super::source::Source::One(_)) => {
                let anchor = self.anchor_place(target);
                let what = match anchor.anchor {
                    Some(AnchorKind::McpConfig) => "the server's entry in its MCP config",
                    Some(AnchorKind::ConfigFile) => "the server's config file",
                    Some(AnchorKind::EntryScript) => "the server's entry script",
                    Some(AnchorKind::Manifest) => "the server's project manifest",
                    Some(AnchorKind::Readme) => "the repository's README",
                    Some(AnchorKind::Command) | None => "the server's command",
                }
                .to_string();
                vec![(anchor, what)]
            }
            Some(super::source::Source::Ambiguous(all)) => all
                .iter()
                .map(|w| {
                    (
                        self.written_place(w),
                        format!(
                            "one of {} calls that print this text: {}",
                            all.len(),
                            w.sink
                        ),
                    )
                })
                .collect(),
            None => Vec::new(),
        }
    }

    /// The place of a write call a runtime finding was traced to.
    fn written_place(&self, w: &super::source::Written) -> Place {
        let start_line = w.line.max(1);
        let span = (w.end_line > w.line || (w.end_line == w.line && w.end_column > w.column))
            .then_some((w.column, w.end_line, w.end_column));
        Place {
            file: self.file_ref(&self.cwd.join(&w.file)),
            start_line,
            span,
            anchor: None,
        }
    }

    /// A target's anchor as a place.
    fn anchor_place(&self, target: Option<usize>) -> Place {
        match target.and_then(|i| self.anchors.get(i)) {
            Some(a) => Place {
                file: a.file.clone(),
                start_line: a.line,
                span: None,
                anchor: Some(a.kind),
            },
            // A runtime issue without a target cannot happen; the root README keeps it located.
            None => Place {
                file: FileRef {
                    path: "README.md".into(),
                    in_root: true,
                },
                start_line: 1,
                span: None,
                anchor: Some(AnchorKind::Readme),
            },
        }
    }

    /// The line hash of a place, when its file could be read.
    pub fn line_hash(&self, place: &Place) -> Option<&str> {
        if !place.file.in_root {
            return None;
        }
        self.line_hashes
            .get(&(place.file.path.clone(), place.start_line))
            .map(String::as_str)
    }

    fn file_ref(&self, path: &Path) -> FileRef {
        let full = normalize(&self.cwd.join(path));
        match full.strip_prefix(&self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => FileRef {
                path: slash_path(rel),
                in_root: true,
            },
            // Absolute, as the platform writes it (a Windows drive or share is kept).
            _ => FileRef {
                path: if cfg!(windows) {
                    full.to_string_lossy().into_owned()
                } else {
                    slash_path(&full)
                },
                in_root: false,
            },
        }
    }

    fn in_root_file(&self, path: &Path) -> Option<FileRef> {
        let r = self.file_ref(path);
        (r.in_root && self.root.join(&r.path).is_file()).then_some(r)
    }

    fn anchor(&self, c: &super::Context) -> Anchor {
        let at = |file: FileRef, line: u32, kind: AnchorKind| Anchor { file, line, kind };
        if let Some((path, key)) = &c.mcp_server
            && let Some(f) = self.in_root_file(path)
        {
            let line = key_line(&self.root.join(&f.path), key);
            return at(f, line, AnchorKind::McpConfig);
        }
        let config = (c.config.enabled && !c.config.resolved_path.is_empty())
            .then(|| PathBuf::from(&c.config.resolved_path))
            .and_then(|p| self.in_root_file(&p));
        if c.config.command
            && let Some(f) = &config
        {
            let line = key_line(&self.root.join(&f.path), "command");
            return at(f.clone(), line, AnchorKind::ConfigFile);
        }
        let cwd = normalize(&self.cwd.join(&c.cwd_resolved));
        for candidate in entry_candidates(&c.argv, &cwd, &|p| p.is_file(), &|p| p.is_dir()) {
            if let Some(f) = self.in_root_file(&candidate) {
                return at(f, 1, AnchorKind::EntryScript);
            }
        }
        if let Some(f) = config {
            let line = key_line(&self.root.join(&f.path), "command");
            return at(f, line, AnchorKind::ConfigFile);
        }
        for name in MANIFESTS {
            if let Some(f) = self.in_root_file(&cwd.join(name)) {
                return at(f, 1, AnchorKind::Manifest);
            }
        }
        for name in ["README.md", "README", "readme.md", "Readme.md"] {
            if let Some(f) = self.in_root_file(&self.root.join(name)) {
                return at(f, 1, AnchorKind::Readme);
            }
        }
        let program = c
            .argv
            .first()
            .map(|p| p.trim_start_matches('/'))
            .filter(|p| !p.is_empty())
            .unwrap_or("server");
        at(
            FileRef {
                path: program.to_string(),
                in_root: true,
            },
            1,
            AnchorKind::Command,
        )
    }
}

const MANIFESTS: [&str; 9] = [
    "package.json",
    "pyproject.toml",
    "Cargo.toml",
    "go.mod",
    "deno.json",
    "setup.py",
    "pom.xml",
    "build.gradle.kts",
    "build.gradle",
];

/// Source files a command can name as its entry point.
const SOURCE_EXTENSIONS: [&str; 20] = [
    "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "py", "pyw", "rb", "go", "rs", "java",
    "kt", "kts", "cs", "php", "pl", "sh",
];

/// Launcher flags whose next argument is a value, not the script (`node -r x`, `uv run --with x`,
/// `npx -p pkg`, `python -W error`).
const VALUE_FLAGS: [&str; 20] = [
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "-W",
    "-X",
    "--directory",
    "--project",
    "--with",
    "--from",
    "--python",
    "-p",
    "--package",
    "--env-file",
    "--prefix",
    "-C",
    "--cwd",
    "--config",
    "--inspect-port",
];

/// Flags after which the program reads inline code, not a file.
const CODE_FLAGS: [&str; 5] = ["-c", "-e", "--eval", "--print", "-"];

/// Candidate entry scripts of a command, absolute, in the order a client would run them: the
/// program itself when it is a path, then the first source-file argument (skipping launcher
/// flags and their values, subcommands such as `run` and package names), `-m module` resolved
/// the way Python finds it from the working directory, `go run <dir>` as the folder's `main.go`.
pub fn entry_candidates(
    argv: &[String],
    cwd: &Path,
    is_file: &dyn Fn(&Path) -> bool,
    is_dir: &dyn Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Some(program) = argv.first() else {
        return out;
    };
    if program.contains('/') {
        let p = cwd.join(program);
        if is_file(&p) {
            out.push(normalize(&p));
        }
    }
    let mut args = argv[1..].iter();
    while let Some(arg) = args.next() {
        if CODE_FLAGS.contains(&arg.as_str()) {
            break;
        }
        if arg == "-m" {
            if let Some(module) = args.next() {
                let rel = module.replace('.', "/");
                for base in ["", "src/"] {
                    for tail in [".py", "/__main__.py"] {
                        let p = cwd.join(format!("{base}{rel}{tail}"));
                        if is_file(&p) {
                            out.push(normalize(&p));
                        }
                    }
                }
            }
            break;
        }
        if VALUE_FLAGS.contains(&arg.as_str()) {
            args.next();
            continue;
        }
        if arg.starts_with('-') {
            continue;
        }
        let p = cwd.join(arg);
        let ext = Path::new(arg)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("");
        if SOURCE_EXTENSIONS.contains(&ext) && is_file(&p) {
            out.push(normalize(&p));
            break;
        }
        if is_dir(&p) {
            for name in ["main.go", "__main__.py"] {
                if is_file(&p.join(name)) {
                    out.push(normalize(&p.join(name)));
                }
            }
            if !out.is_empty() {
                break;
            }
        }
    }
    out
}

/// The line (1-based) where `"key":` first appears in a JSON file, else 1.
fn key_line(path: &Path, key: &str) -> u32 {
    let Ok(text) = std::fs::read_to_string(path) else {
        return 1;
    };
    find_key_line(&text, key)
}

pub fn find_key_line(text: &str, key: &str) -> u32 {
    let quoted = serde_json::to_string(key).unwrap_or_default();
    let mut from = 0;
    while let Some(found) = text[from..].find(&quoted) {
        let at = from + found;
        let after = text[at + quoted.len()..].trim_start();
        if after.starts_with(':') {
            return text[..at].matches('\n').count() as u32 + 1;
        }
        from = at + quoted.len();
    }
    1
}

/// The source root: the workspace when it holds `cwd`, else the enclosing git work tree, else
/// `cwd`.
fn source_root(cwd: &Path, workspace: Option<&Path>) -> PathBuf {
    if let Some(ws) = workspace.map(normalize)
        && !ws.as_os_str().is_empty()
        && cwd.starts_with(&ws)
    {
        return ws;
    }
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if d.join(".git").exists() {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    cwd.to_path_buf()
}

/// Removes `.` and resolves `..` lexically (symlinks are not followed).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn slash_path(path: &Path) -> String {
    if path.has_root() && path.components().all(|c| matches!(c, Component::RootDir)) {
        return "/".into();
    }
    path.components()
        .filter_map(|c| match c {
            Component::RootDir => Some(String::new()),
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The `file://` URI of an absolute path (RFC 8089), `/`-separated and percent-encoded: Unix
/// `file:///tmp/x`, a Windows drive `file:///C:/x`, a Windows share `file://server/share/x`.
pub fn file_uri(path: &Path) -> String {
    use std::path::Prefix;
    let mut out = String::from("file://");
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            Component::Prefix(p) => match p.kind() {
                Prefix::Disk(d) | Prefix::VerbatimDisk(d) => {
                    out.push('/');
                    out.push(char::from(d));
                    out.push(':');
                }
                Prefix::UNC(server, share) | Prefix::VerbatimUNC(server, share) => {
                    out.push_str(&percent_encode(&server.to_string_lossy()));
                    parts.push(percent_encode(&share.to_string_lossy()));
                }
                _ => {}
            },
            Component::Normal(s) => parts.push(percent_encode(&s.to_string_lossy())),
            Component::ParentDir => parts.push("..".into()),
            Component::RootDir | Component::CurDir => {}
        }
    }
    if parts.is_empty() {
        out.push('/');
    }
    for part in parts {
        out.push('/');
        out.push_str(&part);
    }
    out
}

/// Percent-encodes everything but unreserved characters and `/` (RFC 3986).
pub fn percent_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn candidates(argv: &[&str], files: &[&str], dirs: &[&str]) -> Vec<String> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let cwd = Path::new("/repo");
        let files: Vec<PathBuf> = files.iter().map(|f| cwd.join(f)).collect();
        let dirs: Vec<PathBuf> = dirs.iter().map(|f| cwd.join(f)).collect();
        entry_candidates(&argv, cwd, &|p| files.iter().any(|f| f == p), &|p| {
            dirs.iter().any(|d| d == p)
        })
        .into_iter()
        .map(|p| p.display().to_string())
        .collect()
    }

    #[test]
    #[cfg(unix)]
    fn entry_scripts_are_found_the_way_launchers_run_them() {
        let f = &[
            "server.js",
            "src/index.ts",
            "pkg/server.py",
            "src/app/__main__.py",
        ];
        assert_eq!(
            candidates(&["node", "./server.js"], f, &[]),
            ["/repo/server.js"]
        );
        assert_eq!(
            candidates(
                &[
                    "node",
                    "-r",
                    "dotenv/config",
                    "--trace-warnings",
                    "server.js"
                ],
                f,
                &[]
            ),
            ["/repo/server.js"]
        );
        assert_eq!(
            candidates(&["npx", "-y", "tsx", "src/index.ts"], f, &[]),
            ["/repo/src/index.ts"]
        );
        assert_eq!(
            candidates(&["python3", "-u", "-m", "pkg.server"], f, &[]),
            ["/repo/pkg/server.py"]
        );
        assert_eq!(
            candidates(&["python", "-m", "app"], f, &[]),
            ["/repo/src/app/__main__.py"]
        );
        assert_eq!(
            candidates(&["uv", "run", "--with", "mcp", "pkg/server.py"], f, &[]),
            ["/repo/pkg/server.py"]
        );
        assert_eq!(
            candidates(&["./server.js", "--stdio"], f, &[]),
            ["/repo/server.js"]
        );
        assert_eq!(
            candidates(
                &["go", "run", "./cmd/server"],
                &["cmd/server/main.go"],
                &["cmd/server"]
            ),
            ["/repo/cmd/server/main.go"]
        );
        // Inline code, packages from a registry, and data files are not entry scripts.
        assert!(candidates(&["node", "-e", "x", "server.js"], f, &[]).is_empty());
        assert!(candidates(&["npx", "-y", "@scope/server-fs", "/data"], f, &["/data"]).is_empty());
        assert!(candidates(&["uvx", "mcp-server-git"], f, &[]).is_empty());
        assert!(candidates(&["node", "--env-file", "server.js"], f, &[]).is_empty());
    }

    #[test]
    fn config_key_lines_are_found() {
        let text =
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n    \"b b\" : {}\n  }\n}\n";
        assert_eq!(find_key_line(text, "a"), 3);
        assert_eq!(find_key_line(text, "b b"), 4);
        assert_eq!(find_key_line(text, "command"), 3);
        // A value equal to the key is not the key.
        assert_eq!(find_key_line("{\"command\": \"x\",\n\"x\": 1}", "x"), 2);
        assert_eq!(find_key_line("{}", "missing"), 1);
    }

    #[test]
    fn paths_are_made_relative_to_the_root_and_encoded() {
        let s = Sources {
            root: PathBuf::from("/repo"),
            cwd: PathBuf::from("/repo/sub"),
            ..Sources::default()
        };
        let r = s.file_ref(Path::new("../src/a b.py"));
        assert_eq!(
            r,
            FileRef {
                path: "src/a b.py".into(),
                in_root: true
            }
        );
        assert_eq!(r.uri(), "src/a%20b.py");
        let outside = s.file_ref(Path::new("/tmp/x.py"));
        assert!(!outside.in_root);
        assert_eq!(outside.uri(), "file:///tmp/x.py");
        assert_eq!(file_uri(Path::new("/")), "file:///");
        assert_eq!(file_uri(Path::new("/a b/ü")), "file:///a%20b/%C3%BC");
    }

    /// Windows paths (runs under Wine and in the Windows CI row).
    #[test]
    #[cfg(windows)]
    fn windows_paths_become_drive_and_share_uris() {
        assert_eq!(file_uri(Path::new(r"C:\a b\x.py")), "file:///C:/a%20b/x.py");
        assert_eq!(file_uri(Path::new(r"\\?\D:\w\main")), "file:///D:/w/main");
        assert_eq!(
            file_uri(Path::new(r"\\srv\share\x.py")),
            "file://srv/share/x.py"
        );
        assert_eq!(file_uri(Path::new(r"C:\")), "file:///C:/");
    }

    proptest::proptest! {
        /// Whatever a finding's location (none, a stream, any source path or position) and
        /// whatever the target, it is placed in a named file at a line >= 1. (Unix paths.)
        #[test]
        #[cfg(unix)]
        fn every_issue_is_placed_in_a_file(
            file in "[a-z./ ]{0,12}",
            line in 0u32..5,
            column in 0u32..5,
            target in proptest::option::of(0usize..3),
            kind in 0u8..3,
        ) {
            let s = Sources {
                root: PathBuf::from("/repo"),
                cwd: PathBuf::from("/repo/sub"),
                anchors: vec![Anchor {
                    file: FileRef { path: "server.py".into(), in_root: true },
                    line: 1,
                    kind: AnchorKind::EntryScript,
                }],
                ..Sources::default()
            };
            let location = match kind {
                0 => None,
                1 => Some(Location::Stream { stream: crate::issue::Stream::Stdout, line: 1, byte_offset: 0 }),
                _ => Some(Location::Source { file: PathBuf::from(&file), line, column, end_line: line, end_column: column }),
            };
            let mut issue = Issue::new(&crate::catalog::runtime::SPAWN_FAILED, "m");
            issue.location = location;
            let place = s.place(target, &issue);
            proptest::prop_assert!(!place.file.path.is_empty());
            proptest::prop_assert!(!place.file.uri().is_empty());
            proptest::prop_assert!(place.start_line >= 1);
            if let Some((c, end_line, end_c)) = place.span {
                proptest::prop_assert!(c >= 1 && end_line >= place.start_line && end_c >= 1);
            }
        }
    }

    #[test]
    fn anchors_follow_the_documented_order() {
        let tmp = std::env::temp_dir().join(format!("mcp-guard-anchor-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.join("pkg")).unwrap();
        let s = Sources {
            root: tmp.clone(),
            cwd: tmp.clone(),
            ..Sources::default()
        };
        let ctx = |argv: &[&str]| super::super::Context {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            cwd_resolved: tmp.clone(),
            ..Default::default()
        };
        let anchor = |c: &super::super::Context| {
            let a = s.anchor(c);
            (a.kind, a.file.path, a.line)
        };
        let uvx = ctx(&["uvx", "mcp-server-x"]);
        assert_eq!(anchor(&uvx), (AnchorKind::Command, "uvx".into(), 1));
        std::fs::write(tmp.join("README.md"), "# x\n").unwrap();
        assert_eq!(anchor(&uvx).0, AnchorKind::Readme);
        std::fs::write(tmp.join("pyproject.toml"), "[project]\n").unwrap();
        assert_eq!(
            anchor(&uvx),
            (AnchorKind::Manifest, "pyproject.toml".into(), 1)
        );
        std::fs::write(tmp.join("pkg/server.py"), "print()\n").unwrap();
        let module = ctx(&["python3", "-m", "pkg.server"]);
        assert_eq!(
            anchor(&module),
            (AnchorKind::EntryScript, "pkg/server.py".into(), 1)
        );
        // A config file that defines the command wins, at the line of "command".
        std::fs::write(
            tmp.join("guard.json"),
            "{\n  \"command\": [\"python3\"]\n}\n",
        )
        .unwrap();
        let mut configured = module.clone();
        configured.config.enabled = true;
        configured.config.resolved_path = tmp.join("guard.json").display().to_string();
        assert_eq!(
            anchor(&configured).0,
            AnchorKind::EntryScript,
            "the command came from argv"
        );
        configured.config.command = true;
        assert_eq!(
            anchor(&configured),
            (AnchorKind::ConfigFile, "guard.json".into(), 2)
        );
        // An mcpServers entry wins over everything, at its key.
        std::fs::write(tmp.join("mcp.json"), "{\"mcpServers\": {\n \"a\": {}}}\n").unwrap();
        configured.mcp_server = Some((tmp.join("mcp.json"), "a".into()));
        assert_eq!(
            anchor(&configured),
            (AnchorKind::McpConfig, "mcp.json".into(), 2)
        );
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn the_root_is_the_workspace_or_the_git_work_tree() {
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let sub = repo.join("src/report");
        assert_eq!(source_root(&sub, Some(&repo)), repo);
        // A workspace that does not hold the working directory is ignored.
        assert_eq!(
            source_root(&sub, Some(Path::new("/nonexistent"))),
            source_root(&sub, None)
        );
    }
}
