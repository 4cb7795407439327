// A tool that declares an `outputSchema` and returns matching `structuredContent` (plus the same
// data as text, as the specification recommends for older clients). Clients such as Gemini reject
// a tool whose declared output is missing; this one is correct and the guard must pass it.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-output-schema", version: "1.0.0" });

server.registerTool(
  "get_weather",
  {
    description: "Current weather for a city.",
    inputSchema: { city: z.string() },
    outputSchema: { city: z.string(), temperatureC: z.number(), conditions: z.enum(["sunny", "cloudy", "rain"]) },
  },
  async ({ city }) => {
    const structuredContent = { city, temperatureC: 21.5, conditions: "sunny" };
    return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
  },
);

await server.connect(new StdioServerTransport());
