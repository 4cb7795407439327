//! What a run uses, resolved in one place: profile ← config file ← command-line flags (a flag
//! given on the command line always wins, then the config file, then the profile's preset, then
//! the built-in default). Everything is validated here, before anything is spawned.

use crate::cli::{self, Format, RunArgs};
use crate::config::{self, FileConfig, McpServer, McpServers};
use crate::exit::Failure;
use crate::protocol;
use crate::runtime::RunSpec;
use crate::runtime::checks::tools::NameRule;
use crate::runtime::effects::EffectsSpec;
use crate::runtime::framing::FramerLimits;
use crate::runtime::probes::ProbeSpec;
use crate::runtime::probes::adversarial::AdversarialSpec;
use crate::runtime::probes::corpus::CallRecipe;
use crate::runtime::probes::requests::OperationSpec;
use crate::runtime::probes::shutdown::LadderConfig;
use crate::runtime::process::SpawnSpec;
use crate::runtime::session::SessionConfig;
use clap::ArgMatches;
use clap::parser::ValueSource;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The reference's profiles: deterministic presets that explicit flags narrow or deepen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// Explicit flags and the defaults (capability probes on).
    #[default]
    Custom,
    /// The handshake (and explicit requests) only: no capability probes.
    Smoke,
    /// Capability probes and two runs for cold/warm drift.
    Registry,
    /// JSON output; static-scan findings fail.
    Ci,
    /// `ci` + `registry` + every adversarial probe.
    Strict,
}

impl Profile {
    pub const NAMES: [&str; 5] = ["custom", "smoke", "registry", "ci", "strict"];

    pub fn parse(name: &str) -> Option<Profile> {
        Some(match name {
            "custom" => Profile::Custom,
            "smoke" => Profile::Smoke,
            "registry" => Profile::Registry,
            "ci" => Profile::Ci,
            "strict" => Profile::Strict,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Custom => "custom",
            Profile::Smoke => "smoke",
            Profile::Registry => "registry",
            Profile::Ci => "ci",
            Profile::Strict => "strict",
        }
    }

    fn capability_probes(self) -> bool {
        self != Profile::Smoke
    }

    fn repeat(self) -> u32 {
        match self {
            Profile::Registry | Profile::Strict => 2,
            _ => 1,
        }
    }

    fn json(self) -> bool {
        matches!(self, Profile::Ci | Profile::Strict)
    }

    fn fail_on_static(self) -> bool {
        matches!(self, Profile::Ci | Profile::Strict)
    }

    fn adversarial(self) -> Vec<String> {
        if self == Profile::Strict {
            ADVERSARIAL_PROBES.iter().map(|s| s.to_string()).collect()
        } else {
            Vec::new()
        }
    }

    fn unbuffered_rerun(self) -> bool {
        self == Profile::Strict
    }
}

/// Every built-in adversarial probe: the reference's four, then the framing corpus.
pub const ADVERSARIAL_PROBES: [&str; 14] = crate::runtime::probes::corpus::NAMES;

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

/// How many adversarial probe processes of one server run at once: two per core, 2 to 8. A probe
/// spends most of its time in observation windows, not on CPU.
pub fn probe_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get() * 2)
        .unwrap_or(2)
        .clamp(2, 8)
}

/// Hostile-input settings: the adversarial probes and the no-effect proof.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Adversarial {
    pub probes: Vec<String>,
    pub tool_calls: Vec<config::ToolCall>,
    /// The no-effect proof (`--effects`, config `effects`), when on.
    pub effects: Option<EffectsSpec>,
    /// `--unbuffered-rerun` (config `unbufferedRerun`, on in `strict`).
    pub unbuffered_rerun: bool,
}

/// What the config file contributed, for the report's `config` block.
#[derive(Debug, Clone, Default)]
pub struct ConfigInfo {
    pub enabled: bool,
    pub path: String,
    pub resolved_path: String,
    pub command: bool,
    pub cwd: bool,
    pub env_names: Vec<String>,
    pub requests: Vec<String>,
    pub safe_tool_calls: Vec<String>,
    pub adversarial_probes: Vec<String>,
    pub adversarial_tool_calls: Vec<String>,
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
    pub outputs: cli::Outputs,
    pub profile: Profile,
    pub targets: Vec<TargetSettings>,
    /// Servers checked at once.
    pub jobs: usize,
    pub config: ConfigInfo,
    pub adversarial: Adversarial,
    /// Static scan path (config `scan`/`scanPath`) and whether its findings fail.
    pub scan: Option<PathBuf>,
    pub fail_on_static: bool,
    /// Things the user should know that are not findings (skipped `mcpServers` entries).
    pub notes: Vec<String>,
    /// `--shard K/N`: the shard, and the positions of its targets in the whole list.
    pub shard: Option<(crate::shard::Shard, Vec<usize>)>,
}

