//! Two stages of arguments: clap [`Cli`] mirrors the command line as typed; [`Settings`] is what a
//! run uses, resolved and validated before anything is spawned. Every bad input becomes a
//! one-line [`Failure`] with exit code 2.

use crate::exit::Failure;
use crate::protocol;
pub use crate::report::outputs::{Outputs, default_format, github_actions, resolve_outputs};
use crate::runtime::probes::requests::OperationSpec;
use crate::scan::ScanOptions;
pub use crate::settings::Settings;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Default limits. They protect the guard and must never fail a legitimate server: a single
/// `tools/list` line of several hundred KiB is legal, so the line limit is 4 MiB (the reference
/// tool's 256 KiB fails real servers) and the total 64 MiB (the reference: 1 MiB).
pub const DEFAULT_MAX_STDOUT_LINE_BYTES: u64 = 4 * 1024 * 1024;
pub const DEFAULT_MAX_STDOUT_BYTES: u64 = 64 * 1024 * 1024;
pub const DEFAULT_MAX_STDERR_BYTES: u64 = 1024 * 1024;
pub const DEFAULT_TIMEOUT_MS: u64 = 5000;
pub const DEFAULT_QUIET_MS: u64 = 1000;
pub const DEFAULT_SHUTDOWN_GRACE_MS: u64 = 3000;
pub const DEFAULT_MAX_PAGES: u64 = 100;

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

