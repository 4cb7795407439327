//! The guard's own config file (`--config`, and each guard-config line of a registry list),
//! parsed and validated before anything is spawned (pure: text in, data out). Field-compatible
//! with the reference tool. Which keys exist and what each must hold is the settings table's
//! ([`super::table`]): an unknown key is an error naming it (with a suggestion), a bad value
//! names the key and what was expected, and relative paths resolve against the file's folder.

use super::table::{self, Kind, SETTINGS, Setting};
use crate::runtime::probes::requests::{OperationSource, OperationSpec};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// A value read from a config file or a flag.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Bool(bool),
    Count(u64),
    Text(String),
    /// Resolved against the config file's folder (a flag's path is as given).
    Path(PathBuf),
    /// Program first (`command`); probe names (`adversarialProbes`).
    List(Vec<String>),
    Env(Vec<(String, String)>),
    Ops(Vec<OperationSpec>),
    Calls(Vec<ToolCall>),
    /// `effects`: `true`/`false` or an object, read by `settings::effects`.
    Json(Value),
}

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
            source: OperationSource::SafeToolCall,
            safe_tool_call_name: Some(self.name.clone()),
        }
    }
}

/// A parsed config file: the value of each key it sets, by setting.
#[derive(Debug, Clone, Default)]
pub struct FileConfig {
    /// The path as given (`file:LINE` for a registry line).
    pub path: PathBuf,
    /// The absolute path.
    pub resolved_path: PathBuf,
    values: Vec<(&'static Setting, Parsed)>,
}

impl FileConfig {
    /// The value `s` was given, if any.
    pub fn get(&self, s: &Setting) -> Option<&Parsed> {
        self.values.iter().find(|(k, _)| *k == s).map(|(_, v)| v)
    }

    pub fn has(&self, s: &Setting) -> bool {
        self.get(s).is_some()
    }

    /// Every setting the file sets, in table order.
    pub fn keys(&self) -> impl Iterator<Item = &'static Setting> + '_ {
        self.values.iter().map(|(s, _)| *s)
    }

    /// The command, program first.
    pub fn command(&self) -> Option<&[String]> {
        match self.get(&table::COMMAND) {
            Some(Parsed::List(argv)) => Some(argv),
            _ => None,
        }
    }

    pub fn env(&self) -> &[(String, String)] {
        match self.get(&table::ENV) {
            Some(Parsed::Env(vars)) => vars,
            _ => &[],
        }
    }

    /// `request` then `requests`, in order.
    pub fn requests(&self) -> Vec<OperationSpec> {
        [&table::REQUEST, &table::REQUESTS]
            .into_iter()
            .flat_map(|s| match self.get(s) {
                Some(Parsed::Ops(ops)) => ops.clone(),
                _ => Vec::new(),
            })
            .collect()
    }

    pub fn calls(&self, s: &Setting) -> &[ToolCall] {
        match self.get(s) {
            Some(Parsed::Calls(calls)) => calls,
            _ => &[],
        }
    }

    /// Probe names (`adversarialProbes`): `None` when absent, empty for `false`/`"none"`.
    pub fn probes(&self) -> Option<&[String]> {
        match self.get(&table::ADVERSARIAL_PROBES) {
            Some(Parsed::List(names)) => Some(names),
            _ => None,
        }
    }

    pub fn json(&self, s: &Setting) -> Option<&Value> {
        match self.get(s) {
            Some(Parsed::Json(v)) => Some(v),
            _ => None,
        }
    }

    pub fn path_of(&self, s: &Setting) -> Option<&Path> {
        match self.get(s) {
            Some(Parsed::Path(p)) => Some(p),
            _ => None,
        }
    }

