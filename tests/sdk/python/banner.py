"""A start-up banner written with `print()` before `mcp.run()`.

With `PYTHONUNBUFFERED=1` the banner is written at once and the guard fails the server with
`stdout-non-json` on line 1. Without it, stdout is block-buffered: the banner sits in the buffer,
the SDK points fd 1 at stderr while it serves and restores it on exit, and the interpreter flushes
the banner into the real stdout at exit -- after the client closed stdin. The guard must catch it
there too (a frame after stdin EOF)."""

from mcp.server import MCPServer

print("py-banner v1.0 starting...")

mcp = MCPServer("py-banner", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    mcp.run()