/// A resolved `merge`.
#[derive(Debug, Clone)]
pub struct MergeSettings {
    pub reports: Vec<PathBuf>,
    pub format: Format,
    pub outputs: Outputs,
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
    /// Also write a SARIF 2.1.0 report (GitHub code scanning) to this file.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Also write a JUnit XML report (CI test tabs) to this file.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the JSON report to this file.
    #[arg(long = "json-file", value_name = "FILE")]
    pub json_file: Option<PathBuf>,
    /// No GitHub annotations or step summary, even when GITHUB_ACTIONS=true.
    #[arg(long)]
    pub no_github: bool,
}

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// Read settings (and the command) from a JSON config file; flags override it. Repeatable:
    /// each config file with a command is one server, all checked in one run (see --jobs).
    #[arg(long, value_name = "PATH")]
    pub config: Vec<PathBuf>,
    /// Check the stdio servers of an MCP client config (Claude Desktop, Cursor, VS Code).
    /// Repeatable.
    #[arg(long, value_name = "FILE")]
    pub mcp_config: Vec<PathBuf>,
    /// Check every server of a registry list: JSON lines, each a guard config (with an optional
    /// "name") or an MCP client config ("mcpServers"/"servers"). Repeatable.
    #[arg(long, value_name = "FILE")]
    pub registry: Vec<PathBuf>,
    /// With --mcp-config or --registry: check only the server(s) of this name.
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    /// Servers checked at once (default: the number of cores).
    #[arg(long, value_name = "N")]
    pub jobs: Option<u64>,
    /// Preset: custom (default), smoke, registry, ci, strict.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Run the server N times in fresh processes and report drift between runs.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: u64,
    /// Probe the list methods of advertised capabilities (the default except in `smoke`).
    #[arg(long, overrides_with = "no_capability_probes")]
    pub capability_probes: bool,
    /// Do not probe advertised capabilities.
    #[arg(long, overrides_with = "capability_probes")]
    pub no_capability_probes: bool,
    /// Pages followed per list method before stopping.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_PAGES)]
    pub max_pages: u64,
    /// Tool-name contract: spec (strict-client names are warnings) or strict-client (errors).
    #[arg(long, value_name = "RULE", default_value = "spec")]
    pub tool_name_rule: String,
    /// Do not probe `server/discover` before `initialize` (legacy-era servers only).
    #[arg(long)]
    pub no_discover: bool,
    /// Adversarial probes to run, comma-separated: all, none, or names (invalid-method, invalid-params, notification, malformed-json, debug-line, banner-same-line, truncated-eof, concatenated-objects, tools-call-string-params, boolean-id, batch-array, crlf, oversized-line, invalid-utf8). Each runs in a fresh server process.
    #[arg(long, value_name = "LIST")]
    pub adversarial_probes: Vec<String>,
    /// One adversarial probe to run (repeatable).
    #[arg(long, value_name = "NAME")]
    pub adversarial_probe: Vec<String>,
    /// The no-effect proof: a loopback canary proxy (HTTP_PROXY/HTTPS_PROXY/ALL_PROXY), the MCP_STDIO_GUARD_EFFECTS log and a process watch observe every action of the server; any effect while it handles a rejected frame is an error.
    #[arg(long)]
    pub effects: bool,
    /// With --effects: also point this variable at the canary (repeatable): NAME (value http://127.0.0.1:PORT) or NAME=TEMPLATE where {canary} stands for 127.0.0.1:PORT, e.g. API_URL=http://{canary}/v1.
    #[arg(long, value_name = "NAME[=TEMPLATE]")]
    pub effects_env: Vec<String>,
    /// With --effects (implies it): what a network call the server makes while it handles hostile input gets from the system-call observer: contain (the default: refused with ECONNREFUSED, nothing leaves the machine) or observe (recorded and let through).
    #[arg(long, value_name = "POLICY", value_parser = ["observe", "contain"])]
    pub effects_policy: Option<String>,
    /// Run the server a second time in the other stdio buffering mode (PYTHONUNBUFFERED set or removed) and report pollution only one mode shows (on in `strict`).
    #[arg(long, overrides_with = "no_unbuffered_rerun")]
    pub unbuffered_rerun: bool,
    /// Do not rerun the server in the other buffering mode.
    #[arg(long, overrides_with = "unbuffered_rerun")]
    pub no_unbuffered_rerun: bool,
    /// MCP protocol revision to request, or `all` for each legacy revision in turn.
    #[arg(long, value_name = "VERSION", default_value = protocol::DEFAULT_REVISION)]
    pub protocol: String,
    /// Timeout for initialize and for each request, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_TIMEOUT_MS)]
    pub timeout: u64,
    /// Total stdout the guard reads before stopping the run (protects the guard).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STDOUT_BYTES)]
    pub max_stdout_bytes: u64,
    /// Longest single stdout line the guard buffers (protects the guard; legal lines can be large).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STDOUT_LINE_BYTES)]
    pub max_stdout_line_bytes: u64,
    /// stderr bytes retained for the report (a tail; more is never a failure).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STDERR_BYTES)]
    pub max_stderr_bytes: u64,
    /// Send an MCP request after initialization (repeatable), e.g. tools/list.
    #[arg(long = "request", value_name = "METHOD")]
    pub requests: Vec<String>,
    /// JSON params (an object) for the --request just before it.
    #[arg(long = "params", value_name = "JSON")]
    pub params: Vec<String>,
    /// Print the JSON report (same as --format json).
    #[arg(long)]
    pub json: bool,
    /// Output format of the main stream.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// Working directory for the server command.
    #[arg(long, value_name = "PATH")]
    pub cwd: Option<PathBuf>,
    /// Set an environment variable for the server (repeatable); values never appear in reports.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Quiet window: how long to keep watching stdout for late output after the last request.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_QUIET_MS)]
    pub quiet_ms: u64,
    /// How long the server may take to exit after stdin closes before it gets SIGTERM.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_SHUTDOWN_GRACE_MS)]
    pub shutdown_grace: u64,
    /// Report a server that only exits on SIGTERM as a warning instead of an error.
    #[arg(long)]
    pub allow_sigterm_shutdown: bool,
    /// Report error replies to explicit operations as warnings instead of errors.
    #[arg(long)]
    pub allow_operation_errors: bool,
    /// Also scan this source file or folder for stdout writes (findings are warnings).
    #[arg(long = "scan", value_name = "PATH")]
    pub scan: Option<PathBuf>,
    /// Make --scan findings errors that fail the run.
    #[arg(long)]
    pub fail_on_static: bool,
    /// Check only shard K of N of the servers (e.g. 2/4): a deterministic, balanced slice by a hash of each server's name, for CI matrices; `mcp-stdio-guard merge` joins the shards' JSON reports.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Write the raw exchange of every server process (stdin, stdout, stderr, timestamped; JSON lines) to this file; `mcp-stdio-guard replay FILE` prints it.
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
    /// The server command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// The format of the main stream (stdout).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The human report.
    Text,
    /// The JSON report (the reference tool's contract).
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// JUnit XML.
    Junit,
    /// The human report, then GitHub workflow-command annotations (the default when
    /// GITHUB_ACTIONS=true).
    Github,
}

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