/// The `--protocol` values besides the revisions themselves.
pub const ALL_REVISIONS: &str = "all";

/// Where the servers of one invocation come from.
enum Source {
    /// The command after `--` (with at most one `--config` as its settings).
    Command(Option<Box<FileConfig>>),
    /// A guard config that names its server: a `--config` file or a registry line.
    Config { label: String, cfg: Box<FileConfig> },
    /// The servers of an MCP client config: a `--mcp-config` file or a registry line, with the
    /// one `--config` file (if any) as their settings.
    Client {
        label: String,
        file: PathBuf,
        servers: McpServers,
    },
}

pub fn resolve(args: RunArgs, m: &ArgMatches) -> Result<Settings, Failure> {
    let here = std::env::current_dir()
        .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}")))?;
    let jobs = match args.jobs {
        None => default_jobs(),
        Some(n @ 1..=1024) => n as usize,
        Some(n) => {
            return Err(Failure::usage(format!(
                "--jobs {n} is out of range: use 1 to 1024 servers at once"
            )));
        }
    };
    let mut configs = Vec::new();
    for path in &args.config {
        configs.push((
            path.clone(),
            config::load(path, &here).map_err(Failure::usage)?,
        ));
    }
    let mut sources = Vec::new();
    for path in &args.mcp_config {
        let servers = config::load_mcp_servers(path, &here).map_err(Failure::usage)?;
        sources.push(Source::Client {
            label: path.display().to_string(),
            file: here.join(path),
            servers,
        });
    }
    for path in &args.registry {
        for entry in config::load_registry(path, &here).map_err(Failure::usage)? {
            sources.push(match entry {
                config::RegistryEntry::Config { label, cfg } => Source::Config { label, cfg },
                config::RegistryEntry::Client { label, servers } => Source::Client {
                    label,
                    file: here.join(path),
                    servers,
                },
            });
        }
    }
    // One `--config` next to client configs or a registry is their shared settings; otherwise
    // every `--config` is a server of its own.
    let shared = if configs.len() == 1 && !sources.is_empty() {
        let (path, cfg) = configs.pop().expect("one config");
        if cfg.command.is_some() {
            return Err(Failure::usage(
                "--mcp-config/--registry name the servers to check: do not also give a command (after `--` or in --config)",
            ));
        }
        Some((path, cfg))
    } else {
        None
    };
    if configs.len() > 1 || !sources.is_empty() {
        for (path, cfg) in configs {
            sources.push(Source::Config {
                label: path.display().to_string(),
                cfg: Box::new(cfg),
            });
        }
    } else {
        sources.push(Source::Command(configs.pop().map(|(_, cfg)| Box::new(cfg))));
    }
    if !args.command.is_empty() && (sources.len() > 1 || !args.registry.is_empty()) {
        return Err(Failure::usage(
            "a command after `--` is one server: do not combine it with several --config, --mcp-config or --registry servers",
        ));
    }

    let single = sources.len() == 1;
    let mut merged: Option<Settings> = None;
    let mut seen = std::collections::HashMap::new();
    let mut config_scans = false;
    for source in sources {
        let (cfg, label, client) = match source {
            Source::Command(cfg) => (cfg.map(|c| *c), None, None),
            Source::Config { label, cfg } => (Some(*cfg), Some(label), None),
            Source::Client {
                label,
                file,
                servers,
            } => (
                shared.as_ref().map(|(_, c)| c.clone()),
                Some(label),
                Some((file, servers)),
            ),
        };
        config_scans |= cfg.as_ref().is_some_and(|c| c.scan.is_some());
        let one = resolve_source(
            &args,
            m,
            &here,
            cfg,
            client
                .as_ref()
                .map(|(file, c)| (label.as_deref().unwrap_or_default(), file.as_path(), c)),
            single,
        );
        let mut one = one?;
        if !single {
            for t in &mut one.targets {
                if t.name.is_empty() {
                    t.name = label.clone().unwrap_or_default();
                }
            }
            // Several sources: --server picks the servers of that name from all of them.
            if let Some(wanted) = &args.server {
                one.targets.retain(|t| &t.name == wanted);
            }
            for t in &one.targets {
                *seen.entry(t.name.clone()).or_insert(0usize) += 1;
            }
        }
        match &mut merged {
            None => merged = Some(one),
            Some(all) => {
                all.targets.extend(one.targets);
                all.notes.extend(one.notes);
            }
        }
    }
    let mut settings = merged.expect("at least one source");
    if settings.targets.is_empty() {
        let wanted = args.server.as_deref().unwrap_or_default();
        return Err(Failure::usage(format!(
            "--server {wanted:?} names no server of the given files: check the spelling"
        )));
    }
    if !single {
        // Names must tell servers apart in every report format.
        let mut count = std::collections::HashMap::new();
        for t in &mut settings.targets {
            if seen.get(&t.name).copied().unwrap_or(0) > 1 {
                let n = count.entry(t.name.clone()).or_insert(0usize);
                *n += 1;
                t.name = format!("{} #{n}", t.name);
            }
        }
        if args.scan.is_none() && config_scans {
            settings.scan = None;
            settings.fail_on_static = args.fail_on_static;
            settings.notes.push(
                "config \"scan\" paths are ignored when several servers are checked: pass --scan <path> for one scan of the run".into(),
            );
        }
    }
    settings.jobs = jobs;
    if let Some(spec) = &args.shard {
        let shard = crate::shard::Shard::parse(spec).map_err(Failure::usage)?;
        let names: Vec<&str> = settings.targets.iter().map(|t| t.name.as_str()).collect();
        let mine = shard.select(&names);
        let mut all = std::mem::take(&mut settings.targets);
        let mut kept = Vec::with_capacity(mine.len());
        for (i, t) in all.drain(..).enumerate() {
            if mine.binary_search(&i).is_ok() {
                kept.push(t);
            }
        }
        settings.targets = kept;
        settings.shard = Some((shard, mine));
    }
    settings.outputs.transcript = crate::report::outputs::resolve_transcript(
        args.transcript.as_deref(),
        &settings.outputs,
        &here,
    )?;
    Ok(settings)
}

