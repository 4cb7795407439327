"""A `print()` from a background thread 300 ms after `notifications/initialized`.

mcp 2.x points fd 1 at stderr while it serves, so with `PYTHONUNBUFFERED=1` this late print lands
on stderr: stdout stays clean and the guard must pass. (Compare `late_write.py`, where a child
process still holds the real stdout.)"""

import threading

from mcp.server import MCPServer


def report_progress() -> None:
    print("background sync finished: 42 items")


async def on_initialized(ctx, call_next):
    """Middleware: start the background job once the client says it is initialized."""
    result = await call_next(ctx)
    if ctx.method == "notifications/initialized":
        threading.Timer(0.3, report_progress).start()
    return result


mcp = MCPServer("py-late-print", version="1.0.0", middleware=[on_initialized])


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    mcp.run()
