//! The command line as clap types it, and nothing else: [`crate::settings`] resolves it (with the
//! config files it names) into what a run uses. The help line and default of every run flag come
//! from the settings table (`settings::command`), so they are not written here.

use crate::report::Format;
use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Examples:
  mcp-stdio-guard -- node ./server.js
  mcp-stdio-guard --request tools/list --json -- python -m my_server
  mcp-stdio-guard --profile registry --protocol all -- node ./server.js
  mcp-stdio-guard --config mcp-stdio-guard.config.json
  mcp-stdio-guard --mcp-config ~/.cursor/mcp.json [--server NAME]
  mcp-stdio-guard --registry servers.jsonl --jobs 8 --json
  mcp-stdio-guard explain stdout-non-json

Exit codes: 0 pass (warnings allowed), 1 error-level findings, 2 usage or config error, 3 internal failure.";

#[derive(Parser, Debug)]
#[command(
    name = "mcp-stdio-guard",
    version,
    about = "Catch stdout pollution, JSON-RPC framing errors and lifecycle bugs in MCP stdio servers",
    override_usage = "mcp-stdio-guard [OPTIONS] -- <COMMAND> [ARGS]...\n       mcp-stdio-guard [OPTIONS] --config <PATH>\n       mcp-stdio-guard [OPTIONS] --mcp-config <FILE> [--server <NAME>]\n       mcp-stdio-guard [OPTIONS] --registry <FILE> [--jobs <N>]\n       mcp-stdio-guard scan [OPTIONS] [PATH]...\n       mcp-stdio-guard explain [CODE]\n       mcp-stdio-guard replay <TRANSCRIPT>\n       mcp-stdio-guard merge <REPORT>...",
    args_conflicts_with_subcommands = true,
    args_override_self = true,
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub subcommand: Option<Sub>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Print the documentation of an issue code (or list every code).
    Explain {
        /// The issue code, e.g. stdout-non-json. Without it, every code is listed.
        code: Option<String>,
    },
    /// Scan source files for code that writes to stdout (exit 1 when anything is found).
    Scan(ScanArgs),
    /// Print a --transcript file readably: every process's stdin, stdout and stderr in order.
    Replay {
        /// The transcript file (JSON lines).
        file: PathBuf,
    },
    /// Join the JSON reports of --shard runs into the report one run would have written (and SARIF, JUnit, step summary from it).
    Merge(MergeArgs),
}

/// `mcp-stdio-guard merge`: the shards of a sharded run, joined.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The JSON reports of the shards (each shard's --json-file).
    #[arg(value_name = "REPORT", required = true)]
    pub reports: Vec<PathBuf>,
    /// Output format of the main stream (text: one line per server).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Print the joined JSON report (same as --format json).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// `mcp-stdio-guard scan`: the static scan on its own, as pre-commit and CI call it.
#[derive(Args, Debug)]
pub struct ScanArgs {
    /// Files or folders to scan.
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Print JSON (same as --format json).
    #[arg(long)]
    pub json: bool,
    /// Report only these rule ids (comma-separated or repeated).
    #[arg(long, value_name = "RULE", value_delimiter = ',')]
    pub select: Vec<String>,
    /// Never report these rule ids (comma-separated or repeated).
    #[arg(long, value_name = "RULE", value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Also scan node_modules, virtualenvs, build output and vendored folders.
    #[arg(long)]
    pub include_vendored: bool,
    /// Apply the exclusions (.gitignore, vendored folders) to files named on the command line too.
    #[arg(long)]
    pub force_exclude: bool,
    /// Skip files larger than this many bytes (with a note).
    #[arg(long, value_name = "BYTES", default_value_t = crate::scan::DEFAULT_MAX_FILE_SIZE)]
    pub max_file_size: u64,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Report files and the GitHub integration, shared by a run and `scan`: one invocation writes
/// every file it is given while the terminal still gets the main stream.
#[derive(Args, Debug, Default, Clone)]
pub struct ReportArgs {
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    #[arg(long = "json-file", value_name = "FILE")]
    pub json_file: Option<PathBuf>,
    #[arg(long)]
    pub no_github: bool,
}

/// A run's flags. No defaults here: a flag not given is `None` (or false, or empty), and the
/// settings table layers the config file, the profile and the default under it.
#[derive(Args, Debug, Default)]
pub struct RunArgs {
    #[arg(long, value_name = "PATH")]
    pub config: Vec<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub mcp_config: Vec<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub registry: Vec<PathBuf>,
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    #[arg(long, value_name = "N")]
    pub jobs: Option<u64>,
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    #[arg(long, value_name = "N")]
    pub repeat: Option<u64>,
    #[arg(long, overrides_with = "no_capability_probes")]
    pub capability_probes: bool,
    #[arg(long, overrides_with = "capability_probes")]
    pub no_capability_probes: bool,
    #[arg(long, value_name = "N")]
    pub max_pages: Option<u64>,
    #[arg(long, value_name = "RULE")]
    pub tool_name_rule: Option<String>,
    #[arg(long)]
    pub no_discover: bool,
    #[arg(long, value_name = "LIST")]
    pub adversarial_probes: Vec<String>,
    #[arg(long, value_name = "NAME")]
    pub adversarial_probe: Vec<String>,
    #[arg(long)]
    pub effects: bool,
    #[arg(long, value_name = "NAME[=TEMPLATE]")]
    pub effects_env: Vec<String>,
    #[arg(long, value_name = "POLICY", value_parser = ["observe", "contain"])]
    pub effects_policy: Option<String>,
    #[arg(long, overrides_with = "no_unbuffered_rerun")]
    pub unbuffered_rerun: bool,
    #[arg(long, overrides_with = "unbuffered_rerun")]
    pub no_unbuffered_rerun: bool,
    #[arg(long, value_name = "VERSION")]
    pub protocol: Option<String>,
    #[arg(long, value_name = "MS")]
    pub timeout: Option<u64>,
    #[arg(long, value_name = "N")]
    pub max_stdout_bytes: Option<u64>,
    #[arg(long, value_name = "N")]
    pub max_stdout_line_bytes: Option<u64>,
    #[arg(long, value_name = "N")]
    pub max_stderr_bytes: Option<u64>,
    #[arg(id = "request", long = "request", value_name = "METHOD")]
    pub requests: Vec<String>,
    #[arg(long = "params", value_name = "JSON")]
    pub params: Vec<String>,
    #[arg(long)]
    pub json: bool,
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    #[arg(long, value_name = "PATH")]
    pub cwd: Option<PathBuf>,
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    #[arg(long, value_name = "MS")]
    pub quiet_ms: Option<u64>,
    #[arg(long, value_name = "MS")]
    pub shutdown_grace: Option<u64>,
    #[arg(long)]
    pub allow_sigterm_shutdown: bool,
    #[arg(long)]
    pub allow_operation_errors: bool,
    #[arg(long = "scan", value_name = "PATH")]
    pub scan: Option<PathBuf>,
    #[arg(long)]
    pub fail_on_static: bool,
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
    /// The server command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// `--format` takes the report formats by name; each variant's doc is its help.
impl ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &Format::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()).help(self.help()))
    }
}