/// A resolved `scan` (or the `--scan` part of a runtime run).
#[derive(Debug, Clone)]
pub struct ScanSettings {
    pub format: Format,
    pub outputs: Outputs,
    pub options: ScanOptions,
    /// Findings fail the run (`scan` always; runtime mode with `--fail-on-static`).
    pub fail_on_findings: bool,
}

/// Parses the command line into what to do. `--help`/`--version` come back as text to print.
pub fn parse<I, T>(args: I) -> Result<Command, Failure>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = match Cli::command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(err) => return clap_failure(err),
    };
    let cli = Cli::from_arg_matches(&matches).map_err(|e| Failure::usage(one_line(&e)))?;
    match cli.subcommand {
        Some(Sub::Explain { code }) => Ok(Command::Explain(code)),
        Some(Sub::Scan(args)) => resolve_scan(args).map(|s| Command::Scan(Box::new(s))),
        Some(Sub::Replay { file }) => Ok(Command::Replay(file)),
        Some(Sub::Merge(args)) => resolve_merge(args).map(|m| Command::Merge(Box::new(m))),
        None => crate::settings::resolve(cli.run, &matches).map(|s| Command::Run(Box::new(s))),
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

fn resolve_scan(args: ScanArgs) -> Result<ScanSettings, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}")))?;
    let mut options = ScanOptions::new(args.paths, cwd.clone());
    options.include_vendored = args.include_vendored;
    options.force_exclude = args.force_exclude;
    options.max_file_size = args.max_file_size;
    options.select = rule_ids("--select", &args.select)?;
    options.ignore = rule_ids("--ignore", &args.ignore)?;
    let format = if args.json {
        Format::Json
    } else {
        args.format.unwrap_or_else(|| default_format(&args.report))
    };
    let outputs = resolve_outputs(&args.report, format, &cwd)?;
    Ok(ScanSettings {
        format,
        outputs,
        options,
        fail_on_findings: true,
    })
}

fn resolve_merge(args: MergeArgs) -> Result<MergeSettings, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}")))?;
    let format = if args.json {
        Format::Json
    } else {
        args.format.unwrap_or_else(|| default_format(&args.report))
    };
    let outputs = resolve_outputs(&args.report, format, &cwd)?;
    Ok(MergeSettings {
        reports: args.reports,
        format,
        outputs,
    })
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

/// Pairs each `--params` with the `--request` just before it on the command line.
pub(crate) fn pair_requests(
    requests: &[String],
    params: &[String],
    matches: &ArgMatches,
) -> Result<Vec<OperationSpec>, Failure> {
    let req_idx: Vec<usize> = matches
        .indices_of("requests")
        .map(|i| i.collect())
        .unwrap_or_default();
    let par_idx: Vec<usize> = matches
        .indices_of("params")
        .map(|i| i.collect())
        .unwrap_or_default();
    let mut ops: Vec<OperationSpec> = requests
        .iter()
        .map(|m| OperationSpec {
            method: m.clone(),
            params: None,
            source: "cli-request",
            safe_tool_call_name: None,
        })
        .collect();
    for (raw, idx) in params.iter().zip(par_idx.iter()) {
        let value: Value = serde_json::from_str(raw).map_err(|e| {
            Failure::usage(format!("--params {raw:?} is not valid JSON ({e}): pass a JSON object, e.g. --params '{{\"name\":\"echo\"}}'"))
        })?;
        if !value.is_object() {
            return Err(Failure::usage(format!(
                "--params {raw:?} is not a JSON object: MCP params are objects, e.g. --params '{{\"cursor\":\"abc\"}}'"
            )));
        }
        let owner = req_idx.iter().rposition(|r| r < idx).ok_or_else(|| {
            Failure::usage(format!("--params {raw:?} comes before any --request: put it right after the --request it belongs to"))
        })?;
        if ops[owner].params.is_some() {
            return Err(Failure::usage(format!(
                "--request {} has two --params: give each request at most one",
                ops[owner].method
            )));
        }
        ops[owner].params = Some(value);
    }
    for op in &ops {
        if op.method.trim().is_empty() {
            return Err(Failure::usage(
                "--request needs a method name, e.g. --request tools/list",
            ));
        }
    }
    Ok(ops)
}

