//! `mcp-stdio-guard scan`: its arguments resolved into what the scan and the reports use.

use super::Failure;
use crate::cli::{ReportArgs, ScanArgs};
use crate::report::outputs::{self, Requested};
use crate::report::{Format, Outputs};
use crate::scan::ScanOptions;

/// A resolved `scan` (or the `--scan` part of a runtime run).
#[derive(Debug, Clone)]
pub struct ScanSettings {
    pub format: Format,
    pub outputs: Outputs,
    pub options: ScanOptions,
    /// Findings fail the run (`scan` always; runtime mode with `--fail-on-static`).
    pub fail_on_findings: bool,
}

pub(super) fn resolve(args: ScanArgs) -> Result<ScanSettings, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}")))?;
    let mut options = ScanOptions::new(args.paths, cwd.clone());
    options.include_vendored = args.include_vendored;
    options.force_exclude = args.force_exclude;
    options.max_file_size = args.max_file_size;
    options.select = rule_ids("--select", &args.select)?;
    options.ignore = rule_ids("--ignore", &args.ignore)?;
    let (format, outputs) = stream_and_files(args.report, args.json, args.format, &cwd)?;
    Ok(ScanSettings {
        format,
        outputs,
        options,
        fail_on_findings: true,
    })
}

/// The main stream's format (`--json`, `--format`, else the default) and the report files of a
/// subcommand that is not a run (`scan`, `merge`).
pub(super) fn stream_and_files(
    report: ReportArgs,
    json: bool,
    format: Option<Format>,
    cwd: &std::path::Path,
) -> Result<(Format, Outputs), Failure> {
    let requested = Requested {
        sarif: report.sarif,
        junit: report.junit,
        json: report.json_file,
        no_github: report.no_github,
    };
    let format = if json {
        Format::Json
    } else {
        format.unwrap_or_else(|| outputs::default_format(requested.no_github))
    };
    let outputs = outputs::resolve_outputs(&requested, format, cwd)?;
    Ok((format, outputs))
}

/// Static-scan rule ids from `--select`/`--ignore`.
fn rule_ids(flag: &str, ids: &[String]) -> Result<Vec<&'static crate::catalog::Rule>, Failure> {
    ids.iter()
        .map(|id| id.trim())
        .filter(|id| !id.is_empty())
        .map(|id| {
            crate::scan::rules().find(|r| r.code == id).ok_or_else(|| {
                let known: Vec<&str> = crate::scan::rules().map(|r| r.code).collect();
                Failure::usage(format!(
                    "{flag} {id:?} is not a static-scan rule id: use one of {}",
                    known.join(", ")
                ))
            })
        })
        .collect()
}
