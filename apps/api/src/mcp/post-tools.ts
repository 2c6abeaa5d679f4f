import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  LIST_STATUSES_B,
  parseCreatePostB,
  parseListQueryB,
  parseUpdatePostB,
  presentPostB,
  type TPostChanges,
  type TPostRecord,
  validationError,
  ZCreatePostB,
  ZPollA,
  ZUpdatePostB,
} from '@sps/core';
import { z } from 'zod';
import type { TAuth } from '../http/auth.js';
import type { TIdempotent } from '../http/idempotency.js';
import type { TPostService } from '../services/post-service.js';
import type { TPublishService } from '../services/publish-service.js';
import { requireActivePlan } from '../variant-a/plan-guard.js';
import { idempotentTool, ZIdempotencyKeyArg } from './idempotent-tool.js';
import { asJson, ok, run } from './tool-result.js';

export interface TPostToolDeps {
  auth: TAuth;
  posts: TPostService;
  publishing: TPublishService;
  idempotent: TIdempotent;
}

/** Variant B's post view plus the interval-queue state and poll, which only Variant A shows. */
export function presentPostMcp(post: TPostRecord) {
  return { ...presentPostB(post), queue_status: post.queueState, poll: post.poll };
}

const LIMITS =
  'Limits: content is checked against each network at publish time (twitter 280 weighted characters, links count 23; bluesky 300; mastodon 500; threads 500; linkedin 3000); at most 24 segments (thread replies), each at most 5000 characters; media is up to 4 images or 1 video, never both. first_comment (optional) is posted after the post and its thread: a comment on linkedin (1250 characters), facebook, instagram and youtube, a reply to the last post on twitter, threads, bluesky and mastodon (their post limits); refused for tiktok, discord, slack and telegram.';

const ZId = z.string().describe('The post id returned by create_post or list_posts.');
const ZQueueStatus = z
  .enum(['queued', 'pending'])
  .optional()
  .describe(
    '"queued" puts the post in the account interval queue; "pending" waits for approve_post first. Not with scheduled_for.',
  );
const POLL_RULES =
  'A poll on the main post: options (2 to 4, each 1 to 25 characters) and durationMinutes (5 to 10080). twitter and mastodon only, not with media.';
const ZPoll = ZPollA.optional().describe(POLL_RULES);
const ZPollUpdate = ZPollA.nullable().optional().describe(`${POLL_RULES} null removes the poll.`);
const PUBLISH_LIMITS =
  'Needs an active plan (plan "none" is refused). Each call counts against the API key\'s hourly publish limit, shared with POST /v1/posts/{id}/publish (free 10, starter 60, pro 300 by default); a post to twitter also uses one unit of the monthly twitter allowance of the plan.';

const POLL_PLATFORMS = new Set(['twitter', 'mastodon']);

/**
 * Applies the A-only options (queue, poll) with Variant A's rules. On update (`current` given) the poll
 * rules are checked on the post as it will be, so adding media or a network to a post with a poll is
 * refused as well as adding a poll to a post with media.
 */
function withQueueAndPoll(
  changes: TPostChanges,
  queueStatus: 'queued' | 'pending' | undefined,
  poll: unknown,
  current?: TPostRecord,
): TPostChanges {
  const issues = [];
  if (queueStatus && changes.scheduledFor)
    issues.push({ field: 'queue_status', message: 'cannot be combined with scheduled_for' });
  const parsedPoll = poll === undefined || poll === null ? poll : ZPollA.parse(poll);
  const effectivePoll = parsedPoll !== undefined ? parsedPoll : (current?.poll ?? null);
  if (effectivePoll) {
    const platforms = changes.platforms ?? current?.platforms ?? [];
    const media = changes.media !== undefined ? changes.media : (current?.media ?? null);
    const unsupported = platforms.filter((p) => !POLL_PLATFORMS.has(p));
    if (unsupported.length > 0)
      issues.push({
        field: 'poll',
        message: `is supported on twitter and mastodon only, not on ${unsupported.join(', ')}`,
      });
    if (media) issues.push({ field: 'poll', message: 'cannot be combined with media' });
  }
  if (issues.length > 0) throw validationError(issues);
  return {
    ...changes,
    ...(queueStatus ? { queueState: queueStatus } : {}),
    ...(parsedPoll !== undefined ? { poll: parsedPoll } : {}),
  };
}

