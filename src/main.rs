//! The binary: parse arguments → run → render → exit code. The only place that writes stdout
//! and report files (with `deliver.rs`). A closed stdout pipe (e.g. `| head`) ends the program
//! quietly with the run's exit code.

mod deliver;

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
        tokio::select! {
            report = mcp_stdio_guard::run::check(settings.clone(), &judged) => Ok(report),
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
            let _ = deliver(&partial, settings.format, &settings.outputs, start);
            std::process::exit(128 + number);
        }
    };
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    report.scan = scan_section;
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
