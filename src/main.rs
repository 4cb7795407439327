//! The binary: parse arguments → run → render → exit code. The only place that writes stdout.
//! A closed stdout pipe (e.g. `| head`) ends the program quietly with the run's exit code.

use mcp_stdio_guard::cli::{self, Command, Format, ScanSettings, Settings};
use mcp_stdio_guard::exit::{Exit, Failure};
use mcp_stdio_guard::redact::Redactor;
use mcp_stdio_guard::report::{self, Context, Report, ScanSection, Target};
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
    // The scan runs first: a bad --scan path fails before anything is spawned.
    let scan_section = settings.scan.as_ref().map(scan).transpose()?;
    runtime::process::become_subreaper();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::internal(format!("cannot start the async runtime: {e}")))?;
    let record = rt.block_on(runtime::run_server(&settings.spec, 1));
    rt.shutdown_timeout(std::time::Duration::from_millis(200));

    let mut secrets = Redactor::new();
    for value in &settings.env_values {
        secrets.add(value);
    }
    let context = Context {
        argv: settings.argv.clone(),
        cwd_requested: settings.cwd_requested.clone(),
        cwd_resolved: settings.cwd_resolved.clone(),
        protocol: settings.spec.session.protocol.clone(),
        timeout_ms: settings.spec.session.timeout.as_millis() as u64,
        repeat: 1,
        profile: "custom".into(),
        env_names: settings.env_names.clone(),
        operations: settings
            .spec
            .operations
            .iter()
            .map(|o| {
                (
                    o.method.clone(),
                    o.params.is_some(),
                    o.source.to_string(),
                    o.safe_tool_call_name.clone().unwrap_or_default(),
                )
            })
            .collect(),
    };
    let report = Report {
        targets: vec![Target::new(context, vec![record], &secrets)],
        scan: scan_section,
    };
    write_stdout(&render(&report, settings.format));
    Ok(report.exit())
}

/// Writes to stdout; a closed pipe is not an error worth a panic.
fn write_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