/// Checks that the program can be executed, the way the spawn will look for it (`execvp` on
/// Unix; on Windows, `.exe` added to a bare name, the guard's folder, the system folders, PATH).
pub(crate) fn check_program(
    program: &OsStr,
    cwd: &Path,
    path_override: Option<&OsStr>,
) -> Result<(), Failure> {
    let shown = program.to_string_lossy();
    if program.is_empty() {
        return Err(Failure::usage(
            "the server command is empty: pass it after `--`, e.g. `-- node server.js`",
        ));
    }
    if crate::runtime::process::has_separator(program) {
        let full = cwd.join(program);
        return check_executable(&full).map_err(|why| {
            Failure::usage(format!("cannot run the server command {shown}: {why}"))
        });
    }
    let path = path_override
        .map(OsString::from)
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    let mut dirs: Vec<std::path::PathBuf> = Vec::new();
    if cfg!(windows) {
        dirs.extend(
            std::env::current_exe()
                .ok()
                .and_then(|exe| exe.parent().map(Path::to_path_buf)),
        );
        if let Some(root) = std::env::var_os("SystemRoot") {
            let root = std::path::PathBuf::from(root);
            dirs.extend([root.join("System32"), root]);
        }
    }
    let mut searched = vec![path];
    // Windows searches the server's PATH, then the guard's own.
    if cfg!(windows) && path_override.is_some() {
        searched.extend(std::env::var_os("PATH"));
    }
    for path in &searched {
        dirs.extend(std::env::split_paths(path).map(|dir| {
            if dir.as_os_str().is_empty() {
                cwd.to_path_buf()
            } else {
                cwd.join(dir)
            }
        }));
    }
    if dirs
        .iter()
        .any(|dir| check_executable(&dir.join(program)).is_ok())
    {
        return Ok(());
    }
    // Windows runs a batch file (`npx.cmd`) only when it is named with its extension.
    if cfg!(windows) && Path::new(program).extension().is_none() {
        for ext in ["cmd", "bat"] {
            let script = Path::new(program).with_extension(ext);
            if dirs.iter().any(|dir| dir.join(&script).is_file()) {
                return Err(Failure::usage(format!(
                    "command not found: {shown} is the batch script {}, which Windows starts only through cmd: pass `-- cmd /c {shown} ...` (what MCP clients on Windows are configured with)",
                    script.display()
                )));
            }
        }
    }
    Err(Failure::usage(format!(
        "command not found: {shown} is not on PATH; install it or pass its full path after `--`"
    )))
}

#[cfg(unix)]
fn check_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(format!("{} is a directory, not a program", path.display())),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => Err(format!(
            "{} is not executable; chmod +x it or run it through its interpreter (e.g. `-- node {}`)",
            path.display(),
            path.display()
        )),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("{} does not exist ({e})", path.display())),
    }
}

