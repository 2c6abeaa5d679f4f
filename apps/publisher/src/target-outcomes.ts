import type { TPlatform, TPostRecord } from '@sps/core';
import type { TPublisherContext } from './context.js';
import type { TPublishResolution } from './metrics.js';

/** How one network's part of a publish attempt ended: done (for now), or retried later by the job. */
export type TNetworkOutcome =
  | {
      retry: false;
      expired?: boolean;
      /** The post, when this network's result ended the attempt in the same transaction. */
      finalized?: TPostRecord | null;
    }
  | {
      retry: true;
      retryAfterMs: number | undefined;
      message: string;
      /** The network is still processing media (a wait, not a failure: no attempt is spent on it alone). */
      processing?: boolean;
      /** The network answered rate_limited with a retry-after: a wait too, no attempt spent (bounded). */
      rateLimited?: boolean;
      /** Another run of this job holds the segment's claim: a wait for its lease, no attempt spent. */
      leased?: boolean;
    };

export async function failTarget(
  ctx: TPublisherContext,
  postId: string,
  platform: TPlatform,
  error: string,
  kind: string,
) {
  await ctx.publishing.updateTarget(postId, platform, { status: 'failed', error, errorKind: kind });
  ctx.metrics.publishOutcome(platform, 'failed', kind);
}

export async function unknownTarget(
  ctx: TPublisherContext,
  postId: string,
  platform: TPlatform,
  error: string,
  /** The network failure behind it; none when an earlier attempt was interrupted. */
  failureKind: string | null,
  resolution: TPublishResolution = 'none',
) {
  await ctx.publishing.updateTarget(postId, platform, { status: 'unknown', error, errorKind: 'unknown' });
  ctx.metrics.publishOutcome(platform, 'unknown', failureKind, resolution);
}
