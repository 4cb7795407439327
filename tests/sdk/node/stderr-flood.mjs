// A server that floods stderr with 2.3 MB of debug logging before it starts. stderr is the right
// place for logs, whatever the volume: the guard keeps only a tail for its report and says so in
// a note (`stderr-output-limit-exceeded`), never a failure.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

for (let i = 0; i < 20000; i++) {
  console.error("[ts-stderr-flood] debug line %d %s", i, "x".repeat(100));
}

const server = new McpServer({ name: "ts-stderr-flood", version: "1.0.0" });

server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

await server.connect(new StdioServerTransport());
