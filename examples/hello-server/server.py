#!/usr/bin/env python3
"""A minimal, correct MCP stdio server using only the standard library.

It answers initialize, ping, tools/list and tools/call (one `echo` tool), logs to stderr only,
and exits when stdin reaches EOF: everything mcp-stdio-guard expects of a well-behaved server.
"""
import json
import sys

TOOLS = [
    {
        "name": "echo",
        "description": "Return the given text unchanged.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    }
]
SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def send(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def handle(msg):
    method = msg.get("method")
    if method == "initialize":
        asked = msg.get("params", {}).get("protocolVersion")
        version = asked if asked in SUPPORTED else SUPPORTED[0]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hello-server", "version": "1.0.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        params = msg.get("params")
        if not isinstance(params, dict) or params.get("name") != "echo":
            raise LookupError("unknown tool")
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict) or not isinstance(arguments.get("text"), str):
            # Arguments that do not match the input schema: a tool error, before anything runs.
            return {"content": [{"type": "text", "text": "echo needs a string `text`"}], "isError": True}
        return {"content": [{"type": "text", "text": arguments["text"]}]}
    raise NotImplementedError(method)


def main():
    # Text-mode stdout turns "\n" into "\r\n" on Windows (stdout-crlf); UTF-8 whatever the locale.
    sys.stdout.reconfigure(newline="\n", encoding="utf-8")
    print("hello-server: ready (this line goes to stderr)", file=sys.stderr)
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if not isinstance(msg, dict) or "method" not in msg:
            continue
        if "id" not in msg:
            continue  # a notification: never answered
        if (
            msg.get("jsonrpc") != "2.0"
            or isinstance(msg["id"], bool)
            or not isinstance(msg["id"], (str, int))
        ):
            # JSON-RPC 2.0 only; ids are strings or integers, and `true` is not `1`.
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}})
            continue
        try:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": handle(msg)})
        except NotImplementedError:
            send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
        except LookupError as err:
            send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32602, "message": str(err)}})


if __name__ == "__main__":
    main()
