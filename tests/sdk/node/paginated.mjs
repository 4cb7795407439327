// The low-level `Server` with hand-written list handlers that paginate: five tools, five
// resources and five prompts served two per page, `nextCursor` being the index of the next page's
// first item and absent on the last page. Correct pagination: the guard must pass every page.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const PAGE_SIZE = 2;
const COUNT = 5;
const range = [...Array(COUNT).keys()];

const TOOLS = range.map((i) => ({
  name: `tool_${i}`,
  description: `Tool number ${i}.`,
  inputSchema: { type: "object", properties: { x: { type: "number" } }, required: ["x"] },
}));
const RESOURCES = range.map((i) => ({ uri: `mem://item/${i}`, name: `item-${i}`, mimeType: "text/plain" }));
const PROMPTS = range.map((i) => ({ name: `prompt_${i}`, description: `Prompt number ${i}.` }));

/** One page of `items` starting at the opaque `cursor`; invalid cursors are a -32602 error. */
function page(items, cursor) {
  const start = cursor === undefined ? 0 : Number.parseInt(cursor, 10);
  if (!Number.isInteger(start) || start < 0 || start >= items.length || String(start) !== (cursor ?? "0")) {
    throw new McpError(ErrorCode.InvalidParams, `invalid cursor: ${JSON.stringify(cursor)}`);
  }
  const end = start + PAGE_SIZE;
  return { items: items.slice(start, end), nextCursor: end < items.length ? String(end) : undefined };
}

const server = new Server(
  { name: "ts-paginated", version: "1.0.0" },
  { capabilities: { tools: {}, resources: {}, prompts: {} } },
);

server.setRequestHandler(ListToolsRequestSchema, async (request) => {
  const { items, nextCursor } = page(TOOLS, request.params?.cursor);
  return { tools: items, ...(nextCursor && { nextCursor }) };
});
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: "text", text: `${request.params.name}(${JSON.stringify(request.params.arguments)})` }],
}));
server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
  const { items, nextCursor } = page(RESOURCES, request.params?.cursor);
  return { resources: items, ...(nextCursor && { nextCursor }) };
});
server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
  contents: [{ uri: request.params.uri, mimeType: "text/plain", text: `contents of ${request.params.uri}` }],
}));
server.setRequestHandler(ListPromptsRequestSchema, async (request) => {
  const { items, nextCursor } = page(PROMPTS, request.params?.cursor);
  return { prompts: items, ...(nextCursor && { nextCursor }) };
});
server.setRequestHandler(GetPromptRequestSchema, async (request) => ({
  messages: [{ role: "user", content: { type: "text", text: `This is ${request.params.name}.` } }],
}));

await server.connect(new StdioServerTransport());
