//! Config files, parsed and validated before anything is spawned (pure: text in, data out).
//!
//! Two formats:
//! - the guard's own config (`--config`), field-compatible with the reference tool: every key is
//!   known, an unknown key is an error naming it, relative paths resolve against the file's folder;
//! - the `mcpServers` files of MCP clients (`--mcp-config`): Claude Desktop, Cursor and Claude Code
//!   (`mcpServers`), VS Code (`servers`, or `mcp.servers` in settings.json, with `type: "stdio"`).
//!   Client files carry many client-specific keys, so unknown keys there are ignored; entries that
//!   are not stdio servers are skipped with a note.

use crate::runtime::probes::requests::OperationSpec;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Every key the guard's config file accepts.
pub const KNOWN_KEYS: &[&str] = &[
    "$schema",
    "command",
    "args",
    "cwd",
    "env",
    "profile",
    "protocol",
    "timeoutMs",
    "repeat",
    "json",
    "maxStdoutBytes",
    "maxStdoutLineBytes",
    "maxStderrBytes",
    "scan",
    "scanPath",
    "failOnStatic",
    "request",
    "requests",
    "safeToolCalls",
    "adversarialProbes",
    "adversarialToolCalls",
    "effects",
    "unbufferedRerun",
    "quietMs",
    "shutdownGraceMs",
    "allowSigtermShutdown",
    "allowOperationErrors",
    "capabilityProbes",
    "discover",
    "maxPages",
    "toolNameRule",
];

/// A `{name, arguments}` tool call recipe (`safeToolCalls`, `adversarialToolCalls`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub name: String,
    pub arguments: Value,
}

impl ToolCall {
    pub fn operation(&self) -> OperationSpec {
        OperationSpec {
            method: "tools/call".into(),
            params: Some(serde_json::json!({"name": self.name, "arguments": self.arguments})),
            source: "safe-tool-call",
            safe_tool_call_name: Some(self.name.clone()),
        }
    }
}

/// The guard's config file, every field optional (the CLI and the profile fill the rest).
#[derive(Debug, Clone, Default)]
pub struct FileConfig {
    /// The path as given.
    pub path: PathBuf,
    /// The absolute path.
    pub resolved_path: PathBuf,
    /// Program first.
    pub command: Option<Vec<String>>,
    /// Resolved against the file's folder.
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub profile: Option<String>,
    pub protocol: Option<String>,
    pub timeout_ms: Option<u64>,
    pub repeat: Option<u64>,
    pub json: Option<bool>,
    pub max_stdout_bytes: Option<u64>,
    pub max_stdout_line_bytes: Option<u64>,
    pub max_stderr_bytes: Option<u64>,
    /// Resolved against the file's folder.
    pub scan: Option<PathBuf>,
    pub fail_on_static: Option<bool>,
    /// `request` then `requests`, in order.
    pub requests: Vec<OperationSpec>,
    pub safe_tool_calls: Vec<ToolCall>,
    /// `None` when absent; `Some(vec![])` for `false`/`"none"`.
    pub adversarial_probes: Option<Vec<String>>,
    pub adversarial_tool_calls: Vec<ToolCall>,
    /// `true`/`false` or an object of effect settings (issue 4 gives them meaning).
    pub effects: Option<Value>,
    pub unbuffered_rerun: Option<bool>,
    pub quiet_ms: Option<u64>,
    pub shutdown_grace_ms: Option<u64>,
    pub allow_sigterm_shutdown: Option<bool>,
    pub allow_operation_errors: Option<bool>,
    pub capability_probes: Option<bool>,
    pub discover: Option<bool>,
    pub max_pages: Option<u64>,
    pub tool_name_rule: Option<String>,
}

/// Reads and parses a config file. Errors are one line, naming the file and the key.
pub fn load(path: &Path, here: &Path) -> Result<FileConfig, String> {
    let resolved = here.join(path);
    let text = crate::input::read_text(&resolved)
        .map_err(|e| format!("cannot read config file {} ({e})", path.display()))?;
    let dir = resolved.parent().unwrap_or(here).to_path_buf();
    let mut cfg = parse(&text, &dir).map_err(|e| format!("config file {}: {e}", path.display()))?;
    cfg.path = path.to_path_buf();
    cfg.resolved_path = resolved;
    Ok(cfg)
}

