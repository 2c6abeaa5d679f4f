import type { TConnectorAccount, TConnectorOptions } from './connector.js';
import { createHttpClient } from './http-client.js';
import { LINKEDIN_DEFAULT_API_VERSION } from './linkedin.connector.js';
import {
  figures,
  readFailureOf,
  type TMetricsRead,
  type TMetricsReader,
  type TMetricsRef,
} from './metrics-reader.js';

const NETWORK = 'LinkedIn';
/**
 * Posts asked for in one statistics call. The page states no maximum for `shares=List(…)`; 20 keeps the
 * URL well under LinkedIn's URL length limit with encoded URNs.
 */
export const LINKEDIN_METRICS_BATCH = 20;

interface TShareStatistics {
  share?: string;
  ugcPost?: string;
  totalShareStatistics?: {
    impressionCount?: number;
    clickCount?: number;
    likeCount?: number;
    commentCount?: number;
    shareCount?: number;
  };
}

const PERSON_POSTS =
  "LinkedIn gives a member's post statistics only to apps approved for its member post analytics; this service reads organization posts only.";

/**
 * LinkedIn organization posts: lifetime `organizationalEntityShareStatistics?q=organizationalEntity&
 * organizationalEntity=<org>&shares=List(…)&ugcPosts=List(…)` (organic figures of the last 12 months), as an
 * ADMINISTRATOR of the page with `rw_organization_admin`
 * (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/share-statistics).
 * A member's own posts are not read (see PERSON_POSTS).
 */
export function createLinkedInMetrics(options: TConnectorOptions): TMetricsReader {
  const http = createHttpClient(options.baseUrl ?? 'https://api.linkedin.com', options.timeoutMs ?? 15_000);
  const version = options.apiVersion ?? LINKEDIN_DEFAULT_API_VERSION;
  return {
    metricsBatchSize: LINKEDIN_METRICS_BATCH,
    async readMetrics(account: TConnectorAccount, refs: TMetricsRef[]) {
      const batch = refs.slice(0, LINKEDIN_METRICS_BATCH);
      const results = new Map<string, TMetricsRead>();
      const org = account.externalId ?? '';
      if (!org.startsWith('urn:li:organization:')) {
        for (const ref of batch) results.set(ref.remoteId, { error: PERSON_POSTS });
        return { ok: true, results };
      }
      const list = (prefix: string) =>
        batch.filter((r) => r.remoteId.startsWith(prefix)).map((r) => encodeURIComponent(r.remoteId));
      const shares = list('urn:li:share:');
      const ugcPosts = list('urn:li:ugcPost:');
      const query = [
        'q=organizationalEntity',
        `organizationalEntity=${encodeURIComponent(org)}`,
        ...(shares.length > 0 ? [`shares=List(${shares.join(',')})`] : []),
        ...(ugcPosts.length > 0 ? [`ugcPosts=List(${ugcPosts.join(',')})`] : []),
      ].join('&');
      let elements: TShareStatistics[];
      try {
        ({ elements = [] } = await http
          .get(`rest/organizationalEntityShareStatistics?${query}`, {
            headers: {
              authorization: `Bearer ${account.token}`,
              'linkedin-version': version,
              'x-restli-protocol-version': '2.0.0',
            },
          })
          .json<{ elements?: TShareStatistics[] }>());
      } catch (error) {
        return { ok: false, failure: readFailureOf(error, { network: NETWORK }, 'rw_organization_admin') };
      }
      const byUrn = new Map(elements.map((e) => [e.share ?? e.ugcPost ?? '', e.totalShareStatistics ?? {}]));
      for (const ref of batch) {
        const s = byUrn.get(ref.remoteId);
        results.set(
          ref.remoteId,
          s
            ? {
                figures: figures({
                  impressions: s.impressionCount,
                  clicks: s.clickCount,
                  likes: s.likeCount,
                  replies: s.commentCount,
                  reposts: s.shareCount,
                }),
              }
            : { error: 'LinkedIn returned no statistics for this post (deleted, or older than 12 months).' },
        );
      }
      return { ok: true, results };
    },
  };
}
