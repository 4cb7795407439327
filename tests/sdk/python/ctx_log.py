"""A tool that logs to the client through the request context (`await ctx.info(...)`), which
sends `notifications/message` during the call. MCPServer 2.3 does this without declaring the
`logging` capability in its initialize result (and warns on stderr that logging is deprecated as
of 2026-07-28). See cases.json for the guard's verdict."""

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

mcp = MCPServer("py-ctx-log", version="1.0.0")


@mcp.tool()
async def add(a: int, b: int, ctx: Context) -> int:
    """Add two numbers, logging the call to the client."""
    await ctx.info(f"add({a}, {b})")
    return a + b


if __name__ == "__main__":
    mcp.run()
