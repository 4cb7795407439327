// A server that logs a lot, but only to stderr (console.error), at start-up, on every request and
// after the handshake. stderr is the right place for logs: the guard must pass it, whatever the
// volume.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

console.error("[ts-stderr-logging] starting, pid %d", process.pid);
for (let i = 0; i < 200; i++) {
  console.error("[ts-stderr-logging] warming cache entry %d of 200", i + 1);
}

const server = new McpServer({ name: "ts-stderr-logging", version: "1.0.0" });

server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => {
    console.error("[ts-stderr-logging] add(%d, %d)", a, b);
    return { content: [{ type: "text", text: String(a + b) }] };
  },
);

server.server.oninitialized = () => {
  console.error("[ts-stderr-logging] client initialized");
  setTimeout(() => console.error("[ts-stderr-logging] still alive 300 ms later"), 300);
};

await server.connect(new StdioServerTransport());
console.error("[ts-stderr-logging] connected to stdio");
