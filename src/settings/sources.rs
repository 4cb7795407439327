//! Where the servers of one invocation come from — the command after `--`, each `--config`,
//! each `--mcp-config`, each line of each `--registry` — and their merge into one [`Settings`]:
//! the invocation-wide settings resolved once, each source's servers with the source's own
//! settings, names made distinct.

use super::client::{self, McpServers, RegistryEntry};
use super::file::{self, FileConfig};
use super::table::{self, SETTINGS, Scope};
use super::target::{self, Client, Flags};
use super::{Failure, Profile, Settings, invocation};
use crate::cli::RunArgs;
use clap::ArgMatches;
use std::collections::HashMap;
use std::path::PathBuf;

/// One source of servers.
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

pub(super) fn resolve(args: RunArgs, m: &ArgMatches) -> Result<Settings, Failure> {
    let here = std::env::current_dir()
        .map_err(|e| Failure::usage(format!("cannot read the current directory: {e}")))?;
    let (sources, shared) = gather(&args, &here)?;
    let single = sources.len() == 1;
    // The run's own config file: the one `--config` of a command, the one shared by client
    // configs and registry lines, or the only registry line.
    let own: Option<&FileConfig> = match (&shared, sources.as_slice()) {
        (Some(cfg), _) => Some(cfg),
        (None, [Source::Command(cfg)]) => cfg.as_deref(),
        (None, [Source::Config { cfg, .. }]) => Some(cfg),
        _ => None,
    };
    let inv = invocation::resolve(&args, m, own.unwrap_or(&FileConfig::default()), &here)?;
    let mut notes = ignored_keys(&sources, own);

    let flags = Flags {
        args: &args,
        matches: m,
        here: &here,
        single,
    };
    let mut targets = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for source in &sources {
        let (mut found, more) = match source {
            Source::Command(cfg) => target::resolve(&flags, cfg.as_deref(), None)?,
            Source::Config { cfg, .. } => target::resolve(&flags, Some(cfg), None)?,
            Source::Client {
                label,
                file,
                servers,
            } => target::resolve(
                &flags,
                shared.as_ref(),
                Some(Client {
                    label,
                    file,
                    servers,
                }),
            )?,
        };
        notes.extend(more);
        if !single {
            let label = match source {
                Source::Command(_) => "",
                Source::Config { label, .. } | Source::Client { label, .. } => label,
            };
            for t in &mut found {
                if t.name.is_empty() {
                    t.name = label.to_string();
                }
            }
            // Several sources: --server picks the servers of that name from all of them.
            if let Some(wanted) = &args.server {
                found.retain(|t| &t.name == wanted);
            }
            for t in &found {
                *seen.entry(t.name.clone()).or_insert(0) += 1;
            }
        }
        targets.extend(found);
    }
    if targets.is_empty() {
        let wanted = args.server.as_deref().unwrap_or_default();
        return Err(Failure::usage(format!(
            "--server {wanted:?} names no server of the given files: check the spelling"
        )));
    }
    // Names must tell servers apart in every report format.
    let mut count = HashMap::new();
    for t in &mut targets {
        if seen.get(&t.name).copied().unwrap_or(0) > 1 {
            let n = count.entry(t.name.clone()).or_insert(0usize);
            *n += 1;
            t.name = format!("{} #{n}", t.name);
        }
    }
    // `--shard K/N`: this runner's slice of the whole list, by a hash of each name.
    let shard = match &args.shard {
        None => None,
        Some(spec) => {
            let shard = crate::shard::Shard::parse(spec).map_err(Failure::usage)?;
            let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
            let mine = shard.select(&names);
            let all = std::mem::take(&mut targets);
            targets = all
                .into_iter()
                .enumerate()
                .filter(|(i, _)| mine.binary_search(i).is_ok())
                .map(|(_, t)| t)
                .collect();
            Some((shard, mine))
        }
    };
    let mut outputs = inv.outputs;
    outputs.transcript =
        crate::report::outputs::resolve_transcript(args.transcript.as_deref(), &outputs, &here)?;
    Ok(Settings {
        format: inv.format,
        outputs,
        profile: inv.profile,
        targets,
        jobs: inv.jobs,
        scan: inv.scan,
        fail_on_static: inv.fail_on_static,
        notes,
        shard,
    })
}

/// The sources of the invocation, and the one `--config` they share (with client configs or a
/// registry).
fn gather(
    args: &RunArgs,
    here: &std::path::Path,
) -> Result<(Vec<Source>, Option<FileConfig>), Failure> {
    let mut configs = Vec::new();
    for path in &args.config {
        configs.push((
            path.clone(),
            file::load(path, here).map_err(Failure::usage)?,
        ));
    }
    let mut sources = Vec::new();
    for path in &args.mcp_config {
        let servers = client::load_mcp_servers(path, here).map_err(Failure::usage)?;
        sources.push(Source::Client {
            label: path.display().to_string(),
            file: here.join(path),
            servers,
        });
    }
    for path in &args.registry {
        for entry in client::load_registry(path, here).map_err(Failure::usage)? {
            sources.push(match entry {
                RegistryEntry::Config { label, cfg } => Source::Config { label, cfg },
                RegistryEntry::Client { label, servers } => Source::Client {
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
        let (_, cfg) = configs.pop().expect("one config");
        if cfg.command().is_some() {
            return Err(Failure::usage(
                "--mcp-config/--registry name the servers to check: do not also give a command (after `--` or in --config)",
            ));
        }
        Some(cfg)
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
    Ok((sources, shared))
}

/// Notes for the invocation-wide keys that servers' configs set when several servers are
/// checked: they never set the whole run's output, scan or jobs.
fn ignored_keys(sources: &[Source], own: Option<&FileConfig>) -> Vec<String> {
    let mut notes = Vec::new();
    if own.is_some() && sources.len() == 1 {
        return notes;
    }
    let configs: Vec<(&str, &FileConfig)> = sources
        .iter()
        .filter_map(|src| match src {
            Source::Config { label, cfg } => Some((label.as_str(), &**cfg)),
            _ => None,
        })
        .collect();
    for s in SETTINGS.iter().filter(|s| s.scope == Scope::Invocation) {
        // A server's profile that would set it (`ci`: JSON output, failing static findings).
        for (label, cfg) in &configs {
            let profile = cfg.text(&table::PROFILE).and_then(Profile::parse);
            if let Some(p) = profile.filter(|p| s.default_for(*p) != s.default) {
                notes.push(format!(
                    "{label}: profile {:?} does not set {} for the whole run when several servers are checked: pass --profile {} or {}",
                    p.as_str(),
                    s.flag(),
                    p.as_str(),
                    s.flag()
                ));
            }
        }
        if !configs.iter().any(|(_, cfg)| cfg.has(s)) {
            continue;
        }
        notes.push(if s.key == "scan" {
            "config \"scan\" paths are ignored when several servers are checked: pass --scan <path> for one scan of the run".to_string()
        } else {
            format!(
                "config {:?} is ignored when several servers are checked: it belongs to the whole run, pass {} instead",
                s.key,
                s.flag()
            )
        });
    }
    notes
}
