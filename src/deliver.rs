//! Delivering a finished report (part of the binary, like every write to stdout): the report
//! files, the main stream, and on GitHub the annotations and the step summary.
//!
//! Report files are written only after the run, each whole or not at all (see
//! [`write_file`]): a reader never sees half a report. A run that fails writes none; an
//! interrupted one writes the report of the servers judged before the signal, marked partial
//! (`Report::interrupted`). Their paths were checked before anything ran
//! ([`mcp_stdio_guard::report::outputs::resolve_outputs`]).

use crate::write_stdout;
use mcp_stdio_guard::exit::{Exit, Failure};
use mcp_stdio_guard::report::github::{self, Syntax};
use mcp_stdio_guard::report::locate::Sources;
use mcp_stdio_guard::report::outputs::{self, Destination};
use mcp_stdio_guard::report::{self, CiContext, Invocation, Report};
use mcp_stdio_guard::report::{Format, Outputs};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Renders the report into every output it goes to: the report files, the main stream, and on
/// GitHub the annotations and the step summary. Returns the run's exit code.
pub fn deliver(
    report: &Report,
    format: Format,
    outputs: &Outputs,
    start: SystemTime,
) -> Result<Exit, Failure> {
    let exit = report.exit();
    let end = SystemTime::now();
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::internal(format!("cannot read the current directory: {e}")))?;
    let workspace = std::env::var_os("GITHUB_WORKSPACE").map(PathBuf::from);
    // Only SARIF and annotations point into files: the text and JSON reports never look.
    let located = outputs.sarif.is_some()
        || outputs.github
        || matches!(format, Format::Sarif | Format::Github);
    let sources = if located {
        Sources::gather(report, &cwd, workspace.as_deref())
    } else {
        Sources::default()
    };
    let ci = CiContext {
        sources,
        invocation: Invocation { start, end, exit },
    };
    // A report file that cannot be written (a full disk) does not cost the others or the main
    // stream: every output is delivered, then the first failure is the exit code.
    let mut failed: Option<Failure> = None;
    let mut keep = |result: Result<(), Failure>| {
        if let Err(e) = result {
            failed.get_or_insert(e);
        }
    };
    if let Some(path) = &outputs.json {
        keep(write_file(
            path,
            &report::json::render(report),
            outputs,
            Syntax::Json,
        ));
    }
    if let Some(path) = &outputs.sarif {
        keep(write_file(
            path,
            &report::sarif::render(report, &ci),
            outputs,
            Syntax::Json,
        ));
    }
    if let Some(path) = &outputs.junit {
        keep(write_file(
            path,
            &report::junit::render(report, &ci),
            outputs,
            Syntax::Xml,
        ));
    }
    let annotations = if outputs.github {
        github::annotations(report, &ci)
    } else {
        String::new()
    };
    let main = match format {
        Format::Text | Format::Github => {
            let text = report::text::render(report);
            if outputs.on_actions {
                github::fence(&text, &one_time_token())
            } else {
                text
            }
        }
        Format::Json => defused(report::json::render(report), outputs, Syntax::Json),
        Format::Sarif => defused(report::sarif::render(report, &ci), outputs, Syntax::Json),
        Format::Junit => defused(report::junit::render(report, &ci), outputs, Syntax::Xml),
    };
    write_stdout(&main);
    if format == Format::Github {
        write_stdout(&annotations);
    } else if !annotations.is_empty() {
        // stdout carries a machine format: the runner reads workflow commands on stderr too.
        let _ = std::io::stderr().write_all(annotations.as_bytes());
    }
    if outputs.github
        && let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty())
    {
        append_summary(Path::new(&path), report, &ci);
    }
    match failed {
        Some(failure) => Err(failure),
        None => Ok(exit),
    }
}

fn defused(text: String, outputs: &Outputs, syntax: Syntax) -> String {
    if outputs.on_actions {
        github::defuse(&text, syntax)
    } else {
        text
    }
}

/// Appends the Markdown summary, within what GitHub accepts for the step (1 MiB in all).
fn append_summary(path: &Path, report: &Report, ci: &CiContext) {
    let used = std::fs::metadata(path)
        .map(|m| m.len() as usize)
        .unwrap_or(0);
    let budget = github::SUMMARY_LIMIT.saturating_sub(used);
    let text = github::summary(report, ci, budget);
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        let _ = writeln!(
            std::io::stderr(),
            "mcp-stdio-guard: warning: cannot append the step summary to {} ({e})",
            path.display()
        );
    }
}

/// A token no server can guess, for `::stop-commands::` (SipHash with per-process random keys).
fn one_time_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut words = [0u64; 2];
    for (i, w) in words.iter_mut().enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        h.write_u32(std::process::id());
        h.write_u128(
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos(),
        );
        *w = h.finish();
    }
    format!("mcp-stdio-guard-{:016x}{:016x}", words[0], words[1])
}

/// Writes a report file whole or not at all: a temporary file next to the file, then a rename.
/// `/dev/stdout` and `/dev/stderr` are the guard's own streams (defused like the main stream
/// inside GitHub Actions, where the runner reads both); another device or a pipe is written in
/// place: renaming over it would swap the device node for a regular file.
fn write_file(path: &Path, text: &str, outputs: &Outputs, syntax: Syntax) -> Result<(), Failure> {
    let result = match outputs::destination(path) {
        Destination::Stdout => {
            write_stdout(&defused(text.to_string(), outputs, syntax));
            Ok(())
        }
        Destination::Stderr => {
            std::io::stderr().write_all(defused(text.to_string(), outputs, syntax).as_bytes())
        }
        Destination::InPlace(device) => std::fs::OpenOptions::new()
            .write(true)
            .open(&device)
            .and_then(|mut f| f.write_all(text.as_bytes())),
        Destination::Replace(target) => {
            let tmp = outputs::temporary(&target, "tmp");
            let result = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &target));
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result
        }
    };
    result.map_err(|e| {
        Failure::internal(format!(
            "cannot write the report file {} ({e})",
            path.display()
        ))
    })
}
