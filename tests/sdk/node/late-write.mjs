// Pollution that arrives late: a console.log 300 ms after `notifications/initialized`, when the
// handshake has already succeeded (think of a background job reporting progress). A client that
// only watches the handshake misses it; the guard's quiet window must catch it as
// `stdout-non-json` on line 2 (line 1 is the initialize response).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-late-write", version: "1.0.0" });

server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

server.server.oninitialized = () => {
  setTimeout(() => console.log("background sync finished: 42 items"), 300);
};

await server.connect(new StdioServerTransport());
