//! The hostile-input corpus: every adversarial probe by name, the bytes it sends, what a correct
//! server does with them, and the risk it guards against. Pure data; `probes/adversarial.rs`
//! delivers the frames and `checks/adversarial.rs` judges what came back.
//!
//! The reference tool's four probes (`invalid-method`, `invalid-params`, `notification`,
//! `malformed-json`) keep their names; the framing corpus is the article's list of the ways real
//! process streams fail. Frames that a lenient reader could mistake for a call carry the
//! *payload*: `ping` (`server/discover` in the stateless era), or — when the user listed safe
//! tool calls — the first safe tool call, so a server that wrongly accepts the frame performs a
//! real, observable action that the no-effect proof (`--effects`) catches. No other tool is ever
//! named in a frame.

use crate::catalog::{Rule, adversarial as rules};
use serde_json::{Value, json};

/// The prefix of the probes made from config `adversarialToolCalls`.
pub const TOOL_CALL_PREFIX: &str = "tool-call:";
/// The prefix of the probes derived from a safe tool's `inputSchema`
/// (`invalid-arguments:<tool>:<mutation>`).
pub const INVALID_ARGUMENTS_PREFIX: &str = "invalid-arguments:";

/// The size of the `oversized-line` frame: past the 64 KiB and 1 MiB line limits of common
/// readers (asyncio, `bufio.Scanner` as configured by many servers), under the guard's own 4 MiB
/// stdout line limit so that even a server echoing it back stays measurable.
pub const OVERSIZED_BYTES: usize = 2 * 1024 * 1024;

/// A tool call recipe (name and arguments) from the config.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecipe {
    pub name: String,
    pub arguments: Value,
}

/// Where a probe comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// One of the reference tool's four.
    Reference,
    /// The article's framing corpus.
    Framing,
    /// Config `adversarialToolCalls`.
    ToolCall,
    /// Derived from a safe tool's `inputSchema` (`probes/invalid_args.rs`).
    InvalidArguments,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Reference => "reference",
            Origin::Framing => "framing",
            Origin::ToolCall => "tool-call",
            Origin::InvalidArguments => "invalid-arguments",
        }
    }
}

/// How the frame reaches the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivery {
    /// A well-formed request through the session: a reply is owed.
    Request { method: String, params: Value },
    /// Raw bytes; the session stays open and a valid request follows.
    Raw(Vec<u8>),
    /// Raw bytes, then stdin EOF: the end of the session is part of the probe.
    RawThenEof(Vec<u8>),
}

/// How a correct server may answer a `Request` probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// -32601 (any other error code is a warning).
    MethodNotFound,
    /// Any JSON-RPC error, or a result with `isError: true`.
    ErrorOrIsError,
}

/// One probe, ready to send.
#[derive(Debug, Clone)]
pub struct Probe {
    pub name: String,
    pub origin: Origin,
    pub risk: &'static str,
    pub delivery: Delivery,
    pub expect: Expect,
    /// Ids carried by the frame (any JSON type) that must never be answered with a result.
    pub rejected_ids: Vec<Value>,
    /// Ids a lenient parser may turn a rejected id into (`1` and `"true"` for `true`).
    pub coerced_ids: Vec<Value>,
    /// Every id the frame carries (replies to them are expected, never misaddressed).
    pub frame_ids: Vec<Value>,
    /// Ids of *valid* requests inside the frame, which a usable session must answer.
    pub valid_ids: Vec<Value>,
    /// The code for a result to a rejected id (`None`: accepting the frame is legal).
    pub accepted: Option<&'static Rule>,
    /// Any reply is forbidden (a notification).
    pub no_reply: bool,
    /// Not applicable on this session, and why.
    pub skip: Option<String>,
}

/// What the probes of one server need to know about it.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The server speaks the stateless era (requests carry `_meta`; no `ping`).
    pub stateless: bool,
    /// The revision the main run negotiated.
    pub negotiated: Option<String>,
    /// The first safe tool call, carried by frames a lenient reader could execute.
    pub payload: Option<CallRecipe>,
    /// Each safe tool call (its valid arguments) and its tool's `inputSchema` from the main
    /// run's `tools/list`: the invalid-arguments probes.
    pub safe_tools: Vec<(CallRecipe, Option<Value>)>,
}