/// One source's servers, with that source's settings (profile ← config ← flags).
fn resolve_source(
    args: &RunArgs,
    m: &ArgMatches,
    here: &Path,
    cfg: Option<FileConfig>,
    client: Option<(&str, &Path, &McpServers)>,
    single: bool,
) -> Result<Settings, Failure> {
    let here = here.to_path_buf();
    let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
    let config_given = cfg.is_some();
    let cfg: FileConfig = cfg.unwrap_or_default();
    let profile_name = if given("profile") {
        args.profile.clone()
    } else {
        cfg.profile.clone()
    };
    let profile = match profile_name {
        None => Profile::Custom,
        Some(name) => Profile::parse(&name).ok_or_else(|| {
            Failure::usage(format!(
                "profile {name:?} is unknown: use one of {}",
                Profile::NAMES.join(", ")
            ))
        })?,
    };

    let protocol = if given("protocol") {
        args.protocol.clone()
    } else {
        cfg.protocol
            .clone()
            .unwrap_or_else(|| protocol::DEFAULT_REVISION.to_string())
    };
    if protocol != ALL_REVISIONS && !protocol::LEGACY_REVISIONS.contains(&protocol.as_str()) {
        return Err(Failure::usage(format!(
            "--protocol {protocol:?} is not a supported revision: use one of {} or all",
            protocol::LEGACY_REVISIONS.join(", ")
        )));
    }
    let pick = |flag: &str, cli: u64, file: Option<u64>| {
        if given(flag) {
            cli
        } else {
            file.unwrap_or(cli)
        }
    };
    let timeout = pick("timeout", args.timeout, cfg.timeout_ms);
    let max_stdout_bytes = pick(
        "max_stdout_bytes",
        args.max_stdout_bytes,
        cfg.max_stdout_bytes,
    );
    let max_line = pick(
        "max_stdout_line_bytes",
        args.max_stdout_line_bytes,
        cfg.max_stdout_line_bytes,
    );
    let max_stderr = pick(
        "max_stderr_bytes",
        args.max_stderr_bytes,
        cfg.max_stderr_bytes,
    );
    let quiet_ms = pick("quiet_ms", args.quiet_ms, cfg.quiet_ms);
    let grace = pick("shutdown_grace", args.shutdown_grace, cfg.shutdown_grace_ms);
    let max_pages = pick("max_pages", args.max_pages, cfg.max_pages);
    for (flag, value) in [
        ("--timeout", timeout),
        ("--max-stdout-bytes", max_stdout_bytes),
        ("--max-stdout-line-bytes", max_line),
        ("--max-stderr-bytes", max_stderr),
        ("--shutdown-grace", grace),
        ("--max-pages", max_pages),
    ] {
        if value == 0 {
            return Err(Failure::usage(format!("{flag} must be greater than 0")));
        }
    }
    let repeat = if given("repeat") {
        args.repeat
    } else {
        cfg.repeat.unwrap_or(u64::from(profile.repeat()))
    };
    if repeat == 0 || repeat > 100 {
        return Err(Failure::usage(format!(
            "--repeat {repeat} is out of range: use 1 to 100 fresh runs"
        )));
    }
    let format = if given("format") {
        args.format.unwrap_or(Format::Text)
    } else if args.json || cfg.json.unwrap_or(profile.json()) {
        Format::Json
    } else {
        cli::default_format(&args.report)
    };
    let outputs = cli::resolve_outputs(&args.report, format, &here)?;
    let capability_probes = if given("capability_probes") {
        true
    } else if given("no_capability_probes") {
        false
    } else {
        cfg.capability_probes.unwrap_or(profile.capability_probes())
    };
    let discover = if given("no_discover") {
        false
    } else {
        cfg.discover.unwrap_or(true)
    };
    let name_rule_text = if given("tool_name_rule") {
        args.tool_name_rule.clone()
    } else {
        cfg.tool_name_rule
            .clone()
            .unwrap_or_else(|| args.tool_name_rule.clone())
    };
    let name_rule = NameRule::parse(&name_rule_text).ok_or_else(|| {
        Failure::usage(format!(
            "tool name rule {name_rule_text:?} is unknown: use spec or strict-client"
        ))
    })?;
    let allow_sigterm = args.allow_sigterm_shutdown || cfg.allow_sigterm_shutdown.unwrap_or(false);
    let allow_errors = args.allow_operation_errors || cfg.allow_operation_errors.unwrap_or(false);

    let adversarial_given = given("adversarial_probes") || given("adversarial_probe");
    let adversarial_raw: Vec<String> = if adversarial_given {
        args.adversarial_probes
            .iter()
            .flat_map(|list| list.split(','))
            .chain(args.adversarial_probe.iter().map(String::as_str))
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    } else if let Some(list) = &cfg.adversarial_probes {
        list.clone()
    } else {
        profile.adversarial()
    };
    let unbuffered_rerun = if given("unbuffered_rerun") {
        true
    } else if given("no_unbuffered_rerun") {
        false
    } else {
        cfg.unbuffered_rerun.unwrap_or(profile.unbuffered_rerun())
    };
    let adversarial = Adversarial {
        probes: adversarial_names(&adversarial_raw)?,
        tool_calls: cfg.adversarial_tool_calls.clone(),
        effects: effects_policy(
            effects_spec(args.effects, &args.effects_env, cfg.effects.as_ref())?,
            args.effects_policy.as_deref(),
        ),
        unbuffered_rerun,
    };

    // `--scan` (relative to the working directory) overrides the config's `scan` (relative to
    // the config file); either must exist before anything runs.
    let scan = match (&args.scan, &cfg.scan) {
        (Some(flag), _) => {
            let full = std::env::current_dir()
                .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}")))?
                .join(flag);
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
            Some(flag.clone())
        }
        (None, Some(p)) if !p.exists() => {
            return Err(Failure::usage(format!(
                "config scan path {} does not exist: point \"scan\" at the server's source folder",
                p.display()
            )));
        }
        (None, other) => other.clone(),
    };
    if args.fail_on_static && scan.is_none() {
        return Err(Failure::usage(
            "--fail-on-static needs a scan path: add --scan <path> (or \"scan\" in the config file)",
        ));
    }
    let fail_on_static =
        args.fail_on_static || cfg.fail_on_static.unwrap_or(profile.fail_on_static());

    // Operations: explicit --request flags replace the config's requests; safe tool calls follow.
    let mut operations = cli::pair_requests(&args.requests, &args.params, m)?;
    if operations.is_empty() {
        operations = cfg.requests.clone();
    }
    operations.extend(cfg.safe_tool_calls.iter().map(config::ToolCall::operation));

    let mut cli_env = Vec::new();
    for entry in &args.env {
        match entry.split_once('=') {
            Some((k, v)) if !k.is_empty() && !k.contains('\0') => {
                cli_env.push((k.to_string(), v.to_string()))
            }
            _ => {
                return Err(Failure::usage(format!(
                    "--env {entry:?} is not KEY=VALUE: write it as --env NAME=value"
                )));
            }
        }
    }
    let cli_cwd = args.cwd.as_ref().map(|c| here.join(c));
    if let (Some(full), Some(given_cwd)) = (&cli_cwd, &args.cwd) {
        check_dir(full, &format!("--cwd {}", given_cwd.display()))?;
    }
    if let Some(c) = &cfg.cwd {
        check_dir(c, &format!("config cwd {}", c.display()))?;
    }

    let knobs = Knobs {
        timeout,
        max_stdout_bytes,
        max_line,
        max_stderr,
        quiet_ms,
        grace,
        allow_sigterm,
        allow_errors,
        probes: ProbeSpec {
            discover,
            capabilities: capability_probes,
            max_pages: max_pages as usize,
            name_rule,
            ..ProbeSpec::default()
        },
        operations,
        repeat: repeat as u32,
        adversarial: AdversarialSpec {
            probes: adversarial.probes.clone(),
            tool_calls: adversarial.tool_calls.iter().map(recipe).collect(),
            payload: cfg.safe_tool_calls.first().map(recipe),
            jobs: probe_jobs(),
        },
        effects: adversarial.effects.clone(),
        unbuffered_rerun: adversarial.unbuffered_rerun,
    };

    let mut notes = Vec::new();
    let mut targets = Vec::new();
    if let Some((mcp_label, mcp_path, file)) = client {
        if !args.command.is_empty() || cfg.command.is_some() {
            return Err(Failure::usage(
                "--mcp-config names the servers to check: do not also give a command (after `--` or in --config)",
            ));
        }
        for (name, why) in &file.skipped {
            notes.push(format!("{mcp_label}: skipped server {name:?}: {why}"));
        }
        let chosen: Vec<&McpServer> = match &args.server {
            Some(wanted) if single => {
                let found: Vec<&McpServer> =
                    file.servers.iter().filter(|s| &s.name == wanted).collect();
                if found.is_empty() {
                    let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
                    return Err(Failure::usage(format!(
                        "--server {wanted:?} is not a stdio server of {}: choose one of {}",
                        mcp_label,
                        if names.is_empty() {
                            "(none)".to_string()
                        } else {
                            names.join(", ")
                        }
                    )));
                }
                found
            }
            _ => file.servers.iter().collect(),
        };
        if chosen.is_empty() && !single {
            notes.push(format!("{mcp_label}: no stdio server to check"));
        } else if chosen.is_empty() {
            return Err(Failure::usage(format!(
                "{mcp_label} lists no stdio server to check"
            )));
        }
        let check = single && chosen.len() == 1;
        for server in chosen {
            let mut env = server.env.clone();
            env.extend(cfg.env.iter().cloned());
            env.extend(cli_env.iter().cloned());
            let cwd = cli_cwd
                .clone()
                .or_else(|| cfg.cwd.clone())
                .or_else(|| server.cwd.clone());
            if let Some(c) = &server.cwd
                && check
            {
                check_dir(c, &format!("server {:?} cwd {}", server.name, c.display()))?;
            }
            let mut t = target(
                &server.name,
                &server.command,
                cwd,
                env,
                &here,
                &knobs,
                check,
            )?;
            t.mcp_server = Some((mcp_path.to_path_buf(), server.name.clone()));
            targets.push(t);
        }
    } else {
        if args.server.is_some() && single {
            return Err(Failure::usage(
                "--server selects a server of --mcp-config: pass --mcp-config <file> too",
            ));
        }
        let argv: Vec<String> = if !args.command.is_empty() {
            args.command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        } else if let Some(c) = &cfg.command {
            c.clone()
        } else {
            return Err(Failure::usage(
                "no server command given: pass it after `--`, e.g. `mcp-stdio-guard -- node server.js`, or in --config (see --help)",
            ));
        };
        let mut env = cfg.env.clone();
        env.extend(cli_env.iter().cloned());
        let cwd = cli_cwd.clone().or_else(|| cfg.cwd.clone());
        let mut t = target("", &argv, cwd, env, &here, &knobs, single)?;
        // Keep non-UTF-8 arguments exactly as given.
        if !args.command.is_empty() {
            t.spec.spawn.program = args.command[0].clone();
            t.spec.spawn.args = args.command[1..].to_vec();
        }
        t.cwd_requested = args.cwd.clone().or_else(|| cfg.cwd.clone());
        targets.push(t);
    }

    if protocol == ALL_REVISIONS {
        targets = targets
            .into_iter()
            .flat_map(|t| {
                protocol::LEGACY_REVISIONS.iter().map(move |rev| {
                    let mut t = t.clone();
                    t.spec.session.protocol = rev.to_string();
                    let base = if t.name.is_empty() {
                        t.argv.join(" ")
                    } else {
                        t.name.clone()
                    };
                    t.name = format!("{base} @ {rev}");
                    t
                })
            })
            .collect();
    } else {
        for t in &mut targets {
            t.spec.session.protocol = protocol.clone();
        }
    }

    let info = ConfigInfo {
        enabled: config_given,
        path: if config_given {
            cfg.path.display().to_string()
        } else {
            String::new()
        },
        resolved_path: if config_given {
            cfg.resolved_path.display().to_string()
        } else {
            String::new()
        },
        command: cfg.command.is_some(),
        cwd: cfg.cwd.is_some(),
        env_names: cfg.env.iter().map(|(k, _)| k.clone()).collect(),
        requests: cfg.requests.iter().map(|r| r.method.clone()).collect(),
        safe_tool_calls: cfg.safe_tool_calls.iter().map(|c| c.name.clone()).collect(),
        adversarial_probes: cfg.adversarial_probes.clone().unwrap_or_default(),
        adversarial_tool_calls: cfg
            .adversarial_tool_calls
            .iter()
            .map(|c| c.name.clone())
            .collect(),
    };
    for t in &mut targets {
        t.profile = profile;
        t.config = info.clone();
        t.adversarial_probes = adversarial.probes.clone();
    }
    Ok(Settings {
        format,
        outputs,
        profile,
        targets,
        jobs: default_jobs(),
        config: info,
        adversarial,
        scan,
        fail_on_static,
        notes,
        shard: None,
    })
}

