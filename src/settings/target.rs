//! The servers of one source and their settings: the source's profile and config file under the
//! flags ([`Layers`]), validated, into one [`TargetSettings`] per server (one per revision with
//! `--protocol all`).

use super::client::{McpServer, McpServers};
use super::effects::{effects_policy, effects_spec};
use super::file::{FileConfig, ToolCall};
use super::table::{self, Checks, Layers, SETTINGS};
use super::{ALL_REVISIONS, Failure, Profile, TargetSettings};
use crate::cli::RunArgs;
use crate::protocol;
use crate::report::ConfigInfo;
use crate::runtime::RunSpec;
use crate::runtime::checks::tools::NameRule;
use crate::runtime::framing::FramerLimits;
use crate::runtime::probes::ProbeSpec;
use crate::runtime::probes::adversarial::AdversarialSpec;
use crate::runtime::probes::corpus::{CallRecipe, PROBES};
use crate::runtime::probes::requests::{OperationSource, OperationSpec};
use crate::runtime::probes::shutdown::LadderConfig;
use crate::runtime::process::SpawnSpec;
use crate::runtime::session::SessionConfig;
use clap::ArgMatches;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How many adversarial probe processes of one server run at once: two per core, 2 to 8. A probe
/// spends most of its time in observation windows, not on CPU.
pub fn probe_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get() * 2)
        .unwrap_or(2)
        .clamp(2, 8)
}

/// What every source shares: the command line and where the guard runs.
pub(super) struct Flags<'a> {
    pub args: &'a RunArgs,
    pub matches: &'a ArgMatches,
    pub here: &'a Path,
    /// One source only: its command is checked before anything runs, `--server` must match.
    pub single: bool,
}

/// An MCP client config's servers, with its label and absolute path.
pub(super) struct Client<'a> {
    pub label: &'a str,
    pub file: &'a Path,
    pub servers: &'a McpServers,
}

/// The servers of one source, and notes for the user.
pub(super) fn resolve(
    f: &Flags,
    cfg: Option<&FileConfig>,
    client: Option<Client>,
) -> Result<(Vec<TargetSettings>, Vec<String>), Failure> {
    let empty = FileConfig::default();
    let config_given = cfg.is_some();
    let cfg = cfg.unwrap_or(&empty);
    let profile = super::invocation::profile(f.matches, cfg)?;
    let layers = Layers {
        matches: f.matches,
        config: cfg,
        profile,
    };
    let protocol = layers.text(&table::PROTOCOL).unwrap_or_default();
    if protocol != ALL_REVISIONS && !protocol::LEGACY_REVISIONS.contains(&protocol.as_str()) {
        return Err(Failure::usage(format!(
            "--protocol {protocol:?} is not a supported revision: use one of {} or all",
            protocol::LEGACY_REVISIONS.join(", ")
        )));
    }
    let template = run_spec(f, cfg, &layers)?;
    let probes = template.adversarial.probes.clone();
    let repeat = layers.count(&table::REPEAT).unwrap_or(1);
    if repeat == 0 || repeat > 100 {
        return Err(Failure::usage(format!(
            "--repeat {repeat} is out of range: use 1 to 100 fresh runs"
        )));
    }
    let cli_env = flag_env(f.args)?;
    let cli_cwd = f.args.cwd.as_ref().map(|c| f.here.join(c));
    if let (Some(full), Some(given_cwd)) = (&cli_cwd, &f.args.cwd) {
        check_dir(full, &format!("--cwd {}", given_cwd.display()))?;
    }
    if let Some(c) = cfg.path_of(&table::CWD) {
        check_dir(c, &format!("config cwd {}", c.display()))?;
    }
    let base = Base {
        spec: template,
        repeat: repeat as u32,
        cli_env,
        cli_cwd,
    };
    let mut notes = Vec::new();
    let mut targets = match client {
        Some(client) => client_targets(f, cfg, &base, client, &mut notes)?,
        None => vec![command_target(f, cfg, &base)?],
    };
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
    let info = config_info(config_given.then_some(cfg));
    for t in &mut targets {
        t.profile = profile;
        t.config = info.clone();
        t.adversarial_probes = probes.clone();
    }
    Ok((targets, notes))
}

