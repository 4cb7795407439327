//! THE settings table: every setting of a run once — its config-file key, the clap ids of its
//! flags, its type, its built-in and per-profile defaults, whether it belongs to one server or to
//! the whole invocation, and its doc line. Everything else reads from here: the config-file
//! parser (which keys exist, what each must hold), [`known_keys`], the layering of a flag over
//! the config file over the profile over the default ([`Layers`]), the `config.checks` block of
//! the report, `--help` (the help line and `[default: …]` of every run flag) and the README's
//! option and config-key tables ([`options_markdown`], [`keys_markdown`]). A test fails when
//! any of them drifts from the table.
//!
//! Adding a setting is adding a row to [`settings!`]; a row with a `key` is read from config
//! files, a row with `flags` from the command line, and [`Layers`] layers them the same way for
//! every row.

use super::file::{FileConfig, Parsed};
use super::profile::Profile;
use clap::ArgMatches;
use clap::parser::ValueSource;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// A custom config reader: the whole config object and the file's folder → the value, if set.
pub type ReadKey = fn(&Map<String, Value>, &Path) -> Result<Option<Parsed>, String>;

/// What a setting holds, which decides how its config value is checked and its flag read.
#[derive(Clone, Copy)]
pub enum Kind {
    /// `true`/`false`; a flag (and its `negation`) that takes no value.
    Bool,
    /// A positive integer (`0` is refused); a `u64` flag.
    Count,
    /// A count of bytes: as `Count`, shown in MiB.
    Bytes,
    /// A non-empty string; a `String` flag.
    Text,
    /// A non-empty string, a path relative to the config file's folder; a path flag.
    Path,
    /// Parsed by its own function from the whole config object (`command` and `args` together,
    /// `env`, requests, tool calls, probes, effects); `None` when the key is absent.
    Custom(ReadKey),
    /// Accepted here and read by another row's parser (`args` by `command`'s) or by nobody
    /// (`$schema`).
    Other,
    /// A flag the resolver reads itself, not layered: where servers come from (`--config`,
    /// `--mcp-config`, …), `--format`.
    Flag,
}

/// Who a setting applies to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope {
    /// One server: read from that server's config (several config files are several servers).
    Target,
    /// The whole run (its output, report files, scan, `--jobs`): resolved once, from the flags
    /// and the run's own config file (the only `--config`, or the one shared by
    /// `--mcp-config`/`--registry`), never from a server's config among several.
    Invocation,
}

/// How a config key is listed in the report's `config.checks` block (the reference's shape).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Checks {
    None,
    /// `true` when the file sets it.
    Given(&'static str),
    /// The names it holds (variable names, request methods, tool names, probe names).
    Names(&'static str),
}

/// A built-in or per-profile default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Def {
    None,
    Bool(bool),
    Count(u64),
    Text(&'static str),
}

/// One setting. See the module doc.
pub struct Setting {
    /// The config-file key (`""` for a flag-only setting).
    pub key: &'static str,
    /// Another key for the same setting (`scanPath` for `scan`); giving both is an error.
    pub alias: &'static str,
    /// The clap ids of the flags that set it (`RunArgs` field names); the first is its main flag.
    pub flags: &'static [&'static str],
    /// A flag that sets a `Bool` setting to false (`--no-capability-probes`).
    pub negation: &'static str,
    pub kind: Kind,
    pub scope: Scope,
    pub default: Def,
    /// Defaults that differ from `default` in some profiles.
    pub profiles: &'static [(Profile, Def)],
    /// The values it takes, for the docs (`None`: any of its kind).
    pub choices: Option<fn() -> Vec<&'static str>>,
    /// The default as the docs show it, when `default` cannot say it (`cores`).
    pub shown: &'static str,
    /// How the report's `config.checks` block lists this key.
    pub checks: Checks,
    /// What it does: the README's option table and `--help` (capitalized, with a period).
    pub doc: &'static str,
    /// How the config key is written, when it is not simply the flag's value.
    pub key_doc: &'static str,
}

