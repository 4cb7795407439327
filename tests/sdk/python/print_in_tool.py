"""A debug `print()` inside a tool -- the classic Python MCP bug.

mcp 2.x points fd 1 at stderr while it serves, so with `PYTHONUNBUFFERED=1` the print lands on
stderr and stdout stays clean (the guard must pass). With `PYTHONUNBUFFERED` unset, stdout is
block-buffered: the line waits in `sys.stdout`'s 8 KiB buffer, the SDK restores fd 1 when the
session ends, and the interpreter flushes the line into the real stdout at exit. The client only
sees it after it closed stdin; the guard must still fail it (`stdout-non-json` after stdin EOF)."""

from mcp.server import MCPServer

mcp = MCPServer("py-print-in-tool", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    print(f"debug: add({a}, {b})")
    return a + b


if __name__ == "__main__":
    mcp.run()