/// Settings shared by every target of an invocation.
struct Knobs {
    timeout: u64,
    max_stdout_bytes: u64,
    max_line: u64,
    max_stderr: u64,
    quiet_ms: u64,
    grace: u64,
    allow_sigterm: bool,
    allow_errors: bool,
    probes: ProbeSpec,
    operations: Vec<OperationSpec>,
    repeat: u32,
    adversarial: AdversarialSpec,
    effects: Option<EffectsSpec>,
    unbuffered_rerun: bool,
}

fn target(
    name: &str,
    argv: &[String],
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
    here: &Path,
    k: &Knobs,
    check: bool,
) -> Result<TargetSettings, Failure> {
    // Later entries win (config env, then --env), without duplicates.
    let mut merged: Vec<(String, String)> = Vec::new();
    for (key, value) in env {
        merged.retain(|(k2, _)| *k2 != key);
        merged.push((key, value));
    }
    let cwd_resolved = cwd.clone().unwrap_or_else(|| here.to_path_buf());
    if check {
        let path_override = merged
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| OsString::from(v));
        cli::check_program(
            OsString::from(&argv[0]).as_os_str(),
            &cwd_resolved,
            path_override.as_deref(),
        )?;
    }
    let spec = RunSpec {
        spawn: SpawnSpec {
            program: OsString::from(&argv[0]),
            args: argv[1..].iter().map(OsString::from).collect(),
            cwd: cwd.clone(),
            env: merged
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect(),
            unset: Vec::new(),
            limits: FramerLimits {
                max_line_bytes: k.max_line,
                max_total_bytes: k.max_stdout_bytes,
            },
            max_stderr_bytes: k.max_stderr,
            tap: None,
        },
        session: SessionConfig {
            protocol: protocol::DEFAULT_REVISION.to_string(),
            timeout: Duration::from_millis(k.timeout),
            max_line_bytes: k.max_line,
            issue_cap: 5,
        },
        operations: k.operations.clone(),
        ladder: LadderConfig {
            quiet: Duration::from_millis(k.quiet_ms),
            stdin_grace: Duration::from_millis(k.grace),
            allow_sigterm: k.allow_sigterm,
            ..LadderConfig::default()
        },
        allow_operation_errors: k.allow_errors,
        probes: k.probes.clone(),
        adversarial: k.adversarial.clone(),
        effects: k.effects.clone(),
        unbuffered_rerun: k.unbuffered_rerun,
    };
    Ok(TargetSettings {
        name: name.to_string(),
        spec,
        argv: argv.to_vec(),
        cwd_requested: cwd,
        cwd_resolved,
        env_names: merged.iter().map(|(k, _)| k.clone()).collect(),
        env_values: merged.iter().map(|(_, v)| v.clone()).collect(),
        repeat: k.repeat,
        profile: Profile::Custom,
        config: ConfigInfo::default(),
        adversarial_probes: Vec::new(),
        mcp_server: None,
    })
}