impl Setting {
    pub const BLANK: Setting = Setting {
        key: "",
        alias: "",
        flags: &[],
        negation: "",
        kind: Kind::Text,
        scope: Scope::Target,
        default: Def::None,
        profiles: &[],
        choices: None,
        shown: "",
        checks: Checks::None,
        doc: "",
        key_doc: "",
    };

    /// This setting's default under `profile`.
    pub fn default_for(&self, profile: Profile) -> Def {
        self.profiles
            .iter()
            .find(|(p, _)| *p == profile)
            .map_or(self.default, |(_, d)| *d)
    }

    /// The main flag as typed (`--timeout`), for messages.
    pub fn flag(&self) -> String {
        self.flags
            .first()
            .map(|id| format!("--{}", id.replace('_', "-")))
            .unwrap_or_default()
    }

    /// The value of its flags on the command line, `None` when none was given.
    fn flag_value(&self, m: &ArgMatches) -> Option<Parsed> {
        let given =
            |id: &str| !id.is_empty() && m.value_source(id) == Some(ValueSource::CommandLine);
        match self.kind {
            Kind::Bool => {
                if self.flags.iter().any(|id| given(id)) {
                    Some(Parsed::Bool(true))
                } else if given(self.negation) {
                    Some(Parsed::Bool(false))
                } else {
                    None
                }
            }
            Kind::Count | Kind::Bytes => self
                .flags
                .iter()
                .find(|id| given(id))
                .and_then(|id| m.get_one::<u64>(id))
                .map(|n| Parsed::Count(*n)),
            Kind::Text => self
                .flags
                .iter()
                .find(|id| given(id))
                .and_then(|id| m.get_one::<String>(id))
                .map(|s| Parsed::Text(s.clone())),
            Kind::Path => self
                .flags
                .iter()
                .find(|id| given(id))
                .and_then(|id| m.get_one::<PathBuf>(id))
                .map(|p| Parsed::Path(p.clone())),
            Kind::Custom(_) | Kind::Other | Kind::Flag => None,
        }
    }
}

impl std::fmt::Debug for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Setting({} {:?})", self.key, self.flags)
    }
}

impl PartialEq for Setting {
    /// Settings are compared by identity (each row is one static).
    fn eq(&self, other: &Setting) -> bool {
        std::ptr::eq(self, other)
    }
}

impl From<Def> for Option<Parsed> {
    fn from(d: Def) -> Option<Parsed> {
        match d {
            Def::None => None,
            Def::Bool(b) => Some(Parsed::Bool(b)),
            Def::Count(n) => Some(Parsed::Count(n)),
            Def::Text(s) => Some(Parsed::Text(s.to_string())),
        }
    }
}

/// Where a layered value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Flag,
    Config,
    Profile,
    Default,
}

/// The layering of every setting, the same for each: a flag given on the command line wins,
/// then the config file, then the profile's default, then the built-in default.
pub struct Layers<'a> {
    pub matches: &'a ArgMatches,
    pub config: &'a FileConfig,
    pub profile: Profile,
}

impl Layers<'_> {
    /// The layered value of `s` and where it came from (`None`: no layer sets it).
    pub fn get(&self, s: &'static Setting) -> Option<(Parsed, Origin)> {
        if let Some(v) = s.flag_value(self.matches) {
            return Some((v, Origin::Flag));
        }
        if let Some(v) = self.config.get(s) {
            return Some((v.clone(), Origin::Config));
        }
        let profiled = s.default_for(self.profile);
        if profiled != s.default {
            return Option::<Parsed>::from(profiled).map(|v| (v, Origin::Profile));
        }
        Option::<Parsed>::from(s.default).map(|v| (v, Origin::Default))
    }

    pub fn bool(&self, s: &'static Setting) -> bool {
        matches!(self.get(s), Some((Parsed::Bool(true), _)))
    }

    pub fn count(&self, s: &'static Setting) -> Option<u64> {
        match self.get(s) {
            Some((Parsed::Count(n), _)) => Some(n),
            _ => None,
        }
    }

    pub fn text(&self, s: &'static Setting) -> Option<String> {
        match self.get(s) {
            Some((Parsed::Text(t), _)) => Some(t),
            _ => None,
        }
    }

    /// A path and whether it came from the command line (relative to the working directory)
    /// rather than the config file (already resolved against the file's folder).
    pub fn path(&self, s: &'static Setting) -> Option<(PathBuf, Origin)> {
        match self.get(s) {
            Some((Parsed::Path(p), origin)) => Some((p, origin)),
            _ => None,
        }
    }
}

