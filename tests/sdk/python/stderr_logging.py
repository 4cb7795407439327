"""A server that logs a lot, but only to stderr: `logging` (stderr by default) at start-up, on
every tool call and after the handshake, plus `print(..., file=sys.stderr)`. stderr is the right
place for logs: the guard must pass it, whatever the volume."""

import logging
import sys

from mcp.server import MCPServer

logging.basicConfig(level=logging.DEBUG, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("py-stderr-logging")

log.info("starting")
for i in range(200):
    log.debug("warming cache entry %d of 200", i + 1)
print("py-stderr-logging: a plain print to stderr", file=sys.stderr)


async def log_initialized(ctx, call_next):
    """Middleware: log every inbound message by method, then let the SDK handle it."""
    log.info("received %s", ctx.method)
    return await call_next(ctx)


mcp = MCPServer("py-stderr-logging", version="1.0.0", log_level="DEBUG", middleware=[log_initialized])


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    log.info("add(%d, %d)", a, b)
    return a + b


if __name__ == "__main__":
    mcp.run()
