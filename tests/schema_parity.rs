//! The guard's rules, kept honest by the official MCP schemas (`tests/schemas/mcp/<revision>/`,
//! vendored with their origin and licence): a scripted client replays each fixture
//! server (handshake or `server/discover`, every advertised list with its pages, a tool call) and
//! validates every frame the server sends against the schema of the revision in use.
//!
//! - Servers the guard passes send only schema-valid frames, on every revision they speak.
//! - Servers the guard fails for a result's shape send at least one frame the schema rejects.
// Unix servers, signals and paths: tests/windows.rs is the Windows suite.
#![cfg(unix)]

mod support;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;
use support::*;

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const STATELESS: &str = "2026-07-28";

fn schema_dir() -> PathBuf {
    mcp_schema_dir()
}

/// A validator for one definition of one revision's schema.
fn validator(revision: &str, def: &str) -> jsonschema::Validator {
    let path = schema_dir().join(revision).join("schema.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let defs = if doc.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    assert!(doc[defs].get(def).is_some(), "{revision} has no {def}");
    doc["$ref"] = json!(format!("#/{defs}/{def}"));
    jsonschema::validator_for(&doc).unwrap_or_else(|e| panic!("{revision} {def}: {e}"))
}

fn result_def(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "prompts/list" => "ListPromptsResult",
        "tools/call" => "CallToolResult",
        other => panic!("no result definition for {other}"),
    }
}

/// A scripted MCP client over a fixture server's stdio.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: i64,
    revision: String,
    /// Stateless era: the `_meta` every request carries.
    meta: Option<Value>,
    /// Every problem found: `frame: why`.
    problems: Vec<String>,
    frames: usize,
}

