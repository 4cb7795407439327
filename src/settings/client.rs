//! The servers named by other files: the `mcpServers` files of MCP clients (`--mcp-config`) —
//! Claude Desktop, Cursor and Claude Code (`mcpServers`), VS Code (`servers`, or `mcp.servers` in
//! settings.json, JSONC, with `type: "stdio"`) — and registry lists (`--registry`: JSON lines of
//! guard configs or client configs; errors name `file:LINE`). Client files carry many
//! client-specific keys, so unknown keys there are ignored; entries that are not stdio servers
//! are skipped with a note. Pure but for reading the file.

use super::file::{self, FileConfig, kind};
use serde_json::Value;
use std::path::{Path, PathBuf};

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
            kind(&value)
        ));
    };
    let name = match obj.remove("name") {
        None => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
        Some(other) => {
            return Err(format!(
                "\"name\" must be a non-empty string, not {}",
                kind(&other)
            ));
        }
    };
    let label = name.unwrap_or_else(|| at.to_string());
    let text = Value::Object(obj.clone()).to_string();
    if obj.contains_key("mcpServers") || obj.contains_key("servers") || obj.contains_key("mcp") {
        let servers = parse_mcp_servers(&text, dir, &|name| std::env::var(name).ok())?;
        Ok(RegistryEntry::Client { label, servers })
    } else {
        let mut cfg = file::parse(&text, dir)?;
        if cfg.command().is_none() {
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
    let value = parse_jsonc(text)?;
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
        let transport = e.get("type").and_then(Value::as_str).unwrap_or("stdio");
        let Some(command) = e.get("command") else {
            let why = if e.contains_key("url") || e.contains_key("serverUrl") {
                format!("a remote ({transport}) server, not stdio")
            } else {
                "no \"command\"".into()
            };
            out.skipped.push((name.clone(), why));
            continue;
        };
        if transport != "stdio" {
            out.skipped
                .push((name.clone(), format!("type {transport:?} is not stdio")));
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
                                kind(other)
                            ));
                        }
                    }
                }
            }
            Some(other) => {
                return Err(format!(
                    "server {name:?} \"args\" is {}, expected an array",
                    kind(other)
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
                                kind(other)
                            ));
                        }
                    }
                }
            }
            Some(other) => {
                return Err(format!(
                    "server {name:?} \"env\" is {}, expected an object",
                    kind(other)
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

/// Parses a client config as VS Code does: JSON with comments (`//`, `/* */`) and trailing
/// commas (JSONC), nothing looser (no single quotes, hexadecimal numbers or unquoted keys).
/// dprint's maintained `jsonc-parser` reads it; nesting deeper than 512 levels is an error, never
/// a stack overflow. Public for the config fuzz target and property tests.
pub fn parse_jsonc(text: &str) -> Result<Value, String> {
    let options = jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let parsed = jsonc_parser::parse_to_ast(text, &Default::default(), &options)
        .map_err(|e| format!("not valid JSON ({e})"))?;
    Ok(parsed.value.map(Value::from).unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dir() -> PathBuf {
        PathBuf::from("/cfg")
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
        assert_eq!(
            parse_jsonc("{\"a\": \"//,]\"}").unwrap(),
            json!({"a": "//,]"})
        );
    }

    /// JSONC is JSON plus comments and trailing commas, nothing looser; errors name the line;
    /// deep nesting is an error, not a crash.
    #[test]
    fn jsonc_is_json_with_comments_and_trailing_commas_only() {
        for loose in [
            "{'a': 1}", "{a: 1}", "[0x10]", "[+1]", "[.5]", "[NaN]", "[1 2]", "{}{}",
        ] {
            assert!(parse_jsonc(loose).is_err(), "{loose}");
        }
        let err = parse_jsonc("{\n  \"servers\": {\n    \"a\": [1,,2]\n}}").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(parse_jsonc(&deep).unwrap_err().contains("nesting"));
        let order = parse_jsonc("{\"z\": 1, /* c */ \"a\": 2,}").unwrap();
        let keys: Vec<&String> = order.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["z", "a"],
            "key order is kept: report sections follow it"
        );
    }
}