    pub fn text(&self, s: &Setting) -> Option<&str> {
        match self.get(s) {
            Some(Parsed::Text(t)) => Some(t),
            _ => None,
        }
    }
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
        if table::by_key(key).is_none() {
            let hint = suggest(key)
                .map(|k| format!("did you mean {k:?}? "))
                .unwrap_or_default();
            let known: Vec<&str> = table::known_keys().filter(|k| *k != "$schema").collect();
            return Err(format!(
                "unknown key {key:?}: {hint}known keys are {}",
                known.join(", ")
            ));
        }
    }
    let mut values = Vec::new();
    for s in SETTINGS.iter().copied().filter(|s| !s.key.is_empty()) {
        if !s.alias.is_empty() && obj.contains_key(s.key) && obj.contains_key(s.alias) {
            return Err(format!(
                "both {:?} and {:?} are set: keep one",
                s.key, s.alias
            ));
        }
        let key = if obj.contains_key(s.alias) && !s.alias.is_empty() {
            s.alias
        } else {
            s.key
        };
        let parsed = match s.kind {
            Kind::Bool => opt_bool(&obj, key)?.map(Parsed::Bool),
            Kind::Count | Kind::Bytes => opt_u64(&obj, key)?.map(Parsed::Count),
            Kind::Text => opt_string(&obj, key)?.map(Parsed::Text),
            Kind::Path => opt_string(&obj, key)?.map(|p| Parsed::Path(dir.join(p))),
            Kind::Custom(read) => read(&obj, dir)?,
            Kind::Other | Kind::Flag => None,
        };
        if let Some(v) = parsed {
            values.push((s, v));
        }
    }
    Ok(FileConfig {
        values,
        ..FileConfig::default()
    })
}

/// `command`, with `args` when it is a string.
pub(super) fn command(obj: &Map<String, Value>, _: &Path) -> Result<Option<Parsed>, String> {
    let argv = match (obj.get("command"), obj.get("args")) {
        (None, None) => return Ok(None),
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
            argv
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
            argv
        }
        (Some(other), _) => {
            return Err(format!(
                "\"command\" is {}, expected an array like [\"node\", \"server.js\"] or a string with \"args\"",
                kind(other)
            ));
        }
    };
    Ok(Some(Parsed::List(argv)))
}

/// `env`: an object of strings.
pub(super) fn env(obj: &Map<String, Value>, _: &Path) -> Result<Option<Parsed>, String> {
    let Some(env) = obj.get("env") else {
        return Ok(None);
    };
    let Value::Object(map) = env else {
        return Err(format!(
            "\"env\" is {}, expected an object of strings",
            kind(env)
        ));
    };
    let mut vars = Vec::new();
    for (k, v) in map {
        if k.is_empty() || k.contains('=') || k.contains('\0') {
            return Err(format!("\"env\" has an invalid variable name {k:?}"));
        }
        match v {
            Value::String(s) => vars.push((k.clone(), s.clone())),
            other => {
                return Err(format!(
                    "\"env\".{k} is {}, expected a string (quote numbers: \"{}\")",
                    kind(other),
                    other
                ));
            }
        }
    }
    Ok(Some(Parsed::Env(vars)))
}

/// `request`: one request.
pub(super) fn request(obj: &Map<String, Value>, _: &Path) -> Result<Option<Parsed>, String> {
    obj.get("request")
        .map(|r| one_request(r, "request").map(|op| Parsed::Ops(vec![op])))
        .transpose()
}

/// `requests`: a list of requests.
pub(super) fn requests(obj: &Map<String, Value>, _: &Path) -> Result<Option<Parsed>, String> {
    let Some(rs) = obj.get("requests") else {
        return Ok(None);
    };
    let Value::Array(items) = rs else {
        return Err(format!(
            "\"requests\" is {}, expected an array of {{\"method\": ...}}",
            kind(rs)
        ));
    };
    let ops = items
        .iter()
        .enumerate()
        .map(|(i, r)| one_request(r, &format!("requests[{i}]")))
        .collect::<Result<_, _>>()?;
    Ok(Some(Parsed::Ops(ops)))
}

pub(super) fn tool_calls_safe(
    obj: &Map<String, Value>,
    _: &Path,
) -> Result<Option<Parsed>, String> {
    tool_calls(obj, "safeToolCalls")
}

pub(super) fn tool_calls_adversarial(
    obj: &Map<String, Value>,
    _: &Path,
) -> Result<Option<Parsed>, String> {
    tool_calls(obj, "adversarialToolCalls")
}

