import type { IncomingMessage } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '@sps/core';
import type { TSettingsRepository } from '@sps/db';
import { type RequestHandler, Router } from 'express';
import type { Logger } from 'pino';
import { type ApiKeyVerifier, authenticate, authOf } from '../http/auth.js';
import { errorHandler } from '../http/error-handler.js';
import type { TIdempotent } from '../http/idempotency.js';
import { jsonBody } from '../http/json-body.js';
import type { TAccountService } from '../services/account-service.js';
import type { TConnectService } from '../services/connect-service.js';
import type { TMetricsService } from '../services/metrics-service.js';
import type { TPostService } from '../services/post-service.js';
import type { TPublishService } from '../services/publish-service.js';
import type { TWebhookService } from '../services/webhook-service.js';
import { registerAccountTools } from './account-tools.js';
import { countUnreadableBodies, limitPerMessage } from './call-limits.js';
import { registerConnectTools } from './connect-tools.js';
import { registerMediaTools, type TMediaToolDeps } from './media-tools.js';
import { registerMetricsTools } from './metrics-tools.js';
import { registerPostTools } from './post-tools.js';
import { toolError } from './tool-result.js';
import { registerWebhookTools } from './webhook-tools.js';

export interface TMcpDeps {
  verifier: ApiKeyVerifier;
  posts: TPostService;
  publishing: TPublishService;
  accounts: TAccountService;
  engagement: TMetricsService;
  settings: TSettingsRepository;
  webhooks: TWebhookService;
  connect: TConnectService;
  media: TMediaToolDeps['media'];
  publicUrl: string;
  mediaDownload: TMediaToolDeps['download'];
  logger: Logger;
  bodyLimit: string;
  /** Create and publish tools run under an idempotency key (idempotent-tool.ts). */
  idempotent: TIdempotent;
  /**
   * Variant B's per-key rate limiters (the same counters as /v1). Each JSON-RPC message is run through
   * them as the REST request it stands for: publishing tools as `POST /posts/{id}/publish`, the rest as
   * any other request (see call-limits.ts).
   */
  limits?: RequestHandler[];
}

const SCHEMA_FIX =
  'Correct the arguments: tools/list gives each tool its input schema with every field, type and limit; unknown tool names are refused too.';

/**
 * The SDK answers arguments that fail a tool's input schema (and unknown tools) itself, with a bare
 * message; this gives those tool errors the same body and a fix. `createToolError` is not public API,
 * so mcp-limits.test.ts checks that a schema failure still carries the fix after an SDK upgrade.
 */
function withSchemaFix(server: McpServer): void {
  (server as unknown as { createToolError(message: string): CallToolResult }).createToolError = (message) =>
    // "MCP error -32602: " is the JSON-RPC code of the SDK's internal error, noise to an agent.
    toolError(
      new AppError('validation_error', message.replace(/^MCP error -?\d+: /, ''), { fix: SCHEMA_FIX }),
    );
}

/**
 * `POST /mcp`: the MCP server over Streamable HTTP, stateless (a server per request, bound to the API
 * key's account), so any API instance can answer any call. A missing or bad key is refused with 401
 * before MCP sees the request.
 */
export function mcpRouter(deps: TMcpDeps): Router {
  const router = Router();
  router.use(authenticate(deps.verifier, { allowXApiKey: false }));
  // Limits run per message, so they need the body: a publish call and a list call count in different
  // windows, and a batch counts each of its calls.
  router.use(countUnreadableBodies(jsonBody(deps.bodyLimit), deps.limits ?? []));
  router.use(limitPerMessage(deps.limits ?? []));

  router.post('/', async (req, res) => {
    const auth = authOf(req);
    const server = new McpServer(
      { name: 'social-post-service', version: '1.0.0' },
      {
        instructions:
          'Create, thread, schedule, queue, publish and retry social posts for the authenticated account; manage its queue settings, presets, webhooks and media library. Errors come back as tool errors with a fix.',
      },
    );
    withSchemaFix(server);
    registerPostTools(server, {
      auth,
      posts: deps.posts,
      publishing: deps.publishing,
      idempotent: deps.idempotent,
    });
    registerAccountTools(server, {
      auth,
      accounts: deps.accounts,
      settings: deps.settings,
      posts: deps.posts,
    });
    registerWebhookTools(server, { auth, webhooks: deps.webhooks, idempotent: deps.idempotent });
    registerMetricsTools(server, { auth, engagement: deps.engagement });
    registerConnectTools(server, { auth, connect: deps.connect });
    registerMediaTools(server, {
      auth,
      media: deps.media,
      publicUrl: deps.publicUrl,
      download: deps.mediaDownload,
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
