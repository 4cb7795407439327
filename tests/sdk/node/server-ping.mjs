// A server that pings its client, as servers with keep-alive do: right after
// `notifications/initialized` it sends a `ping` request and waits for the answer. The client must
// answer `{}`. If the answer does not come within 5 s the server exits with status 3, so a guard
// that ignores server requests would show up here as `server-crashed`.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-server-ping", version: "1.0.0" });

server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

server.server.oninitialized = async () => {
  try {
    await server.server.ping({ timeout: 5000 });
    console.error("[ts-server-ping] the client answered ping");
  } catch (error) {
    console.error("[ts-server-ping] ping failed: %s", error.message);
    if (error.code === ErrorCode.RequestTimeout) process.exit(3);
  }
};

await server.connect(new StdioServerTransport());