/// What the config file contributed, for the report's `config` block: the table's `checks`
/// column, in table order.
pub(super) fn config_info(cfg: Option<&FileConfig>) -> ConfigInfo {
    let mut checks: Vec<(&'static str, Value)> = Vec::new();
    for s in SETTINGS {
        let (name, value) = match s.checks {
            Checks::None => continue,
            Checks::Given(name) => (name, Value::Bool(cfg.is_some_and(|c| c.has(s)))),
            Checks::Names(name) => {
                let names = cfg.and_then(|c| c.get(s)).map(names).unwrap_or_default();
                (name, Value::from(names))
            }
        };
        match checks.iter_mut().find(|(n, _)| *n == name) {
            Some((_, Value::Array(all))) => {
                all.extend(value.as_array().cloned().unwrap_or_default())
            }
            Some(_) => {}
            None => checks.push((name, value)),
        }
    }
    ConfigInfo {
        enabled: cfg.is_some(),
        path: cfg
            .map(|c| c.path.display().to_string())
            .unwrap_or_default(),
        resolved_path: cfg
            .map(|c| c.resolved_path.display().to_string())
            .unwrap_or_default(),
        command: cfg.is_some_and(|c| c.command().is_some()),
        checks: checks.into_iter().map(|(n, v)| (n.into(), v)).collect(),
    }
}

/// The names a value holds, for `config.checks`.
fn names(v: &super::file::Parsed) -> Vec<String> {
    use super::file::Parsed;
    match v {
        Parsed::List(items) => items.clone(),
        Parsed::Env(vars) => vars.iter().map(|(k, _)| k.clone()).collect(),
        Parsed::Ops(ops) => ops.iter().map(|o| o.method.clone()).collect(),
        Parsed::Calls(calls) => calls.iter().map(|c| c.name.clone()).collect(),
        Parsed::Bool(_)
        | Parsed::Count(_)
        | Parsed::Text(_)
        | Parsed::Path(_)
        | Parsed::Json(_) => Vec::new(),
    }
}

/// Everything of a server's run but its command, environment and working directory.
fn run_spec(f: &Flags, cfg: &FileConfig, l: &Layers) -> Result<RunSpec, Failure> {
    let count = |s: &'static table::Setting| -> Result<u64, Failure> {
        match l.count(s) {
            Some(0) => Err(Failure::usage(format!(
                "{} must be greater than 0",
                s.flag()
            ))),
            Some(n) => Ok(n),
            None => unreachable!("{s:?} has a default"),
        }
    };
    let timeout = count(&table::TIMEOUT)?;
    let max_stdout_bytes = count(&table::MAX_STDOUT_BYTES)?;
    let max_line = count(&table::MAX_STDOUT_LINE_BYTES)?;
    let max_stderr = count(&table::MAX_STDERR_BYTES)?;
    let grace = count(&table::SHUTDOWN_GRACE)?;
    let max_pages = count(&table::MAX_PAGES)?;
    let quiet_ms = l.count(&table::QUIET_MS).unwrap_or(0);
    let name_rule_text = l.text(&table::TOOL_NAME_RULE).unwrap_or_default();
    let name_rule = NameRule::parse(&name_rule_text).ok_or_else(|| {
        Failure::usage(format!(
            "tool name rule {name_rule_text:?} is unknown: use spec or strict-client"
        ))
    })?;
    let probes = adversarial_names(&probe_list(f, cfg, l))?;
    let effects = effects_policy(
        effects_spec(
            f.args.effects,
            &f.args.effects_env,
            cfg.json(&table::EFFECTS),
        )?,
        f.args.effects_policy.as_deref(),
    );
    // Operations: explicit --request flags replace the config's requests; safe tool calls follow.
    let mut operations = pair_requests(&f.args.requests, &f.args.params, f.matches)?;
    if operations.is_empty() {
        operations = cfg.requests();
    }
    let safe = cfg.calls(&table::SAFE_TOOL_CALLS);
    operations.extend(safe.iter().map(ToolCall::operation));
    Ok(RunSpec {
        spawn: SpawnSpec {
            program: OsString::new(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            unset: Vec::new(),
            limits: FramerLimits {
                max_line_bytes: max_line,
                max_total_bytes: max_stdout_bytes,
            },
            max_stderr_bytes: max_stderr,
            tap: None,
        },
        session: SessionConfig {
            protocol: protocol::DEFAULT_REVISION.to_string(),
            timeout: Duration::from_millis(timeout),
            max_line_bytes: max_line,
            issue_cap: 5,
        },
        operations,
        ladder: LadderConfig {
            quiet: Duration::from_millis(quiet_ms),
            stdin_grace: Duration::from_millis(grace),
            allow_sigterm: l.bool(&table::ALLOW_SIGTERM_SHUTDOWN),
            ..LadderConfig::default()
        },
        allow_operation_errors: l.bool(&table::ALLOW_OPERATION_ERRORS),
        probes: ProbeSpec {
            discover: l.bool(&table::DISCOVER),
            capabilities: l.bool(&table::CAPABILITY_PROBES),
            max_pages: max_pages as usize,
            name_rule,
            ..ProbeSpec::default()
        },
        adversarial: AdversarialSpec {
            probes,
            tool_calls: cfg
                .calls(&table::ADVERSARIAL_TOOL_CALLS)
                .iter()
                .map(recipe)
                .collect(),
            payload: safe.first().map(recipe),
            jobs: probe_jobs(),
        },
        effects,
        unbuffered_rerun: l.bool(&table::UNBUFFERED_RERUN),
        heavy_start: false,
    })
}

/// The adversarial probes asked for: the flags (comma-separated lists, then single names), else
/// the config's, else the profile's.
fn probe_list(f: &Flags, cfg: &FileConfig, l: &Layers) -> Vec<String> {
    let given: Vec<String> = f
        .args
        .adversarial_probes
        .iter()
        .flat_map(|list| list.split(','))
        .chain(f.args.adversarial_probe.iter().map(String::as_str))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if !f.args.adversarial_probes.is_empty() || !f.args.adversarial_probe.is_empty() {
        return given;
    }
    if let Some(list) = cfg.probes() {
        return list.to_vec();
    }
    l.text(&table::ADVERSARIAL_PROBES).into_iter().collect()
}

/// `--env KEY=VALUE` flags.
fn flag_env(args: &RunArgs) -> Result<Vec<(String, String)>, Failure> {
    args.env
        .iter()
        .map(|entry| match entry.split_once('=') {
            Some((k, v)) if !k.is_empty() && !k.contains('\0') => {
                Ok((k.to_string(), v.to_string()))
            }
            _ => Err(Failure::usage(format!(
                "--env {entry:?} is not KEY=VALUE: write it as --env NAME=value"
            ))),
        })
        .collect()
}

/// What every server of a source shares.
struct Base {
    spec: RunSpec,
    repeat: u32,
    cli_env: Vec<(String, String)>,
    /// `--cwd`, resolved against the working directory.
    cli_cwd: Option<PathBuf>,
}

/// The servers of an MCP client config (`--server` picks one when it is the only source).
fn client_targets(
    f: &Flags,
    cfg: &FileConfig,
    base: &Base,
    client: Client,
    notes: &mut Vec<String>,
) -> Result<Vec<TargetSettings>, Failure> {
    let Client {
        label,
        file: path,
        servers: file,
    } = client;
    if !f.args.command.is_empty() || cfg.command().is_some() {
        return Err(Failure::usage(
            "--mcp-config names the servers to check: do not also give a command (after `--` or in --config)",
        ));
    }
    for (name, why) in &file.skipped {
        notes.push(format!("{label}: skipped server {name:?}: {why}"));
    }
    let chosen: Vec<&McpServer> = match &f.args.server {
        Some(wanted) if f.single => {
            let found: Vec<&McpServer> =
                file.servers.iter().filter(|s| &s.name == wanted).collect();
            if found.is_empty() {
                let names: Vec<&str> = file.servers.iter().map(|s| s.name.as_str()).collect();
                return Err(Failure::usage(format!(
                    "--server {wanted:?} is not a stdio server of {}: choose one of {}",
                    label,
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
    if chosen.is_empty() && !f.single {
        notes.push(format!("{label}: no stdio server to check"));
    } else if chosen.is_empty() {
        return Err(Failure::usage(format!(
            "{label} lists no stdio server to check"
        )));
    }
    let check = f.single && chosen.len() == 1;
    let mut targets = Vec::new();
    for server in chosen {
        let mut env = server.env.clone();
        env.extend(cfg.env().iter().cloned());
        env.extend(base.cli_env.iter().cloned());
        let cwd = base
            .cli_cwd
            .clone()
            .or_else(|| cfg.path_of(&table::CWD).map(Path::to_path_buf))
            .or_else(|| server.cwd.clone());
        if let Some(c) = &server.cwd
            && check
        {
            check_dir(c, &format!("server {:?} cwd {}", server.name, c.display()))?;
        }
        let mut t = target(&server.name, &server.command, cwd, env, f.here, base, check)?;
        t.mcp_server = Some((path.to_path_buf(), server.name.clone()));
        targets.push(t);
    }
    Ok(targets)
}

/// The server of a command after `--` or in a config file.
fn command_target(f: &Flags, cfg: &FileConfig, base: &Base) -> Result<TargetSettings, Failure> {
    let args = f.args;
    if args.server.is_some() && f.single {
        return Err(Failure::usage(
            "--server selects a server of --mcp-config: pass --mcp-config <file> too",
        ));
    }
    let argv: Vec<String> = if !args.command.is_empty() {
        args.command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    } else if let Some(c) = cfg.command() {
        c.to_vec()
    } else {
        return Err(Failure::usage(
            "no server command given: pass it after `--`, e.g. `mcp-stdio-guard -- node server.js`, or in --config (see --help)",
        ));
    };
    let mut env = cfg.env().to_vec();
    env.extend(base.cli_env.iter().cloned());
    let config_cwd = cfg.path_of(&table::CWD).map(Path::to_path_buf);
    let cwd = base.cli_cwd.clone().or_else(|| config_cwd.clone());
    let mut t = target("", &argv, cwd, env, f.here, base, f.single)?;
    // Keep non-UTF-8 arguments exactly as given.
    if !args.command.is_empty() {
        t.spec.spawn.program = args.command[0].clone();
        t.spec.spawn.args = args.command[1..].to_vec();
    }
    t.cwd_requested = args.cwd.clone().or(config_cwd);
    Ok(t)
}

fn target(
    name: &str,
    argv: &[String],
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
    here: &Path,
    base: &Base,
    check: bool,
) -> Result<TargetSettings, Failure> {
    // Later entries win (client env, config env, then --env), without duplicates.
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
        crate::runtime::process::lookup::check_program(
            OsString::from(&argv[0]).as_os_str(),
            &cwd_resolved,
            path_override.as_deref(),
        )
        .map_err(Failure::usage)?;
    }
    let mut spec = base.spec.clone();
    spec.spawn.program = OsString::from(&argv[0]);
    spec.spawn.args = argv[1..].iter().map(OsString::from).collect();
    spec.spawn.cwd = cwd.clone();
    spec.spawn.env = merged
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    Ok(TargetSettings {
        name: name.to_string(),
        spec,
        argv: argv.to_vec(),
        cwd_requested: cwd,
        cwd_resolved,
        env_names: merged.iter().map(|(k, _)| k.clone()).collect(),
        env_values: merged.iter().map(|(_, v)| v.clone()).collect(),
        repeat: base.repeat,
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

/// `all`/`none` expanded, names validated against the probe table, duplicates dropped.
fn adversarial_names(raw: &[String]) -> Result<Vec<String>, Failure> {
    let mut out: Vec<String> = Vec::new();
    let add = |out: &mut Vec<String>, name: &str| {
        if !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    };
    for name in raw {
        match name.as_str() {
            "all" => PROBES.iter().for_each(|p| add(&mut out, p.name)),
            "none" => out.clear(),
            n if PROBES.iter().any(|p| p.name == n) => add(&mut out, n),
            other => {
                let names: Vec<&str> = PROBES.iter().map(|p| p.name).collect();
                return Err(Failure::usage(format!(
                    "adversarial probe {other:?} is unknown: use {}, all or none",
                    names.join(", ")
                )));
            }
        }
    }
    Ok(out)
}

fn recipe(call: &ToolCall) -> CallRecipe {
    CallRecipe {
        name: call.name.clone(),
        arguments: call.arguments.clone(),
    }
}

/// Pairs each `--params` with the `--request` just before it on the command line.
fn pair_requests(
    requests: &[String],
    params: &[String],
    matches: &ArgMatches,
) -> Result<Vec<OperationSpec>, Failure> {
    let index = |s: &table::Setting| -> Vec<usize> {
        matches
            .indices_of(s.flags[0])
            .map(|i| i.collect())
            .unwrap_or_default()
    };
    let (req_idx, par_idx) = (index(&table::REQUEST), index(&table::PARAMS));
    let mut ops: Vec<OperationSpec> = requests
        .iter()
        .map(|m| OperationSpec {
            method: m.clone(),
            params: None,
            source: OperationSource::CliRequest,
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
