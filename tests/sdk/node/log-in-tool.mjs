// The TypeScript twin of Python's debug print: a console.log inside a tool handler. Node writes
// it to stdout at once, between two protocol messages, so the client reads a non-JSON line in the
// middle of the session. The guard must fail it with `stdout-non-json` on the line before the
// tool's response.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-log-in-tool", version: "1.0.0" });

server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => {
    console.log("debug: add(%d, %d)", a, b);
    return { content: [{ type: "text", text: String(a + b) }] };
  },
);

await server.connect(new StdioServerTransport());