/// Declares settings as `pub static` rows and [`SETTINGS`], every row in declaration order (the
/// order of the README's tables and of the config parser's checks).
macro_rules! settings {
    ($( $id:ident { $($field:ident : $val:expr),* $(,)? } )*) => {
        $(
            #[allow(clippy::needless_update)]
            pub static $id: Setting = Setting { $($field: $val,)* ..Setting::BLANK };
        )*
        /// Every setting, in declaration order.
        pub static SETTINGS: &[&Setting] = &[$(&$id),*];
    };
}

const MIB: u64 = 1024 * 1024;

fn profile_names() -> Vec<&'static str> {
    Profile::NAMES.to_vec()
}

fn revisions() -> Vec<&'static str> {
    let mut all = crate::protocol::LEGACY_REVISIONS.to_vec();
    all.push(super::ALL_REVISIONS);
    all
}

fn name_rules() -> Vec<&'static str> {
    vec!["spec", "strict-client"]
}

fn probe_names() -> Vec<&'static str> {
    crate::runtime::probes::corpus::PROBES
        .iter()
        .map(|p| p.name)
        .chain(["all", "none"])
        .collect()
}

fn policies() -> Vec<&'static str> {
    vec!["observe", "contain"]
}

use super::file::{
    adversarial_probes, command, effects, env, request, requests, tool_calls_adversarial,
    tool_calls_safe,
};
use Kind::*;
use Profile::{Ci, Registry, Smoke, Strict};
use Scope::*;