/// Parses config text; relative paths resolve against `dir`.
pub fn parse(text: &str, dir: &Path) -> Result<FileConfig, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    let Value::Object(obj) = value else {
        return Err("the top level must be a JSON object of settings".into());
    };
    for key in obj.keys() {
        if !KNOWN_KEYS.contains(&key.as_str()) {
            let hint = suggest(key)
                .map(|k| format!("did you mean {k:?}? "))
                .unwrap_or_default();
            return Err(format!(
                "unknown key {key:?}: {hint}known keys are {}",
                KNOWN_KEYS[1..].join(", ")
            ));
        }
    }
    let command = match (obj.get("command"), obj.get("args")) {
        (None, None) => None,
        (None, Some(_)) => {
            return Err("\"args\" is set but \"command\" is not: add \"command\"".into());
        }
        (Some(Value::Array(items)), args) => {
            if args.is_some() {
                return Err("\"args\" is only used when \"command\" is a string: put the arguments in the \"command\" array".into());
            }
            let argv = strings(items, "command")?;
            if argv.is_empty() || argv[0].is_empty() {
                return Err(
                    "\"command\" is empty: give the program first, e.g. [\"node\", \"server.js\"]"
                        .into(),
                );
            }
            Some(argv)
        }
        (Some(Value::String(program)), args) => {
            if program.is_empty() {
                return Err("\"command\" is empty: give the program, e.g. \"node\"".into());
            }
            let mut argv = vec![program.clone()];
            match args {
                None => {}
                Some(Value::Array(items)) => argv.extend(strings(items, "args")?),
                Some(other) => {
                    return Err(format!(
                        "\"args\" is {}, expected an array of strings",
                        kind(other)
                    ));
                }
            }
            Some(argv)
        }
        (Some(other), _) => {
            return Err(format!(
                "\"command\" is {}, expected an array like [\"node\", \"server.js\"] or a string with \"args\"",
                kind(other)
            ));
        }
    };
    let mut c = FileConfig {
        command,
        cwd: opt_string(&obj, "cwd")?.map(|p| dir.join(p)),
        ..FileConfig::default()
    };
    if let Some(env) = obj.get("env") {
        let Value::Object(map) = env else {
            return Err(format!(
                "\"env\" is {}, expected an object of strings",
                kind(env)
            ));
        };
        for (k, v) in map {
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                return Err(format!("\"env\" has an invalid variable name {k:?}"));
            }
            match v {
                Value::String(s) => c.env.push((k.clone(), s.clone())),
                other => {
                    return Err(format!(
                        "\"env\".{k} is {}, expected a string (quote numbers: \"{}\")",
                        kind(other),
                        other
                    ));
                }
            }
        }
    }
    c.profile = opt_string(&obj, "profile")?;
    c.protocol = opt_string(&obj, "protocol")?;
    c.timeout_ms = opt_u64(&obj, "timeoutMs")?;
    c.repeat = opt_u64(&obj, "repeat")?;
    c.json = opt_bool(&obj, "json")?;
    c.max_stdout_bytes = opt_u64(&obj, "maxStdoutBytes")?;
    c.max_stdout_line_bytes = opt_u64(&obj, "maxStdoutLineBytes")?;
    c.max_stderr_bytes = opt_u64(&obj, "maxStderrBytes")?;
    if obj.contains_key("scan") && obj.contains_key("scanPath") {
        return Err("both \"scan\" and \"scanPath\" are set: keep one".into());
    }
    c.scan = match opt_string(&obj, "scan")? {
        Some(p) => Some(dir.join(p)),
        None => opt_string(&obj, "scanPath")?.map(|p| dir.join(p)),
    };
    c.fail_on_static = opt_bool(&obj, "failOnStatic")?;
    if let Some(r) = obj.get("request") {
        c.requests.push(request(r, "request")?);
    }
    if let Some(rs) = obj.get("requests") {
        let Value::Array(items) = rs else {
            return Err(format!(
                "\"requests\" is {}, expected an array of {{\"method\": ...}}",
                kind(rs)
            ));
        };
        for (i, r) in items.iter().enumerate() {
            c.requests.push(request(r, &format!("requests[{i}]"))?);
        }
    }
    c.safe_tool_calls = tool_calls(obj.get("safeToolCalls"), "safeToolCalls")?;
    c.adversarial_tool_calls = tool_calls(obj.get("adversarialToolCalls"), "adversarialToolCalls")?;
    c.adversarial_probes = match obj.get("adversarialProbes") {
        None => None,
        Some(Value::Bool(true)) => Some(vec!["all".into()]),
        Some(Value::Bool(false)) => Some(Vec::new()),
        Some(Value::String(s)) => Some(vec![s.clone()]),
        Some(Value::Array(items)) => Some(strings(items, "adversarialProbes")?),
        Some(other) => {
            return Err(format!(
                "\"adversarialProbes\" is {}, expected true, \"all\", \"none\" or a list of probe names",
                kind(other)
            ));
        }
    };
    c.effects = match obj.get("effects") {
        None => None,
        Some(v @ (Value::Bool(_) | Value::Object(_))) => Some(v.clone()),
        Some(other) => {
            return Err(format!(
                "\"effects\" is {}, expected true, false or an object",
                kind(other)
            ));
        }
    };
    c.unbuffered_rerun = opt_bool(&obj, "unbufferedRerun")?;
    c.quiet_ms = opt_u64(&obj, "quietMs")?;
    c.shutdown_grace_ms = opt_u64(&obj, "shutdownGraceMs")?;
    c.allow_sigterm_shutdown = opt_bool(&obj, "allowSigtermShutdown")?;
    c.allow_operation_errors = opt_bool(&obj, "allowOperationErrors")?;
    c.capability_probes = opt_bool(&obj, "capabilityProbes")?;
    c.discover = opt_bool(&obj, "discover")?;
    c.max_pages = opt_u64(&obj, "maxPages")?;
    c.tool_name_rule = opt_string(&obj, "toolNameRule")?;
    Ok(c)
}

