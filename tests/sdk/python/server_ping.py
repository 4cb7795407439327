"""A server that pings its client right after `notifications/initialized` and waits for the
answer, as servers with keep-alive do. The client must answer `{}`; if it does not within 5 s the
server exits with status 3, so a guard that ignores server requests shows up as `server-crashed`."""

import os
import sys

import anyio

from mcp.server import MCPServer


async def ping_client(session) -> None:
    try:
        with anyio.fail_after(5):
            await session.send_ping()
        print("py-server-ping: the client answered ping", file=sys.stderr)
    except TimeoutError:
        print("py-server-ping: the client did not answer ping within 5 s", file=sys.stderr)
        os._exit(3)


async def on_initialized(ctx, call_next):
    """Middleware: ping the client once it says it is initialized."""
    result = await call_next(ctx)
    if ctx.method == "notifications/initialized":
        await ping_client(ctx.session)
    return result


mcp = MCPServer("py-server-ping", version="1.0.0", middleware=[on_initialized])


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    mcp.run()