impl Client {
    fn spawn(server: &str, args: &[&str], revision: &str) -> Client {
        let mut child = Command::new("python3")
            .arg(server)
            .args(args)
            .current_dir(repo().join("tests/fixtures/servers"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn a fixture server");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                }
            }
        });
        Client {
            child,
            stdin,
            lines: rx,
            next_id: 1,
            revision: revision.to_string(),
            meta: None,
            problems: Vec::new(),
            frames: 0,
        }
    }

    fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn check(&mut self, def: &str, instance: &Value, what: &str) {
        let v = validator(&self.revision, def);
        let errors: Vec<String> = v
            .iter_errors(instance)
            .take(2)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if !errors.is_empty() {
            self.problems.push(format!(
                "{what} is not a valid {def} ({}): {}",
                self.revision,
                errors.join("; ")
            ));
        }
    }

    /// Sends a request; validates every frame up to its response; returns the result (if any).
    fn request(&mut self, method: &str, params: Option<Value>) -> Option<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = params.unwrap_or_else(|| json!({}));
        if let Some(meta) = &self.meta {
            params["_meta"] = meta.clone();
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let Ok(line) = self.lines.recv_timeout(Duration::from_secs(10)) else {
                self.problems.push(format!("no response to {method}"));
                return None;
            };
            self.frames += 1;
            let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                self.problems.push(format!("not JSON: {line}"));
                continue;
            };
            if msg.get("id") != Some(&json!(id)) {
                if msg.get("method").is_some() && msg.get("id").is_none() {
                    self.check("ServerNotification", &msg, "a notification");
                }
                continue;
            }
            if let Some(result) = msg.get("result") {
                let result = result.clone();
                self.check(result_def(method), &result, &format!("the {method} result"));
                return Some(result);
            }
            let def = if self.revision.as_str() >= "2025-11-25" {
                "JSONRPCErrorResponse"
            } else {
                "JSONRPCError"
            };
            self.check(def, &msg, &format!("the {method} error"));
            return None;
        }
    }

    /// Lists every page of a list method (cursor loops and `""` stop it).
    fn list_all(&mut self, method: &str) {
        let mut cursor: Option<String> = None;
        let mut seen = Vec::new();
        for _ in 0..10 {
            let params = cursor.as_ref().map(|c| json!({"cursor": c}));
            let Some(result) = self.request(method, params) else {
                return;
            };
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(c) if !c.is_empty() && !seen.contains(&c.to_string()) => {
                    seen.push(c.to_string());
                    cursor = Some(c.to_string());
                }
                _ => return,
            }
        }
    }

    /// The session a client runs: handshake (or discover), every advertised list, the calls.
    fn session(&mut self, calls: &[Value]) {
        let caps = if self.revision == STATELESS {
            self.meta = Some(json!({
                "io.modelcontextprotocol/protocolVersion": STATELESS,
                "io.modelcontextprotocol/clientInfo": {"name": "parity", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            }));
            self.request("server/discover", None)
                .and_then(|r| r.get("capabilities").cloned())
        } else {
            let params = json!({"protocolVersion": self.revision, "capabilities": {},
                "clientInfo": {"name": "parity", "version": "1"}});
            let caps = self
                .request("initialize", Some(params))
                .and_then(|r| r.get("capabilities").cloned());
            self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            caps
        };
        let caps = caps.unwrap_or(Value::Null);
        for (cap, method) in [
            ("tools", "tools/list"),
            ("resources", "resources/list"),
            ("resources", "resources/templates/list"),
            ("prompts", "prompts/list"),
        ] {
            if caps.get(cap).is_some() {
                self.list_all(method);
            }
        }
        for call in calls {
            self.request("tools/call", Some(call.clone()));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn replay(server: &str, args: &[&str], revision: &str, calls: &[Value]) -> (usize, Vec<String>) {
    let mut c = Client::spawn(server, args, revision);
    c.session(calls);
    (c.frames, std::mem::take(&mut c.problems))
}

fn weather() -> Value {
    json!({"name": "weather", "arguments": {"city": "Paris"}})
}

#[test]
fn servers_the_guard_passes_send_only_schema_valid_frames() {
    let hello = repo().join("examples/hello-server/server.py");
    let hello = hello.to_str().unwrap();
    let echo = json!({"name": "echo", "arguments": {"text": "hi"}});
    let cases: Vec<(&str, Vec<&str>, Vec<Value>)> = vec![
        (hello, vec![], vec![echo]),
        ("tools_variant.py", vec!["clean"], vec![]),
        ("tools_variant.py", vec!["draft07-sdk"], vec![]),
        ("tools_variant.py", vec!["draft04-declared"], vec![]),
        ("paginated.py", vec!["ok"], vec![]),
        ("capability_variant.py", vec!["full"], vec![]),
        ("tool_call.py", vec!["good"], vec![weather()]),
    ];
    let mut failures = Vec::new();
    let mut frames = 0;
    for (server, args, calls) in &cases {
        for rev in LEGACY {
            let (n, problems) = replay(server, args, rev, calls);
            frames += n;
            if n == 0 || !problems.is_empty() {
                failures.push(format!(
                    "{server} {args:?} @ {rev}: {n} frames; {problems:?}"
                ));
            }
        }
    }
    let (n, problems) = replay(
        "stateless.py",
        &["ok"],
        STATELESS,
        &[json!({"name": "echo", "arguments": {}})],
    );
    frames += n;
    if !problems.is_empty() {
        failures.push(format!("stateless.py @ {STATELESS}: {problems:?}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(frames >= 80, "only {frames} frames validated");
}

#[test]
fn shapes_the_guard_fails_are_rejected_by_the_schema_too() {
    // (server, args, revision, calls, the guard's code for it)
    type Case<'a> = (&'a str, Vec<&'a str>, &'a str, Vec<Value>, &'a str);
    let cases: Vec<Case> = vec![
        (
            "tools_variant.py",
            vec!["tools-not-array"],
            "2025-11-25",
            vec![],
            "tools-list-invalid-result",
        ),
        (
            "tools_variant.py",
            vec!["schema-missing"],
            "2025-11-25",
            vec![],
            "tool-input-schema-invalid",
        ),
        (
            "tools_variant.py",
            vec!["schema-not-object"],
            "2025-06-18",
            vec![],
            "tool-input-schema-invalid",
        ),
        (
            "tools_variant.py",
            vec!["schema-array-type"],
            "2024-11-05",
            vec![],
            "tool-input-schema-invalid",
        ),
        (
            "tools_variant.py",
            vec!["output-not-object"],
            "2025-06-18",
            vec![],
            "tool-output-schema-invalid",
        ),
        (
            "paginated.py",
            vec!["null-cursor"],
            "2025-11-25",
            vec![],
            "tools-list-invalid-result",
        ),
        (
            "capability_variant.py",
            vec!["bad-resources"],
            "2025-11-25",
            vec![],
            "resource-invalid",
        ),
        (
            "capability_variant.py",
            vec!["bad-templates"],
            "2025-03-26",
            vec![],
            "resource-template-invalid",
        ),
        (
            "capability_variant.py",
            vec!["bad-prompts"],
            "2025-11-25",
            vec![],
            "prompt-invalid",
        ),
        (
            "tool_call.py",
            vec!["bad-content"],
            "2025-11-25",
            vec![weather()],
            "tool-result-invalid",
        ),
        (
            "tool_call.py",
            vec!["unknown-block"],
            "2025-11-25",
            vec![weather()],
            "tool-result-invalid",
        ),
        (
            "stateless.py",
            vec!["no-result-type"],
            STATELESS,
            vec![],
            "result-type-missing",
        ),
        (
            "stateless.py",
            vec!["bad-capabilities"],
            STATELESS,
            vec![],
            "discover-invalid-result",
        ),
        (
            "stateless.py",
            vec!["no-cache-fields"],
            STATELESS,
            vec![],
            "result-cache-fields-missing",
        ),
    ];
    let mut failures = Vec::new();
    for (server, args, rev, calls, code) in &cases {
        let (n, problems) = replay(server, args, rev, calls);
        if problems.is_empty() {
            failures.push(format!(
                "{server} {args:?} @ {rev}: the guard reports {code}, but all {n} frames are schema-valid"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
