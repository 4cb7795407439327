#!/usr/bin/env python3
"""The same server as hello-server, with the two bugs users hit most: a start-up banner printed to
stdout, and a debug print() inside a handler. mcp-stdio-guard fails it and names both lines."""
import json
import sys

print("noisy-server v1.0 starting...")  # BUG: stdout is the protocol channel
sys.stdout.flush()


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "noisy-server", "version": "1.0.0"},
        }})
    elif msg.get("method") == "tools/list":
        print("debug: listing tools")  # BUG: a debug print in a handler
        sys.stdout.flush()
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}})
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
