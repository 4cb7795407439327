// Every server feature of the legacy era through McpServer: tools (one with annotations), a
// static resource, a resource template with a list callback and completion, prompts with and
// without arguments, and logging. A feature-rich, well-behaved server: the guard must pass it
// whatever it lists, reads or calls.
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer(
  { name: "ts-full", version: "1.0.0", title: "TypeScript SDK feature tour" },
  { capabilities: { logging: {} }, instructions: "A test server with every feature." },
);

server.registerTool(
  "add",
  {
    title: "Add",
    description: "Add two numbers.",
    inputSchema: { a: z.number().describe("first addend"), b: z.number().describe("second addend") },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

server.registerTool(
  "get_time",
  { description: "Return a fixed timestamp (no input)." },
  async () => ({ content: [{ type: "text", text: "2025-01-01T00:00:00Z" }] }),
);

const NOTES = { "1": "Buy milk", "2": "Write tests", "3": "Ship it" };

server.registerResource(
  "readme",
  "docs://readme",
  { title: "README", description: "What this server is.", mimeType: "text/markdown" },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/markdown", text: "# ts-full\n" }] }),
);

server.registerResource(
  "note",
  new ResourceTemplate("notes://{id}", {
    list: async () => ({
      resources: Object.keys(NOTES).map((id) => ({ uri: `notes://${id}`, name: `note-${id}` })),
    }),
    complete: { id: (value) => Object.keys(NOTES).filter((id) => id.startsWith(value)) },
  }),
  { title: "Note", description: "A note by id.", mimeType: "text/plain" },
  async (uri, { id }) => ({ contents: [{ uri: uri.href, text: NOTES[id] ?? "" }] }),
);

server.registerPrompt(
  "review_code",
  { title: "Review code", description: "Ask for a code review.", argsSchema: { code: z.string() } },
  ({ code }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Please review this code:\n\n${code}` } }],
  }),
);

server.registerPrompt("greeting", { description: "A prompt without arguments." }, () => ({
  messages: [{ role: "user", content: { type: "text", text: "Say hello." } }],
}));

await server.connect(new StdioServerTransport());