settings! {
    SCHEMA { key: "$schema", kind: Other, doc: "the JSON schema of the file (ignored)" }
    CONFIG {
        flags: &["config"], kind: Flag,
        doc: "read settings and the command from a JSON config file (below); flags override it. Repeatable: several config files are several servers, one report",
    }
    MCP_CONFIG {
        flags: &["mcp_config"], kind: Flag,
        doc: "check the stdio servers of a Claude Desktop, Cursor or VS Code config, one report section per server (repeatable)",
    }
    REGISTRY {
        flags: &["registry"], kind: Flag,
        doc: "check every server of a registry list (JSON lines, below), one report (repeatable)",
    }
    SERVER {
        flags: &["server"], kind: Flag,
        doc: "with `--mcp-config`/`--registry`: only the server(s) of this name",
    }
    JOBS {
        key: "jobs", flags: &["jobs"], kind: Count, scope: Invocation, shown: "cores",
        doc: "servers checked at once (1 to 1024)",
    }
    COMMAND {
        key: "command", kind: Custom(command), checks: Checks::Given("command"),
        doc: "the server command and its arguments, after `--`",
        key_doc: "`[\"node\", \"./server.js\"]`, or `\"node\"` with `args`",
    }
    ARGS {
        key: "args", kind: Other,
        doc: "arguments when `command` is a string",
        key_doc: "arguments when `command` is a string",
    }
    CWD {
        key: "cwd", flags: &["cwd"], kind: Path, checks: Checks::Given("cwd"), shown: "`.`",
        doc: "working directory of the server",
        key_doc: "working directory, relative to the config file",
    }
    ENV {
        key: "env", flags: &["env"], kind: Custom(env), checks: Checks::Names("envNames"),
        doc: "environment variable for the server (repeatable); values never appear in reports",
        key_doc: "environment for the server, an object of strings (values redacted in every report)",
    }
    PROFILE {
        key: "profile", flags: &["profile"], default: Def::Text("custom"), choices: Some(profile_names),
        doc: "preset of defaults (below) that flags narrow or deepen",
    }
    PROTOCOL {
        key: "protocol", flags: &["protocol"], default: Def::Text(crate::protocol::DEFAULT_REVISION),
        choices: Some(revisions),
        doc: "MCP revision to request, or `all` (each legacy revision in turn, one section per revision)",
    }
    REPEAT {
        key: "repeat", flags: &["repeat"], kind: Count, default: Def::Count(1),
        profiles: &[(Registry, Def::Count(2)), (Strict, Def::Count(2))],
        doc: "run the server in `n` fresh processes (1 to 100) and report drift between them",
    }
    CAPABILITY_PROBES {
        key: "capabilityProbes", flags: &["capability_probes"], negation: "no_capability_probes",
        kind: Bool, default: Def::Bool(true), profiles: &[(Smoke, Def::Bool(false))],
        doc: "list every advertised capability",
    }
    MAX_PAGES {
        key: "maxPages", flags: &["max_pages"], kind: Count, default: Def::Count(100),
        doc: "pages followed per list method",
    }
    TOOL_NAME_RULE {
        key: "toolNameRule", flags: &["tool_name_rule"], default: Def::Text("spec"), choices: Some(name_rules),
        doc: "tool-name contract: `spec`, names breaking the strict-client rule `^[a-zA-Z0-9_-]{1,64}$` are warnings; `strict-client`, errors",
    }
    DISCOVER {
        key: "discover", negation: "no_discover", kind: Bool, default: Def::Bool(true),
        doc: "do not send `server/discover` before `initialize` (legacy-era servers only)",
        key_doc: "`false`: as `--no-discover`",
    }
    REQUEST {
        key: "request", flags: &["request"], kind: Custom(request), checks: Checks::Names("requests"),
        doc: "send a request after initialization, e.g. `tools/list` (repeatable)",
        key_doc: "one explicit request: `{\"method\": \"tools/list\", \"params\": {...}}` (a `--request` flag replaces it)",
    }
    PARAMS {
        flags: &["params"], kind: Custom(request),
        doc: "params object (JSON) for the `--request` just before it",
    }
    REQUESTS {
        key: "requests", kind: Custom(requests), checks: Checks::Names("requests"),
        doc: "explicit requests after initialization",
        key_doc: "a list of requests, each `\"method\"` or `{\"method\": ..., \"params\": {...}}` (a `--request` flag replaces them)",
    }
    SAFE_TOOL_CALLS {
        key: "safeToolCalls", kind: Custom(tool_calls_safe), checks: Checks::Names("safeToolCalls"),
        doc: "the only tools ever called, each result checked",
        key_doc: "`[{\"name\": \"echo\", \"arguments\": {\"text\": \"hi\"}}]`: the only tools ever called, each result checked",
    }
    ADVERSARIAL_PROBES {
        key: "adversarialProbes", flags: &["adversarial_probes", "adversarial_probe"],
        kind: Custom(adversarial_probes), default: Def::Text("none"),
        profiles: &[(Strict, Def::Text("all"))], choices: Some(probe_names), checks: Checks::Names("adversarialProbes"),
        doc: "hostile-input probes (below), comma-separated or repeated: probe names, `all`, `none`; each runs in a fresh server process",
        key_doc: "`true`/`\"all\"`, `\"none\"`/`false`, or a list of probe names",
    }
    ADVERSARIAL_TOOL_CALLS {
        key: "adversarialToolCalls", kind: Custom(tool_calls_adversarial), checks: Checks::Names("adversarialToolCalls"),
        doc: "tools called with invalid arguments",
        key_doc: "`[{\"name\": \"echo\", \"arguments\": {\"text\": 5}}]`: tools you consider safe, called with invalid arguments, each in its own process; a success is an error",
    }
    EFFECTS {
        key: "effects", flags: &["effects"], kind: Custom(effects), default: Def::Bool(false),
        doc: "the no-effect proof (below): system-call observer (Linux), canary proxy, effects log, process watch",
        key_doc: "`true`, or `{\"syscalls\": true, \"policy\": \"contain\", \"proxy\": true, \"log\": true, \"processWatch\": true, \"env\": [\"API_URL\"] or {\"API_URL\": \"https://{canary}/v1\"}}` (`syscalls: false` turns the system-call observer off on purpose, without a warning)",
    }
    EFFECTS_POLICY {
        flags: &["effects_policy"], kind: Custom(effects), default: Def::Text("contain"), choices: Some(policies),
        doc: "with `--effects` (implies it): a network call the server makes while it handles hostile input is refused (`contain`: `ECONNREFUSED`, nothing leaves the machine) or let through (`observe`); both record it",
    }
    EFFECTS_ENV {
        flags: &["effects_env"], kind: Custom(effects),
        doc: "with `--effects` (implies it): point this variable at the canary too, e.g. `API_URL` (`http://127.0.0.1:PORT`) or `'API_URL=https://{canary}/v1'` (repeatable)",
    }
    UNBUFFERED_RERUN {
        key: "unbufferedRerun", flags: &["unbuffered_rerun"], negation: "no_unbuffered_rerun",
        kind: Bool, default: Def::Bool(false), profiles: &[(Strict, Def::Bool(true))],
        doc: "run the server once more with `PYTHONUNBUFFERED` set (or removed, if it was set) and report pollution only one buffering mode shows",
    }
    TIMEOUT {
        key: "timeoutMs", flags: &["timeout"], kind: Count, default: Def::Count(5000),
        doc: "timeout for initialize and each request, in milliseconds",
    }
    QUIET_MS {
        key: "quietMs", flags: &["quiet_ms"], kind: Count, default: Def::Count(1000),
        doc: "quiet window watched for late stdout before stdin is closed, in milliseconds",
    }
    SHUTDOWN_GRACE {
        key: "shutdownGraceMs", flags: &["shutdown_grace"], kind: Count, default: Def::Count(3000),
        doc: "time the server gets to exit after stdin EOF before SIGTERM, in milliseconds",
    }
    ALLOW_SIGTERM_SHUTDOWN {
        key: "allowSigtermShutdown", flags: &["allow_sigterm_shutdown"], kind: Bool, default: Def::Bool(false),
        doc: "a server that needs SIGTERM is a warning, not an error",
    }
    ALLOW_OPERATION_ERRORS {
        key: "allowOperationErrors", flags: &["allow_operation_errors"], kind: Bool, default: Def::Bool(false),
        doc: "an error reply to a `--request` (or `isError: true` from a called tool) is a warning, not an error",
    }
    MAX_STDOUT_BYTES {
        key: "maxStdoutBytes", flags: &["max_stdout_bytes"], kind: Bytes, default: Def::Count(64 * MIB),
        doc: "total stdout read before the run is stopped (protects the guard)",
    }
    MAX_STDOUT_LINE_BYTES {
        key: "maxStdoutLineBytes", flags: &["max_stdout_line_bytes"], kind: Bytes, default: Def::Count(4 * MIB),
        doc: "longest stdout line buffered (protects the guard; legal lines can be large)",
    }
    MAX_STDERR_BYTES {
        key: "maxStderrBytes", flags: &["max_stderr_bytes"], kind: Bytes, default: Def::Count(MIB),
        doc: "stderr tail kept for the report (more is never a failure)",
    }
    JSON {
        key: "json", flags: &["json"], kind: Bool, scope: Invocation, default: Def::Bool(false),
        profiles: &[(Ci, Def::Bool(true)), (Strict, Def::Bool(true))],
        doc: "print the JSON report (same as `--format json`)",
    }
    FORMAT {
        flags: &["format"], kind: Flag, scope: Invocation, shown: "`text` (`github` inside GitHub Actions)",
        doc: "main stream: `text`, `json`, `sarif`, `junit` or `github` (text, then annotations)",
    }
    SARIF {
        flags: &["sarif"], kind: Path, scope: Invocation,
        doc: "also write a SARIF 2.1.0 report (GitHub code scanning) to this file (written whole or not at all)",
    }
    JUNIT {
        flags: &["junit"], kind: Path, scope: Invocation,
        doc: "also write a JUnit XML report (CI test tabs) to this file (written whole or not at all)",
    }
    JSON_FILE {
        flags: &["json_file"], kind: Path, scope: Invocation,
        doc: "also write the JSON report to this file (written whole or not at all)",
    }
    NO_GITHUB {
        flags: &["no_github"], kind: Bool, scope: Invocation, default: Def::Bool(false),
        doc: "no GitHub annotations or step summary, even when `GITHUB_ACTIONS=true`",
    }
    SCAN {
        key: "scan", alias: "scanPath", flags: &["scan"], kind: Path, scope: Invocation,
        doc: "also scan this source folder or file for stdout writes (findings are warnings); also the tree runtime pollution is traced to",
        key_doc: "static scan path, relative to the file",
    }
    TRANSCRIPT {
        flags: &["transcript"], kind: Path, scope: Invocation,
        doc: "write the raw exchange of every server process (stdin, stdout, stderr, timestamped; JSON lines) to this file; `mcp-stdio-guard replay FILE` prints it",
    }
    SHARD {
        flags: &["shard"], kind: Flag, scope: Invocation,
        doc: "check only shard K of N of the servers (e.g. `2/4`): a deterministic, balanced slice by a hash of each server's name, for CI matrices; `mcp-stdio-guard merge` joins the shards' JSON reports",
    }
    FAIL_ON_STATIC {
        key: "failOnStatic", flags: &["fail_on_static"], kind: Bool, scope: Invocation,
        default: Def::Bool(false), profiles: &[(Ci, Def::Bool(true)), (Strict, Def::Bool(true))],
        doc: "make `--scan` findings errors that fail the run",
    }
}

