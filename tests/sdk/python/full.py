"""Every server feature of the legacy era through `MCPServer`: tools (one with annotations), a
static resource, a resource template, prompts with and without arguments. A feature-rich,
well-behaved server: the guard must pass it whatever it lists, reads or calls."""

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

mcp = MCPServer("py-full", version="1.0.0", title="Python SDK feature tour", instructions="A test server.")

NOTES = {"1": "Buy milk", "2": "Write tests", "3": "Ship it"}


@mcp.tool(title="Add", annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
def get_time() -> str:
    """Return a fixed timestamp (no input)."""
    return "2025-01-01T00:00:00Z"


@mcp.resource("docs://readme", title="README", description="What this server is.", mime_type="text/markdown")
def readme() -> str:
    return "# py-full\n"


@mcp.resource("notes://{note_id}", title="Note", description="A note by id.", mime_type="text/plain")
def note(note_id: str) -> str:
    return NOTES.get(note_id, "")


@mcp.prompt(title="Review code", description="Ask for a code review.")
def review_code(code: str) -> str:
    return f"Please review this code:\n\n{code}"


@mcp.prompt(description="A prompt without arguments.")
def greeting() -> str:
    return "Say hello."


if __name__ == "__main__":
    mcp.run()