fn request(v: &Value, at: &str) -> Result<OperationSpec, String> {
    let (method, params) = match v {
        Value::String(m) => (m.clone(), None),
        Value::Object(o) => {
            for k in o.keys() {
                if k != "method" && k != "params" {
                    return Err(format!(
                        "{at} has unknown key {k:?}: a request has \"method\" and optional \"params\""
                    ));
                }
            }
            let method = match o.get("method") {
                Some(Value::String(m)) => m.clone(),
                _ => {
                    return Err(format!(
                        "{at} needs a string \"method\", e.g. {{\"method\": \"tools/list\"}}"
                    ));
                }
            };
            let params = match o.get("params") {
                None => None,
                Some(p @ Value::Object(_)) => Some(p.clone()),
                Some(other) => {
                    return Err(format!(
                        "{at}.params is {}, expected an object",
                        kind(other)
                    ));
                }
            };
            (method, params)
        }
        other => {
            return Err(format!(
                "{at} is {}, expected {{\"method\": \"tools/list\"}}",
                kind(other)
            ));
        }
    };
    if method.trim().is_empty() {
        return Err(format!("{at} has an empty method"));
    }
    Ok(OperationSpec {
        method,
        params,
        source: "config-request",
        safe_tool_call_name: None,
    })
}

fn tool_calls(v: Option<&Value>, key: &str) -> Result<Vec<ToolCall>, String> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = v else {
        return Err(format!(
            "\"{key}\" is {}, expected an array of {{\"name\", \"arguments\"}}",
            kind(v)
        ));
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(o) = item else {
            return Err(format!(
                "{key}[{i}] is {}, expected {{\"name\": ..., \"arguments\": {{...}}}}",
                kind(item)
            ));
        };
        for k in o.keys() {
            if k != "name" && k != "arguments" {
                return Err(format!(
                    "{key}[{i}] has unknown key {k:?}: a tool call has \"name\" and \"arguments\""
                ));
            }
        }
        let name = match o.get("name") {
            Some(Value::String(n)) if !n.is_empty() => n.clone(),
            _ => return Err(format!("{key}[{i}] needs a non-empty string \"name\"")),
        };
        let arguments = match o.get("arguments") {
            None => Value::Object(Map::new()),
            Some(a @ Value::Object(_)) => a.clone(),
            Some(other) => {
                return Err(format!(
                    "{key}[{i}].arguments is {}, expected an object",
                    kind(other)
                ));
            }
        };
        out.push(ToolCall { name, arguments });
    }
    Ok(out)
}

