//! The binary: parse arguments → run → render → exit code. The only place that writes stdout and
//! report files. A closed stdout pipe (e.g. `| head`) ends the program quietly with the run's
//! exit code. Report files are written only after the run, each to a temporary file in the same
//! folder, then renamed: a reader never sees half a report, and a run that fails or is
//! interrupted writes none.

use mcp_stdio_guard::cli::{self, Command, Format, Outputs, ScanSettings, Settings};
use mcp_stdio_guard::exit::{Exit, Failure};
use mcp_stdio_guard::report::github::{self, Syntax};
use mcp_stdio_guard::report::locate::Sources;
use mcp_stdio_guard::report::{self, CiContext, Invocation, Report, ScanSection};
use mcp_stdio_guard::{catalog, runtime};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

fn main() {
    let exit = match real_main() {
        Ok(exit) => exit,
        Err(failure) => {
            let _ = writeln!(
                std::io::stderr(),
                "mcp-stdio-guard: error: {}",
                failure.message
            );
            failure.exit
        }
    };
    std::process::exit(exit.code());
}

fn real_main() -> Result<Exit, Failure> {
    match cli::parse(std::env::args_os())? {
        Command::Print(text) => {
            write_stdout(&text);
            Ok(Exit::Clean)
        }
        Command::Explain(None) => {
            write_stdout(&report::explain::list_text());
            Ok(Exit::Clean)
        }
        Command::Explain(Some(code)) => match catalog::find(&code) {
            Some(rule) => {
                write_stdout(&report::explain::rule_text(rule));
                Ok(Exit::Clean)
            }
            None => Err(Failure::usage(format!(
                "unknown issue code {code:?}: run `mcp-stdio-guard explain` to list every code"
            ))),
        },
        Command::Run(settings) => run(*settings),
        Command::Scan(settings) => {
            let start = SystemTime::now();
            let report = Report {
                targets: Vec::new(),
                scan: Some(scan(&settings)?),
            };
            deliver(&report, settings.format, &settings.outputs, start)
        }
    }
}

/// Runs a static scan into its report section.
fn scan(settings: &ScanSettings) -> Result<ScanSection, Failure> {
    let result = mcp_stdio_guard::scan::run(&settings.options)?;
    let paths = settings
        .options
        .paths
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut section = ScanSection::new(paths, settings.fail_on_findings, result);
    section.rules = mcp_stdio_guard::scan::rules()
        .filter(|r| settings.options.wants(r))
        .collect();
    Ok(section)
}

/// Renders the report into every output it goes to: the report files, the main stream, and on
/// GitHub the annotations and the step summary. Returns the run's exit code.
fn deliver(
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
    if let Some(path) = &outputs.json {
        write_file(path, &report::json::render(report))?;
    }
    if let Some(path) = &outputs.sarif {
        write_file(path, &report::sarif::render(report, &ci))?;
    }
    if let Some(path) = &outputs.junit {
        write_file(path, &report::junit::render(report, &ci))?;
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
    Ok(exit)
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

/// Writes a report file whole or not at all: a temporary file in the same folder, then a rename.
fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| {
        Failure::internal(format!(
            "cannot write the report file {} ({e})",
            path.display()
        ))
    })
}

fn run(settings: Settings) -> Result<Exit, Failure> {
    let start = SystemTime::now();
    for note in &settings.notes {
        let _ = writeln!(std::io::stderr(), "mcp-stdio-guard: note: {note}");
    }
    // The scan runs first: a bad --scan path fails before anything is spawned.
    let scan_section = settings
        .scan
        .as_ref()
        .map(|path| {
            let cwd = std::env::current_dir()
                .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}")))?;
            scan(&ScanSettings {
                format: settings.format,
                outputs: Outputs::default(),
                options: mcp_stdio_guard::scan::ScanOptions::new(vec![path.clone()], cwd),
                fail_on_findings: settings.fail_on_static,
            })
        })
        .transpose()?;
    runtime::process::become_subreaper();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::internal(format!("cannot start the async runtime: {e}")))?;
    let mut report = rt.block_on(async {
        tokio::spawn(exit_on_signal());
        mcp_stdio_guard::run::check(&settings).await
    });
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    report.scan = scan_section;
    deliver(&report, settings.format, &settings.outputs, start)
}

/// SIGINT, SIGTERM or SIGHUP to the guard (a cancelled CI job, Ctrl-C): kill every process of the
/// servers under test, write nothing to stdout (no half report), exit with 128 + the signal.
async fn exit_on_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return;
    };
    let number = tokio::select! {
        _ = int.recv() => 2,
        _ = term.recv() => 15,
        _ = hup.recv() => 1,
    };
    runtime::process::kill_live_runs();
    let _ = writeln!(
        std::io::stderr(),
        "mcp-stdio-guard: interrupted by signal {number}; the server under test was killed"
    );
    std::process::exit(128 + number);
}

/// Writes to stdout; a closed pipe is not an error worth a panic.
fn write_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
