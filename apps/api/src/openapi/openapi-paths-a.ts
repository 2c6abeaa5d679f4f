import { ZAnalyticsQuery, ZDeleteFromPlatforms, ZListQueryA, ZPostMetricsQuery } from '@sps/core';
import { z } from 'zod';
import type { TOperationSpec } from './openapi-operation.js';

// Variant A (`/api`, camelCase): the routes of variant-a/posts.route.ts and variant-a/accounts.route.ts.

const POST_ID = 'A post id from create or list.';

export const OPERATIONS_A: readonly TOperationSpec[] = [
  {
    method: 'get',
    path: '/api/posts',
    operationId: 'listPostsA',
    summary: 'List the posts of the account, newest first, up to 1000 per answer',
    description:
      'All posts of the account up to 1000 in one answer (`limit`, default and maximum 1000). An account with ' +
      'more gets `hasMore: true`, and `offset=nextOffset` gives the next ones.',
    query: ZListQueryA,
    success: { status: 200, description: 'The posts.', schema: 'PostListA' },
    errors: [400, 401, 429, 500],
  },
  {
    method: 'post',
    path: '/api/posts',
    operationId: 'createPostA',
    summary: 'Create a post (draft, scheduled, queued, pending approval, or published now)',
    description:
      'Accepts the snake_case aliases `scheduled_for`, `queue_status` and `media`. With `published: true` the ' +
      'post is published before the answer and `publishResults` lists each network. `firstComment` is ' +
      'posted after the post and its thread (a comment on linkedin, a reply to the last post elsewhere); over ' +
      "a network's limit (linkedin comments 1,250 characters) it is 400 naming `firstComment`.",
    body: 'CreatePostA',
    success: { status: 201, description: 'The created post.', schema: 'PostCreatedA' },
    errors: [400, 401, 403, 413, 429, 500],
    idempotent: true,
  },
  {
    method: 'get',
    path: '/api/posts/{id}',
    operationId: 'getPostA',
    summary: 'Get a post',
    pathParams: { id: POST_ID },
    success: { status: 200, description: 'The post.', schema: 'PostEnvelopeA' },
    errors: [401, 404, 429, 500],
  },
  {
    method: 'put',
    path: '/api/posts/{id}',
    operationId: 'updatePostA',
    summary: 'Update a draft or scheduled post (CreatePost body)',
    pathParams: { id: POST_ID },
    body: 'CreatePostA',
    success: { status: 200, description: 'The updated post.', schema: 'PostEnvelopeA' },
    errors: [400, 401, 403, 404, 413, 429, 500],
  },
  {
    method: 'delete',
    path: '/api/posts/{id}',
    operationId: 'deletePostA',
    summary: 'Delete a post, and by default its published copies where the network allows',
    pathParams: { id: POST_ID },
    query: z.object({ deleteFromPlatforms: ZDeleteFromPlatforms.optional() }),
    success: { status: 200, description: 'The post is deleted.', schema: 'PostDeletedA' },
    errors: [400, 401, 404, 429, 500],
  },
  {
    method: 'post',
    path: '/api/posts/{id}/publish',
    operationId: 'publishPostA',
    summary: 'Publish a post now',
    pathParams: { id: POST_ID },
    success: { status: 200, description: 'Per-network results.', schema: 'PublishOutcomeA' },
    errors: [400, 401, 403, 404, 429, 500],
    idempotent: true,
  },
  {
    method: 'post',
    path: '/api/posts/{id}/retry',
    operationId: 'retryPostA',
    summary: 'Retry the networks that failed',
    pathParams: { id: POST_ID },
    success: { status: 200, description: 'Retry results.', schema: 'PublishOutcomeA' },
    errors: [400, 401, 403, 404, 429, 500],
  },
  {
    method: 'post',
    path: '/api/posts/{id}/approve',
    operationId: 'approvePostA',
    summary: 'Approve a pending post: it joins the interval queue',
    pathParams: { id: POST_ID },
    success: { status: 200, description: 'The post, now queued.', schema: 'PostApprovedA' },
    errors: [400, 401, 404, 429, 500],
  },
  {
    method: 'get',
    path: '/api/accounts',
    operationId: 'listAccountsA',
    summary: 'List the connected social accounts',
    success: { status: 200, description: 'The accounts.', schema: 'AccountListA' },
    errors: [401, 429, 500],
  },
  {
    method: 'get',
    path: '/api/queue-settings',
    operationId: 'getQueueSettingsA',
    summary: 'Get the interval queue settings',
    success: { status: 200, description: 'The settings.', schema: 'QueueSettings' },
    errors: [401, 429, 500],
  },
  {
    method: 'put',
    path: '/api/queue-settings',
    operationId: 'putQueueSettingsA',
    summary: 'Change the interval queue settings (omitted fields keep their value)',
    body: 'QueueSettingsInput',
    success: { status: 200, description: 'The settings now in force.', schema: 'QueueSettings' },
    errors: [400, 401, 413, 429, 500],
  },
  {
    method: 'get',
    path: '/api/posts/{id}/metrics',
    operationId: 'getPostMetricsA',
    summary: 'A published post’s latest engagement figures on each network',
    description: 'As GET /v1/posts/{id}/metrics, with `collectedAt`.',
    pathParams: { id: POST_ID },
    query: ZPostMetricsQuery,
    success: { status: 200, description: 'The figures per network.', schema: 'PostMetricsA' },
    errors: [400, 401, 404, 429, 500],
  },
  {
    method: 'post',
    path: '/api/posts/{id}/metrics/refresh',
    operationId: 'refreshPostMetricsA',
    summary: 'Collect a published post’s figures now (rate limited per account)',
    description: '400 when the post is not published on any network; 429 past `METRICS_REFRESH_PER_HOUR`.',
    pathParams: { id: POST_ID },
    success: { status: 202, description: 'The collection is queued.', schema: 'MetricsRefreshA' },
    errors: [400, 401, 404, 429, 500],
  },
  {
    method: 'get',
    path: '/api/analytics',
    operationId: 'getAnalyticsA',
    summary: 'Totals, per network and per day over the account’s posts published in a range',
    query: ZAnalyticsQuery,
    success: { status: 200, description: 'Totals and one row per day.', schema: 'AnalyticsA' },
    errors: [400, 401, 429, 500],
  },
];