fn strings(items: &[Value], key: &str) -> Result<Vec<String>, String> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) => Ok(s.clone()),
            other => Err(format!("{key}[{i}] is {}, expected a string", kind(other))),
        })
        .collect()
}

fn opt_string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(Value::String(_)) => Err(format!("\"{key}\" is empty")),
        Some(other) => Err(format!("\"{key}\" is {}, expected a string", kind(other))),
    }
}

fn opt_bool(obj: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!(
            "\"{key}\" is {}, expected true or false",
            kind(other)
        )),
    }
}

fn opt_u64(obj: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(0) => Err(format!("\"{key}\" must be greater than 0")),
            Some(v) => Ok(Some(v)),
            None => Err(format!("\"{key}\" is {n}, expected a positive integer")),
        },
        Some(other) => Err(format!(
            "\"{key}\" is {}, expected a positive integer",
            kind(other)
        )),
    }
}

/// A JSON value's kind, for messages: `a number (5)`, `a string ("x")`.
fn kind(v: &Value) -> String {
    let shown = crate::runtime::checks::initialize::short(v);
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => format!("a boolean ({shown})"),
        Value::Number(_) => format!("a number ({shown})"),
        Value::String(_) => format!("a string ({shown})"),
        Value::Array(_) => format!("an array ({shown})"),
        Value::Object(_) => format!("an object ({shown})"),
    }
}

/// The known key closest to a misspelt one (edit distance ≤ 2, case-insensitive).
fn suggest(key: &str) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    KNOWN_KEYS
        .iter()
        .map(|k| (distance(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

// ------------------------------------------------------------------------- client mcpServers files

/// One stdio server from a client's config.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServer {
    pub name: String,
    /// Program first.
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Resolved against the file's folder (or the workspace for VS Code files).
    pub cwd: Option<PathBuf>,
}

/// The stdio servers of a client config, and the entries skipped (with why).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpServers {
    pub servers: Vec<McpServer>,
    pub skipped: Vec<(String, String)>,
}

/// Reads a client config file (`mcpServers`, `servers` or `mcp.servers`).
pub fn load_mcp_servers(path: &Path, here: &Path) -> Result<McpServers, String> {
    let resolved = here.join(path);
    let text = crate::input::read_text(&resolved)
        .map_err(|e| format!("cannot read MCP client config {} ({e})", path.display()))?;
    let dir = resolved.parent().unwrap_or(here).to_path_buf();
    parse_mcp_servers(&text, &dir, &|name| std::env::var(name).ok())
        .map_err(|e| format!("MCP client config {}: {e}", path.display()))
}

/// One line of a registry list (`--registry`): a server in the guard's config format, or the
/// servers of an MCP client config. `label` names the line in reports (`"name"`, or
/// `file:LINE`).
#[derive(Debug, Clone)]
pub enum RegistryEntry {
    Config { label: String, cfg: Box<FileConfig> },
    Client { label: String, servers: McpServers },
}

/// Reads a registry list: JSON lines (blank lines skipped), each an object. An object with
/// `mcpServers`/`servers`/`mcp` is a client config; any other is a guard config, which may
/// carry a `"name"`. Relative paths resolve against the list's folder. Errors name the line.
pub fn load_registry(path: &Path, here: &Path) -> Result<Vec<RegistryEntry>, String> {
    let resolved = here.join(path);
    let bytes = std::fs::read(&resolved)
        .map_err(|e| format!("cannot read registry list {} ({e})", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "registry list {} is not UTF-8 (byte {}): save it as UTF-8 JSON lines",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    let dir = resolved.parent().unwrap_or(here).to_path_buf();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), n + 1);
        if line.trim().is_empty() {
            continue;
        }
        let entry = registry_entry(line, &dir, &resolved, &at)
            .map_err(|e| format!("registry list {at}: {e}"))?;
        out.push(entry);
    }
    if out.is_empty() {
        return Err(format!(
            "registry list {} has no entries: write one JSON config object per line",
            path.display()
        ));
    }
    Ok(out)
}

