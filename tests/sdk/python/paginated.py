"""The low-level `Server` with hand-written list handlers that paginate: five tools, five
resources and five prompts served two per page, `nextCursor` being the index of the next page's
first item and absent on the last page. Correct pagination: the guard must pass every page."""

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server import Server
from mcp.server.stdio import stdio_server

PAGE_SIZE = 2
COUNT = 5

TOOLS = [
    types.Tool(
        name=f"tool_{i}",
        description=f"Tool number {i}.",
        input_schema={"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
    )
    for i in range(COUNT)
]
RESOURCES = [types.Resource(uri=f"mem://item/{i}", name=f"item-{i}", mime_type="text/plain") for i in range(COUNT)]
PROMPTS = [types.Prompt(name=f"prompt_{i}", description=f"Prompt number {i}.") for i in range(COUNT)]


def page(items, params):
    """One page of `items` from the opaque cursor in `params`; a bad cursor is a -32602 error."""
    cursor = params.cursor if params is not None else None
    start = 0 if cursor is None else int(cursor) if cursor.isdigit() else -1
    if not 0 <= start < len(items):
        raise MCPError(types.INVALID_PARAMS, f"invalid cursor: {cursor!r}")
    end = start + PAGE_SIZE
    return items[start:end], (str(end) if end < len(items) else None)


async def list_tools(ctx, params):
    tools, next_cursor = page(TOOLS, params)
    return types.ListToolsResult(tools=tools, next_cursor=next_cursor)


async def call_tool(ctx, params):
    text = f"{params.name}({params.arguments})"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def list_resources(ctx, params):
    resources, next_cursor = page(RESOURCES, params)
    return types.ListResourcesResult(resources=resources, next_cursor=next_cursor)


async def read_resource(ctx, params):
    contents = types.TextResourceContents(uri=params.uri, mime_type="text/plain", text=f"contents of {params.uri}")
    return types.ReadResourceResult(contents=[contents])


async def list_prompts(ctx, params):
    prompts, next_cursor = page(PROMPTS, params)
    return types.ListPromptsResult(prompts=prompts, next_cursor=next_cursor)


async def get_prompt(ctx, params):
    message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=f"This is {params.name}."))
    return types.GetPromptResult(messages=[message])


server = Server(
    "py-paginated",
    version="1.0.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
