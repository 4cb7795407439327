"""Replays every passing case of cases.json with a small scripted MCP client and validates every
stdout frame the server sends against the official MCP schema of the negotiated revision.

Why: the guard passes these servers, so their output had better be clean by the specification's
own schema and not only by the guard's rules. Each frame must be one `\\n`-terminated line of
strict JSON that is a `JSONRPCMessage`; the result of each request must be the method's result
type (`InitializeResult`, `ListToolsResult`, ...); notifications must be `ServerNotification`s; a
tool's `inputSchema`/`outputSchema` must be a valid JSON Schema of its own dialect; a tool call's
`structuredContent` must validate against the tool's `outputSchema`.

Run by tests/sdk_servers.rs with the test venv's interpreter (it needs `jsonschema`):
    .test-deps/venv/bin/python tests/sdk/validate_frames.py --schemas tests/schemas/mcp
Prints one line per case and a total (`N frames valid`) on stdout; exits 1 on any invalid frame.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
from jsonschema.validators import validator_for

SDK_DIR = Path(__file__).resolve().parent
REPLY_TIMEOUT_S = 30.0
EXIT_TIMEOUT_S = 15.0

# The result type each request the cases send must come back with.
RESULT_TYPES = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "logging/setLevel": "EmptyResult",
}


class Schemas:
    """The MCP schema of each revision, with one cached validator per (revision, definition)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._docs: dict[str, dict] = {}
        self._validators: dict[tuple[str, str], jsonschema.protocols.Validator] = {}
        self._lock = threading.Lock()

    def validator(self, revision: str, name: str):
        with self._lock:
            key = (revision, name)
            if key not in self._validators:
                doc = self._docs.get(revision)
                if doc is None:
                    doc = json.loads((self.root / revision / "schema.json").read_text(encoding="utf-8"))
                    self._docs[revision] = doc
                defs_key = "$defs" if "$defs" in doc else "definitions"
                if name not in doc[defs_key]:
                    raise KeyError(f"{revision} schema has no definition {name}")
                wrapper = {k: v for k, v in doc.items() if k in ("$schema", "$id", defs_key)}
                wrapper["$ref"] = f"#/{defs_key}/{name}"
                cls = validator_for(doc)
                self._validators[key] = cls(wrapper)
            return self._validators[key]

    def errors(self, revision: str, name: str, instance) -> list[str]:
        validator = self.validator(revision, name)
        found = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        return [f"{name}: {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}" for e in found]


def strict_json(line: bytes):
    """json.loads without the NaN/Infinity extensions and without duplicate keys."""

    def no_constants(token: str):
        raise ValueError(f"non-standard JSON constant {token}")

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError(f"duplicate keys in object: {keys}")
        return dict(pairs)

    return json.loads(line.decode("utf-8"), parse_constant=no_constants, object_pairs_hook=no_duplicates)


def schema_problems(where: str, schema) -> list[str]:
    """A tool's inputSchema/outputSchema must be a valid schema of its declared dialect."""
    if not isinstance(schema, dict):
        return [f"{where} is not an object"]
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as e:
        return [f"{where} is not a valid {cls.__name__[:-9]} schema: {e.message[:300]}"]
    return []


class Session:
    """One server process driven by a scripted client; records every stdout line."""

    def __init__(self, case: dict, python: str) -> None:
        argv = [python if a == "{python}" else a for a in case["command"]]
        env = dict(os.environ)
        for key in case.get("unsetEnv", []):
            env.pop(key, None)
        env.update(case.get("env", {}))
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            argv, cwd=SDK_DIR, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr
        )
        self.lines: list[bytes] = []
        self.inbox: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.append(line)
            self.inbox.put(line)
        self.inbox.put(None)

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def await_reply(self, request_id: int) -> None:
        """Read frames until the response to `request_id`, answering server requests on the way."""
        if not self.pump(request_id, time.monotonic() + REPLY_TIMEOUT_S):
            raise RuntimeError(f"no response to request {request_id} within {REPLY_TIMEOUT_S}s")

    def pump(self, request_id: int | None, deadline: float) -> bool:
        """Handle frames until the response to `request_id` (True) or the deadline (False)."""
        while True:
            try:
                line = self.inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return False
            if line is None:
                if request_id is None:
                    return False
                raise RuntimeError(f"stdout closed before the response to request {request_id}")
            try:
                message = strict_json(line)
            except ValueError:
                continue  # reported by the frame checks
            if isinstance(message, dict) and "method" in message and "id" in message:
                reply = {"result": {}} if message["method"] == "ping" else {
                    "error": {"code": -32601, "message": "Method not found"}
                }
                self.send({"jsonrpc": "2.0", "id": message["id"], **reply})
            elif isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                return True

    def close(self) -> str | None:
        """Close stdin and wait for the exit; returns a problem or None."""
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return f"did not exit within {EXIT_TIMEOUT_S}s of stdin EOF"
        # The reader thread finishes once stdout reaches EOF.
        deadline = time.monotonic() + EXIT_TIMEOUT_S
        while self.inbox.get(timeout=max(0.0, deadline - time.monotonic())) is not None:
            pass
        return None

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()[-2000:].decode("utf-8", "replace")


