"""Pollution from a dependency outside the server's tree: `noisylib` (in ../noisylib, on the
path like an installed package) prints when it is imported. The tree has stdout writes of its
own, none with that text, so the trace finds nothing and the finding stays as it was."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "noisylib"))

import noisylib  # noqa: E402  (prints on import)
from mcp.server import MCPServer  # noqa: E402

mcp = MCPServer("trace-dependency", version="1.0.0")


def dump(value):
    """A debugging helper the server never calls."""
    print(value)


def hello():
    """Never called either."""
    print("hello from the server")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b + noisylib.ZERO


if __name__ == "__main__":
    mcp.run()
