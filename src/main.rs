//! The binary: parse arguments → run → render → exit code. The only place that writes stdout.
//! A closed stdout pipe (e.g. `| head`) ends the program quietly with the run's exit code.

use mcp_stdio_guard::cli::{self, Command, Format, ScanSettings, Settings};
use mcp_stdio_guard::exit::{Exit, Failure};
use mcp_stdio_guard::report::{self, Report, ScanSection};
use mcp_stdio_guard::{catalog, runtime};
use std::io::Write;

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
            let report = Report {
                targets: Vec::new(),
                scan: Some(scan(&settings)?),
            };
            write_stdout(&render(&report, settings.format));
            Ok(report.exit())
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
    Ok(ScanSection::new(paths, settings.fail_on_findings, result))
}

fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Text => report::text::render(report),
        Format::Json => report::json::render(report),
    }
}

fn run(settings: Settings) -> Result<Exit, Failure> {
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
    write_stdout(&render(&report, settings.format));
    Ok(report.exit())
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
