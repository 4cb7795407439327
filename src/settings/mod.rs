//! What a run uses, resolved in one place from the command line as clap typed it ([`crate::cli`])
//! and the files it names. Every setting is a row of [`table`]; each is layered the same way: a
//! flag given on the command line wins, then the config file, then the profile's preset, then the
//! built-in default. Everything is validated here, before anything is spawned; every bad input
//! is a one-line [`Failure`] with exit code 2.
//!
//! An invocation checks one or more servers. Settings that belong to the whole invocation (the
//! output format, report files, the static scan, `--jobs`) are resolved once ([`invocation`]),
//! from the flags and the run's own config file; each source of servers (the command, each
//! `--config`, each `--mcp-config`, each registry line) is resolved with its own settings
//! ([`target`]), and the sources are merged ([`sources`]).

pub mod client;
mod effects;
pub mod file;
mod invocation;
mod merge;
pub mod profile;
mod scan;
mod sources;
pub mod table;
mod target;

pub use invocation::default_jobs;
pub use merge::MergeSettings;
pub use profile::Profile;
pub use scan::ScanSettings;
pub use target::probe_jobs;

use crate::cli::{Cli, Sub};
use crate::exit::Failure;
use crate::report::{ConfigInfo, Format, Outputs};
use crate::runtime::RunSpec;
use clap::{CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::path::PathBuf;

/// The `--protocol` value for every legacy revision in turn.
pub const ALL_REVISIONS: &str = "all";

/// What `main` should do.
#[derive(Debug)]
pub enum Command {
    /// Print this text to stdout and exit 0 (`--help`, `--version`).
    Print(String),
    Explain(Option<String>),
    Run(Box<Settings>),
    Scan(Box<ScanSettings>),
    /// `replay FILE`: print a transcript.
    Replay(PathBuf),
    Merge(Box<MergeSettings>),
}

/// One server to check.
#[derive(Debug, Clone)]
pub struct TargetSettings {
    /// The `mcpServers` key, or empty for a command given directly.
    pub name: String,
    pub spec: RunSpec,
    /// The command as given (program first), for reports (redacted there).
    pub argv: Vec<String>,
    pub cwd_requested: Option<PathBuf>,
    pub cwd_resolved: PathBuf,
    /// Names of the variables set for the server (their values are secrets).
    pub env_names: Vec<String>,
    /// The values, for scrubbing reports.
    pub env_values: Vec<String>,
    /// Fresh processes to run (`--repeat`).
    pub repeat: u32,
    /// The settings this server was checked with, for its report section (a run of several
    /// config files mixes profiles and configs).
    pub profile: Profile,
    pub config: ConfigInfo,
    pub adversarial_probes: Vec<String>,
    /// The `--mcp-config` file and the server's key in it (CI reports anchor findings there).
    pub mcp_server: Option<(PathBuf, String)>,
}

/// A resolved invocation: one or more servers and how to report them.
#[derive(Debug, Clone)]
pub struct Settings {
    pub format: Format,
    /// Report files and the GitHub integration.
    pub outputs: Outputs,
    /// The invocation's profile (`--profile`, or the run's own config file's); each server
    /// keeps its own in [`TargetSettings::profile`].
    pub profile: Profile,
    pub targets: Vec<TargetSettings>,
    /// Servers checked at once.
    pub jobs: usize,
    /// Static scan path (`--scan`, config `scan`/`scanPath`) and whether its findings fail.
    pub scan: Option<PathBuf>,
    pub fail_on_static: bool,
    /// Things the user should know that are not findings (skipped `mcpServers` entries,
    /// settings a server's config cannot set for the whole run).
    pub notes: Vec<String>,
    /// `--shard K/N`: the shard, and the positions of its targets in the whole list.
    pub shard: Option<(crate::shard::Shard, Vec<usize>)>,
}

/// The clap command with the help of every run flag taken from the settings table.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command();
    // The report flags a run shares with `scan`.
    let shared = [
        &table::SARIF,
        &table::JUNIT,
        &table::JSON_FILE,
        &table::NO_GITHUB,
    ];
    for (id, help) in table::flag_help() {
        if shared.iter().any(|s| s.flags[0] == id) {
            for sub in ["scan", "merge"] {
                let help = help.clone();
                cmd = cmd.mut_subcommand(sub, |c| c.mut_arg(id, |a| a.help(help)));
            }
        }
        cmd = cmd.mut_arg(id, |a| a.help(help));
    }
    cmd
}

/// Parses the command line into what to do. `--help`/`--version` come back as text to print.
pub fn parse<I, T>(args: I) -> Result<Command, Failure>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = match command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(err) => return clap_failure(err),
    };
    let cli = Cli::from_arg_matches(&matches).map_err(|e| Failure::usage(one_line(&e)))?;
    match cli.subcommand {
        Some(Sub::Explain { code }) => Ok(Command::Explain(code)),
        Some(Sub::Scan(args)) => scan::resolve(args).map(|s| Command::Scan(Box::new(s))),
        Some(Sub::Replay { file }) => Ok(Command::Replay(file)),
        Some(Sub::Merge(args)) => merge::resolve(args).map(|m| Command::Merge(Box::new(m))),
        None => sources::resolve(cli.run, &matches).map(|s| Command::Run(Box::new(s))),
    }
}

fn clap_failure(err: clap::Error) -> Result<Command, Failure> {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            Ok(Command::Print(err.render().to_string()))
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => Err(Failure::usage(
            "no server command given: pass it after `--`, e.g. `mcp-stdio-guard -- node server.js` (see --help)",
        )),
        _ => Err(Failure::usage(one_line(&err))),
    }
}

/// The first line of a clap error, without its `error: ` prefix, plus a pointer to --help.
fn one_line(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let first = rendered
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .trim()
        .to_string();
    let tip = rendered
        .lines()
        .find_map(|l| l.trim().strip_prefix("tip: "))
        .map(|t| format!("; {t}"))
        .unwrap_or_default();
    format!("{first}{tip} (see --help)")
}

#[cfg(test)]
pub(crate) mod tests;
