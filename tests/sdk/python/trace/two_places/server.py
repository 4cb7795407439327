"""The same banner text is written by two calls (here and in `helpers.py`): the guard cannot know
which one ran, so its trace lists both as candidates (`confidence: ambiguous`)."""

from mcp.server import MCPServer

import helpers

print("warming caches")

mcp = MCPServer("trace-two-places", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    helpers.warm()
    return a + b


if __name__ == "__main__":
    mcp.run()