fn registry_entry(line: &str, dir: &Path, file: &Path, at: &str) -> Result<RegistryEntry, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not valid JSON ({e})"))?;
    let Value::Object(mut obj) = value else {
        return Err(format!(
            "each line must be a JSON object (a config), not {}",
            kind_of(&value)
        ));
    };
    let name = match obj.remove("name") {
        None => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
        Some(other) => {
            return Err(format!(
                "\"name\" must be a non-empty string, not {}",
                kind_of(&other)
            ));
        }
    };
    let label = name.unwrap_or_else(|| at.to_string());
    let text = Value::Object(obj.clone()).to_string();
    if obj.contains_key("mcpServers") || obj.contains_key("servers") || obj.contains_key("mcp") {
        let servers = parse_mcp_servers(&text, dir, &|name| std::env::var(name).ok())?;
        Ok(RegistryEntry::Client { label, servers })
    } else {
        let mut cfg = parse(&text, dir)?;
        if cfg.command.is_none() {
            return Err("no \"command\": each guard config line names its server".into());
        }
        cfg.path = PathBuf::from(at);
        cfg.resolved_path = file.to_path_buf();
        Ok(RegistryEntry::Config {
            label,
            cfg: Box::new(cfg),
        })
    }
}

/// Parses a client config. `env` resolves `${env:NAME}` references (VS Code syntax).
pub fn parse_mcp_servers(
    text: &str,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<McpServers, String> {
    let value: Value =
        serde_json::from_str(&strip_jsonc(text)).map_err(|e| format!("not valid JSON ({e})"))?;
    let table = value
        .get("mcpServers")
        .or_else(|| value.get("servers"))
        .or_else(|| value.get("mcp").and_then(|m| m.get("servers")))
        .ok_or(
            "no \"mcpServers\" (Claude Desktop, Cursor) or \"servers\" (VS Code) object found",
        )?;
    let Value::Object(table) = table else {
        return Err("the server table is not an object keyed by server name".into());
    };
    // VS Code's `${workspaceFolder}` is the folder that holds `.vscode/`.
    let workspace = if dir.file_name().is_some_and(|n| n == ".vscode") {
        dir.parent().unwrap_or(dir).to_path_buf()
    } else {
        dir.to_path_buf()
    };
    let mut out = McpServers::default();
    for (name, entry) in table {
        let Value::Object(e) = entry else {
            return Err(format!("server {name:?} is not an object"));
        };
        if e.get("disabled").and_then(Value::as_bool) == Some(true) {
            out.skipped
                .push((name.clone(), "disabled in the client config".into()));
            continue;
        }
        let kind = e.get("type").and_then(Value::as_str).unwrap_or("stdio");
        let Some(command) = e.get("command") else {
            let why = if e.contains_key("url") || e.contains_key("serverUrl") {
                format!("a remote ({kind}) server, not stdio")
            } else {
                "no \"command\"".into()
            };
            out.skipped.push((name.clone(), why));
            continue;
        };
        if kind != "stdio" {
            out.skipped
                .push((name.clone(), format!("type {kind:?} is not stdio")));
            continue;
        }
        let expand = |s: &str| expand_vars(s, &workspace, env);
        let mut argv = match command {
            Value::String(c) if !c.is_empty() => {
                let program = expand(c)?;
                if program.is_empty() {
                    return Err(format!(
                        "server {name:?} has a \"command\" ({c:?}) that expands to nothing: set the variables it names"
                    ));
                }
                vec![program]
            }
            _ => {
                return Err(format!(
                    "server {name:?} has a \"command\" that is not a non-empty string"
                ));
            }
        };
        match e.get("args") {
            None => {}
            Some(Value::Array(items)) => {
                for (i, a) in items.iter().enumerate() {
                    match a {
                        Value::String(s) => argv.push(expand(s)?),
                        other => {
                            return Err(format!(
                                "server {name:?} args[{i}] is {}, expected a string",
                                kind_of(other)
                            ));
                        }
                    }
                }
            }
            Some(other) => {
                return Err(format!(
                    "server {name:?} \"args\" is {}, expected an array",
                    kind_of(other)
                ));
            }
        }
        let mut vars = Vec::new();
        match e.get("env") {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (k, v) in map {
                    match v {
                        Value::String(s) => vars.push((k.clone(), expand(s)?)),
                        Value::Number(_) | Value::Bool(_) => vars.push((k.clone(), v.to_string())),
                        other => {
                            return Err(format!(
                                "server {name:?} env.{k} is {}, expected a string",
                                kind_of(other)
                            ));
                        }
                    }
                }
            }
            Some(other) => {
                return Err(format!(
                    "server {name:?} \"env\" is {}, expected an object",
                    kind_of(other)
                ));
            }
        }
        let cwd = match e.get("cwd") {
            Some(Value::String(c)) => Some(workspace.join(expand(c)?)),
            _ => None,
        };
        out.servers.push(McpServer {
            name: name.clone(),
            command: argv,
            env: vars,
            cwd,
        });
    }
    Ok(out)
}