impl Context {
    /// The `_meta` of stateless requests.
    fn meta(&self) -> Option<Value> {
        self.stateless
            .then(crate::runtime::probes::discover::request_meta)
    }

    /// The valid request the session is checked with after a rejected frame, and the harmless
    /// request inside frames: `ping` (legacy) or `server/discover` (stateless, where `ping` is
    /// gone).
    pub fn ping_method(&self) -> &'static str {
        if self.stateless {
            "server/discover"
        } else {
            "ping"
        }
    }

    fn params(&self, params: Option<Value>) -> Option<Value> {
        match (self.meta(), params) {
            (Some(meta), Some(Value::Object(mut p))) => {
                p.insert("_meta".into(), meta);
                Some(Value::Object(p))
            }
            (Some(meta), None) => Some(json!({ "_meta": meta })),
            (_, p) => p,
        }
    }

    /// A harmless request: `ping`, with `extra_meta` merged into its `_meta`.
    fn ping(&self, id: Value, extra_meta: Option<Value>) -> Value {
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": self.ping_method()});
        let mut params = self.params(None);
        if let Some(Value::Object(extra)) = extra_meta {
            let p = params.get_or_insert_with(|| json!({}));
            let meta = p
                .as_object_mut()
                .expect("params is an object")
                .entry("_meta")
                .or_insert_with(|| json!({}));
            if let Value::Object(m) = meta {
                m.extend(extra);
            }
        }
        if let Some(p) = params {
            msg["params"] = p;
        }
        msg
    }

    /// The payload request: the first safe tool call, or `ping`.
    fn payload(&self, id: Value) -> Value {
        match &self.payload {
            Some(call) => json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": "tools/call",
                "params": self.params(Some(json!({"name": call.name, "arguments": call.arguments}))),
            }),
            None => self.ping(id, None),
        }
    }
}

fn line(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).expect("JSON serializes");
    bytes.push(b'\n');
    bytes
}

fn id(name: &str) -> Value {
    Value::from(format!("adv-{name}"))
}

