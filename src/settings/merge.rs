//! `mcp-stdio-guard merge`: its arguments resolved into the shards' reports and the outputs.

use super::Failure;
use crate::cli::MergeArgs;
use crate::report::outputs::{self, Requested};
use crate::report::{Format, Outputs};
use std::path::PathBuf;

/// A resolved `merge`.
#[derive(Debug, Clone)]
pub struct MergeSettings {
    pub reports: Vec<PathBuf>,
    pub format: Format,
    pub outputs: Outputs,
}

pub(super) fn resolve(args: MergeArgs) -> Result<MergeSettings, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}")))?;
    let requested = Requested {
        sarif: args.report.sarif,
        junit: args.report.junit,
        json: args.report.json_file,
        no_github: args.report.no_github,
    };
    let format = if args.json {
        Format::Json
    } else {
        args.format
            .unwrap_or_else(|| outputs::default_format(requested.no_github))
    };
    let outputs = outputs::resolve_outputs(&requested, format, &cwd)?;
    Ok(MergeSettings {
        reports: args.reports,
        format,
        outputs,
    })
}
