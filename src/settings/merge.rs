//! `mcp-stdio-guard merge`: its arguments resolved into the shards' reports and the outputs.

use super::Failure;
use crate::cli::MergeArgs;
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
    let (format, outputs) =
        super::scan::stream_and_files(args.report, args.json, args.format, &cwd)?;
    Ok(MergeSettings {
        reports: args.reports,
        format,
        outputs,
    })
}