/// Every key the guard's config file accepts, in table order.
pub fn known_keys() -> impl Iterator<Item = &'static str> {
    SETTINGS
        .iter()
        .flat_map(|s| [s.key, s.alias])
        .filter(|k| !k.is_empty())
}

/// The setting a config key names.
pub fn by_key(key: &str) -> Option<&'static Setting> {
    SETTINGS
        .iter()
        .copied()
        .find(|s| !s.key.is_empty() && (s.key == key || s.alias == key))
}

/// A default as the docs show it.
fn shown_def(kind: Kind, d: Def) -> String {
    match (kind, d) {
        (_, Def::None) => String::new(),
        (Kind::Bool | Kind::Custom(_), Def::Bool(true)) => "on".into(),
        (Kind::Bool | Kind::Custom(_), Def::Bool(false)) => "off".into(),
        (Kind::Bytes, Def::Count(n)) if n % MIB == 0 => format!("{} MiB", n / MIB),
        (_, Def::Count(n)) => format!("`{n}`"),
        (_, Def::Text(t)) => format!("`{t}`"),
        (_, Def::Bool(b)) => format!("`{b}`"),
    }
}

/// The Default column of the option table: the default, then how profiles change it.
pub fn shown_default(s: &Setting) -> String {
    let mut out = if s.shown.is_empty() {
        shown_def(s.kind, s.default)
    } else {
        s.shown.to_string()
    };
    if !s.profiles.is_empty() {
        // Profiles that share a value are listed together: `2` in `registry`, `strict`.
        let mut groups: Vec<(Def, Vec<&str>)> = Vec::new();
        for (p, d) in s.profiles {
            match groups.iter_mut().find(|(g, _)| g == d) {
                Some((_, names)) => names.push(p.as_str()),
                None => groups.push((*d, vec![p.as_str()])),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(d, names)| {
                let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                format!("{} in {}", shown_def(s.kind, *d), names.join(", "))
            })
            .collect();
        out = format!("{out} ({})", parts.join("; "));
    }
    out
}

/// A doc line as `--help` prints it: capitalized, with a period, backticks dropped.
pub fn help_line(doc: &str) -> String {
    let mut text = doc.replace('`', "").replace(" (below)", "");
    if let Some(first) = text.get(..1) {
        text = first.to_uppercase() + &text[1..];
    }
    if !text.ends_with('.') {
        text.push('.');
    }
    text
}

/// The `--help` text of each run flag, from the table: `(clap id, help)`.
pub fn flag_help() -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for s in SETTINGS {
        let mut main = help_line(s.doc);
        if let Some(choices) = s.choices {
            main = format!("{main} One of: {}.", choices().join(", "));
        }
        let default = shown_default(s).replace('`', "");
        if !default.is_empty() {
            main = format!("{main} [default: {default}]");
        }
        if !s.key.is_empty() {
            main = format!("{main} [config: {}]", s.key);
        }
        for (i, id) in s.flags.iter().enumerate() {
            let text = if i == 0 {
                main.clone()
            } else {
                format!("Same as {} (repeatable).", s.flag())
            };
            out.push((*id, text));
        }
        if !s.negation.is_empty() {
            let text = if s.flags.is_empty() {
                help_line(s.doc)
            } else {
                format!("Turns {} off.", s.flag())
            };
            out.push((s.negation, text));
        }
    }
    out
}

