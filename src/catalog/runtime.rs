//! Rules of the runtime core: process health, stdout framing, JSON-RPC grammar, the initialize
//! lifecycle, explicit operations and the shutdown ladder.

use super::{Check, Class, Severity};

rules! {
    // ---------------------------------------------------------------- process health (installRuntime)
    SPAWN_FAILED {
        code: "spawn-failed",
        class: Class::InstallRuntime,
        check: Check::Process,
        reference: true,
        detail_codes: &["spawn-failed-before-startup"],
        summary: "The server command could not be started.",
        what: "The operating system refused to start the command: it does not exist on PATH, is not executable, is a directory, or the working directory is missing.",
        why: "A client configured with this command will fail the same way, before any MCP traffic; users see the server as missing.",
        example: "`mcp-stdio-guard -- nod server.js` → `spawn nod: No such file or directory (ENOENT)`",
        fix: "Check the command name, its PATH and the working directory. Run it by hand from the same directory to see the error.",
    }
    SERVER_EXITED {
        code: "server-exited",
        class: Class::InstallRuntime,
        check: Check::Process,
        reference: true,
        detail_codes: &[
            "clean-exit-before-initialize",
            "nonzero-exit-before-initialize",
            "signal-exit-before-initialize",
            "clean-exit-after-initialize",
        ],
        summary: "The server process exited before the client ended the session.",
        what: "The process exited on its own, before answering `initialize`, or (detail `clean-exit-after-initialize`) with status 0 while the session was still open.",
        why: "Clients keep the stdio session open for the whole conversation; a server that quits on its own looks like a crash to them and every later request fails.",
        example: "The server reads a missing config file at start-up and calls `process.exit(1)` before reading stdin.",
        fix: "Read the stderr tail in the report for the reason the process stopped. Keep the process running until stdin reaches EOF.",
    }
    SERVER_CRASHED {
        code: "server-crashed",
        class: Class::InstallRuntime,
        check: Check::Process,
        reference: true,
        detail_codes: &["nonzero-exit-after-initialize", "signal-exit-after-initialize"],
        summary: "The server crashed after the initialize handshake.",
        what: "After a successful handshake the process exited with a non-zero status or was killed by a signal before the client closed stdin.",
        why: "Every request after the crash fails; clients show the server as disconnected, often without the stderr that explains why.",
        example: "An unhandled exception in a `notifications/initialized` handler: `exit code 1 after initialize`.",
        fix: "Read the stderr tail in the report for the exception. Catch errors in handlers and report them as JSON-RPC errors instead of exiting.",
    }
    INITIALIZE_TIMEOUT {
        code: "initialize-timeout",
        class: Class::InstallRuntime,
        check: Check::Initialize,
        reference: true,
        detail_codes: &["startup-timeout"],
        summary: "The server did not answer `initialize` within the timeout.",
        what: "No response to the `initialize` request arrived within `--timeout` milliseconds while the process kept running.",
        why: "Clients give up on servers that do not answer the handshake; a server that holds its reply in a buffer, waits for something on stdin, or starts too slowly never becomes usable.",
        example: "A Python server that writes with block-buffered stdout and never flushes.",
        fix: "Flush stdout after every message and answer `initialize` promptly. If start-up is legitimately slow, raise `--timeout`.",
    }
    OPERATION_TIMEOUT {
        code: "operation-timeout",
        class: Class::InstallRuntime,
        check: Check::Operation,
        reference: true,
        detail_codes: &["request-timeout"],
        summary: "The server did not answer a request within the timeout.",
        what: "A request sent after the handshake (an explicit `--request`, a capability probe, a tool call) got no response within `--timeout` milliseconds.",
        why: "Clients wait on every request; a request that is never answered freezes the conversation.",
        example: "A `tools/list` handler that awaits a promise that never resolves.",
        fix: "Answer every request with a result or a JSON-RPC error. If the operation is legitimately slow, raise `--timeout`.",
    }
    OPERATION_MISSING_RESPONSE {
        code: "operation-missing-response",
        class: Class::InstallRuntime,
        check: Check::Operation,
        reference: true,
        detail_codes: &[
            "clean-exit-during-operation",
            "nonzero-exit-during-operation",
            "signal-exit-during-operation",
        ],
        summary: "The server exited while a request was waiting for its response.",
        what: "The process exited (or closed stdout) after a request was sent and before its response arrived.",
        why: "The client never gets an answer; the request fails and the session is gone.",
        example: "A handler that calls `sys.exit()` on an unexpected argument.",
        fix: "Answer the request with a JSON-RPC error instead of exiting. Read the stderr tail in the report for the cause.",
    }
    OPERATION_ERROR {
        code: "operation-error",
        class: Class::McpProtocol,
        check: Check::Operation,
        reference: true,
        summary: "An operation the user asked for was answered with a JSON-RPC error.",
        what: "An explicit `--request`, config `requests` entry or safe tool call received an `error` response. This is an error by default (the reference tool: a warning); `--allow-operation-errors` relaxes it to a warning.",
        why: "The user asked for this operation because clients will call it; an error reply means the feature is broken for them.",
        example: "`--request tools/list` → `{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}`",
        fix: "Implement the method or fix its parameters. If the error is the expected answer, pass `--allow-operation-errors`.",
    }
    OPERATION_NOT_ADVERTISED {
        code: "operation-not-advertised",
        class: Class::McpProtocol,
        severity: Severity::Note,
        check: Check::Operation,
        summary: "An operation of a capability the server does not advertise was correctly refused.",
        what: "An explicit `--request` (or config request) names a method of a server capability (`tools`, `resources`, `prompts`, `logging`, `completions`) that `initialize` did not advertise, and the server answered -32601 Method not found: exactly what the specification asks of it.",
        why: "Not a defect of the server. The operation cannot succeed on this server; if clients are expected to call it, the server must implement the method and advertise its capability.",
        example: "A resources-only server asked for `--request tools/list` answers `{\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}`.",
        fix: "Nothing, if the capability is not meant to exist. Otherwise implement the method and advertise the capability in the `initialize` result.",
    }
    DEADLINE_EXTENDED {
        code: "deadline-extended",
        class: Class::InstallRuntime,
        check: Check::Process,
        severity: Severity::Note,
        summary: "A timeout or grace period ran out while the server was still busy on CPU; the guard waited longer.",
        what: "When `--timeout` or the shutdown grace expired, the server's process group had used CPU in the last half second (a slow start on a loaded machine, an interpreter shutting down), so the guard kept waiting in half-second steps, up to the same length again.",
        why: "On a busy CI runner a healthy server can need more than the nominal time; failing it would be a false alarm. An idle server that does not answer is not extended.",
        example: "Six Python SDK servers starting at once on two cores: each needs 6 s of wall time for 1.5 s of imports.",
        fix: "Nothing to fix in the server if the final verdict is clean. Raise `--timeout` or `--shutdown-grace` to make runs on slow machines deterministic.",
    }
    STDERR_OUTPUT_LIMIT_EXCEEDED {
        code: "stderr-output-limit-exceeded",
        class: Class::InstallRuntime,
        check: Check::Process,
        severity: Severity::Note,
        reference: true,
        summary: "stderr exceeded the retention limit; only its tail was kept.",
        what: "The server wrote more than `--max-stderr-bytes` to stderr. The guard kept reading (stderr is never a failure) and retained only the last bytes for the report.",
        why: "Nothing is wrong with the server: stderr is the right place for logs. The note explains why the stderr excerpt starts mid-stream.",
        example: "A server that logs every request at debug level to stderr.",
        fix: "Nothing to fix. Raise `--max-stderr-bytes` if you need more of the log in the report.",
    }

    // ---------------------------------------------------------------- stdout framing (stdioTransport)
    STDOUT_NON_JSON {
        code: "stdout-non-json",
        class: Class::StdioTransport,
        check: Check::Stdout,
        reference: true,
        summary: "A stdout line is not JSON.",
        what: "A complete stdout line that does not parse as a JSON value: a banner, a `print`, a log line, a launcher notice.",
        why: "stdout is the protocol channel. Strict clients disconnect on the first foreign line; lenient ones skip it and may pair the wrong reply with the wrong request.",
        example: "stdout line 1 (byte 0) is not JSON: b\"loading optional extension\\n\"",
        fix: "Send diagnostics to stderr. In Python use `print(..., file=sys.stderr)` or `logging` (it writes to stderr by default); in Node use `console.error`.",
    }
    STDOUT_EMPTY_LINE {
        code: "stdout-empty-line",
        class: Class::StdioTransport,
        check: Check::Stdout,
        reference: true,
        summary: "stdout contains an empty line.",
        what: "A line with no bytes between two newlines (or a lone `\\r`).",
        why: "An empty line is not a JSON-RPC message; strict clients fail to parse it.",
        example: "`print(json.dumps(msg) + \"\\n\")` writes the message followed by an empty line.",
        fix: "Write exactly one newline after each message. Check for a doubled `\\n` in your writer.",
    }
    STDOUT_WITHOUT_NEWLINE {
        code: "stdout-without-newline",
        class: Class::StdioTransport,
        check: Check::Stdout,
        reference: true,
        summary: "stdout ended with bytes that were never terminated by a newline.",
        what: "When stdout closed, the last bytes written had no terminating `\\n`, so they never formed a complete frame.",
        why: "Clients read newline-delimited frames; an unterminated message is never delivered, and a trailing fragment means something wrote to stdout without framing.",
        example: "`process.stdout.write(JSON.stringify(msg))` without `\\n`.",
        fix: "End every message with `\\n`. Look for writes that bypass the SDK's transport.",
    }
    STDOUT_CONTENT_LENGTH_FRAMING {
        code: "stdout-content-length-framing",
        class: Class::StdioTransport,
        check: Check::Stdout,
        reference: true,
        summary: "stdout uses LSP-style `Content-Length` headers.",
        what: "A stdout line starts with a `Content-Length:` header, the framing of the Language Server Protocol, not of MCP.",
        why: "MCP stdio frames are newline-delimited JSON. A client reads the header as a non-JSON line and the body may never parse.",
        example: "b\"Content-Length: 97\\r\\n\"",
        fix: "Write each message as one line of JSON followed by `\\n`, without headers. Use the official MCP SDK's stdio transport.",
    }
    STDOUT_LINE_TOO_LARGE {
        code: "stdout-line-too-large",
        class: Class::StdioTransport,
        check: Check::Stdout,
        reference: true,
        summary: "A stdout line exceeded the guard's line limit.",
        what: "A single stdout line grew past `--max-stdout-line-bytes` (default 4 MiB). The guard stopped buffering it at the limit and kept counting bytes to the next newline.",
        why: "The limit protects the guard, it is not a protocol rule; but a line this large is usually an endless stream of bytes without a newline, and it costs every client memory.",
        example: "A server that writes binary data to stdout with no newline.",
        fix: "Make sure every message ends with `\\n`. If the line is a legitimate message, raise `--max-stdout-line-bytes`.",
    }
    STDOUT_OUTPUT_LIMIT_EXCEEDED {
        code: "stdout-output-limit-exceeded",
        class: Class::StdioTransport,
        check: Check::Stdout,
        reference: true,
        summary: "Total stdout exceeded the guard's output limit; the run was stopped.",
        what: "The server wrote more than `--max-stdout-bytes` (default 64 MiB) to stdout. The guard stopped reading and ended the process.",
        why: "The limit protects the guard; a legitimate session of a few requests is far below it, so this is almost always a flood of output.",
        example: "A server stuck in a loop printing progress to stdout.",
        fix: "Find what floods stdout. If the output is legitimate, raise `--max-stdout-bytes`.",
    }
    STDOUT_INVALID_UTF8 {
        code: "stdout-invalid-utf8",
        class: Class::StdioTransport,
        check: Check::Stdout,
        summary: "A stdout line is not valid UTF-8.",
        what: "A complete stdout line contains bytes that are not valid UTF-8 (decoded strictly, never lossily).",
        why: "MCP messages are UTF-8 JSON. Clients that decode strictly reject the frame; lenient ones replace bytes and corrupt strings silently.",
        example: "stdout line 3 (byte 412) is not valid UTF-8 at byte 17: b\"{\\\"text\\\":\\\"caf\\xe9\\\"}\\n\"",
        fix: "Encode stdout as UTF-8. In Python set `sys.stdout.reconfigure(encoding=\"utf-8\")` or use the SDK transport; never write raw bytes of another encoding.",
    }
    STDOUT_UTF8_BOM {
        code: "stdout-utf8-bom",
        class: Class::StdioTransport,
        check: Check::Stdout,
        summary: "A stdout line starts with a UTF-8 byte-order mark.",
        what: "The bytes EF BB BF precede the JSON of a line, usually the first one.",
        why: "A BOM is not JSON whitespace; strict JSON parsers reject the frame.",
        example: "b\"\\xef\\xbb\\xbf{\\\"jsonrpc\\\":\\\"2.0\\\",...\"",
        fix: "Write UTF-8 without a BOM. On Windows/.NET use `new UTF8Encoding(false)`; in Python avoid the `utf-8-sig` codec.",
    }
    STDOUT_CRLF {
        code: "stdout-crlf",
        class: Class::StdioTransport,
        check: Check::Stdout,
        summary: "A stdout line ends with `\\r\\n` instead of `\\n`.",
        what: "The line terminator is CR LF; the CR becomes part of the frame.",
        why: "MCP frames are delimited by `\\n` alone. Most JSON parsers tolerate the trailing `\\r` as whitespace, but strict clients and line-exact tooling do not.",
        example: "b\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{}}\\r\\n\"",
        fix: "Write `\\n` only. On Windows open stdout in binary mode or set `newline=\"\\n\"`.",
    }
    STDOUT_MULTIPLE_VALUES {
        code: "stdout-multiple-values",
        class: Class::StdioTransport,
        check: Check::Stdout,
        summary: "A stdout line holds two or more JSON values.",
        what: "After the first complete JSON value the line contains another complete JSON value, without a newline between them.",
        why: "One line is one frame. A client reading line by line fails to parse the pair, losing both messages.",
        example: "b\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{}}{\\\"jsonrpc\\\":\\\"2.0\\\",...}\\n\"",
        fix: "Write `\\n` after every message. Look for two writers sharing stdout without a lock.",
    }
    STDOUT_TRAILING_TEXT {
        code: "stdout-trailing-text",
        class: Class::StdioTransport,
        check: Check::Stdout,
        summary: "A stdout line holds a JSON message followed by other text.",
        what: "The line starts with a complete JSON value and continues with bytes that are not JSON (a banner or log fragment written without a newline).",
        why: "The whole line is one frame and it does not parse; the message inside is lost for strict clients and ambiguous for lenient ones.",
        example: "b\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{}} server ready\\n\"",
        fix: "Send diagnostics to stderr. Make sure nothing else writes to stdout between a message and its newline.",
    }
    STDOUT_PRETTY_PRINTED {
        code: "stdout-pretty-printed",
        class: Class::StdioTransport,
        check: Check::Stdout,
        summary: "A JSON message was pretty-printed over several stdout lines.",
        what: "Consecutive stdout lines only parse as JSON when joined: the message was serialized with indentation or embedded newlines.",
        why: "MCP messages must not contain embedded newlines; clients read each line as a separate, broken frame.",
        example: "b\"{\\n\" then b\"  \\\"jsonrpc\\\": \\\"2.0\\\",\\n\" ...",
        fix: "Serialize compactly: `JSON.stringify(msg)` without the indent argument, `json.dumps(msg)` without `indent`.",
    }

    STDOUT_DEEP_JSON {
        code: "stdout-deep-json",
        class: Class::StdioTransport,
        severity: Severity::Note,
        check: Check::Stdout,
        summary: "A valid JSON message is nested more than 128 levels deep.",
        what: "A stdout line holds valid JSON whose nesting is deeper than 128 levels. It is JSON (Node's `JSON.parse` reads any depth), so it is judged like any other message; the guard keeps its content only to 128 levels, so checks of a tool schema or a tool result skip what lies deeper.",
        why: "Not a protocol violation. Python's `json` module stops at its recursion limit (about 1,000 levels, `RecursionError`), and many JSON tools at a few hundred: a client in such a runtime cannot read the message.",
        example: "`{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tree\":[[[[...]]]]}}` nested 1,000 levels deep.",
        fix: "Nothing is required. If Python clients must read the message, keep its nesting under a few hundred levels (flatten trees into lists with parent ids).",
    }

    STDOUT_CLOSED_EARLY {
        code: "stdout-closed-early",
        class: Class::StdioTransport,
        check: Check::Stdout,
        summary: "The server closed stdout while it was still running.",
        what: "stdout reached EOF while the process was alive and a reply was still expected, so no further message could ever arrive.",
        why: "Clients read replies from stdout; once it is closed every pending and future request hangs until the client gives up.",
        example: "A server that runs `exec 1>&-` or `sys.stdout.close()` after start-up.",
        fix: "Never close or redirect stdout in the server. Send logs to stderr instead of closing the channel.",
    }

    STDIN_CLOSED_EARLY {
        code: "stdin-closed-early",
        class: Class::StdioTransport,
        check: Check::Process,
        summary: "The server closed its stdin (a write to it failed) while it was still running.",
        what: "Writing a message to the server's stdin failed (`EPIPE`: nothing reads the pipe any more) before the guard closed stdin, and the process was still running when the guard came to end the session. Every message sent after that point was lost.",
        why: "Clients talk to the server only through stdin; once the server has closed it, requests and notifications vanish and the client waits for replies that can never come.",
        example: "A server that calls `os.close(0)` or `process.stdin.destroy()` after the handshake, or hands stdin to a child process that exits.",
        fix: "Keep reading stdin until EOF for the whole session; never close or hand off file descriptor 0.",
    }

    // ---------------------------------------------------------------- JSON-RPC grammar (mcpProtocol)
    STDOUT_INVALID_JSON_RPC {
        code: "stdout-invalid-json-rpc",
        class: Class::McpProtocol,
        check: Check::JsonRpc,
        reference: true,
        detail_codes: &[
            "not-an-object",
            "jsonrpc-version",
            "id-invalid-type",
            "result-and-error",
            "no-result-or-error",
            "error-object-invalid",
            "method-invalid",
            "params-invalid",
            "batch-not-negotiated",
            "batch-empty",
        ],
        summary: "A stdout frame is JSON but not a valid JSON-RPC 2.0 message.",
        what: "The frame is valid JSON but breaks the JSON-RPC 2.0 grammar: not an object, `jsonrpc` not exactly \"2.0\", an id that is null, boolean or fractional, both or neither of `result`/`error`, an `error` without integer `code` and string `message`, or a batch array on a revision without batches.",
        why: "Clients validate messages against the JSON-RPC schema; an invalid one is dropped or ends the session, and a reply that cannot be matched leaves a request hanging.",
        example: "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":-1,\"message\":\"x\"}}",
        fix: "Emit messages through the official SDK, or follow the JSON-RPC 2.0 grammar exactly. The detail code names the broken rule.",
    }
    RESPONSE_ID_MISMATCH {
        code: "response-id-mismatch",
        class: Class::McpProtocol,
        check: Check::JsonRpc,
        reference: true,
        summary: "A response carries an id the guard never sent while a request was waiting.",
        what: "While a request was pending, the server answered with an id that matches no request of the guard. The guard stops waiting: the reply is misaddressed.",
        why: "Clients pair replies by id; a wrong id leaves the real request hanging and may be mistaken for another request's answer.",
        example: "request `{\"id\":2,\"method\":\"tools/list\"}` → response `{\"id\":1,...}`",
        fix: "Echo the request's id unchanged in its response. Look for a counter or cache shared between requests.",
    }
    RESPONSE_ID_TYPE_MISMATCH {
        code: "response-id-type-mismatch",
        class: Class::McpProtocol,
        check: Check::JsonRpc,
        reference: true,
        summary: "A response echoes the request id with a different type.",
        what: "The response id equals the request id in value but not in type: `\"1\"` for `1`, or `1` for `\"1\"`.",
        why: "JSON-RPC ids are compared with their type; strict clients never match the reply and time out.",
        example: "request id `7` → response id `\"7\"`",
        fix: "Return the id exactly as received, without converting it to a string or a number.",
    }
    STDOUT_UNEXPECTED_REQUEST_ID {
        code: "stdout-unexpected-request-id",
        class: Class::McpProtocol,
        check: Check::JsonRpc,
        reference: true,
        detail_codes: &["already-answered", "never-sent"],
        summary: "A response arrived for a request that was already answered or never sent.",
        what: "No request was waiting for this id: it was answered before (a duplicate reply) or the guard never used it.",
        why: "Clients drop or misattribute unsolicited responses; a duplicate reply means a handler answered twice.",
        example: "two responses with `\"id\":1` after one `initialize`",
        fix: "Answer each request exactly once, with its own id.",
    }
    NOTIFICATION_RESPONSE {
        code: "notification-response",
        class: Class::McpProtocol,
        check: Check::JsonRpc,
        reference: true,
        summary: "The server answered a notification.",
        what: "After the guard sent a notification (such as `notifications/initialized`), the server wrote a response although nothing was pending.",
        why: "JSON-RPC forbids replies to notifications; a client receiving one has no request to pair it with.",
        example: "`notifications/initialized` → `{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}`",
        fix: "Do not respond to messages without an `id`. Handle `notifications/*` as fire-and-forget.",
    }
    SERVER_REQUEST_BEFORE_INITIALIZED {
        code: "server-request-before-initialized",
        class: Class::McpProtocol,
        check: Check::JsonRpc,
        severity: Severity::Warning,
        summary: "The server sent a request other than `ping` before the handshake finished.",
        what: "Before `notifications/initialized`, the server sent a request other than `ping`. Notifications this early (logging, `list_changed`) are legal and never reported.",
        why: "The lifecycle says the server SHOULD NOT send requests other than pings and logging before it receives `initialized`; clients may not be ready to answer.",
        example: "`{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"roots/list\"}` before `initialized`",
        fix: "Wait for `notifications/initialized` before sending requests to the client.",
    }
    SERVER_REQUEST_UNDECLARED_CAPABILITY {
        code: "server-request-undeclared-capability",
        class: Class::McpProtocol,
        check: Check::JsonRpc,
        summary: "The server sent a request that needs a client capability the client did not declare.",
        what: "The server sent `roots/list`, `sampling/createMessage` or `elicitation/create` although the guard declared no `roots`, `sampling` or `elicitation` capability.",
        why: "From 2025-06-18 servers MUST NOT send requests for undeclared client capabilities; such clients answer with an error or hang.",
        example: "`{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"sampling/createMessage\",...}` to a client with `capabilities: {}`",
        fix: "Check the client's declared capabilities from `initialize` before sending the request.",
    }

    // ---------------------------------------------------------------- initialize lifecycle (mcpProtocol)
    INITIALIZE_ERROR {
        code: "initialize-error",
        class: Class::McpProtocol,
        check: Check::Initialize,
        reference: true,
        summary: "The server answered `initialize` with a JSON-RPC error.",
        what: "The response to `initialize` is an `error` object instead of a result.",
        why: "Without a successful handshake no client can use the server.",
        example: "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"Unsupported protocol version\"}}",
        fix: "Answer `initialize` with a result. If the protocol version is the problem, respond with a version you support instead of an error.",
    }
    INITIALIZE_INVALID_RESULT {
        code: "initialize-invalid-result",
        class: Class::McpProtocol,
        check: Check::Initialize,
        reference: true,
        summary: "The `initialize` result is not an object.",
        what: "The response to `initialize` has a `result` that is not a JSON object.",
        why: "Clients read `protocolVersion`, `capabilities` and `serverInfo` from the result object; anything else ends the handshake.",
        example: "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"ok\"}",
        fix: "Return `{protocolVersion, capabilities, serverInfo}` as the result object.",
    }
    INITIALIZE_MISSING_PROTOCOL_VERSION {
        code: "initialize-missing-protocol-version",
        class: Class::McpProtocol,
        check: Check::Initialize,
        reference: true,
        summary: "The `initialize` result has no `protocolVersion`.",
        what: "The result object lacks the `protocolVersion` field.",
        why: "Clients must know which revision was negotiated; without it they disconnect.",
        example: "{\"capabilities\":{},\"serverInfo\":{\"name\":\"x\",\"version\":\"1\"}}",
        fix: "Return the negotiated revision in `protocolVersion` (the requested one if supported, else your latest).",
    }
    INITIALIZE_INVALID_PROTOCOL_VERSION {
        code: "initialize-invalid-protocol-version",
        class: Class::McpProtocol,
        check: Check::Initialize,
        reference: true,
        detail_codes: &["not-a-string", "unknown-revision", "newer-than-requested"],
        summary: "The negotiated `protocolVersion` is unknown or newer than the client asked for.",
        what: "`protocolVersion` is not a string, is not a published MCP revision, or is newer than the revision the guard requested.",
        why: "A server may answer with an older revision it supports, never with one the client did not offer; clients that do not know the revision disconnect.",
        example: "requested `2025-03-26`, server answered `2025-11-25`",
        fix: "Echo the requested revision when you support it; otherwise answer with the latest revision you support that is not newer than the request.",
    }
    INITIALIZE_MISSING_CAPABILITIES {
        code: "initialize-missing-capabilities",
        class: Class::McpProtocol,
        check: Check::Initialize,
        reference: true,
        summary: "The `initialize` result has no `capabilities`.",
        what: "The result object lacks the `capabilities` field.",
        why: "Clients decide which features to use from the capabilities; without them they cannot proceed.",
        example: "{\"protocolVersion\":\"2025-11-25\",\"serverInfo\":{...}}",
        fix: "Return `capabilities` as an object, `{}` when you advertise nothing.",
    }
    INITIALIZE_INVALID_CAPABILITIES {
        code: "initialize-invalid-capabilities",
        class: Class::McpProtocol,
        check: Check::Initialize,
        reference: true,
        summary: "The `initialize` result's `capabilities` is not an object.",
        what: "`capabilities` is present but is not a JSON object (or one of its advertised entries is not an object).",
        why: "Clients read capability entries as objects; another type breaks the handshake.",
        example: "\"capabilities\": [\"tools\"]",
        fix: "Return capabilities as an object keyed by capability, e.g. `{\"tools\":{}}`.",
    }
    INITIALIZE_MISSING_SERVER_INFO {
        code: "initialize-missing-server-info",
        class: Class::McpProtocol,
        check: Check::Initialize,
        severity: Severity::Warning,
        reference: true,
        summary: "The `initialize` result has no `serverInfo`.",
        what: "The result object lacks `serverInfo` with the server's name and version.",
        why: "`serverInfo` is required by the schema; clients and registries use it to name the server and diagnose versions.",
        example: "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}",
        fix: "Return `serverInfo: {name, version}` in the result.",
    }
    INITIALIZE_INVALID_SERVER_INFO {
        code: "initialize-invalid-server-info",
        class: Class::McpProtocol,
        check: Check::Initialize,
        severity: Severity::Warning,
        reference: true,
        summary: "The `initialize` result's `serverInfo` lacks a string `name` or `version`.",
        what: "`serverInfo` is not an object, or its `name` or `version` is missing or not a string.",
        why: "Clients and registries display and compare these fields; a malformed `serverInfo` breaks strict schema validation.",
        example: "\"serverInfo\": {\"name\": \"demo\"}",
        fix: "Return `serverInfo: {\"name\": \"...\", \"version\": \"...\"}` with both as strings.",
    }

    // ---------------------------------------------------------------- shutdown ladder (stdioTransport)
    SHUTDOWN_SIGTERM_REQUIRED {
        code: "shutdown-sigterm-required",
        class: Class::StdioTransport,
        check: Check::Process,
        summary: "The server did not exit when stdin closed; it needed SIGTERM.",
        what: "After the guard closed stdin and waited the shutdown grace, the process was still running and only exited after SIGTERM. `--allow-sigterm-shutdown` downgrades this to a warning.",
        why: "Many clients just close stdin and go away. A server that ignores EOF stays alive: this is how users end up with hundreds of orphaned server processes.",
        example: "A Node server with a `setInterval` keep-alive that never checks for stdin `end`.",
        fix: "Exit when stdin reaches EOF. Node: `process.stdin.on('end', () => process.exit(0))`; Python: return from the main loop when `readline()` returns empty.",
    }
    SHUTDOWN_SIGKILL_REQUIRED {
        code: "shutdown-sigkill-required",
        class: Class::StdioTransport,
        check: Check::Process,
        summary: "The server ignored stdin EOF and SIGTERM; it had to be killed.",
        what: "The process kept running after stdin closed and after SIGTERM, so the guard sent SIGKILL to its process group.",
        why: "Clients cannot stop this server cleanly; it leaks processes and may lose data on kill.",
        example: "`signal.signal(signal.SIGTERM, signal.SIG_IGN)` in a server that never reads EOF.",
        fix: "Exit on stdin EOF, and do not ignore SIGTERM. Let shutdown handlers finish within two seconds.",
    }
    SHUTDOWN_STDOUT_HELD_OPEN {
        code: "shutdown-stdout-held-open",
        class: Class::StdioTransport,
        check: Check::Process,
        summary: "stdout stayed open after the server exited: a descendant still holds it.",
        what: "The server process exited but its stdout pipe did not reach EOF, because a child or grandchild inherited it and kept running.",
        why: "Clients wait for stdout EOF to know the server is gone; a descendant holding the pipe makes them hang and leaves a stray process writing into the protocol channel.",
        example: "A launcher script that starts the real server in the background with `&` and exits.",
        fix: "Start helpers with stdout redirected (`stdio: ['ignore', 'ignore', 'inherit']`, `stdout=subprocess.DEVNULL`), or `exec` the real server instead of forking it.",
    }
    SHUTDOWN_DESCENDANTS_LEFT {
        code: "shutdown-descendants-left",
        class: Class::StdioTransport,
        check: Check::Process,
        summary: "Processes started by the server were still alive after it exited; the guard killed them.",
        what: "After the server exited, processes it started (in its process group, or escaped from it) were still running. The guard listed and killed them.",
        why: "Left-over helpers accumulate on user machines every time the client restarts the server.",
        example: "A server that spawns a language server or a browser and never stops it.",
        fix: "Stop the children you start when stdin closes or on SIGTERM. Use `exec` in wrapper scripts.",
    }
}
