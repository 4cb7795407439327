//! Rules of hostile input and the no-effect proof: the adversarial probes (the reference's four and
//! the framing corpus), the effects observed while a server handles a rejected frame, and the
//! evidence-based stdio buffering diagnosis.

use super::{Check, Class, Severity};

rules! {
    // ---------------------------------------------------------------- what a rejected frame got back
    ADVERSARIAL_INVALID_METHOD_RESULT {
        code: "adversarial-invalid-method-result",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        reference: true,
        detail_codes: &["success-result", "wrong-error-code"],
        summary: "A request for a method that does not exist was not refused with -32601.",
        what: "Probe `invalid-method` sends a well-formed request for a method no server implements. Detail `success-result`: the server answered it with a result (an error). Detail `wrong-error-code`: it refused it with an error code other than -32601 Method not found (a warning).",
        why: "A client that gets a result believes an operation succeeded that the server never implemented; a wrong error code hides the reason from clients that retry or fall back on -32601.",
        example: "`{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"mcp-stdio-guard/no-such-method\"}` → `{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}`",
        fix: "Answer unknown methods with `{\"code\": -32601, \"message\": \"Method not found\"}`. Do not route unknown methods to a catch-all handler that succeeds.",
    }
    ADVERSARIAL_INVALID_PARAMS_RESULT {
        code: "adversarial-invalid-params-result",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        reference: true,
        summary: "A `tools/call` with malformed params was answered with a success.",
        what: "Probe `invalid-params` sends `tools/call` whose `name` is an object and whose `arguments` is a string; probe `tools-call-string-params` sends `tools/call` whose `params` is a string. The server answered with a result that is not `isError: true`. Any JSON-RPC error (or an `isError` result) passes.",
        why: "A call that is not a call was executed or half-executed: the parameters that should have stopped it before any action were coerced or ignored, which is exactly how a partially understood request reaches an executor.",
        example: "`{\"jsonrpc\":\"2.0\",\"id\":\"adv-string-params\",\"method\":\"tools/call\",\"params\":\"deploy\"}` → `{\"jsonrpc\":\"2.0\",\"id\":\"adv-string-params\",\"result\":{\"content\":[...]}}`",
        fix: "Validate `params` against the method's schema before dispatching: `params` must be an object, `name` a string, `arguments` an object. Reply -32602 Invalid params otherwise.",
    }
    ADVERSARIAL_MALFORMED_JSON_RESULT {
        code: "adversarial-malformed-json-result",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        reference: true,
        summary: "A line that is not exactly one JSON value was answered with a success.",
        what: "Probes `malformed-json` (a truncated object on its own line), `truncated-eof` (a truncated object, then stdin EOF), `banner-same-line` (a request followed by text on the same line) and `concatenated-objects` (two requests on one line) send lines that are not one JSON value. The server answered a request inside them with a result. A -32700 parse error or silence passes.",
        why: "The transport allows one JSON value per line. A reader that repairs, truncates or splits lines accepts bytes no client meant as a request; a line-reader mistake becomes an executed call.",
        example: "`{\"jsonrpc\":\"2.0\",\"id\":\"adv-banner\",\"method\":\"ping\"} server ready` → `{\"jsonrpc\":\"2.0\",\"id\":\"adv-banner\",\"result\":{}}`",
        fix: "Parse each complete line with a strict parser that rejects trailing data (`json.loads`, `JSON.parse`), never a streaming or `raw_decode` parser. Reply -32700 with `id: null`, or ignore the line.",
    }
    ADVERSARIAL_INVALID_REQUEST_RESULT {
        code: "adversarial-invalid-request-result",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        summary: "A frame that is valid JSON but not a valid request was answered with a success.",
        what: "Probe `boolean-id` sends a request whose id is `true`; probe `batch-array` sends a JSON-RPC batch on a revision without batches (anything but 2025-03-26). The server answered with a result (under any id, including `1` for `true`).",
        why: "JSON-RPC ids are strings or integers: a server that takes `true` for `1` has crossed a type boundary its author did not plan for, and a batch accepted where the revision forbids it bypasses per-message checks.",
        example: "`{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}` → `{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}`",
        fix: "Validate the envelope strictly: an id is a string or an integer, never a boolean; reject arrays unless 2025-03-26 was negotiated. Reply -32600 Invalid Request with `id: null`, or ignore the frame.",
    }
    ADVERSARIAL_NOTIFICATION_RESPONSE {
        code: "adversarial-notification-response",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        reference: true,
        summary: "The server answered an unknown notification.",
        what: "Probe `notification` sends a notification (no `id`) for a method the server does not know. The server wrote a response to it, result or error.",
        why: "Nothing answers a notification in JSON-RPC; a client receiving a response it cannot pair may drop it, or pair it with the wrong pending request.",
        example: "`{\"jsonrpc\":\"2.0\",\"method\":\"notifications/mcp-stdio-guard/probe\"}` → `{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}`",
        fix: "Ignore notifications you do not handle. Never reply to a message without an `id`.",
    }
    ADVERSARIAL_TOOL_CALL_RESULT {
        code: "adversarial-tool-call-result",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        reference: true,
        summary: "A tool called with invalid arguments reported success.",
        what: "Config `adversarialToolCalls` names tools the user considers safe and arguments that are invalid for them. The guard called each (in its own server process) and the tool returned a result without `isError: true`. An error reply or an `isError` result passes.",
        why: "A tool that accepts arguments outside its schema acts on input its author never validated; in a gateway that acts on the outside world, that is the path from a malformed request to an external effect.",
        example: "`adversarialToolCalls: [{\"name\": \"deploy-preview\", \"arguments\": {\"target\": 42}}]` → `{\"content\":[{\"type\":\"text\",\"text\":\"deployed\"}]}`",
        fix: "Validate tool arguments against the tool's `inputSchema` before doing anything, and return `isError: true` (or -32602) when they do not conform.",
    }

    // ---------------------------------------------------------------- what became of the session
    ADVERSARIAL_PROBE_CRASH {
        code: "adversarial-probe-crash",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        reference: true,
        summary: "The server crashed on hostile input.",
        what: "After a probe's frame, the server process exited with a non-zero status or a signal (or closed stdout and kept running) instead of rejecting the frame. Closing cleanly (exit status 0) is an accepted policy and passes.",
        why: "Any peer (or anything that can write to the server's stdin) can then take the server down with one line; clients see a disconnected server and lose every pending request.",
        example: "`malformed-json` → `json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)` on stderr, exit code 1",
        fix: "Catch parse and validation errors per message and reply -32700/-32600/-32602 (or ignore the line); never let one bad line unwind the read loop. Read the stderr tail in the report for the exception.",
    }
    ADVERSARIAL_PROBE_TIMEOUT {
        code: "adversarial-probe-timeout",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        reference: true,
        detail_codes: &["no-reply", "follow-up", "shutdown"],
        summary: "The server hung on hostile input.",
        what: "Detail `no-reply`: a well-formed probe request (`invalid-method`, `invalid-params`, a tool call) got no answer within `--timeout`. Detail `follow-up`: after a rejected frame, the valid request that followed got no answer while the server kept running. Detail `shutdown`: after the probe, the server no longer exited on stdin EOF (it did in the main run).",
        why: "A client waits on every request; a server that stops answering after one bad line freezes the conversation, and one that ignores EOF afterwards becomes an orphan.",
        example: "`truncated-eof`: the server keeps waiting for the rest of `{\"jsonrpc\":\"2.0\",\"id\":\"adv-trunc\",\"method\":` after stdin closed",
        fix: "Answer every well-formed request; after a bad line, drop it and keep reading line by line; on stdin EOF discard any partial line and exit.",
    }
    ADVERSARIAL_PROBE_INVALID_STDOUT {
        code: "adversarial-probe-invalid-stdout",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        reference: true,
        summary: "Hostile input made the server write non-protocol bytes to stdout.",
        what: "After a probe's frame, stdout carried something the main run never showed: a line that is not a JSON-RPC message (an error print, a traceback, a banner), an invalid envelope (such as an echoed `id: true`), or a reply under an id the guard never sent. The message carries the framing code it would have had and the offending bytes.",
        why: "The release criterion of a stdio boundary: stdout holds only complete protocol messages, whatever the input. Error paths are where stray prints hide, and a client that tolerates them may pair the wrong reply with the wrong request.",
        example: "`malformed-json` → stdout `b\"bad request: Expecting value\\n\"`",
        fix: "Send diagnostics of rejected input to stderr (`print(..., file=sys.stderr)`, `console.error`), and answer with a JSON-RPC error or nothing.",
    }
    ADVERSARIAL_FOLLOW_UP_FAILED {
        code: "adversarial-follow-up-failed",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        detail_codes: &["error-reply", "wrong-id", "request-lost"],
        summary: "After a rejected frame, a valid request did not succeed: the session inherited something from the rejected one.",
        what: "After each frame the server does not close on, the guard sends a valid request (`ping`; `server/discover` in the stateless era). Detail `error-reply`: it was answered with an error. Detail `wrong-id`: it was answered under the id of the rejected frame. Detail `request-lost`: a valid request sent on the line right after a bad line (probe `debug-line`) got no answer while the following one did.",
        why: "A session that stays open after a rejected frame must be as good as new: a buffer, a merged params object or an id carried over from the rejected request makes the next, legitimate request fail or, worse, act on the rejected input.",
        example: "`tools-call-string-params` (`params: \"run\"`), then `{\"id\":3,\"method\":\"ping\"}` → `{\"id\":3,\"error\":{\"code\":-32602,\"message\":\"ping takes no params\"}}`",
        fix: "Keep no state from a rejected frame: parse each line from scratch, build params per request, and reset any per-request context before reading the next line. Or close the session after a bad frame (exit 0).",
    }
    ADVERSARIAL_PROBE_INCONCLUSIVE {
        code: "adversarial-probe-inconclusive",
        class: Class::McpProtocol,
        check: Check::Adversarial,
        severity: Severity::Warning,
        summary: "A probe could not run: its fresh server process did not complete the handshake.",
        what: "Each probe runs in a fresh server process. This one failed to start or to complete the handshake that worked in the main run, so the probe's frame was never sent.",
        why: "An unrun probe proves nothing; a server whose handshake fails intermittently is also a reliability problem of its own.",
        example: "probe `batch-array`: the server answered initialize with an error in the probe's process",
        fix: "Run the guard again; if it persists, read the probe's message and the stderr of the server for why its start-up is not deterministic.",
    }

    // ---------------------------------------------------------------- the no-effect proof
    ADVERSARIAL_SIDE_EFFECT_HTTP {
        code: "adversarial-side-effect-http",
        class: Class::McpProtocol,
        check: Check::Effects,
        summary: "The server made an HTTP(S) connection while handling a rejected frame.",
        what: "With `--effects`, the guard's loopback canary (an HTTP(S) proxy on 127.0.0.1 exported through `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and the env names you list) received a connection after a probe's frame was sent and before the guard closed stdin. The canary answered with an error and forwarded nothing. The message names the probe, the request (`CONNECT host:443`, `POST http://host/path`) and when it came.",
        why: "Returning an error is not the property that matters; zero effects is. A handler that builds and sends its outgoing request before validation and authorization have finished has already acted when it rejects the call.",
        example: "probe `tool-call:deploy-preview` → `POST http://api.example/deploy` 12 ms after the rejected call, although the server replied `isError: true`",
        fix: "Validate and authorize the complete request before building any outgoing request: the executor must only accept a fully typed, authorized action. Re-run with `--effects` to prove it.",
    }
    ADVERSARIAL_SIDE_EFFECT_PROCESS {
        code: "adversarial-side-effect-process",
        class: Class::McpProtocol,
        check: Check::Effects,
        detail_codes: &["exec", "watched"],
        summary: "The server started a process while handling a rejected frame.",
        what: "With `--effects`, a program was started after a probe's frame was sent and before the guard closed stdin. Detail `exec`: the system-call observer (Linux seccomp) trapped the `execve` itself — the full argv and the resolved program, however briefly it lived. Detail `watched`: the polled process watch (where the system-call observer cannot run) saw a new descendant with its argv.",
        why: "A helper such as `ssh`, `curl` or `git` started for a request that was rejected means the rejection came after the action: the boundary leaked.",
        example: "probe `invalid-arguments:ssh-run:missing-host` → exec `ssh -o BatchMode=yes deploy@host uptime` (/usr/bin/ssh) 8 ms after the rejected call",
        fix: "Run helpers only from the executor, after validation and authorization of the whole request. Never start a process to find out whether a request is valid.",
    }
    ADVERSARIAL_SIDE_EFFECT_NETWORK {
        code: "adversarial-side-effect-network",
        class: Class::McpProtocol,
        check: Check::Effects,
        detail_codes: &["dns", "connect", "send"],
        summary: "The server looked up a name or opened a network connection while handling a rejected frame.",
        what: "With `--effects`, the system-call observer (Linux seccomp) trapped a network call of the server or one of its processes after a probe's frame was sent and before the guard closed stdin. Detail `dns`: traffic to port 53 — the message names the question (`api.example.com (A, AAAA)`) when the resolver's payload was seen, else the name server's address. Detail `connect`: a `connect` to an IP address (TCP, or a UDP socket's peer). Detail `send`: a datagram sent to an address. Under `--effects-policy contain` (the default) the call was refused with `ECONNREFUSED` and nothing left the machine; under `observe` it went through. Unix sockets are local IPC and never reported here; connections to the canary are reported as `adversarial-side-effect-http`.",
        why: "A name lookup is the first packet of every outgoing request: a handler that resolves its upstream before validation has finished has already started to act on input it then rejects. This is seen whatever HTTP client the server uses — Node's `fetch`, raw sockets, Java's HttpClient — with no proxy or log to cooperate.",
        example: "probe `invalid-arguments:deploy-preview:target-wrong-type` → DNS lookup of api.deploy.invalid (A, AAAA) to 10.0.0.53:53/udp; refused by the guard, 3 ms after the rejected call",
        fix: "Validate and authorize the complete request before building any outgoing request or resolving its host: the executor must only accept a fully typed, authorized action. Re-run with `--effects` to prove it.",
    }
    ADVERSARIAL_SIDE_EFFECT_LOGGED {
        code: "adversarial-side-effect-logged",
        class: Class::McpProtocol,
        check: Check::Effects,
        summary: "The server's own action recorder logged an action while handling a rejected frame.",
        what: "With `--effects`, the guard exports `MCP_STDIO_GUARD_EFFECTS`, a file path; a server that follows the recorder pattern appends one JSON line per action its executor performs. A line was appended after a probe's frame was sent and before the guard closed stdin.",
        why: "The recorder sits right behind the last validation and authorization boundary; an entry there for a rejected input is the failure the boundary exists to prevent.",
        example: "probe `boolean-id` → effects log `{\"action\":\"http\",\"target\":\"https://api.example/deploy\"}`",
        fix: "Move validation and authorization in front of the executor, and keep the recorder right at the executor so the proof stays honest.",
    }
    EFFECTS_RECORDER_UNPROVEN {
        code: "effects-recorder-unproven",
        class: Class::McpProtocol,
        check: Check::Effects,
        severity: Severity::Note,
        summary: "No safe tool call produced an observable effect: \"no effect during probes\" proves little.",
        what: "With `--effects` and at least one configured safe tool call, none of the calls produced an effect any observer that ran could see (a trapped network call or exec, a canary connection, a new process, an effects-log line). The message lists the observers that ran.",
        why: "Zero effects during hostile input is only evidence if the same recorder sees the effects of a legitimate call; otherwise the server may simply act through a channel the guard does not watch.",
        example: "on macOS (no system-call observer), a server that calls its API through a client that ignores `HTTP_PROXY` (Node 20's `fetch`) and writes no effects log",
        fix: "Check that the safe tool calls really act (a call that only reads local state has nothing to observe). Where the system-call observer cannot run, point the API base URL of the server at the canary with `--effects-env NAME` (or config `effects.env`), or adopt the `MCP_STDIO_GUARD_EFFECTS` log contract in the executor.",
    }
    EFFECTS_SYSCALL_OBSERVER_UNAVAILABLE {
        code: "effects-syscall-observer-unavailable",
        class: Class::McpProtocol,
        check: Check::Effects,
        severity: Severity::Warning,
        summary: "The system-call observer could not run: effects were observed only through the cooperative channels.",
        what: "`--effects` asks for the system-call observer (a seccomp filter with user notification, Linux 5.5+, x86-64 or aarch64), and it could not be installed for the main run's server: the message says why (not Linux, an old kernel, a container policy that forbids seccomp, a setuid or file-capability program that no_new_privs would strip, the guard itself running under another seccomp supervisor, or `MCP_STDIO_GUARD_NO_SYSCALL_OBSERVER`). The canary proxy, the effects log and the process watch still ran; `effects.observers` in the JSON report lists each.",
        why: "The canary sees only clients that honour the proxy variables, the log only servers that write it, and the process watch polls every 10 ms: a server whose client ignores `HTTP_PROXY` (Node 20's `fetch`), or whose helper lives 2 ms, can act unseen. Zero effects is weaker evidence without the system-call layer.",
        example: "a Docker container whose seccomp profile rejects nested filters: `a security policy forbids seccomp filters here (a container profile?): Operation not permitted`",
        fix: "Run the guard on Linux 5.5+ where seccomp filters are allowed (Docker: `--security-opt seccomp=unconfined` for the CI job, or a profile that allows `seccomp`), or turn the observer off deliberately with config `effects.syscalls: false` and point the server at the canary (`--effects-env`).",
    }
    EFFECTS_UNAVAILABLE {
        code: "effects-unavailable",
        class: Class::McpProtocol,
        check: Check::Effects,
        severity: Severity::Warning,
        summary: "The no-effect proof could not be set up.",
        what: "`--effects` was asked for, but the loopback canary could not listen or the effects log could not be created (the message says which). Effects were not observed for that process.",
        why: "Without the recorder, the absence of effects is not evidence of anything.",
        example: "the temporary directory is read-only: the effects log cannot be created",
        fix: "Make the temporary directory writable (`TMPDIR`) and loopback sockets available, then run again.",
    }

    // ---------------------------------------------------------------- stdio buffering, on evidence
    PYTHON_BUFFERED_STDIO {
        code: "python-buffered-stdio",
        class: Class::InstallRuntime,
        check: Check::PythonBuffering,
        severity: Severity::Warning,
        reference: true,
        detail_codes: &["flushed-at-exit", "replies-at-exit", "hidden-by-buffering", "only-when-buffered"],
        summary: "stdout output was held in a stdio buffer: it appears only at exit, or only in one buffering mode.",
        what: "Evidence, not a guess from the command line. Detail `flushed-at-exit`: non-protocol stdout arrived only after the guard closed stdin, as the process exited (Python block-buffers stdout on a pipe and flushes it at exit). Detail `replies-at-exit`: replies the guard waited for arrived only after stdin closed. With `--unbuffered-rerun` the server runs a second time in the other buffering mode: detail `hidden-by-buffering`: with `PYTHONUNBUFFERED=1` stdout carried pollution the main run never showed; detail `only-when-buffered`: without `PYTHONUNBUFFERED` it carried pollution the (unbuffered) main run never showed. The pollution itself is reported under its own code.",
        why: "Buffering decides when, and whether, a stray `print()` reaches the protocol stream: held until 8 KiB or exit it corrupts the stream at shutdown, or is lost when the process is killed, and appears as soon as someone sets `PYTHONUNBUFFERED=1` (many container images do). A defect that depends on the buffering mode passes a test in one environment and breaks a client in another.",
        example: "`print(\"debug\")` in a tool: clean with `PYTHONUNBUFFERED=1` (the Python SDK points fd 1 at stderr while serving), `b\"debug\\n\"` on stdout at exit without it",
        fix: "Send diagnostics to stderr (`print(..., file=sys.stderr)`, `logging`). To see pollution where it happens, run with `PYTHONUNBUFFERED=1` or `python -u`.",
    }
}
