//! Where a run's reports go besides the main stream: the report files (`--sarif`, `--junit`,
//! `--json-file`) and the GitHub integration, resolved and checked before anything runs. Nothing
//! here writes a report: the binary does, after the run.
//!
//! A report file is written whole or not at all (a temporary file in its folder, then a rename),
//! so its folder must accept a new file: that is tested here by creating (and removing) a probe
//! file, which catches what permission bits alone do not (a read-only file system, `/proc`).
//! An existing file that is not a regular file (`/dev/stdout`, `/dev/stderr`, a named pipe) is
//! written in place, never replaced: see [`Destination`].

use crate::exit::Failure;
use std::path::{Path, PathBuf};

/// The format of the main stream (stdout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The human report.
    Text,
    /// The JSON report (the reference tool's contract).
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// JUnit XML.
    Junit,
    /// The human report, then GitHub workflow-command annotations (the default when
    /// GITHUB_ACTIONS=true).
    Github,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::Text,
        Format::Json,
        Format::Sarif,
        Format::Junit,
        Format::Github,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Junit => "junit",
            Format::Github => "github",
        }
    }

    /// One line for `--help`.
    pub fn help(self) -> &'static str {
        match self {
            Format::Text => "The human report",
            Format::Json => "The JSON report (the reference tool's contract)",
            Format::Sarif => "SARIF 2.1.0",
            Format::Junit => "JUnit XML",
            Format::Github => {
                "The human report, then GitHub workflow-command annotations (the default when GITHUB_ACTIONS=true)"
            }
        }
    }
}

/// The report files and GitHub switch asked for (`--sarif`, `--junit`, `--json-file`,
/// `--no-github`), before they are checked.
#[derive(Debug, Clone, Default)]
pub struct Requested {
    pub sarif: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub no_github: bool,
}

/// Where the reports go besides the main stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outputs {
    /// Report files, as absolute paths (checked: each can be written).
    pub sarif: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub json: Option<PathBuf>,
    /// `--transcript`: the raw exchange of every server process (checked like a report file).
    pub transcript: Option<PathBuf>,
    /// GitHub annotations and the step summary: `--format github`, or GITHUB_ACTIONS=true
    /// without `--no-github`.
    pub github: bool,
    /// Running inside GitHub Actions (GITHUB_ACTIONS=true): the main stream is protected from
    /// workflow commands a server could smuggle into it.
    pub on_actions: bool,
}

/// True inside a GitHub Actions step.
pub fn github_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// The main-stream format when none was chosen: `github` inside GitHub Actions, else text.
pub fn default_format(no_github: bool) -> Format {
    if github_actions() && !no_github {
        Format::Github
    } else {
        Format::Text
    }
}

/// How a report file is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// `/dev/stdout` (also `/dev/fd/1`, `/proc/self/fd/1`): the guard's own stdout, so the
    /// report lands where the shell sent stdout, in order with the main stream, even when that
    /// is a file (reopening the path would write at offset 0 over it).
    Stdout,
    /// `/dev/stderr` (also `/dev/fd/2`, `/proc/self/fd/2`): the guard's own stderr.
    Stderr,
    /// A regular file (new or existing, symlinks followed): a temporary file in this folder,
    /// then a rename onto the path.
    Replace(PathBuf),
    /// An existing device, pipe or socket (`/dev/null`, a FIFO): opened and written in place.
    /// Renaming over it would swap the device node for a regular file.
    InPlace(PathBuf),
}

/// How `path` (absolute) is written: in place when it already exists and is not a regular file,
/// else replaced through a temporary file next to the file it names (a symlink is followed, so
/// the file it points at is replaced, not the link).
pub fn destination(path: &Path) -> Destination {
    let named = |fd: &str| {
        [format!("/dev/fd/{fd}"), format!("/proc/self/fd/{fd}")]
            .iter()
            .any(|p| path == Path::new(p))
    };
    if path == Path::new("/dev/stdout") || named("1") {
        return Destination::Stdout;
    }
    if path == Path::new("/dev/stderr") || named("2") {
        return Destination::Stderr;
    }
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => Destination::InPlace(path.to_path_buf()),
        _ => Destination::Replace(std::fs::canonicalize(path).unwrap_or_else(|_| path.into())),
    }
}

/// The temporary file a report is written to before its rename.
pub fn temporary(path: &Path, purpose: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    path.with_file_name(format!(".{name}.{}.{purpose}", std::process::id()))
}

