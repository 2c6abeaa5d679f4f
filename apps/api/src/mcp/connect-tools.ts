import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { connectSelectionOf, parseConnectStartB, ZConnectStartB } from '@sps/core';
import { z } from 'zod';
import type { TAuth } from '../http/auth.js';
import type { TConnectService } from '../services/connect-service.js';
import { asJson, run } from './tool-result.js';

/** Connecting and disconnecting social accounts over MCP: the same service as the /v1 routes. */
export function registerConnectTools(
  server: McpServer,
  deps: { auth: TAuth; connect: TConnectService },
): void {
  const { accountId } = deps.auth;

  server.registerTool(
    'connect_account',
    {
      title: 'Connect a social account',
      description:
        "Starts connecting an account: returns the network's authorization page `url` for the person to open (valid until expires_at). After they consent, the account appears in list_accounts. `instance` (the server URL) is required for mastodon; `page_id` picks a Facebook Page; linkedin takes `target: organization` (optionally `organization_id`) to connect organization pages the person administers instead of the member; bluesky, telegram, discord and slack are connected with credentials through POST /v1/accounts instead.",
      inputSchema: ZConnectStartB.shape,
    },
    (args) =>
      run(async () => {
        const input = parseConnectStartB(asJson(args));
        const started = await deps.connect.start(accountId, {
          platform: input.platform,
          redirectUri: input.redirect_uri,
          instance: input.instance,
          selection: connectSelectionOf(input),
        });
        return { url: started.url, state: started.state, expires_at: started.expiresAt.toISOString() };
      }),
  );

  server.registerTool(
    'disconnect_account',
    {
      title: 'Disconnect a social account',
      description:
        'Disconnects a connected account (id from list_accounts): it becomes inactive and account.disconnected is emitted. Connecting the same network user again revives it.',
      inputSchema: { id: z.string().max(100) },
    },
    (args) =>
      run(async () => {
        const id = String((asJson(args) as { id?: unknown }).id ?? '');
        await deps.connect.disconnect(accountId, id);
        return { id, disconnected: true };
      }),
  );
}
