//! The binary: parse arguments → run → render → exit code. The only place that writes stdout
//! and report files (with `deliver.rs`). A closed stdout pipe (e.g. `| head`) ends the program
//! quietly with the run's exit code.

mod deliver;
mod progress;

use deliver::deliver;
use mcp_stdio_guard::exit::{Exit, Failure};
use mcp_stdio_guard::report::Outputs;
use mcp_stdio_guard::report::{self, Report, ScanSection};
use mcp_stdio_guard::run::Judged;
use mcp_stdio_guard::settings::{self, Command, ScanSettings, Settings};
use mcp_stdio_guard::{catalog, runtime};
use std::io::Write;
use std::sync::Arc;
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
    match settings::parse(std::env::args_os())? {
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
        Command::Replay(file) => replay(&file),
        Command::Merge(m) => merge(&m),
        Command::Scan(settings) => {
            let start = SystemTime::now();
            let report = Report {
                scan: Some(scan(&settings)?),
                ..Report::default()
            };
            deliver(&report, settings.format, &settings.outputs, start)
        }
    }
}

/// `replay FILE`: a transcript, line by line (a transcript may be larger than memory should
/// hold: it is streamed).
fn replay(file: &std::path::Path) -> Result<Exit, Failure> {
    use std::io::BufRead;
    let opened = std::fs::File::open(file).map_err(|e| {
        Failure::usage(format!(
            "cannot read the transcript {} ({e}); give the file --transcript wrote",
            file.display()
        ))
    })?;
    if !opened.metadata().is_ok_and(|m| m.is_file()) {
        return Err(Failure::usage(format!(
            "{} is not a regular file; give the file --transcript wrote",
            file.display()
        )));
    }
    // Two passes: a file with a bad line prints nothing (no half replay), and nothing of it is
    // held in memory.
    for print in [false, true] {
        let mut replay = runtime::transcript::Replay::default();
        let reader = std::fs::File::open(file)
            .map(std::io::BufReader::new)
            .map_err(|e| Failure::usage(format!("cannot read {} ({e})", file.display())))?;
        for (n, line) in reader.lines().enumerate() {
            let line =
                line.map_err(|e| Failure::usage(format!("cannot read {} ({e})", file.display())))?;
            if line.trim().is_empty() {
                continue;
            }
            let text = replay.line(&line).map_err(|why| {
                Failure::usage(format!(
                    "{}:{}: {why}; give a file written by --transcript",
                    file.display(),
                    n + 1
                ))
            })?;
            if print {
                write_stdout(&text);
            }
        }
    }
    drop(opened);
    Ok(Exit::Clean)
}

