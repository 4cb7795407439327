// A large but legal server: 1500 tools with descriptions and schemas make a `tools/list` response
// of about 600 KiB on one line -- more than the reference tool's 256 KiB line limit. The guard's
// byte limits protect the guard and must never fail a legitimate server like this one.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const TOOLS = [...Array(1500).keys()].map((i) => ({
  name: `tool_${String(i).padStart(4, "0")}`,
  description: `Tool ${i}: ${"does something useful with its input. ".repeat(6)}`,
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "What to look for." },
      limit: { type: "integer", minimum: 1, maximum: 100, description: "How many results." },
    },
    required: ["query"],
  },
}));

const server = new Server({ name: "ts-many-tools", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: "text", text: `${request.params.name} called` }],
}));

await server.connect(new StdioServerTransport());
