// The most common real-world defect: a start-up banner written with console.log (stdout) before
// the transport starts. The guard must fail it with `stdout-non-json` on line 1, byte 0.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

console.log("ts-banner v1.0 starting...");

const server = new McpServer({ name: "ts-banner", version: "1.0.0" });

server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

await server.connect(new StdioServerTransport());