fn kind_of(v: &Value) -> String {
    kind(v)
}

/// Expands `${workspaceFolder}`, `${userHome}` and `${env:NAME}`; `${input:...}` needs a person.
fn expand_vars(
    s: &str,
    workspace: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let var = &rest[start + 2..start + end];
        let value = if var == "workspaceFolder" || var == "workspaceRoot" {
            workspace.display().to_string()
        } else if var == "userHome" {
            env("HOME").unwrap_or_default()
        } else if let Some(name) = var.strip_prefix("env:") {
            env(name).unwrap_or_default()
        } else if var.starts_with("input:") {
            return Err(format!(
                "{s:?} needs the interactive input ${{{var}}}: replace it with a value to check this server"
            ));
        } else {
            format!("${{{var}}}")
        };
        out.push_str(&value);
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// VS Code files are JSONC: comments (`//`, `/* */`) and trailing commas outside strings are
/// blanked out. Every dropped byte becomes a space (newlines stay), so the result is exactly as
/// long as `text` and JSON error positions still point into the file; a comma is trailing when
/// only whitespace and comments separate it from `}` or `]`. Plain JSON comes back unchanged.
/// Public for the config fuzz target and property tests.
pub fn strip_jsonc(text: &str) -> String {
    let bytes = text.as_bytes();
    // Pass 1: comments → spaces.
    let mut blanked = Vec::with_capacity(bytes.len());
    let mut in_str = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_str {
            blanked.push(b);
            if b == b'\\' && i + 1 < bytes.len() {
                blanked.push(bytes[i + 1]);
                i += 2;
                continue;
            }
            in_str = b != b'"';
            i += 1;
            continue;
        }
        let end = match (b, bytes.get(i + 1)) {
            (b'/', Some(b'/')) => memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |p| i + p),
            (b'/', Some(b'*')) => {
                memchr::memmem::find(&bytes[i + 2..], b"*/").map_or(bytes.len(), |p| i + 2 + p + 2)
            }
            _ => {
                in_str = b == b'"';
                blanked.push(b);
                i += 1;
                continue;
            }
        };
        blanked.extend(
            bytes[i..end]
                .iter()
                .map(|&c| if c == b'\n' { c } else { b' ' }),
        );
        i = end;
    }
    // Pass 2: trailing commas → spaces (comments are whitespace by now).
    let mut out = Vec::with_capacity(blanked.len());
    in_str = false;
    i = 0;
    while i < blanked.len() {
        let b = blanked[i];
        if in_str {
            out.push(b);
            if b == b'\\' && i + 1 < blanked.len() {
                out.push(blanked[i + 1]);
                i += 2;
                continue;
            }
            in_str = b != b'"';
        } else if b == b','
            && matches!(
                blanked[i + 1..].iter().find(|c| !c.is_ascii_whitespace()),
                Some(b'}' | b']')
            )
        {
            out.push(b' ');
        } else {
            in_str = b == b'"';
            out.push(b);
        }
        i += 1;
    }
    // Only whole comments (which end at ASCII bytes) and ASCII commas were replaced.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dir() -> PathBuf {
        PathBuf::from("/cfg")
    }

    fn err(text: &str) -> String {
        parse(text, &dir()).expect_err("should fail")
    }

    #[test]
    fn every_reference_field_parses() {
        let c = parse(
            &json!({
                "profile": "registry", "command": ["node", "./server.js"], "cwd": "srv",
                "json": true, "env": {"API_TOKEN": "s3cret"}, "protocol": "2025-06-18",
                "timeoutMs": 2000, "repeat": 3, "maxStdoutBytes": 10, "maxStdoutLineBytes": 5,
                "maxStderrBytes": 7, "scan": "src", "failOnStatic": true,
                "request": {"method": "tools/list"}, "requests": [{"method": "prompts/list", "params": {"cursor": "x"}}, "ping"],
                "safeToolCalls": [{"name": "echo", "arguments": {"text": "hi"}}],
                "adversarialProbes": ["invalid-method", "notification"],
                "adversarialToolCalls": [{"name": "echo", "arguments": {"unexpected": true}}],
                "effects": true
            })
            .to_string(),
            &dir(),
        )
        .unwrap();
        assert_eq!(c.command.unwrap(), ["node", "./server.js"]);
        assert_eq!(c.cwd.unwrap(), PathBuf::from("/cfg/srv"));
        assert_eq!(c.env, [("API_TOKEN".to_string(), "s3cret".to_string())]);
        assert_eq!(c.profile.as_deref(), Some("registry"));
        assert_eq!(
            (c.timeout_ms, c.repeat, c.json),
            (Some(2000), Some(3), Some(true))
        );
        assert_eq!(
            (
                c.max_stdout_bytes,
                c.max_stdout_line_bytes,
                c.max_stderr_bytes
            ),
            (Some(10), Some(5), Some(7))
        );
        assert_eq!(c.scan.unwrap(), PathBuf::from("/cfg/src"));
        assert_eq!(c.fail_on_static, Some(true));
        let methods: Vec<&str> = c.requests.iter().map(|r| r.method.as_str()).collect();
        assert_eq!(methods, ["tools/list", "prompts/list", "ping"]);
        assert_eq!(c.requests[1].params.as_ref().unwrap()["cursor"], "x");
        assert!(c.requests.iter().all(|r| r.source == "config-request"));
        assert_eq!(
            c.safe_tool_calls[0].operation().params.unwrap(),
            json!({"name": "echo", "arguments": {"text": "hi"}})
        );
        assert_eq!(
            c.adversarial_probes.unwrap(),
            ["invalid-method", "notification"]
        );
        assert_eq!(c.adversarial_tool_calls[0].name, "echo");
        assert_eq!(c.effects, Some(json!(true)));
        let c = parse(r#"{"command": "python3", "args": ["-m", "srv"], "scanPath": "lib", "adversarialProbes": true}"#, &dir()).unwrap();
        assert_eq!(c.command.unwrap(), ["python3", "-m", "srv"]);
        assert_eq!(c.scan.unwrap(), PathBuf::from("/cfg/lib"));
        assert_eq!(c.adversarial_probes.unwrap(), ["all"]);
    }

    #[test]
    fn bad_fields_are_named() {
        let e = err(r#"{"comand": ["node"]}"#);
        assert!(
            e.contains("unknown key \"comand\"") && e.contains("did you mean \"command\""),
            "{e}"
        );
        assert!(err(r#"{"command": 5}"#).contains("\"command\" is a number"));
        assert!(err(r#"{"command": []}"#).contains("empty"));
        assert!(err(r#"{"command": ["node"], "args": ["x"]}"#).contains("only used when"));
        assert!(err(r#"{"args": ["x"]}"#).contains("\"command\" is not"));
        assert!(err(r#"{"env": {"PORT": 8080}}"#).contains("env\".PORT is a number"));
        assert!(err(r#"{"timeoutMs": "5000"}"#).contains("\"timeoutMs\" is a string"));
        assert!(err(r#"{"timeoutMs": 0}"#).contains("greater than 0"));
        assert!(err(r#"{"repeat": -1}"#).contains("positive integer"));
        assert!(err(r#"{"json": "yes"}"#).contains("true or false"));
        assert!(
            err(r#"{"requests": [{"method": "x", "parms": {}}]}"#)
                .contains("requests[0] has unknown key \"parms\"")
        );
        assert!(err(r#"{"request": {"params": {}}}"#).contains("needs a string \"method\""));
        assert!(
            err(r#"{"safeToolCalls": [{"arguments": {}}]}"#).contains("safeToolCalls[0] needs")
        );
        assert!(
            err(r#"{"safeToolCalls": [{"name": "x", "arguments": []}]}"#)
                .contains("arguments is an array")
        );
        assert!(err(r#"{"adversarialProbes": 3}"#).contains("adversarialProbes"));
        assert!(err(r#"{"scan": "a", "scanPath": "b"}"#).contains("keep one"));
        assert!(err("[1]").contains("top level"));
        assert!(err("{").contains("not valid JSON"));
    }

    #[test]
    fn client_configs_of_every_shape_import() {
        let env = |name: &str| (name == "TOKEN").then(|| "t0k".to_string());
        let claude = json!({"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "@x/files", "${env:TOKEN}"], "env": {"A": "1"}},
            "remote": {"url": "https://example.com/mcp"},
            "off": {"command": "x", "disabled": true}
        }});
        let s = parse_mcp_servers(&claude.to_string(), &dir(), &env).unwrap();
        assert_eq!(s.servers.len(), 1);
        assert_eq!(s.servers[0].command, ["npx", "-y", "@x/files", "t0k"]);
        assert_eq!(s.servers[0].env, [("A".to_string(), "1".to_string())]);
        let skipped: Vec<&str> = s.skipped.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(skipped, ["remote", "off"]);
        let vscode = r#"{
            // VS Code: JSONC with comments and trailing commas
            "inputs": [],
            "servers": {
                "py": {"type": "stdio", "command": "python3", "args": ["${workspaceFolder}/srv.py"],},
                "web": {"type": "http", "url": "http://localhost:1/mcp"},
            },
        }"#;
        let s = parse_mcp_servers(vscode, Path::new("/ws/.vscode"), &env).unwrap();
        assert_eq!(s.servers[0].command, ["python3", "/ws/srv.py"]);
        assert_eq!(s.skipped[0].0, "web");
        assert!(
            parse_mcp_servers("{}", &dir(), &env)
                .unwrap_err()
                .contains("mcpServers")
        );
        let input = json!({"servers": {"x": {"command": "a", "args": ["${input:key}"]}}});
        assert!(
            parse_mcp_servers(&input.to_string(), &dir(), &env)
                .unwrap_err()
                .contains("interactive input")
        );
    }

    /// Found stating the config fuzz target's invariants: a command that is only an unset variable imported a
    /// server with an empty program, which failed later as a confusing spawn error.
    #[test]
    fn a_command_that_expands_to_nothing_is_an_error() {
        let text = r#"{"servers": {"a": {"command": "${env:UNSET_PROGRAM}"}}}"#;
        let err = parse_mcp_servers(text, &dir(), &|_| None).unwrap_err();
        assert!(err.contains("expands to nothing"), "{err}");
        let set = |n: &str| (n == "UNSET_PROGRAM").then(|| "node".to_string());
        let s = parse_mcp_servers(text, &dir(), &set).unwrap();
        assert_eq!(s.servers[0].command, ["node"]);
    }

    /// Found stating the JSONC property test: a comment between a trailing comma and the bracket
    /// made the comma look like a separator, and the file was "not valid JSON".
    #[test]
    fn a_comment_after_a_trailing_comma_still_drops_the_comma() {
        let text = "{\"servers\": {\"a\": {\"command\": \"x\", \"args\": [\"--url=http://h/p\", // first\n] /* end */, },\n}}";
        let s = parse_mcp_servers(text, &dir(), &|_| None).unwrap();
        assert_eq!(s.servers[0].command, ["x", "--url=http://h/p"]);
        let stripped = strip_jsonc(text);
        assert_eq!(stripped.len(), text.len());
        assert_eq!(stripped.lines().count(), text.lines().count());
        assert_eq!(strip_jsonc("{\"a\": \"//,]\"}"), "{\"a\": \"//,]\"}");
    }
}