fn check_dir(path: &Path, what: &str) -> Result<(), Failure> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Failure::usage(format!(
            "{what} is not a directory: pass the folder the server runs from"
        ))),
        Err(e) => Err(Failure::usage(format!(
            "{what} cannot be used ({e}): pass an existing folder"
        ))),
    }
}

/// `all`/`none` expanded, names validated, duplicates dropped.
fn adversarial_names(raw: &[String]) -> Result<Vec<String>, Failure> {
    let mut out: Vec<String> = Vec::new();
    for name in raw {
        match name.as_str() {
            "all" => {
                for p in ADVERSARIAL_PROBES {
                    if !out.iter().any(|o| o == p) {
                        out.push(p.to_string());
                    }
                }
            }
            "none" => out.clear(),
            n if ADVERSARIAL_PROBES.contains(&n) => {
                if !out.iter().any(|o| o == n) {
                    out.push(n.to_string());
                }
            }
            other => {
                return Err(Failure::usage(format!(
                    "adversarial probe {other:?} is unknown: use {}, all or none",
                    ADVERSARIAL_PROBES.join(", ")
                )));
            }
        }
    }
    Ok(out)
}

fn recipe(call: &config::ToolCall) -> CallRecipe {
    CallRecipe {
        name: call.name.clone(),
        arguments: call.arguments.clone(),
    }
}