/// One built-in probe, as data: its name, where it comes from, what it sends and what a correct
/// server does (the README table and `--help` are generated from these), the risk it guards
/// against, and the builder of its frame.
pub struct ProbeDef {
    pub name: &'static str,
    pub origin: Origin,
    /// What it sends, in words.
    pub sends: &'static str,
    /// What a correct server does.
    pub correct: &'static str,
    pub risk: &'static str,
    build: fn(&'static ProbeDef, &Context) -> Probe,
}

/// Every built-in probe, in the order they are reported.
pub static PROBES: &[ProbeDef] = &[
    ProbeDef {
        name: "invalid-method",
        origin: Origin::Reference,
        sends: "a request for `mcp-stdio-guard/no-such-method`",
        correct: "-32601 (another error code: a warning)",
        risk: "An unknown method answered with a result makes a client believe an operation succeeded that the server never implemented.",
        build: invalid_method,
    },
    ProbeDef {
        name: "invalid-params",
        origin: Origin::Reference,
        sends: "`tools/call` with `name` an object and `arguments` a string",
        correct: "any error, or `isError: true`",
        risk: "A call whose parameters have the wrong types must be refused before any handler runs; coercing them is how a half-understood request reaches an executor.",
        build: invalid_params,
    },
    ProbeDef {
        name: "notification",
        origin: Origin::Reference,
        sends: "an unknown notification",
        correct: "no reply at all",
        risk: "A reply to a notification has no request to pair with; a client may drop it or pair it with the wrong pending request.",
        build: notification,
    },
    ProbeDef {
        name: "malformed-json",
        origin: Origin::Reference,
        sends: "a truncated object on its own line",
        correct: "-32700 with `id: null`, or silence",
        risk: "A truncated JSON line must be dropped (or answered with -32700); a crash lets one bad line take the server down, a repair executes bytes nobody sent as a request.",
        build: malformed_json,
    },
    ProbeDef {
        name: "debug-line",
        origin: Origin::Framing,
        sends: "`debug: entering tool handler` then a valid request on the next line",
        correct: "answers the valid request, or closes",
        risk: "An ordinary debug line on stdin before a valid request: a reader that drops the whole chunk with the bad line loses the request behind it, one that keeps the bad bytes corrupts it.",
        build: debug_line,
    },
    ProbeDef {
        name: "banner-same-line",
        origin: Origin::Framing,
        sends: "a valid request followed by ` server ready` on the same line",
        correct: "refuses it (not one JSON value)",
        risk: "A valid request followed by a banner on the same line is not one JSON value; a reader that parses a prefix and ignores the rest executes a corrupted line.",
        build: banner_same_line,
    },
    ProbeDef {
        name: "truncated-eof",
        origin: Origin::Framing,
        sends: "a truncated object, then stdin EOF",
        correct: "exits (status 0) without acting on it",
        risk: "A truncated JSON object followed by end of file: a server must discard the partial line and exit, not try to repair it from a buffer after its peer is gone.",
        build: truncated_eof,
    },
    ProbeDef {
        name: "concatenated-objects",
        origin: Origin::Framing,
        sends: "two requests on one line, no separator",
        correct: "refuses both",
        risk: "Two complete objects with no separator are one bad line, not two requests; a parser configured to accept several top-level values executes what the transport forbids.",
        build: concatenated_objects,
    },
    ProbeDef {
        name: "tools-call-string-params",
        origin: Origin::Framing,
        sends: "`tools/call` whose `params` is a string",
        correct: "refuses it",
        risk: "A plausible method with malformed params (`tools/call` whose params is a string) is valid JSON but not a call; a permissive dispatcher may still reach a tool.",
        build: tools_call_string_params,
    },
    ProbeDef {
        name: "boolean-id",
        origin: Origin::Framing,
        sends: "a request whose id is `true`",
        correct: "refuses it (`true` is not `1`)",
        risk: "An id that is a boolean crosses a type boundary: a language that treats `true` as `1` answers (and acts on) a request no client can pair.",
        build: boolean_id,
    },
    ProbeDef {
        name: "batch-array",
        origin: Origin::Framing,
        sends: "a JSON-RPC batch (skipped when 2025-03-26, where batches are legal, was negotiated)",
        correct: "refuses it",
        risk: "A batch array on a revision without batches bypasses per-message checks if accepted; it must be refused or ignored.",
        build: batch_array,
    },
    ProbeDef {
        name: "crlf",
        origin: Origin::Framing,
        sends: "a request terminated by `\\r\\n`",
        correct: "answers or ignores it; the next line still works",
        risk: "A CRLF-terminated request (a Windows peer, a text-mode pipe): `\\r` is JSON whitespace, so answering or ignoring it are both fine, but the stray byte must not corrupt the next line.",
        build: crlf,
    },
    ProbeDef {
        name: "oversized-line",
        origin: Origin::Framing,
        sends: "a 2 MiB request (past the 64 KiB and 1 MiB line limits of common readers)",
        correct: "answers or ignores it; no crash",
        risk: "A 2 MiB line overflows the fixed line buffers of common readers (64 KiB in asyncio); a reader that errors out, truncates or splits it crashes, hangs or executes the remainder.",
        build: oversized_line,
    },
    ProbeDef {
        name: "invalid-utf8",
        origin: Origin::Framing,
        sends: "a request with invalid UTF-8 inside a string",
        correct: "answers (lossy decoding, as both SDKs do), refuses or ignores it",
        risk: "Invalid UTF-8 inside a string: a strict decoder rejects the line, a lossy one replaces the bytes (both SDKs do); a decoder that raises must not take the read loop down with it.",
        build: invalid_utf8,
    },
    ProbeDef {
        name: "wrong-jsonrpc-version",
        origin: Origin::Framing,
        sends: "a request whose `jsonrpc` is `\"1.0\"`",
        correct: "refuses it (-32600) or ignores it",
        risk: "A request that is not JSON-RPC 2.0 (`\"jsonrpc\": \"1.0\"`, the article's own hostile line) must never reach a handler; a dispatcher that skips the envelope check runs whatever a confused or hostile peer sends.",
        build: wrong_jsonrpc_version,
    },
];

/// Builds a built-in probe by name. `None` for an unknown name.
pub fn build(name: &str, ctx: &Context) -> Option<Probe> {
    let def = PROBES.iter().find(|d| d.name == name)?;
    let mut probe = (def.build)(def, ctx);
    let carried: Vec<Value> = probe
        .rejected_ids
        .iter()
        .chain(&probe.valid_ids)
        .cloned()
        .collect();
    probe.frame_ids.extend(carried);
    Some(probe)
}

/// A probe of `def` with `delivery` and nothing else set.
fn base(def: &'static ProbeDef, _ctx: &Context, delivery: Delivery) -> Probe {
    Probe {
        name: def.name.to_string(),
        origin: def.origin,
        risk: def.risk,
        delivery,
        expect: Expect::ErrorOrIsError,
        rejected_ids: Vec::new(),
        coerced_ids: Vec::new(),
        frame_ids: Vec::new(),
        valid_ids: Vec::new(),
        accepted: None,
        no_reply: false,
        skip: None,
    }
}

/// The README's probe table (between its `probes` markers), generated from [`PROBES`].
pub fn probes_markdown() -> String {
    let mut out = String::from("| Probe | Sends | A correct server |\n| --- | --- | --- |\n");
    for p in PROBES {
        out.push_str(&format!("| `{}` | {} | {} |\n", p.name, p.sends, p.correct));
    }
    // The probes made from the config: derived from each safe tool's schema, and hand-written.
    out.push_str("| `invalid-arguments:<tool>:<mutation>` | for each `safeToolCalls` tool, its own valid arguments with one thing broken, derived from its `inputSchema`: `missing-<p>` (a required property left out), `<p>-wrong-type`, `unknown-property` (where `additionalProperties` is `false`), `<p>-not-in-enum`, `<p>-breaks-pattern`, `<p>-too-long`/`-too-short`, `<p>-above-maximum`/`-below-minimum`; at most 24 per tool, each checked against the whole schema so nothing it allows is sent as invalid; run whenever built-in probes run (skipped, saying why, when the tool is not in `tools/list`) | an error, or `isError: true` — and zero effects |\n");
    out.push_str("| `tool-call:<name>` | each config `adversarialToolCalls` entry (hand-written extras) | an error, or `isError: true` |\n");
    out
}

fn invalid_method(def: &'static ProbeDef, ctx: &Context) -> Probe {
    Probe {
        expect: Expect::MethodNotFound,
        accepted: Some(&rules::ADVERSARIAL_INVALID_METHOD_RESULT),
        ..base(
            def,
            ctx,
            Delivery::Request {
                method: "mcp-stdio-guard/no-such-method".into(),
                params: ctx.params(Some(json!({}))).unwrap_or(json!({})),
            },
        )
    }
}

fn invalid_params(def: &'static ProbeDef, ctx: &Context) -> Probe {
    Probe {
        accepted: Some(&rules::ADVERSARIAL_INVALID_PARAMS_RESULT),
        ..base(
            def,
            ctx,
            Delivery::Request {
                method: "tools/call".into(),
                params: ctx
                    .params(Some(
                        json!({"name": {"not": "a tool name"}, "arguments": "not an object"}),
                    ))
                    .unwrap_or_default(),
            },
        )
    }
}

fn notification(def: &'static ProbeDef, ctx: &Context) -> Probe {
    Probe {
        no_reply: true,
        ..base(
            def,
            ctx,
            Delivery::Raw(line(&json!({
                "jsonrpc": "2.0",
                "method": "notifications/mcp-stdio-guard/probe",
                "params": ctx.params(Some(json!({}))),
            }))),
        )
    }
}

fn malformed_json(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let full = serde_json::to_vec(&ctx.payload(id(def.name))).expect("JSON");
    let mut bytes = full[..full.len() * 2 / 3].to_vec();
    bytes.push(b'\n');
    Probe {
        rejected_ids: vec![id(def.name)],
        accepted: Some(&rules::ADVERSARIAL_MALFORMED_JSON_RESULT),
        ..base(def, ctx, Delivery::Raw(bytes))
    }
}

fn debug_line(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let mut bytes = b"debug: entering tool handler\n".to_vec();
    bytes.extend(line(&ctx.ping(id(def.name), None)));
    Probe {
        valid_ids: vec![id(def.name)],
        ..base(def, ctx, Delivery::Raw(bytes))
    }
}

fn banner_same_line(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let mut bytes = serde_json::to_vec(&ctx.payload(id(def.name))).expect("JSON");
    bytes.extend(b" server ready\n");
    Probe {
        rejected_ids: vec![id(def.name)],
        accepted: Some(&rules::ADVERSARIAL_MALFORMED_JSON_RESULT),
        ..base(def, ctx, Delivery::Raw(bytes))
    }
}

fn truncated_eof(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let full = serde_json::to_vec(&ctx.payload(id(def.name))).expect("JSON");
    Probe {
        rejected_ids: vec![id(def.name)],
        accepted: Some(&rules::ADVERSARIAL_MALFORMED_JSON_RESULT),
        ..base(
            def,
            ctx,
            Delivery::RawThenEof(full[..full.len() * 2 / 3].to_vec()),
        )
    }
}

fn concatenated_objects(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let (a, b) = (id("concatenated-objects-1"), id("concatenated-objects-2"));
    let mut bytes = serde_json::to_vec(&ctx.payload(a.clone())).expect("JSON");
    bytes.extend(line(&ctx.payload(b.clone())));
    Probe {
        rejected_ids: vec![a, b],
        accepted: Some(&rules::ADVERSARIAL_MALFORMED_JSON_RESULT),
        ..base(def, ctx, Delivery::Raw(bytes))
    }
}

fn tools_call_string_params(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let params = ctx
        .payload
        .as_ref()
        .map(|c| c.name.clone())
        .unwrap_or_else(|| "run".into());
    Probe {
        rejected_ids: vec![id(def.name)],
        accepted: Some(&rules::ADVERSARIAL_INVALID_PARAMS_RESULT),
        ..base(
            def,
            ctx,
            Delivery::Raw(line(&json!({
                "jsonrpc": "2.0",
                "id": id(def.name),
                "method": "tools/call",
                "params": params,
            }))),
        )
    }
}

fn wrong_jsonrpc_version(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let mut msg = ctx.payload(id(def.name));
    msg["jsonrpc"] = json!("1.0");
    Probe {
        rejected_ids: vec![id(def.name)],
        accepted: Some(&rules::ADVERSARIAL_INVALID_REQUEST_RESULT),
        ..base(def, ctx, Delivery::Raw(line(&msg)))
    }
}

fn boolean_id(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let mut msg = ctx.payload(Value::Null);
    msg["id"] = Value::Bool(true);
    Probe {
        rejected_ids: vec![Value::Bool(true)],
        coerced_ids: vec![json!(1), json!("true")],
        accepted: Some(&rules::ADVERSARIAL_INVALID_REQUEST_RESULT),
        ..base(def, ctx, Delivery::Raw(line(&msg)))
    }
}

fn batch_array(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let (a, b) = (id("batch-array-1"), id("batch-array-2"));
    let batch = json!([ctx.payload(a.clone()), ctx.payload(b.clone())]);
    let legal = ctx.negotiated.as_deref() == Some(crate::runtime::jsonrpc::BATCH_REVISION);
    Probe {
        rejected_ids: vec![a, b],
        accepted: Some(&rules::ADVERSARIAL_INVALID_REQUEST_RESULT),
        skip: legal.then(|| {
            format!(
                "batches are legal on the negotiated revision {}",
                crate::runtime::jsonrpc::BATCH_REVISION
            )
        }),
        ..base(def, ctx, Delivery::Raw(line(&batch)))
    }
}

fn crlf(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let mut bytes = serde_json::to_vec(&ctx.ping(id(def.name), None)).expect("JSON");
    bytes.extend(b"\r\n");
    Probe {
        frame_ids: vec![id(def.name)],
        ..base(def, ctx, Delivery::Raw(bytes))
    }
}

fn oversized_line(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let pad = "x".repeat(OVERSIZED_BYTES);
    Probe {
        frame_ids: vec![id(def.name)],
        ..base(
            def,
            ctx,
            Delivery::Raw(line(&ctx.ping(id(def.name), Some(json!({"padding": pad}))))),
        )
    }
}

fn invalid_utf8(def: &'static ProbeDef, ctx: &Context) -> Probe {
    let text =
        serde_json::to_string(&ctx.ping(id(def.name), Some(json!({"note": "@@"})))).expect("JSON");
    let (head, tail) = text.split_once("@@").expect("the marker is there");
    let mut bytes = head.as_bytes().to_vec();
    bytes.extend(b"\xff\xfe\xc3(");
    bytes.extend(tail.as_bytes());
    bytes.push(b'\n');
    Probe {
        frame_ids: vec![id(def.name)],
        ..base(def, ctx, Delivery::Raw(bytes))
    }
}

/// The probe made from one `adversarialToolCalls` entry.
pub fn tool_call(call: &CallRecipe, name: String, ctx: &Context) -> Probe {
    Probe {
        name,
        origin: Origin::ToolCall,
        risk: "A tool called with arguments outside its schema must refuse them (an error or `isError: true`) before it acts; accepting them means its input validation is not in front of its action.",
        delivery: Delivery::Request {
            method: "tools/call".into(),
            params: ctx
                .params(Some(
                    json!({"name": call.name, "arguments": call.arguments}),
                ))
                .unwrap_or_default(),
        },
        expect: Expect::ErrorOrIsError,
        rejected_ids: Vec::new(),
        coerced_ids: Vec::new(),
        frame_ids: Vec::new(),
        valid_ids: Vec::new(),
        accepted: Some(&rules::ADVERSARIAL_TOOL_CALL_RESULT),
        no_reply: false,
        skip: None,
    }
}

/// The invalid-arguments probes of one safe tool: one per mutation of its `inputSchema`
/// (none, and one skipped probe saying why, when the server does not list the tool).
pub fn invalid_arguments(call: &CallRecipe, schema: Option<&Value>, ctx: &Context) -> Vec<Probe> {
    let prefix = format!("{INVALID_ARGUMENTS_PREFIX}{}", call.name);
    let Some(schema) = schema else {
        let mut p = tool_call(call, prefix, ctx);
        p.origin = Origin::InvalidArguments;
        p.skip = Some(format!(
            "the server's tools/list does not list {:?} with an inputSchema: no invalid arguments can be derived",
            call.name
        ));
        return vec![p];
    };
    let (mutations, _) = super::invalid_args::mutations(&call.arguments, schema);
    mutations
        .into_iter()
        .map(|m| {
            let recipe = CallRecipe {
                name: call.name.clone(),
                arguments: m.arguments,
            };
            let mut p = tool_call(&recipe, format!("{prefix}:{}", m.name), ctx);
            p.origin = Origin::InvalidArguments;
            p
        })
        .collect()
}

/// The probes to run: the built-in names asked for, the invalid-arguments probes of each safe
/// tool (whenever built-in probes run), then one per adversarial tool call (`tool-call:<name>`,
/// numbered when a name repeats).
pub fn plan(names: &[String], calls: &[CallRecipe], ctx: &Context) -> Vec<Probe> {
    let mut out: Vec<Probe> = names.iter().filter_map(|n| build(n, ctx)).collect();
    if !names.is_empty() {
        for (call, schema) in &ctx.safe_tools {
            out.extend(invalid_arguments(call, schema.as_ref(), ctx));
        }
    }
    for (i, call) in calls.iter().enumerate() {
        let repeats = calls.iter().filter(|c| c.name == call.name).count() > 1;
        let name = if repeats {
            format!("{TOOL_CALL_PREFIX}{}#{}", call.name, i + 1)
        } else {
            format!("{TOOL_CALL_PREFIX}{}", call.name)
        };
        out.push(tool_call(call, name, ctx));
    }
    out
}

#[cfg(test)]
mod tests {
    /// The README's probe table is generated from `PROBES`: `UPDATE_GOLDEN=1 cargo test`
    /// rewrites it.
    #[test]
    fn the_readme_probe_table_is_generated() {
        crate::readme::check_section("probes", &probes_markdown());
    }