/// Windows: a file as named, or with `.exe` added when the name has no extension.
#[cfg(not(unix))]
fn check_executable(path: &Path) -> Result<(), String> {
    let mut candidates = vec![path.to_path_buf()];
    if path.extension().is_none() {
        candidates.push(path.with_extension("exe"));
    }
    for candidate in &candidates {
        match std::fs::metadata(candidate) {
            Ok(m) if m.is_dir() => {
                return Err(format!("{} is a directory, not a program", path.display()));
            }
            Ok(_) => return Ok(()),
            Err(_) => {}
        }
    }
    Err(format!("{} does not exist", path.display()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The program the tests name as the server (`sh` in their command lines): it must exist.
    const SHELL: &str = if cfg!(windows) { "cmd" } else { "sh" };

    /// Parses a command line, with [`SHELL`] for `sh`.
    pub(crate) fn run(args: &[&str]) -> Result<Settings, Failure> {
        let mut full = vec!["mcp-stdio-guard"];
        full.extend(args.iter().map(|a| if *a == "sh" { SHELL } else { a }));
        match parse(full)? {
            Command::Run(s) => Ok(*s),
            other => panic!("expected a run, got {other:?}"),
        }
    }

    pub(crate) fn usage_error(args: &[&str]) -> String {
        let err = run(args).expect_err("should fail");
        assert_eq!(err.exit, crate::exit::Exit::Usage);
        assert!(!err.message.contains('\n'), "one line: {:?}", err.message);
        err.message
    }

    #[test]
    fn defaults_are_generous() {
        let s = run(&["--", "sh", "-c", "true"]).unwrap();
        let t = &s.targets[0];
        assert_eq!(t.spec.spawn.limits.max_line_bytes, 4 * 1024 * 1024);
        assert_eq!(t.spec.spawn.limits.max_total_bytes, 64 * 1024 * 1024);
        assert_eq!(t.spec.session.protocol, "2025-11-25");
        assert_eq!(
            t.spec.session.timeout,
            std::time::Duration::from_millis(5000)
        );
        assert!(t.spec.probes.capabilities && t.spec.probes.discover);
        assert_eq!(t.repeat, 1);
        // Text, or `github` when these tests run inside GitHub Actions.
        assert_eq!(s.format, default_format(&ReportArgs::default()));
    }

    #[test]
    fn params_pair_with_the_request_before_them() {
        let s = run(&[
            "--request",
            "tools/list",
            "--request",
            "tools/call",
            "--params",
            r#"{"name":"echo"}"#,
            "--",
            "sh",
        ])
        .unwrap();
        let ops = &s.targets[0].spec.operations;
        assert_eq!(ops.len(), 2);
        assert!(ops[0].params.is_none());
        assert_eq!(ops[1].params.as_ref().unwrap()["name"], "echo");
    }

    #[test]
    fn bad_arguments_are_one_line_usage_errors() {
        assert!(
            usage_error(&["--params", "5", "--request", "x", "--", "sh"])
                .contains("not a JSON object")
        );
        assert!(
            usage_error(&["--request", "x", "--params", "5", "--", "sh"])
                .contains("not a JSON object")
        );
        assert!(
            usage_error(&["--request", "x", "--params", "{", "--", "sh"])
                .contains("not valid JSON")
        );
        assert!(
            usage_error(&["--params", "{}", "--request", "x", "--", "sh"])
                .contains("before any --request")
        );
        assert!(usage_error(&["--bogus", "--", "sh"]).contains("--bogus"));
        assert!(
            usage_error(&["--protocol", "1999-01-01", "--", "sh"])
                .contains("not a supported revision")
        );
        assert!(usage_error(&["--timeout", "abc", "--", "sh"]).contains("abc"));
        assert!(usage_error(&["--timeout", "0", "--", "sh"]).contains("greater than 0"));
        assert!(usage_error(&["--env", "NOEQUALS", "--", "sh"]).contains("KEY=VALUE"));
        assert!(usage_error(&[]).contains("no server command"));
        assert!(usage_error(&["--", "definitely-not-a-command-xyz"]).contains("command not found"));
        assert!(usage_error(&["--", "/"]).contains("is a directory"));
        assert!(usage_error(&["--cwd", "/nonexistent-dir-xyz", "--", "sh"]).contains("--cwd"));
    }

    #[test]
    fn effects_policy_turns_the_proof_on_and_takes_observe_or_contain() {
        use crate::runtime::effects::syscalls::Policy;
        let policy = |args: &[&str]| {
            run(args).unwrap().targets[0]
                .spec
                .effects
                .clone()
                .map(|e| e.policy)
        };
        assert_eq!(policy(&["--effects", "--", "sh"]), Some(Policy::Contain));
        assert_eq!(
            policy(&["--effects-policy", "observe", "--", "sh"]),
            Some(Policy::Observe)
        );
        assert_eq!(
            policy(&["--effects", "--effects-policy", "contain", "--", "sh"]),
            Some(Policy::Contain)
        );
        assert!(
            usage_error(&["--effects-policy", "allow", "--", "sh"]).contains("--effects-policy")
        );
    }

    #[test]
    fn effects_flags_turn_the_proof_on_and_name_variables() {
        let s = run(&["--", "sh"]).unwrap();
        assert!(s.targets[0].spec.effects.is_none());
        assert!(!s.targets[0].spec.unbuffered_rerun);
        let s = run(&["--effects", "--", "sh"]).unwrap();
        let e = s.targets[0].spec.effects.clone().unwrap();
        assert!(e.proxy && e.log && e.watch && e.env.is_empty());
        let s = run(&[
            "--effects-env",
            "API_URL=http://{canary}/v1",
            "--effects-env",
            "OTHER",
            "--",
            "sh",
        ])
        .unwrap();
        let e = s.targets[0].spec.effects.clone().unwrap();
        assert_eq!(
            e.env,
            [
                (
                    "API_URL".to_string(),
                    Some("http://{canary}/v1".to_string())
                ),
                ("OTHER".to_string(), None)
            ]
        );
        assert!(e.env_names().contains(&"HTTPS_PROXY".to_string()));
        assert!(
            usage_error(&["--effects-env", "API_URL=http://example.com", "--", "sh"])
                .contains("{canary}")
        );
        let s = run(&["--unbuffered-rerun", "--", "sh"]).unwrap();
        assert!(s.targets[0].spec.unbuffered_rerun);
    }

    #[test]
    fn profiles_are_presets_that_flags_narrow_or_deepen() {
        let s = run(&["--profile", "registry", "--", "sh"]).unwrap();
        assert_eq!((s.targets[0].repeat, s.format), (2, Format::Text));
        assert!(s.targets[0].spec.probes.capabilities);
        let s = run(&["--profile", "registry", "--repeat", "1", "--", "sh"]).unwrap();
        assert_eq!(s.targets[0].repeat, 1);
        let s = run(&["--profile", "smoke", "--", "sh"]).unwrap();
        assert!(!s.targets[0].spec.probes.capabilities);
        let s = run(&["--profile", "smoke", "--capability-probes", "--", "sh"]).unwrap();
        assert!(s.targets[0].spec.probes.capabilities);
        let s = run(&["--profile", "ci", "--", "sh"]).unwrap();
        assert_eq!(s.format, Format::Json);
        assert!(s.fail_on_static && s.adversarial.probes.is_empty());
        let s = run(&["--profile", "ci", "--format", "text", "--", "sh"]).unwrap();
        assert_eq!(s.format, Format::Text);
        let s = run(&["--profile", "strict", "--", "sh"]).unwrap();
        assert_eq!(s.adversarial.probes.len(), 14);
        assert_eq!(s.targets[0].repeat, 2);
        assert!(s.targets[0].spec.unbuffered_rerun);
        assert!(s.targets[0].spec.adversarial.enabled());
        let s = run(&["--profile", "strict", "--no-unbuffered-rerun", "--", "sh"]).unwrap();
        assert!(!s.targets[0].spec.unbuffered_rerun);
        let s = run(&[
            "--profile",
            "strict",
            "--adversarial-probes",
            "none",
            "--",
            "sh",
        ])
        .unwrap();
        assert!(s.adversarial.probes.is_empty());
        let s = run(&[
            "--adversarial-probes",
            "invalid-method,notification",
            "--adversarial-probe",
            "invalid-method",
            "--",
            "sh",
        ])
        .unwrap();
        assert_eq!(s.adversarial.probes, ["invalid-method", "notification"]);
        assert!(usage_error(&["--profile", "fast", "--", "sh"]).contains("unknown"));
        assert!(usage_error(&["--tool-name-rule", "loose", "--", "sh"]).contains("loose"));
        assert!(usage_error(&["--repeat", "0", "--", "sh"]).contains("out of range"));
        assert!(usage_error(&["--adversarial-probe", "fuzz", "--", "sh"]).contains("fuzz"));
        assert!(usage_error(&["--server", "x", "--", "sh"]).contains("--mcp-config"));
    }

    #[test]
    fn protocol_all_expands_into_one_target_per_legacy_revision() {
        let s = run(&["--protocol", "all", "--", "sh", "-c", "true"]).unwrap();
        let revs: Vec<&str> = s
            .targets
            .iter()
            .map(|t| t.spec.session.protocol.as_str())
            .collect();
        assert_eq!(revs, protocol::LEGACY_REVISIONS);
        assert_eq!(s.targets[3].name, format!("{SHELL} -c true @ 2025-11-25"));
        let s = run(&[
            "--no-discover",
            "--max-pages",
            "7",
            "--tool-name-rule",
            "strict-client",
            "--",
            "sh",
        ])
        .unwrap();
        let p = &s.targets[0].spec.probes;
        assert!(!p.discover);
        assert_eq!(p.max_pages, 7);
        assert_eq!(
            p.name_rule,
            crate::runtime::checks::tools::NameRule::StrictClient
        );
    }

    #[test]
    fn help_and_version_are_printed_not_failed() {
        assert!(matches!(
            parse(["mcp-stdio-guard", "--help"]),
            Ok(Command::Print(_))
        ));
        match parse(["mcp-stdio-guard", "--version"]) {
            Ok(Command::Print(text)) => assert!(text.contains(crate::VERSION)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn explain_is_a_subcommand() {
        assert!(matches!(
            parse(["mcp-stdio-guard", "explain", "stdout-non-json"]),
            Ok(Command::Explain(Some(_)))
        ));
    }
}
