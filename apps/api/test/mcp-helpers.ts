import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export type TToolResult = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
};

/** MCP clients of a test API's `/mcp` (its URL known once the API listens), each with its own API key. */
export function mcpClients(endpoint: () => URL) {
  const clients: Client[] = [];
  return {
    async client(key: string): Promise<Client> {
      const c = new Client({ name: 'test-agent', version: '1.0.0' });
      await c.connect(
        new StreamableHTTPClientTransport(endpoint(), {
          requestInit: { headers: { Authorization: `Bearer ${key}` } },
        }),
      );
      clients.push(c);
      return c;
    },
    call: async (c: Client, name: string, args: Record<string, unknown> = {}) =>
      (await c.callTool({ name, arguments: args })) as TToolResult,
    async closeAll(): Promise<void> {
      for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    },
  };
}