export function registerPostTools(server: McpServer, deps: TPostToolDeps): void {
  const { auth, posts, publishing, idempotent } = deps;
  const { accountId } = auth;

  server.registerTool(
    'create_post',
    {
      title: 'Create a post',
      description: `Creates a post: a draft, scheduled when scheduled_for is given (ISO 8601 with offset, in the future), or in the interval queue with queue_status. A post with segments is one thread. ${LIMITS}`,
      inputSchema: {
        ...ZCreatePostB.shape,
        content: ZCreatePostB.shape.content.describe('Main text of the post.'),
        platforms: ZCreatePostB.shape.platforms.describe('Target networks, at least one.'),
        queue_status: ZQueueStatus,
        poll: ZPoll,
        idempotency_key: ZIdempotencyKeyArg,
      },
    },
    (args) => {
      const json = asJson(args) as Record<string, unknown>;
      return idempotentTool(idempotent, accountId, 'create_post', json, async (key) => {
        const {
          queue_status,
          poll,
          idempotency_key: _key,
          ...rest
        } = json as Record<string, unknown> & { queue_status?: 'queued' | 'pending' };
        const changes = withQueueAndPoll(parseCreatePostB(rest, new Date()), queue_status, poll);
        // MCP publishes take from the twitter allowance (as Variant A's do), so its scheduled posts do too.
        const post = await posts.create(
          accountId,
          { ...changes, countsTwitterAllowance: true },
          'B',
          // The post and its key's record (with this result) in one statement.
          (made) => key.withAnswer(200, ok(presentPostMcp(made))),
        );
        return presentPostMcp(post);
      });
    },
  );

  server.registerTool(
    'list_posts',
    {
      title: 'List posts',
      description:
        'Lists the account posts, newest first, one page at a time (total gives the count; offset the next page). Filter by status, or by queue_status to see the interval queue.',
      inputSchema: {
        status: z.enum(LIST_STATUSES_B).optional(),
        limit: z.int().min(1).max(100).optional().describe('Page size, default 10, at most 100.'),
        offset: z.int().min(0).optional(),
        queue_status: ZQueueStatus,
      },
    },
    (args) =>
      run(async () => {
        const { queue_status: _queue, ...paging } = asJson(args) as Record<string, unknown>;
        const query = parseListQueryB(paging);
        if (args.queue_status) {
          const page = await posts.listPage(accountId, { ...query, queueState: args.queue_status });
          return { posts: page.posts.map(presentPostMcp), total: page.total };
        }
        const page = await posts.listPage(accountId, query);
        return { posts: page.posts.map(presentPostMcp), total: page.total };
      }),
  );

  server.registerTool(
    'get_post',
    { title: 'Get a post', description: 'One post with its per-network results.', inputSchema: { id: ZId } },
    (args) => run(async () => presentPostMcp(await posts.get(accountId, args.id))),
  );

  server.registerTool(
    'update_post',
    {
      title: 'Update a post',
      description: `Changes only the given fields of a draft, scheduled or failed post. segments: [] makes it a single post; scheduled_for: null unschedules (draft); poll: null removes the poll. ${LIMITS}`,
      inputSchema: { id: ZId, ...ZUpdatePostB.shape, queue_status: ZQueueStatus, poll: ZPollUpdate },
    },
    (args) =>
      run(async () => {
        const { id, queue_status, poll, ...rest } = asJson(args) as Record<string, unknown> & {
          id: string;
          queue_status?: 'queued' | 'pending';
        };
        // Like PUT /v1/posts/{id}: an unknown id is not_found before any validation.
        const current = await posts.get(accountId, id);
        const changes = withQueueAndPoll(parseUpdatePostB(rest, new Date()), queue_status, poll, current);
        return presentPostMcp(
          await posts.update(accountId, id, { ...changes, countsTwitterAllowance: true }),
        );
      }),
  );

  server.registerTool(
    'delete_post',
    {
      title: 'Delete a post',
      description:
        'Removes the post from the service. With delete_from_platforms the published copies are also deleted where the network allows it (not Instagram or TikTok).',
      inputSchema: { id: ZId, delete_from_platforms: z.boolean().optional().describe('Default false.') },
      annotations: { destructiveHint: true },
    },
    (args) =>
      run(async () => {
        if (args.delete_from_platforms) {
          return {
            deleted: true,
            id: args.id,
            platform_deletions: await posts.removeWithCopies(accountId, args.id),
          };
        }
        await posts.remove(accountId, args.id);
        return { deleted: true, id: args.id };
      }),
  );

  server.registerTool(
    'publish_post',
    {
      title: 'Publish a post now',
      description: `Publishes a draft or scheduled post to its networks. Without wait it answers at once with status "publishing" (poll get_post); with wait it waits (bounded) for the per-network results. Fails when the text is over a network limit or a network has no connected account. ${PUBLISH_LIMITS}`,
      inputSchema: {
        id: ZId,
        wait: z.boolean().optional().describe('Wait for the outcome, default false.'),
        idempotency_key: ZIdempotencyKeyArg,
      },
    },
    (args) =>
      idempotentTool(
        idempotent,
        accountId,
        'publish_post',
        asJson(args) as Record<string, unknown>,
        async () => {
          // The plan and twitter allowance checks of the REST publish (Variant A); the hourly publish limit
          // was counted before the call reached here (call-limits.ts).
          requireActivePlan(auth);
          const started = await publishing.start(accountId, args.id, ['draft', 'scheduled'], 'B', auth.plan);
          const post = args.wait
            ? await publishing.waitForOutcome(accountId, args.id, started.attempt)
            : started.post;
          return presentPostMcp(post);
        },
      ),
  );

  server.registerTool(
    'retry_post',
    {
      title: 'Retry failed networks',
      description: `Publishes again only to the networks that failed (or whose outcome is unknown) and waits for the results. ${PUBLISH_LIMITS}`,
      inputSchema: { id: ZId },
    },
    (args) =>
      run(async () => {
        requireActivePlan(auth);
        const started = await publishing.retry(accountId, args.id, auth.plan);
        return presentPostMcp(await publishing.waitForOutcome(accountId, args.id, started.attempt));
      }),
  );

  server.registerTool(
    'approve_post',
    {
      title: 'Approve a pending post',
      description: 'Moves a post created with queue_status "pending" into the interval queue.',
      inputSchema: { id: ZId },
    },
    (args) => run(async () => presentPostMcp(await posts.approve(accountId, args.id))),
  );
}
