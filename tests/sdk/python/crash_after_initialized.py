"""A server that dies right after the handshake: 50 ms after `notifications/initialized` it exits
with status 1 (as a fatal error in a start-up job would). stdout stays clean; the guard must fail
it with `server-crashed`."""

import os
import sys
import threading

from mcp.server import MCPServer


def die() -> None:
    print("py-crash-after-initialized: fatal: lost connection to the backing store", file=sys.stderr)
    os._exit(1)


async def on_initialized(ctx, call_next):
    """Middleware: schedule the crash once the client says it is initialized."""
    result = await call_next(ctx)
    if ctx.method == "notifications/initialized":
        threading.Timer(0.05, die).start()
    return result


mcp = MCPServer("py-crash-after-initialized", version="1.0.0", middleware=[on_initialized])


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    mcp.run()