/// Validates the report files (each can be written, no file named twice) and decides the GitHub
/// integration, before anything runs. `here` is the directory relative paths start from.
pub fn resolve_outputs(args: &Requested, format: Format, here: &Path) -> Result<Outputs, Failure> {
    let mut seen: Vec<(PathBuf, &str)> = Vec::new();
    let mut check =
        |flag: &'static str, path: &Option<PathBuf>| -> Result<Option<PathBuf>, Failure> {
            let Some(path) = path else {
                return Ok(None);
            };
            let full = super::locate::normalize(&here.join(path));
            check_writable(flag, path, &full, here)?;
            // Two reports renamed onto one file would lose the first; streams and devices
            // (`/dev/stdout` and `/dev/stderr` on one terminal, `/dev/null`) take both.
            if let Destination::Replace(same) = destination(&full) {
                if let Some((_, other)) = seen.iter().find(|(p, _)| *p == same) {
                    return Err(Failure::usage(format!(
                        "{flag} {} is also given to {other}: give each report its own file",
                        path.display()
                    )));
                }
                seen.push((same, flag));
            }
            Ok(Some(full))
        };
    let sarif = check("--sarif", &args.sarif)?;
    let junit = check("--junit", &args.junit)?;
    let json = check("--json-file", &args.json)?;
    let on_actions = github_actions();
    Ok(Outputs {
        sarif,
        junit,
        json,
        transcript: None,
        github: format == Format::Github || (on_actions && !args.no_github),
        on_actions,
    })
}

/// `--transcript FILE`, checked before anything runs like a report file: writable, not one of
/// the report files, and not stdout (which carries the report).
pub fn resolve_transcript(
    path: Option<&Path>,
    outputs: &Outputs,
    here: &Path,
) -> Result<Option<PathBuf>, Failure> {
    let Some(path) = path else {
        return Ok(None);
    };
    let full = super::locate::normalize(&here.join(path));
    check_writable("--transcript", path, &full, here)?;
    let dest = destination(&full);
    if dest == Destination::Stdout {
        return Err(Failure::usage(format!(
            "--transcript {}: stdout carries the report; give a file, e.g. --transcript transcript.jsonl",
            path.display()
        )));
    }
    for (flag, other) in [
        ("--sarif", &outputs.sarif),
        ("--junit", &outputs.junit),
        ("--json-file", &outputs.json),
    ] {
        if let (Destination::Replace(a), Some(o)) = (&dest, other)
            && destination(o) == Destination::Replace(a.clone())
        {
            return Err(Failure::usage(format!(
                "--transcript {} is also given to {flag}: give the transcript its own file",
                path.display()
            )));
        }
    }
    Ok(Some(full))
}

/// One report path: a file (not a folder) that can be written, checked by doing what the write
/// will do.
fn check_writable(flag: &str, given: &Path, full: &Path, here: &Path) -> Result<(), Failure> {
    let shown = given.display();
    if given.as_os_str().is_empty() || full.is_dir() {
        return Err(Failure::usage(format!(
            "{flag} {shown:?} is a folder, not a file: give a file name, e.g. {flag} {}",
            example_name(flag)
        )));
    }
    let target = match destination(full) {
        Destination::Stdout | Destination::Stderr => return Ok(()),
        // Not opened here: opening a named pipe waits for its reader, and a reader would see
        // an extra end of file.
        #[cfg(unix)]
        Destination::InPlace(device) => {
            return nix::unistd::access(&device, nix::unistd::AccessFlags::W_OK)
                .map_err(|e| Failure::usage(format!("{flag} {shown}: cannot write to it ({e})")));
        }
        // Windows devices (`NUL`, a console): written in place; a failure is reported then.
        #[cfg(not(unix))]
        Destination::InPlace(_) => return Ok(()),
        Destination::Replace(target) => target,
    };
    let dir = target.parent().unwrap_or(here);
    if !dir.exists() {
        return Err(Failure::usage(format!(
            "{flag} {shown}: the folder {} does not exist; create it first",
            dir.display()
        )));
    }
    if !dir.is_dir() {
        return Err(Failure::usage(format!(
            "{flag} {shown}: {} is a file, not a folder; give a path inside a folder",
            dir.display()
        )));
    }
    let probe = temporary(&target, "probe");
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe);
    match created {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(Failure::usage(format!(
            "{flag} {shown}: cannot create a file in {} ({e}); choose a writable folder",
            dir.display()
        ))),
    }
}

