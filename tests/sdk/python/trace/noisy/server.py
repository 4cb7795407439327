"""Three kinds of stdout pollution, each to be traced to its line (tests/trace.rs).

Before `mcp.run()` fd 1 is the real stdout, so with `PYTHONUNBUFFERED=1` each line reaches the
client at once, in this order: a banner written with a literal, a debug line written with an
f-string (its value is a hole in the pattern), and a log record from a logger configured on
stdout (`INFO:root:` comes from the format; the message is the literal of `logging.info`)."""

import logging
import sys

from mcp.server import MCPServer

TOOLS = ["add", "echo", "ping"]

logging.basicConfig(stream=sys.stdout, level=logging.INFO)

print("trace-noisy v1.0 starting...")
print(f"debug: {len(TOOLS)} tools registered")
logging.info("loaded %d tools from the registry", len(TOOLS))

mcp = MCPServer("trace-noisy", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    mcp.run()
