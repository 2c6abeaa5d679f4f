import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PLATFORMS, parseAnalyticsQuery, presentAnalyticsB, presentPostMetricsB } from '@sps/core';
import { z } from 'zod';
import type { TAuth } from '../http/auth.js';
import type { TMetricsService } from '../services/metrics-service.js';
import { run } from './tool-result.js';

export interface TMetricsToolDeps {
  auth: TAuth;
  engagement: TMetricsService;
}

const FIGURES =
  'Figures: impressions, views, likes, reposts, replies, quotes, bookmarks, clicks; null where the network does not report one; a network that could not be read has error (what to do) instead.';

/** `get_post_metrics` and `get_analytics`: the same service and shapes as GET /v1/posts/{id}/metrics and /v1/analytics. */
export function registerMetricsTools(server: McpServer, { auth, engagement }: TMetricsToolDeps): void {
  const { accountId } = auth;

  server.registerTool(
    'get_post_metrics',
    {
      title: 'Get a post’s engagement',
      description: `The latest figures of a published post on each network it went to (collected after publishing at METRICS_COLLECT_AFTER). With refresh: true a new collection is also queued (rate limited per account; read again in a minute). ${FIGURES}`,
      inputSchema: {
        id: z.string().describe('The post id returned by create_post or list_posts.'),
        refresh: z.boolean().optional().describe('Also queue a collection now (default false).'),
        history: z
          .boolean()
          .optional()
          .describe("Add each network's collections over time, oldest first, as `history` (default false)."),
      },
      annotations: { readOnlyHint: false },
    },
    (args) =>
      run(async () => {
        const entries = await engagement.postMetrics(accountId, args.id, { history: args.history === true });
        if (args.refresh) await engagement.refresh(accountId, args.id);
        return { ...presentPostMetricsB(args.id, entries), ...(args.refresh ? { refresh: 'queued' } : {}) };
      }),
  );

  server.registerTool(
    'get_analytics',
    {
      title: 'Analytics over a period',
      description: `Totals, per network, and one row per UTC day over the account's posts published from "from" to "to" (dates YYYY-MM-DD, inclusive, at most 366 days; default the last 30 days), each post counted with its latest figures; top_posts: the 5 posts of the range with the most engagement (likes + reposts + replies + quotes + bookmarks + clicks). ${FIGURES}`,
      inputSchema: {
        from: z.string().optional().describe('First day, YYYY-MM-DD (UTC).'),
        to: z.string().optional().describe('Last day, YYYY-MM-DD (UTC); default today.'),
        platform: z.enum(PLATFORMS).optional().describe('Only this network.'),
      },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      run(async () => {
        const query = parseAnalyticsQuery(
          Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined)),
          new Date(),
        );
        return presentAnalyticsB(await engagement.analytics(accountId, query));
      }),
  );
}
