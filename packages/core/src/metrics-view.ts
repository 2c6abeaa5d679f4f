import { z } from 'zod';
import { METRICS_HISTORY_LIMIT } from './metrics-history.js';
import { METRIC_FIELDS } from './metrics-model.js';
import { PLATFORMS } from './platforms.js';

// The response schemas of the engagement routes (the OpenAPI document is built from them).

const figure = (what: string) =>
  z
    .int()
    .min(0)
    .nullable()
    .meta({ description: `${what}; null where the network does not report it.` });

const figureShape = Object.fromEntries(METRIC_FIELDS.map((f) => [f, figure(f)])) as Record<
  (typeof METRIC_FIELDS)[number],
  ReturnType<typeof figure>
>;

const ZUnreadable = z.object({
  error: z.string().meta({ description: 'Why this network could not be read, and what to do.' }),
});

const ZPlatformKey = z.enum(PLATFORMS);

const HISTORY = `Only with \`?history=true\`: every collection of this network, oldest first (at most the latest ${METRICS_HISTORY_LIMIT}); a collection that could not be read has \`error\` instead of figures.`;

/** A history of collections, keyed `collected_at` (B) or `collectedAt` (A). */
const history = <K extends string>(key: K) =>
  z
    .array(
      z.union([
        z.object({ [key]: z.iso.datetime(), ...figureShape } as Record<K, z.ZodISODateTime>),
        z.object({ [key]: z.iso.datetime(), error: z.string() } as Record<K, z.ZodISODateTime>),
      ]),
    )
    .optional()
    .meta({ description: HISTORY });

const ZHistoryB = history('collected_at');
const ZHistoryA = history('collectedAt');

export const ZPostMetricsB = z.object({
  post_id: z.string(),
  platforms: z
    .partialRecord(
      ZPlatformKey,
      z.union([
        z.object({
          collected_at: z.iso
            .datetime()
            .nullable()
            .meta({ description: 'When the figures were read; null until the first collection.' }),
          ...figureShape,
          history: ZHistoryB,
        }),
        ZUnreadable.extend({ history: ZHistoryB }),
      ]),
    )
    .meta({ description: 'Each network the post was published to: its latest figures, or `error`.' }),
});

export const ZPostMetricsA = z.object({
  success: z.boolean(),
  postId: z.string(),
  platforms: z.partialRecord(
    ZPlatformKey,
    z.union([
      z.object({ collectedAt: z.iso.datetime().nullable(), ...figureShape, history: ZHistoryA }),
      ZUnreadable.extend({ history: ZHistoryA }),
    ]),
  ),
});

const ZPosts = z
  .int()
  .min(0)
  .meta({ description: 'Posts published (a post on several networks counts once).' });

const ZAnalyticsBody = {
  from: z.string().meta({ description: 'First day (UTC), inclusive.' }),
  to: z.string().meta({ description: 'Last day (UTC), inclusive.' }),
  platform: ZPlatformKey.nullable(),
  totals: z.object({ posts: ZPosts, ...figureShape }),
  platforms: z.partialRecord(ZPlatformKey, z.object({ posts: ZPosts, ...figureShape })),
  days: z.array(z.object({ date: z.string(), posts: ZPosts, ...figureShape })).meta({
    description:
      'One row per day of the range, in order; figures are the latest of the posts published that day.',
  }),
};

const ZEngagement = z.int().min(0).meta({
  description:
    'Interactions: likes + reposts + replies + quotes + bookmarks + clicks of the latest figures, summed over the networks.',
});
const TOP_POSTS_DESCRIPTION =
  'At most 5 posts published in the range with collected figures, most engagement first (ties: latest published first).';

export const ZAnalyticsB = z.object({
  ...ZAnalyticsBody,
  top_posts: z
    .array(
      z.object({
        post_id: z.string(),
        text: z.string().meta({ description: "The post's text, cut to 280 characters." }),
        published_at: z.iso.datetime().meta({ description: 'First published on one of its networks.' }),
        platforms: z.array(ZPlatformKey),
        engagement: ZEngagement,
        ...figureShape,
      }),
    )
    .meta({ description: TOP_POSTS_DESCRIPTION }),
});
export const ZAnalyticsA = z.object({
  success: z.boolean(),
  ...ZAnalyticsBody,
  topPosts: z
    .array(
      z.object({
        postId: z.string(),
        text: z.string(),
        publishedAt: z.iso.datetime(),
        platforms: z.array(ZPlatformKey),
        engagement: ZEngagement,
        ...figureShape,
      }),
    )
    .meta({ description: TOP_POSTS_DESCRIPTION }),
});

export const ZMetricsRefreshB = z.object({ post_id: z.string(), status: z.literal('collecting') });
export const ZMetricsRefreshA = z.object({
  success: z.boolean(),
  postId: z.string(),
  status: z.literal('collecting'),
});