/// `adversarialProbes`: `true`/`"all"`, `false`/`"none"`, a name or a list of names.
pub(super) fn adversarial_probes(
    obj: &Map<String, Value>,
    _: &Path,
) -> Result<Option<Parsed>, String> {
    Ok(match obj.get("adversarialProbes") {
        None => None,
        Some(Value::Bool(true)) => Some(Parsed::List(vec!["all".into()])),
        Some(Value::Bool(false)) => Some(Parsed::List(Vec::new())),
        Some(Value::String(s)) => Some(Parsed::List(vec![s.clone()])),
        Some(Value::Array(items)) => Some(Parsed::List(strings(items, "adversarialProbes")?)),
        Some(other) => {
            return Err(format!(
                "\"adversarialProbes\" is {}, expected true, \"all\", \"none\" or a list of probe names",
                kind(other)
            ));
        }
    })
}

/// `effects`: `true`, `false` or an object (its keys are checked by `settings::effects`).
pub(super) fn effects(obj: &Map<String, Value>, _: &Path) -> Result<Option<Parsed>, String> {
    match obj.get("effects") {
        None => Ok(None),
        Some(v @ (Value::Bool(_) | Value::Object(_))) => Ok(Some(Parsed::Json(v.clone()))),
        Some(other) => Err(format!(
            "\"effects\" is {}, expected true, false or an object",
            kind(other)
        )),
    }
}

fn one_request(v: &Value, at: &str) -> Result<OperationSpec, String> {
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
        source: OperationSource::ConfigRequest,
        safe_tool_call_name: None,
    })
}

fn tool_calls(obj: &Map<String, Value>, key: &str) -> Result<Option<Parsed>, String> {
    let Some(v) = obj.get(key) else {
        return Ok(None);
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
    Ok(Some(Parsed::Calls(out)))
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
pub(super) fn kind(v: &Value) -> String {
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
    table::known_keys()
        .map(|k| (distance(&lower, &k.to_ascii_lowercase()), k))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

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
        assert_eq!(c.command().unwrap(), ["node", "./server.js"]);
        assert_eq!(c.path_of(&table::CWD).unwrap(), Path::new("/cfg/srv"));
        assert_eq!(c.env(), [("API_TOKEN".to_string(), "s3cret".to_string())]);
        assert_eq!(c.text(&table::PROFILE), Some("registry"));
        for (s, want) in [
            (&table::TIMEOUT, Parsed::Count(2000)),
            (&table::REPEAT, Parsed::Count(3)),
            (&table::JSON, Parsed::Bool(true)),
            (&table::MAX_STDOUT_BYTES, Parsed::Count(10)),
            (&table::MAX_STDOUT_LINE_BYTES, Parsed::Count(5)),
            (&table::MAX_STDERR_BYTES, Parsed::Count(7)),
            (&table::SCAN, Parsed::Path(PathBuf::from("/cfg/src"))),
            (&table::FAIL_ON_STATIC, Parsed::Bool(true)),
        ] {
            assert_eq!(c.get(s), Some(&want), "{s:?}");
        }
        let requests = c.requests();
        let methods: Vec<&str> = requests.iter().map(|r| r.method.as_str()).collect();
        assert_eq!(methods, ["tools/list", "prompts/list", "ping"]);
        assert_eq!(requests[1].params.as_ref().unwrap()["cursor"], "x");
        assert!(
            requests
                .iter()
                .all(|r| r.source == OperationSource::ConfigRequest)
        );
        assert_eq!(
            c.calls(&table::SAFE_TOOL_CALLS)[0]
                .operation()
                .params
                .unwrap(),
            json!({"name": "echo", "arguments": {"text": "hi"}})
        );
        assert_eq!(c.probes().unwrap(), ["invalid-method", "notification"]);
        assert_eq!(c.calls(&table::ADVERSARIAL_TOOL_CALLS)[0].name, "echo");
        assert_eq!(c.json(&table::EFFECTS), Some(&json!(true)));
        let c = parse(r#"{"command": "python3", "args": ["-m", "srv"], "scanPath": "lib", "adversarialProbes": true}"#, &dir()).unwrap();
        assert_eq!(c.command().unwrap(), ["python3", "-m", "srv"]);
        assert_eq!(c.path_of(&table::SCAN).unwrap(), Path::new("/cfg/lib"));
        assert_eq!(c.probes().unwrap(), ["all"]);
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
}