/// The README's option table (between its `options` markers), generated from [`SETTINGS`] and
/// the flags' value names in `cmd`.
pub fn options_markdown(cmd: &clap::Command) -> String {
    let mut out = String::from("| Option | Default | Meaning |\n| --- | --- | --- |\n");
    let usage = |id: &str| -> String {
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_id() == id)
            .unwrap_or_else(|| panic!("the table names a flag {id:?} that clap does not have"));
        let long = arg.get_long().unwrap_or(id);
        match arg.get_value_names() {
            Some(names) if arg.get_action().takes_values() => {
                let name = names[0].as_str();
                if name.chars().all(|c| c.is_ascii_alphabetic()) {
                    format!("`--{long} <{}>`", name.to_ascii_lowercase())
                } else {
                    format!("`--{long} {name}`")
                }
            }
            _ => format!("`--{long}`"),
        }
    };
    for s in SETTINGS {
        if s.flags.is_empty() && s.negation.is_empty() {
            continue;
        }
        let mut names: Vec<String> = s.flags.iter().map(|id| usage(id)).collect();
        if !s.negation.is_empty() {
            names.push(usage(s.negation));
        }
        let mut doc = s.doc.to_string();
        if let Some(choices) = s.choices {
            let list: Vec<String> = choices().iter().map(|c| format!("`{c}`")).collect();
            doc = format!("{doc}; one of {}", list.join(", "));
        }
        // A flag that only turns a setting off (`--no-discover`) is off by default.
        let default = if s.flags.is_empty() {
            String::new()
        } else {
            shown_default(s)
        };
        let default = if default.is_empty() {
            default
        } else {
            default + " "
        };
        out.push_str(&format!("| {} | {default}| {doc} |\n", names.join(" / ")));
    }
    out
}

/// The README's config-key table (between its `config-keys` markers), generated from
/// [`SETTINGS`].
pub fn keys_markdown() -> String {
    let mut out = String::from("| Key | Flag | Meaning |\n| --- | --- | --- |\n");
    for s in SETTINGS {
        if s.key.is_empty() || matches!(s.kind, Kind::Other) && s.key_doc.is_empty() {
            continue;
        }
        let key = if s.alias.is_empty() {
            format!("`{}`", s.key)
        } else {
            format!("`{}` / `{}`", s.key, s.alias)
        };
        let flag = if s.flags.is_empty() && s.negation.is_empty() {
            String::new()
        } else if s.flags.is_empty() {
            format!("`--{}` ", s.negation.replace('_', "-"))
        } else {
            format!("`{}` ", s.flag())
        };
        let meaning = if s.key_doc.is_empty() {
            s.doc
        } else {
            s.key_doc
        };
        out.push_str(&format!("| {key} | {flag}| {meaning} |\n"));
    }
    out
}
