"""Late stdout pollution from a helper process.

The server starts a helper (think of a file watcher or a language-server sidecar) before
`mcp.run()`, so the helper inherits the real stdout -- the SDK can only redirect its own fd 1.
300 ms after `notifications/initialized` the helper writes a progress line and exits. The
handshake succeeded long before; the guard's quiet window must catch the line as
`stdout-non-json` on line 2 (line 1 is the initialize response)."""

import subprocess
import sys

from mcp.server import MCPServer

HELPER = """
import sys, time
sys.stdin.readline()          # wait for the server's go-ahead
time.sleep(0.3)
print("watcher: indexed 42 files", flush=True)
"""

helper = subprocess.Popen([sys.executable, "-c", HELPER], stdin=subprocess.PIPE)


async def on_initialized(ctx, call_next):
    """Middleware: tell the helper to start once the client says it is initialized."""
    result = await call_next(ctx)
    if ctx.method == "notifications/initialized":
        helper.stdin.write(b"go\n")
        helper.stdin.flush()
    return result


mcp = MCPServer("py-late-write", version="1.0.0", middleware=[on_initialized])


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    try:
        mcp.run()
    finally:
        helper.wait()