    use super::*;

    fn raw(p: &Probe) -> &[u8] {
        match &p.delivery {
            Delivery::Raw(b) | Delivery::RawThenEof(b) => b,
            Delivery::Request { .. } => panic!("{} is a request", p.name),
        }
    }

    #[test]
    fn every_name_builds_and_frames_are_what_they_claim() {
        let ctx = Context::default();
        for def in PROBES {
            assert!(build(def.name, &ctx).is_some(), "{}", def.name);
        }
        let p = |n| build(n, &ctx).unwrap();
        let banner = p("banner-same-line");
        assert!(raw(&banner).ends_with(b"} server ready\n"));
        assert!(serde_json::from_slice::<Value>(raw(&banner)).is_err());
        let concat = p("concatenated-objects");
        assert_eq!(memchr::memchr_iter(b'\n', raw(&concat)).count(), 1);
        assert!(raw(&concat).windows(2).any(|w| w == b"}{"));
        assert!(!raw(&p("truncated-eof")).contains(&b'\n'));
        assert!(serde_json::from_slice::<Value>(raw(&p("malformed-json"))).is_err());
        assert!(raw(&p("crlf")).ends_with(b"}\r\n"));
        assert!(raw(&p("oversized-line")).len() > OVERSIZED_BYTES);
        assert!(std::str::from_utf8(raw(&p("invalid-utf8"))).is_err());
        let bool_id: Value = serde_json::from_slice(raw(&p("boolean-id"))).unwrap();
        assert_eq!(bool_id["id"], true);
        let debug = p("debug-line");
        assert!(raw(&debug).starts_with(b"debug: entering tool handler\n{"));
        assert_eq!(debug.valid_ids, [json!("adv-debug-line")]);
        let s: Value = serde_json::from_slice(raw(&p("tools-call-string-params"))).unwrap();
        assert_eq!(s["params"], "run");
        assert!(p("batch-array").skip.is_none());
    }

