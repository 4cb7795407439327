// Stdout pollution of a TypeScript SDK server, each line to be traced to its call (tests/trace.rs):
// a banner (a literal), a debug line (a template literal: its substitution is a hole), a record
// of a logger built on stdout (console.Console: its message is a format string), and a
// console.log inside a tool handler that two calls print twice (one finding, two occurrences).
import { Console } from "node:console";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const tools = ["add", "echo"];
const log = new Console({ stdout: process.stdout, stderr: process.stderr });

console.log("trace-noisy-ts v1.0 starting...");
console.log(`debug: ${tools.length} tools registered`);
log.info("[info] transport %s selected", "stdio");

const server = new McpServer({ name: "trace-noisy-ts", version: "1.0.0" });

server.registerTool(
  "add",
  { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => {
    console.log("debug: add called");
    return { content: [{ type: "text", text: String(a + b) }] };
  },
);

await server.connect(new StdioServerTransport());
