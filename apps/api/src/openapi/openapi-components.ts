import {
  type AppError,
  ZAccountViewA,
  ZAccountViewB,
  ZAnalyticsA,
  ZAnalyticsB,
  ZConnectCredentialsB,
  ZConnectStartB,
  ZConnectStartedB,
  ZCreatePostA,
  ZCreatePostB,
  ZCreatePresetB,
  ZCreateWebhookB,
  ZDeliveryViewB,
  ZErrorBodyA,
  ZErrorBodyB,
  ZFieldIssue,
  ZHttpUrl,
  ZMediaB,
  ZMediaItemA,
  ZMediaViewA,
  ZMediaViewB,
  ZMetricsRefreshA,
  ZMetricsRefreshB,
  ZPlatformB,
  ZPostMetricsA,
  ZPostMetricsB,
  ZPostViewA,
  ZPostViewB,
  ZPresetViewB,
  ZPublishResultA,
  ZQueueSettingsInput,
  ZQueueSettingsView,
  ZRateLimitedBodyB,
  ZSegmentB,
  ZUpdatePostB,
  ZUpdateWebhookB,
  ZWebhookCreatedB,
  ZWebhookViewB,
} from '@sps/core';
import { z } from 'zod';
import { bodyA, bodyB } from '../http/error-handler.js';
import type { TPlatformDeletion } from '../services/post-service.js';

// Every schema of the document comes from zod: the request schemas the routes parse with, the response
// schemas next to the presenters in @sps/core, and here only the envelopes the route handlers wrap them in.

export type TJsonSchema = { [key: string]: unknown };

/** Compile-time: the error bodies the handler writes are what the schemas describe. */
bodyA satisfies (error: AppError) => z.output<typeof ZErrorBodyA>;
bodyB satisfies (error: AppError) => z.output<typeof ZErrorBodyB>;

const PLATFORM_DELETIONS = [
  'deleting',
  'not_supported',
  'kept',
] as const satisfies readonly TPlatformDeletion[];

/** Response envelopes, as the route handlers in variant-a/ and variant-b/ build them. */
export const envelopes = {
  PostListA: z.object({
    success: z.boolean(),
    posts: z.array(ZPostViewA),
    total: z.int().meta({ description: 'Posts matching the filter, all pages together.' }),
    hasMore: z.boolean().meta({ description: 'More posts follow this page.' }),
    nextOffset: z.int().optional().meta({ description: 'The `offset` of the next page, when there is one.' }),
  }),
  PostCreatedA: z.object({
    success: z.boolean(),
    post: ZPostViewA,
    publishResults: z
      .array(ZPublishResultA)
      .optional()
      .meta({ description: 'Present only when the post was published now (`published: true`).' }),
  }),
  PostEnvelopeA: z.object({
    post: ZPostViewA,
    publishResults: z
      .array(ZPublishResultA)
      .optional()
      .meta({ description: 'Present only when the update published the post (`published: true`).' }),
  }),
  PublishOutcomeA: z.object({
    success: z.boolean().meta({ description: 'True when at least one network succeeded.' }),
    post: ZPostViewA,
    publishResults: z.array(ZPublishResultA),
  }),
  PostApprovedA: z.object({ success: z.boolean(), post: ZPostViewA }),
  PostDeletedA: z.object({
    success: z.boolean(),
    id: z.string(),
    deleted: z.boolean(),
    deleteFromPlatforms: z.boolean(),
    platformDeletions: z
      .partialRecord(ZPlatformB, z.enum(PLATFORM_DELETIONS))
      .meta({ description: 'Per network with a published copy: whether that copy is being deleted.' }),
  }),
  AccountListA: z.object({ accounts: z.array(ZAccountViewA) }),
  PostListB: z.object({ posts: z.array(ZPostViewB), total: z.int().min(0) }),
  AccountListB: z.object({ accounts: z.array(ZAccountViewB) }),
  PresetListB: z.object({ presets: z.array(ZPresetViewB) }),
  WebhookListB: z.object({ webhooks: z.array(ZWebhookViewB) }),
  DeliveryListB: z.object({ deliveries: z.array(ZDeliveryViewB), total: z.int().min(0) }),
  MediaListB: z.object({
    media: z.array(ZMediaViewB),
    total: z.int().min(0),
    limit: z.int(),
    offset: z.int(),
  }),
  MediaEnvelopeA: z.object({ success: z.boolean(), media: ZMediaViewA }),
  MediaListA: z.object({
    success: z.boolean(),
    media: z.array(ZMediaViewA),
    total: z.int().min(0),
    hasMore: z.boolean(),
    nextOffset: z.int().optional(),
  }),
  SuccessA: z.object({ success: z.boolean() }),
  Health: z.object({ status: z.literal('ok') }),
  Readiness: z.object({ status: z.enum(['ready', 'not_ready']), postgres: z.boolean(), redis: z.boolean() }),
};

