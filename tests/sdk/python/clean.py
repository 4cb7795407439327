"""A clean stdio server built the way the Python SDK's README shows: `MCPServer` (the 2.x name of
FastMCP) with two tools, run over stdio. Nothing but JSON-RPC reaches stdout: the guard must pass
it."""

from mcp.server import MCPServer

mcp = MCPServer("py-clean", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
def echo(message: str) -> str:
    """Echo a message back."""
    return message


if __name__ == "__main__":
    mcp.run()
