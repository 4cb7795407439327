// A server that dies right after the handshake: 50 ms after `notifications/initialized` it exits
// with status 1 (as an unhandled rejection in a start-up job would). stdout stays clean; the
// guard must fail it with `server-crashed`.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-crash-after-initialized", version: "1.0.0" });

server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

server.server.oninitialized = () => {
  setTimeout(() => {
    console.error("[ts-crash-after-initialized] fatal: lost connection to the backing store");
    process.exit(1);
  }, 50);
};

await server.connect(new StdioServerTransport());