    #[test]
    fn a_safe_call_is_the_payload_and_batches_are_skipped_where_legal() {
        let ctx = Context {
            stateless: false,
            negotiated: Some("2025-03-26".into()),
            payload: Some(CallRecipe {
                name: "deploy".into(),
                arguments: json!({"target": "preview"}),
            }),
            safe_tools: Vec::new(),
        };
        let banner = build("banner-same-line", &ctx).unwrap();
        let text = String::from_utf8(raw(&banner).to_vec()).unwrap();
        assert!(text.contains(r#""method":"tools/call""#) && text.contains(r#""name":"deploy""#));
        // Harmless probes never carry the tool call.
        let crlf = String::from_utf8(raw(&build("crlf", &ctx).unwrap()).to_vec()).unwrap();
        assert!(crlf.contains(r#""method":"ping""#));
        assert!(build("batch-array", &ctx).unwrap().skip.is_some());
        let s: Value =
            serde_json::from_slice(raw(&build("tools-call-string-params", &ctx).unwrap())).unwrap();
        assert_eq!(s["params"], "deploy");
    }

    #[test]
    fn stateless_frames_carry_the_meta_and_no_ping() {
        let ctx = Context {
            stateless: true,
            ..Context::default()
        };
        let v: Value = serde_json::from_slice(raw(&build("crlf", &ctx).unwrap())).unwrap();
        assert_eq!(v["method"], "server/discover");
        assert!(v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_string());
    }

    #[test]
    fn tool_call_probes_are_named_after_their_tool() {
        let calls = vec![
            CallRecipe {
                name: "a".into(),
                arguments: json!({}),
            },
            CallRecipe {
                name: "b".into(),
                arguments: json!({}),
            },
            CallRecipe {
                name: "b".into(),
                arguments: json!({"x": 1}),
            },
        ];
        let names: Vec<String> = plan(&["crlf".into()], &calls, &Context::default())
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(
            names,
            ["crlf", "tool-call:a", "tool-call:b#2", "tool-call:b#3"]
        );
    }
}