/** Request bodies (converted as zod's input type). */
const requestSchemas = {
  CreatePostA: ZCreatePostA,
  QueueSettingsInput: ZQueueSettingsInput,
  CreatePostB: ZCreatePostB,
  UpdatePostB: ZUpdatePostB,
  MediaInputB: ZMediaB,
  SegmentInputB: ZSegmentB,
  CreatePresetB: ZCreatePresetB,
  CreateWebhookB: ZCreateWebhookB,
  UpdateWebhookB: ZUpdateWebhookB,
  ConnectStartB: ZConnectStartB,
  ConnectCredentialsB: ZConnectCredentialsB,
};

/** Response bodies (converted as zod's output type). */
const responseSchemas = {
  ErrorA: ZErrorBodyA,
  ErrorB: ZErrorBodyB,
  RateLimitedErrorB: ZRateLimitedBodyB,
  FieldIssue: ZFieldIssue,
  PostA: ZPostViewA,
  PublishResultA: ZPublishResultA,
  AccountA: ZAccountViewA,
  QueueSettings: ZQueueSettingsView,
  PostB: ZPostViewB,
  AccountB: ZAccountViewB,
  PresetB: ZPresetViewB,
  WebhookB: ZWebhookViewB,
  WebhookCreatedB: ZWebhookCreatedB,
  DeliveryB: ZDeliveryViewB,
  ConnectStartedB: ZConnectStartedB,
  PostMetricsA: ZPostMetricsA,
  PostMetricsB: ZPostMetricsB,
  MetricsRefreshA: ZMetricsRefreshA,
  MetricsRefreshB: ZMetricsRefreshB,
  AnalyticsA: ZAnalyticsA,
  AnalyticsB: ZAnalyticsB,
  MediaB: ZMediaViewB,
  ...envelopes,
};

export type TRequestSchemaName = keyof typeof requestSchemas;
export type TResponseSchemaName = keyof typeof responseSchemas;

export const schemaRef = (name: TRequestSchemaName | TResponseSchemaName) => ({
  $ref: `#/components/schemas/${name}`,
});

/** `$schema` and `$id` belong to standalone JSON Schemas, not to schemas inside an OpenAPI document. */
function stripStandaloneKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripStandaloneKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== '$schema' && key !== '$id')
      .map(([key, v]) => [key, stripStandaloneKeys(v)]),
  );
}

/**
 * Variant A media items are preprocessed (a URL string becomes `{url}`), which zod's input conversion
 * shows as the object only; the document states both forms, each converted from its own zod schema.
 */
function mediaItemOverride(ctx: { zodSchema: unknown; jsonSchema: TJsonSchema }): void {
  if (ctx.zodSchema !== ZMediaItemA) return;
  const objectForm = { ...ctx.jsonSchema };
  for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
  ctx.jsonSchema.anyOf = [z.toJSONSchema(ZHttpUrl, { io: 'input' }), objectForm];
}

function convertAll(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, TJsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const { schemas: converted } = z.toJSONSchema(registry, {
    io,
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
    override: mediaItemOverride,
  });
  if ('__shared' in converted) throw new Error('OpenAPI: unexpected shared $defs in the schema registry');
  return stripStandaloneKeys(converted) as Record<string, TJsonSchema>;
}

/** `components.schemas`: request schemas as zod's input type, response schemas as its output type. */
export function componentSchemas(): Record<string, TJsonSchema> {
  const requests = convertAll(requestSchemas, 'input');
  const responses = convertAll(responseSchemas, 'output');
  const clash = Object.keys(requests).filter((name) => name in responses);
  if (clash.length > 0) throw new Error(`OpenAPI: schema names used twice: ${clash.join(', ')}`);
  return { ...requests, ...responses };
}

export interface TParameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  description?: string;
  schema: TJsonSchema;
}

/** Query parameters from the zod object a route parses its query with (one parameter per property). */
export function queryParameters(schema: z.ZodObject): TParameter[] {
  const json = stripStandaloneKeys(z.toJSONSchema(schema, { io: 'input' })) as {
    properties?: Record<string, TJsonSchema>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: 'query',
      required: json.required?.includes(name) ?? false,
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}