fn example_name(flag: &str) -> &'static str {
    match flag {
        "--sarif" => "results.sarif",
        "--junit" => "junit.xml",
        "--transcript" => "transcript.jsonl",
        _ => "report.json",
    }
}

/// Opens the file a transcript for `target` (absolute) is written to: a temporary file in its
/// folder, renamed onto it when the run ends, or a device (`/dev/stderr`) written in place.
pub fn open_transcript(target: &Path) -> Result<(std::fs::File, Option<PathBuf>), String> {
    let open = |path: &Path| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| e.to_string())
    };
    match destination(target) {
        Destination::Replace(path) => {
            let tmp = temporary(&path, "transcript");
            let f = std::fs::File::create(&tmp).map_err(|e| e.to_string())?;
            Ok((f, Some(tmp)))
        }
        Destination::Stdout => {
            Err("the transcript cannot go to stdout, which carries the report".into())
        }
        Destination::Stderr => open(Path::new("/dev/stderr")).map(|f| (f, None)),
        Destination::InPlace(device) => open(&device).map(|f| (f, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn args(sarif: &str, junit: Option<&str>) -> Requested {
        Requested {
            sarif: Some(sarif.into()),
            junit: junit.map(PathBuf::from),
            ..Requested::default()
        }
    }

    #[cfg(unix)]
    fn error(a: &Requested) -> String {
        resolve_outputs(a, Format::Text, Path::new("/"))
            .unwrap_err()
            .message
    }

    /// The guard's own streams are used as such; other devices and pipes are written in place;
    /// files, new or through a symlink, are replaced.
    #[test]
    #[cfg(unix)]
    fn special_files_are_written_in_place_and_never_replaced() {
        for (path, dest) in [
            ("/dev/stdout", Destination::Stdout),
            ("/proc/self/fd/1", Destination::Stdout),
            ("/dev/fd/2", Destination::Stderr),
            ("/dev/stderr", Destination::Stderr),
        ] {
            assert_eq!(destination(Path::new(path)), dest, "{path}");
        }
        assert_eq!(
            destination(Path::new("/dev/null")),
            Destination::InPlace("/dev/null".into())
        );
        let dir = std::env::temp_dir().join(format!("mcp-guard-outputs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let dir = std::fs::canonicalize(&dir).unwrap();
        let file = dir.join("r.sarif");
        assert_eq!(destination(&file), Destination::Replace(file.clone()));
        std::fs::write(&file, "old").unwrap();
        std::os::unix::fs::symlink(&file, dir.join("link.sarif")).unwrap();
        assert_eq!(
            destination(&dir.join("link.sarif")),
            Destination::Replace(file.clone())
        );
        let o =
            resolve_outputs(&args("/dev/null", Some("link.sarif")), Format::Text, &dir).unwrap();
        assert_eq!(o.sarif.as_deref(), Some(Path::new("/dev/null")));
        // Streams and devices may take several reports (stdout and stderr may be one terminal).
        for (a, b) in [("/dev/stdout", "/dev/stderr"), ("/dev/null", "/dev/null")] {
            assert!(resolve_outputs(&args(a, Some(b)), Format::Text, &dir).is_ok());
        }
        // The link and the file it names are the same report file.
        let twice = error(&Requested {
            sarif: Some(file.clone()),
            junit: Some(dir.join("link.sarif")),
            ..Requested::default()
        });
        assert!(twice.contains("its own file"), "{twice}");
        // The probe leaves nothing behind.
        let mut left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["link.sarif", "r.sarif"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    #[cfg(unix)]
    fn unwritable_destinations_are_named() {
        assert!(error(&args("/nonexistent-dir-xyz/a.sarif", None)).contains("does not exist"));
        let in_file = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml/a.sarif");
        assert!(error(&args(in_file, None)).contains("is a file, not a folder"));
        assert!(error(&args("/", None)).contains("is a folder"));
        // Permission bits would let root write here; creating a file does not.
        let proc = error(&args("/proc/report.sarif", None));
        assert!(proc.contains("cannot create a file in /proc"), "{proc}");
        assert!(error(&args("/tmp/a.out", Some("/tmp/./a.out"))).contains("its own file"));
    }
}