/// `merge REPORT...`: the shards' JSON reports joined, delivered like one run's report.
fn merge(m: &settings::MergeSettings) -> Result<Exit, Failure> {
    let start = SystemTime::now();
    let mut inputs = Vec::with_capacity(m.reports.len());
    for path in &m.reports {
        let shown = path.display().to_string();
        let text = report::merge::read_report(path).map_err(|e| {
            Failure::usage(format!(
                "cannot read the report {shown} ({e}); give the --json-file of each shard"
            ))
        })?;
        let value = serde_json::from_str(&text).map_err(|e| {
            Failure::usage(format!(
                "{shown} is not a JSON report ({e}); give the --json-file of each shard"
            ))
        })?;
        inputs.push((shown, value));
    }
    let merged = report::merge::merge(&inputs).map_err(Failure::usage)?;
    let mut joined = merged.report;
    joined.recorded_json = Some(merged.json);
    deliver(&joined, m.format, &m.outputs, start)
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
    let transcript = settings
        .outputs
        .transcript
        .as_deref()
        .map(|target| {
            let (file, temporary) = report::outputs::open_transcript(target)?;
            let started = report::utc_timestamp(start);
            Ok::<_, String>(runtime::transcript::Transcript::create(
                target, file, temporary, &started,
            ))
        })
        .transpose()
        .map_err(|e| Failure::usage(format!("--transcript: cannot create the file ({e})")))?;
    // A registry run on a terminal shows its progress on stderr.
    let display = progress::Display::start(&settings);
    runtime::process::become_subreaper();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::internal(format!("cannot start the async runtime: {e}")))?;
    let settings = Arc::new(settings);
    let judged = Arc::new(Judged::new(&settings));
    let outcome = rt.block_on(async {
        // Registered before any server is spawned: a signal in the first milliseconds must not
        // take the default action and leave the server behind.
        let signals = interrupts();
        let hooks = mcp_stdio_guard::run::Hooks {
            transcript: transcript.clone(),
            observer: display
                .clone()
                .map(|d| d as std::sync::Arc<dyn mcp_stdio_guard::run::Observer>),
        };
        tokio::select! {
            report = mcp_stdio_guard::run::check_with(settings.clone(), &judged, hooks) => Ok(report),
            number = interrupted(signals) => Err(number),
        }
    });
    let mut report = match outcome {
        Ok(report) => report,
        Err(number) => {
            // The servers judged before the signal are reported (marked partial) rather than
            // lost; taken before the kill, so that a server cut short by it is not judged on
            // that. Then everything of the servers under test dies.
            let mut partial = judged.partial(number);
            runtime::process::kill_live_runs();
            let _ = writeln!(
                std::io::stderr(),
                "mcp-stdio-guard: interrupted by signal {number}; the server under test was killed"
            );
            partial.scan = scan_section;
            partial.shard = settings.shard.clone();
            // What the transcript holds up to the signal is kept, like the partial report.
            if let Some(t) = &transcript {
                partial.transcript = t.finish().ok();
            }
            if let Some(d) = &display {
                d.finish(&partial);
            }
            let _ = deliver(&partial, settings.format, &settings.outputs, start);
            std::process::exit(128 + number);
        }
    };
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    report.scan = scan_section;
    // The transcript is complete once every process is gone: moved into place before the
    // reports that name it.
    if let Some(t) = &transcript
        && let Err(e) = t.finish()
    {
        report.transcript = None;
        let _ = writeln!(std::io::stderr(), "mcp-stdio-guard: error: {e}");
    }
    if let Ok(cwd) = std::env::current_dir() {
        mcp_stdio_guard::trace::attribute(&mut report, settings.scan.as_deref(), &cwd);
    }
    if let Some(d) = display {
        d.finish(&report);
    }
    deliver(&report, settings.format, &settings.outputs, start)
}

#[cfg(unix)]
type Interrupts = Option<(
    tokio::signal::unix::Signal,
    tokio::signal::unix::Signal,
    tokio::signal::unix::Signal,
)>;

/// Installs the handlers for SIGINT, SIGTERM and SIGHUP (inside the runtime).
#[cfg(unix)]
fn interrupts() -> Interrupts {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) {
        (Ok(int), Ok(term), Ok(hup)) => Some((int, term, hup)),
        _ => None,
    }
}

#[cfg(windows)]
type Interrupts = Option<(
    tokio::signal::windows::CtrlC,
    tokio::signal::windows::CtrlBreak,
    tokio::signal::windows::CtrlClose,
)>;

/// Installs the handlers for Ctrl-C, Ctrl-Break and the console closing (inside the runtime).
#[cfg(windows)]
fn interrupts() -> Interrupts {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
    match (ctrl_c(), ctrl_break(), ctrl_close()) {
        (Ok(int), Ok(brk), Ok(close)) => Some((int, brk, close)),
        _ => None,
    }
}

/// Waits for SIGINT, SIGTERM or SIGHUP to the guard (a cancelled CI job, Ctrl-C; on Windows
/// Ctrl-C, Ctrl-Break or the console closing) and returns its number (Ctrl-Break counts as 21).
/// Without handlers it never returns.
async fn interrupted(signals: Interrupts) -> i32 {
    let Some((mut int, mut term, mut hup)) = signals else {
        return std::future::pending().await;
    };
    loop {
        tokio::select! {
            _ = int.recv() => return 2,
            _ = term.recv() => {
                // Windows: the guard's own CTRL_BREAK to a server group that just vanished is
                // delivered to the whole console, the guard included.
                if runtime::process::guard_sent_break_recently() {
                    continue;
                }
                return if cfg!(windows) { 21 } else { 15 };
            }
            _ = hup.recv() => return 1,
        }
    }
}

/// Writes to stdout; a closed pipe is not an error worth a panic.
pub(crate) fn write_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
