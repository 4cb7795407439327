// Dynamic tools, as servers that discover their tools at start-up do: one tool is registered
// after `connect()`, another once the client is initialized, and a tool logs through the
// `logging` capability. The TypeScript SDK announces each late registration with
// `notifications/tools/list_changed` at once -- the first one before it has even answered
// `initialize`. All of this is legal traffic from the official SDK; see cases.json for the
// guard's verdict on the early notification.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-dynamic-tools", version: "1.0.0" }, { capabilities: { logging: {} } });

server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => {
    await server.sendLoggingMessage({ level: "info", logger: "add", data: `add(${a}, ${b})` });
    return { content: [{ type: "text", text: String(a + b) }] };
  },
);

await server.connect(new StdioServerTransport());

// Discovered after start-up (e.g. from a plugin folder).
server.registerTool("discovered", { description: "Registered after connect()." }, async () => ({
  content: [{ type: "text", text: "discovered" }],
}));

server.server.oninitialized = () => {
  server.registerTool("session_tool", { description: "Registered once the client is initialized." }, async () => ({
    content: [{ type: "text", text: "session" }],
  }));
};