/// `--effects-policy` over the config's `effects.policy`; the flag turns the proof on by itself.
fn effects_policy(spec: Option<EffectsSpec>, flag: Option<&str>) -> Option<EffectsSpec> {
    let Some(policy) = flag.and_then(crate::runtime::effects::syscalls::Policy::parse) else {
        return spec;
    };
    Some(EffectsSpec {
        policy,
        ..spec.unwrap_or_default()
    })
}

/// The no-effect proof's settings: `--effects`/`--effects-env`, else config `effects` (`true`,
/// `false`, or `{"proxy", "log", "processWatch", "env"}` where `env` is a list of names or an
/// object of name → template). `--effects-env` turns the proof on by itself.
fn effects_spec(
    flag: bool,
    cli_env: &[String],
    file: Option<&Value>,
) -> Result<Option<EffectsSpec>, Failure> {
    let mut spec = match file {
        None | Some(Value::Bool(false)) if !flag && cli_env.is_empty() => return Ok(None),
        None | Some(Value::Bool(_)) => EffectsSpec::default(),
        Some(Value::Object(obj)) => {
            let mut spec = EffectsSpec::default();
            for (key, value) in obj {
                let want_bool = |v: &Value| {
                    v.as_bool().ok_or_else(|| {
                        Failure::usage(format!(
                            "config \"effects.{key}\" is {v}, expected true or false"
                        ))
                    })
                };
                match key.as_str() {
                    "enabled" => {
                        if !want_bool(value)? && !flag && cli_env.is_empty() {
                            return Ok(None);
                        }
                    }
                    "proxy" => spec.proxy = want_bool(value)?,
                    "log" => spec.log = want_bool(value)?,
                    "processWatch" => spec.watch = want_bool(value)?,
                    "syscalls" => spec.syscalls = want_bool(value)?,
                    "policy" => {
                        spec.policy = value
                            .as_str()
                            .and_then(crate::runtime::effects::syscalls::Policy::parse)
                            .ok_or_else(|| {
                                Failure::usage(format!(
                                    "config \"effects.policy\" is {value}, expected \"observe\" or \"contain\""
                                ))
                            })?
                    }
                    "env" => match value {
                        Value::Array(items) => {
                            for item in items {
                                let name = item.as_str().ok_or_else(|| {
                                    Failure::usage(format!(
                                        "config \"effects.env\" holds {item}, expected variable names"
                                    ))
                                })?;
                                spec.env.push((name.to_string(), None));
                            }
                        }
                        Value::Object(map) => {
                            for (name, template) in map {
                                let template = template.as_str().ok_or_else(|| {
                                    Failure::usage(format!(
                                        "config \"effects.env.{name}\" is {template}, expected a URL template such as \"http://{{canary}}/v1\""
                                    ))
                                })?;
                                spec.env.push((name.clone(), Some(template.to_string())));
                            }
                        }
                        other => {
                            return Err(Failure::usage(format!(
                                "config \"effects.env\" is {other}, expected a list of names or an object of name to URL template"
                            )));
                        }
                    },
                    other => {
                        return Err(Failure::usage(format!(
                            "config \"effects\" has an unknown key {other:?}: use enabled, proxy, log, processWatch, syscalls, policy or env"
                        )));
                    }
                }
            }
            spec
        }
        Some(other) => {
            return Err(Failure::usage(format!(
                "config \"effects\" is {other}, expected true, false or an object"
            )));
        }
    };
    for entry in cli_env {
        let (name, template) = match entry.split_once('=') {
            Some((n, t)) => (n, Some(t.to_string())),
            None => (entry.as_str(), None),
        };
        if name.is_empty() || name.contains('\0') {
            return Err(Failure::usage(format!(
                "--effects-env {entry:?} is not NAME or NAME=TEMPLATE: write it as --effects-env API_URL or --effects-env 'API_URL=http://{{canary}}/v1'"
            )));
        }
        spec.env.retain(|(n, _)| n != name);
        spec.env.push((name.to_string(), template));
    }
    for (name, template) in &spec.env {
        if let Some(t) = template
            && !t.contains("{canary}")
        {
            return Err(Failure::usage(format!(
                "the effects template for {name} is {t:?}, which does not contain {{canary}}: it would not point the server at the canary"
            )));
        }
    }
    Ok(Some(spec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_effects_are_true_false_or_an_object() {
        assert_eq!(effects_spec(false, &[], None).unwrap(), None);
        assert_eq!(effects_spec(false, &[], Some(&json!(false))).unwrap(), None);
        assert_eq!(
            effects_spec(false, &[], Some(&json!(true))).unwrap(),
            Some(EffectsSpec::default())
        );
        // The flag wins over a config that says false.
        assert!(
            effects_spec(true, &[], Some(&json!(false)))
                .unwrap()
                .is_some()
        );
        let spec = effects_spec(
            false,
            &[],
            Some(&json!({"processWatch": false, "env": {"API_URL": "https://{canary}/v1"}})),
        )
        .unwrap()
        .unwrap();
        assert!(!spec.watch && spec.proxy && spec.log);
        assert_eq!(
            spec.env,
            [(
                "API_URL".to_string(),
                Some("https://{canary}/v1".to_string())
            )]
        );
        let spec = effects_spec(false, &["B".into()], Some(&json!({"env": ["A"]})))
            .unwrap()
            .unwrap();
        assert_eq!(spec.env.len(), 2);
        assert_eq!(
            effects_spec(false, &[], Some(&json!({"enabled": false}))).unwrap(),
            None
        );
        for bad in [
            json!({"proxi": true}),
            json!({"env": "API_URL"}),
            json!({"env": {"API_URL": "http://example.com"}}),
            json!({"log": "yes"}),
            json!(3),
        ] {
            assert!(effects_spec(false, &[], Some(&bad)).is_err(), "{bad}");
        }
        let spec = effects_spec(
            false,
            &[],
            Some(&json!({"policy": "observe", "syscalls": false})),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (spec.policy, spec.syscalls),
            (crate::runtime::effects::syscalls::Policy::Observe, false)
        );
        assert!(effects_spec(false, &[], Some(&json!({"policy": "allow"}))).is_err());
    }
}
