// A clean stdio server built the way the TypeScript SDK's README shows: McpServer with two
// tools over StdioServerTransport. Nothing but JSON-RPC reaches stdout, so the guard must pass it.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-clean", version: "1.0.0" });

server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

server.registerTool(
  "echo",
  { description: "Echo a message back.", inputSchema: { message: z.string() } },
  async ({ message }) => ({ content: [{ type: "text", text: message }] }),
);

await server.connect(new StdioServerTransport());
