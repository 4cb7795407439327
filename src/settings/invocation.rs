//! The settings of the whole invocation, resolved once: the output format, the report files and
//! the GitHub integration, the static scan, `--jobs` — from the flags, then the run's own config
//! file (the only `--config`, or the one shared by `--mcp-config`/`--registry`), then its profile.
//! A server's config among several never sets them (a note says so).

use super::file::FileConfig;
use super::table::{self, Layers, Origin};
use super::{Failure, Profile};
use crate::cli::RunArgs;
use crate::report::outputs::{self, Requested};
use crate::report::{Format, Outputs};
use clap::ArgMatches;
use std::path::{Path, PathBuf};

/// How many servers (of a registry list, config files, `mcpServers` files, or revisions of
/// `--protocol all`) run at once without `--jobs`: one per core. More would starve each server of
/// CPU (a Python SDK server needs about 1.5 s of CPU to import) and turn load into false
/// timeouts; the busy-aware deadlines absorb the rest.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .max(1)
}

/// The invocation-wide settings.
pub(super) struct Invocation {
    pub format: Format,
    pub outputs: Outputs,
    pub profile: Profile,
    pub scan: Option<PathBuf>,
    pub fail_on_static: bool,
    pub jobs: usize,
}

/// The profile of a source: `--profile`, else the config file's, else `custom`.
pub(super) fn profile(m: &ArgMatches, cfg: &FileConfig) -> Result<Profile, Failure> {
    let layers = Layers {
        matches: m,
        config: cfg,
        profile: Profile::Custom,
    };
    let name = layers.text(&table::PROFILE).unwrap_or_default();
    Profile::parse(&name).ok_or_else(|| {
        Failure::usage(format!(
            "profile {name:?} is unknown: use one of {}",
            Profile::NAMES.join(", ")
        ))
    })
}

pub(super) fn resolve(
    args: &RunArgs,
    m: &ArgMatches,
    cfg: &FileConfig,
    here: &Path,
) -> Result<Invocation, Failure> {
    let profile = profile(m, cfg)?;
    let layers = Layers {
        matches: m,
        config: cfg,
        profile,
    };
    let jobs = match layers.count(&table::JOBS) {
        None => default_jobs(),
        Some(n @ 1..=1024) => n as usize,
        Some(n) => {
            return Err(Failure::usage(format!(
                "--jobs {n} is out of range: use 1 to 1024 servers at once"
            )));
        }
    };
    let requested = Requested {
        sarif: args.report.sarif.clone(),
        junit: args.report.junit.clone(),
        json: args.report.json_file.clone(),
        no_github: layers.bool(&table::NO_GITHUB),
    };
    let format = match args.format {
        Some(format) => format,
        None if layers.bool(&table::JSON) => Format::Json,
        None => outputs::default_format(requested.no_github),
    };
    let outputs = outputs::resolve_outputs(&requested, format, here)?;
    let scan = scan_path(&layers)?;
    let fail_on_static = layers.bool(&table::FAIL_ON_STATIC);
    if args.fail_on_static && scan.is_none() {
        return Err(Failure::usage(
            "--fail-on-static needs a scan path: add --scan <path> (or \"scan\" in the config file)",
        ));
    }
    Ok(Invocation {
        format,
        outputs,
        profile,
        scan,
        fail_on_static,
        jobs,
    })
}

/// `--scan` (relative to the working directory) over the config's `scan` (relative to the
/// config file); either must exist before anything runs.
fn scan_path(layers: &Layers) -> Result<Option<PathBuf>, Failure> {
    match layers.path(&table::SCAN) {
        None => Ok(None),
        Some((flag, Origin::Flag)) => {
            let full = std::env::current_dir()
                .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}")))?
                .join(&flag);
            if let Err(e) = std::fs::metadata(&full) {
                let why = match e.kind() {
                    std::io::ErrorKind::NotFound => "no such file or folder".to_string(),
                    _ => e.to_string(),
                };
                return Err(Failure::usage(format!(
                    "--scan {}: {why}; pass the server's source folder",
                    flag.display()
                )));
            }
            Ok(Some(flag))
        }
        Some((p, _)) if !p.exists() => Err(Failure::usage(format!(
            "config scan path {} does not exist: point \"scan\" at the server's source folder",
            p.display()
        ))),
        Some((p, _)) => Ok(Some(p)),
    }
}
