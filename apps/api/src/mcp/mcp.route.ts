import type { IncomingMessage } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { TSettingsRepository } from '@sps/db';
import { type RequestHandler, Router } from 'express';
import type { Logger } from 'pino';
import { type ApiKeyVerifier, authenticate, authOf } from '../http/auth.js';
import { errorHandler } from '../http/error-handler.js';
import { jsonBody } from '../http/json-body.js';
import type { TAccountService } from '../services/account-service.js';
import type { TPostService } from '../services/post-service.js';
import type { TPublishService } from '../services/publish-service.js';
import { registerAccountTools } from './account-tools.js';
import { registerPostTools } from './post-tools.js';

export interface TMcpDeps {
  verifier: ApiKeyVerifier;
  posts: TPostService;
  publishing: TPublishService;
  accounts: TAccountService;
  settings: TSettingsRepository;
  logger: Logger;
  bodyLimit: string;
  /** Extra middleware after authentication (rate limits), shared with Variant B. */
  limits?: RequestHandler[];
}

/**
 * `POST /mcp`: the MCP server over Streamable HTTP, stateless (a server per request, bound to the API
 * key's account), so any API instance can answer any call. A missing or bad key is refused with 401
 * before MCP sees the request.
 */
export function mcpRouter(deps: TMcpDeps): Router {
  const router = Router();
  router.use(authenticate(deps.verifier, { allowXApiKey: false }));
  for (const limit of deps.limits ?? []) router.use(limit);
  router.use(jsonBody(deps.bodyLimit));

  router.post('/', async (req, res) => {
    const auth = authOf(req);
    const server = new McpServer(
      { name: 'social-post-service', version: '1.0.0' },
      {
        instructions:
          'Create, thread, schedule, queue, publish and retry social posts for the authenticated account.',
      },
    );
    registerPostTools(server, { auth, posts: deps.posts, publishing: deps.publishing });
    registerAccountTools(server, {
      auth,
      accounts: deps.accounts,
      settings: deps.settings,
      posts: deps.posts,
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The SDK reads `req.auth` as its own AuthInfo; ours was consumed above, so pass the plain message.
    await transport.handleRequest(req as unknown as IncomingMessage, res, req.body);
  });

  // Stateless: no server-initiated stream and no sessions to end.
  router.all('/', (_req, res) => {
    res
      .status(405)
      .set('Allow', 'POST')
      .json({ error: 'Method not allowed: use POST /mcp', code: 'method_not_allowed', details: {} });
  });
  router.use(errorHandler('B', deps.logger));
  return router;
}
