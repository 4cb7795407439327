// A TypeScript server as it is shipped: compiled by tsc into dist/ with a source map. The client
// runs `node dist/server.js`; the guard traces its banner back to this file's line through
// dist/server.js.map (the compiled file has the same text on another line).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
const options = { name: "trace-compiled-ts", version: "2.0.0" };
console.log(`${options.name} v${options.version}: compiled banner`);
const server = new McpServer(options);
server.registerTool("add", { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
}));
await server.connect(new StdioServerTransport());
//# sourceMappingURL=server.js.map