def check_case(case: dict, quiet_ms: int, schemas: Schemas, python: str) -> tuple[int, list[str]]:
    """Runs one case; returns (frames validated, problems)."""
    protocol = case.get("protocol", "2025-11-25")
    requests = [{"method": "initialize", "params": {
        "protocolVersion": protocol,
        "capabilities": {},
        "clientInfo": {"name": "validate_frames", "version": "1"},
    }}] + case.get("requests", [])
    methods: dict[int, dict] = {}
    problems: list[str] = []
    session = Session(case, python)
    try:
        for request_id, request in enumerate(requests):
            message = {"jsonrpc": "2.0", "id": request_id, "method": request["method"]}
            if request.get("params") is not None:
                message["params"] = request["params"]
            methods[request_id] = request
            session.send(message)
            session.await_reply(request_id)
            if request_id == 0:
                session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # Like the guard, watch a quiet window before closing stdin (answering server requests): a
        # server may legitimately be busy for a while after the last reply.
        session.pump(None, time.monotonic() + quiet_ms / 1000)
        problem = session.close()
        if problem:
            problems.append(problem)
    except (RuntimeError, BrokenPipeError, queue.Empty) as e:
        session.proc.kill()
        session.proc.wait()
        problems.append(f"session failed: {e}")
    if problems:
        problems.append(f"stderr tail: {session.stderr_tail()!r}")

    revision = protocol
    output_schemas: dict[str, dict] = {}
    valid = 0
    for number, line in enumerate(session.lines, 1):
        where = f"stdout line {number}"
        if not line.endswith(b"\n") or line.endswith(b"\r\n"):
            problems.append(f"{where} is not terminated by a bare \\n: {line[:200]!r}")
            continue
        try:
            message = strict_json(line)
        except ValueError as e:
            problems.append(f"{where} is not strict JSON ({e}): {line[:200]!r}")
            continue
        if isinstance(message, dict) and message.get("id") == 0 and "result" in message:
            revision = message["result"].get("protocolVersion", revision)
            if revision != protocol:
                problems.append(f"{where}: negotiated {revision!r}, asked for {protocol!r}")
            if not (schemas.root / revision / "schema.json").is_file():
                problems.append(f"{where}: no schema for negotiated revision {revision!r}")
                break
        errors = schemas.errors(revision, "JSONRPCMessage", message)
        if isinstance(message, dict) and "method" in message and "id" not in message:
            errors += schemas.errors(revision, "ServerNotification", message)
        elif isinstance(message, dict) and "method" not in message:
            request = methods.get(message.get("id"))
            if request is None:
                errors.append(f"response to an id the client never sent: {message.get('id')!r}")
            elif "error" in message:
                errors.append(f"{request['method']} was answered with an error: {message['error']}")
            else:
                result = message.get("result")
                errors += schemas.errors(revision, RESULT_TYPES[request["method"]], result)
                errors += tool_checks(request, result, output_schemas)
        problems += [f"{where}: {e}" for e in errors]
        valid += not errors
    if len(session.lines) < len(requests):
        problems.append(f"only {len(session.lines)} frames for {len(requests)} requests")
    return valid, problems


def tool_checks(request: dict, result, output_schemas: dict[str, dict]) -> list[str]:
    """Tool schemas are valid JSON Schemas; structuredContent matches the declared outputSchema."""
    problems: list[str] = []
    method = request["method"]
    if method == "tools/list" and isinstance(result, dict):
        for tool in result.get("tools", []):
            name = tool.get("name")
            problems += schema_problems(f"tool {name!r} inputSchema", tool.get("inputSchema"))
            if "outputSchema" in tool:
                problems += schema_problems(f"tool {name!r} outputSchema", tool["outputSchema"])
                output_schemas[name] = tool["outputSchema"]
    name = (request.get("params") or {}).get("name")
    if method == "tools/call" and isinstance(result, dict) and name in output_schemas:
        schema = output_schemas[name]
        if "structuredContent" not in result:
            problems.append(f"tool {name!r} declares an outputSchema but returned no structuredContent")
        else:
            validator = validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
            problems += [
                f"structuredContent of {name!r}: {e.message[:300]}"
                for e in validator.iter_errors(result["structuredContent"])
            ]
    return problems


LEGACY_REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schemas", type=Path, required=True, help="folder holding <revision>/schema.json")
    parser.add_argument("--cases", type=Path, default=SDK_DIR / "cases.json")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("names", nargs="*", help="only these cases")
    args = parser.parse_args()

    file = json.loads(args.cases.read_text(encoding="utf-8"))
    default_quiet_ms = file["defaults"]["quietMs"]
    # Cases with extra guard flags (adversarial probes, reruns) run servers whose frames their
    # base case already validates; the replay would be the same.
    cases = [c for c in file["cases"] if c["expect"]["ok"] and not c.get("args")]
    if args.names:
        cases = [c for c in cases if c["name"] in args.names]
    # `--protocol all` cases: replay each legacy revision, validated against its own schema.
    cases = [
        {**c, "name": f"{c['name']}@{rev}", "protocol": rev} if c.get("protocol") == "all" else c
        for c in cases
        for rev in (LEGACY_REVISIONS if c.get("protocol") == "all" else [None])
    ]
    if not cases:
        print("validate_frames: no passing case selected", file=sys.stderr)
        return 1
    schemas = Schemas(args.schemas)
    started = time.monotonic()

    def check(case: dict) -> tuple[int, list[str]]:
        return check_case(case, case.get("quietMs", default_quiet_ms), schemas, sys.executable)

    # Python servers first: they need far more CPU than the Node ones.
    slow_first = sorted(cases, key=lambda c: "{python}" not in c["command"])
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {c["name"]: pool.submit(check, c) for c in slow_first}
        results = [futures[c["name"]].result() for c in cases]

    total, failed = 0, 0
    for case, (valid, problems) in zip(cases, results):
        total += valid
        status = "ok" if not problems else "INVALID"
        print(f"{case['name']:<28} {valid:>3} frames valid ({case.get('protocol', '2025-11-25')}) {status}")
        for problem in problems:
            print(f"    {problem}")
        failed += bool(problems)
    print(f"validate_frames: {total} frames valid in {len(cases) - failed} of {len(cases)} cases "
          f"({time.monotonic() - started:.1f}s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
