import { HTTPError } from 'got';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TFindOutcome,
  TNetworkConnector,
  TPublishedProbe,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';
import { MAX_READ_PAGES, readFailure, sameText, tooMany, windowStart } from './readback-match.js';
import { createTwitterMedia } from './twitter-media.js';

const NETWORK = 'X';

interface TTweetCreated {
  data: { id: string; text: string };
}

interface TTimelineTweet {
  id: string;
  text?: string;
  created_at?: string;
  referenced_tweets?: { type: string; id: string }[];
  attachments?: { media_keys?: string[] };
}
interface TTimeline {
  data?: TTimelineTweet[];
  meta?: { result_count?: number; next_token?: string };
}

/** X rewrites links to t.co and appends a link for attached media; the rest of the text is as sent. */
function isSegment(tweet: TTimelineTweet, probe: TPublishedProbe): boolean {
  const repliedTo = tweet.referenced_tweets?.find((r) => r.type === 'replied_to')?.id ?? null;
  return (
    sameText(probe.text, tweet.text, { ignoreUrls: true }) &&
    repliedTo === (probe.replyTo?.remoteId ?? null) &&
    (tweet.attachments?.media_keys?.length ?? 0) === probe.mediaCount
  );
}

/** `start_time` takes RFC 3339 with second granularity. */
const xTime = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * X through the v2 API: POST /2/tweets, media through the v2 media upload (X fetches nothing by URL, so
 * the bytes are downloaded and uploaded by us). https://docs.x.com/x-api/posts/creation-of-a-post
 */
export function createTwitterConnector(options: TConnectorOptions): TNetworkConnector {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const http = createHttpClient(options.baseUrl ?? 'https://api.x.com', timeoutMs);
  const classify = (err: unknown) => classifyHttpError(err, { network: NETWORK });
  const auth = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });
  const media = createTwitterMedia({
    http,
    fetchMedia: options.fetchMedia ?? createMediaFetcher({ timeoutMs }),
    processingWait: options.processingWait,
  });

  return {
    platform: 'twitter',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      const mediaIds: string[] = [];
      // "Up to 4 photos, 1 animated GIF or 1 video in a Post": the media rules refuse other mixes up front.
      for (const image of input.media?.images ?? []) {
        const uploaded = await media.uploadImage(account, image);
        if (!uploaded.ok) return uploaded;
        mediaIds.push(uploaded.value);
      }
      if (input.media?.video) {
        const uploaded = await media.uploadVideo(account, input.media.video);
        if (!uploaded.ok) return uploaded;
        mediaIds.push(uploaded.value);
      }
      const body: Record<string, unknown> = { text: input.text };
      if (input.replyTo) body.reply = { in_reply_to_tweet_id: input.replyTo.remoteId };
      if (mediaIds.length > 0) body.media = { media_ids: mediaIds };
      if (input.poll) {
        body.poll = { options: input.poll.options, duration_minutes: input.poll.durationMinutes };
      }
      try {
        const created = await http
          .post('2/tweets', { headers: auth(account), json: body })
          .json<TTweetCreated>();
        const id = created.data.id;
        const handle = account.accountName.replace(/^@/, '');
        return { ok: true, remoteId: id, url: `https://x.com/${handle}/status/${id}` };
      } catch (err) {
        return { ok: false, failure: classify(err) };
      }
    },

    /**
     * The account's own timeline, newest first, since the write-ahead: GET /2/users/:id/tweets with
     * `start_time`, 100 a page, at most three pages (scopes tweet.read users.read, which the service asks
     * for; 900 requests per 15 minutes per user; a 429's `x-rate-limit-reset` is when to ask again).
     * https://docs.x.com/x-api/posts/timelines/introduction
     * https://docs.x.com/x-api/fundamentals/rate-limits
     */
    async findPublished(probe: TPublishedProbe): Promise<TFindOutcome> {
      const { account } = probe;
      try {
        const userId =
          account.externalId ??
          (await http.get('2/users/me', { headers: auth(account) }).json<{ data: { id: string } }>()).data.id;
        let token: string | undefined;
        let read = 0;
        for (let page = 0; page < MAX_READ_PAGES; page += 1) {
          const body = await http
            .get(`2/users/${encodeURIComponent(userId)}/tweets`, {
              headers: auth(account),
              searchParams: {
                start_time: xTime(windowStart(probe)),
                max_results: 100,
                'tweet.fields': 'created_at,referenced_tweets,attachments',
                ...(token ? { pagination_token: token } : {}),
              },
            })
            .json<TTimeline>();
          const tweets = body.data ?? [];
          read += tweets.length;
          const found = tweets.find((t) => isSegment(t, probe));
          if (found) {
            const handle = account.accountName.replace(/^@/, '');
            return { kind: 'found', remoteId: found.id, url: `https://x.com/${handle}/status/${found.id}` };
          }
          token = body.meta?.next_token;
          if (!token) return { kind: 'absent' };
        }
        return tooMany(NETWORK, read);
      } catch (err) {
        return readFailure(err, classify, NETWORK);
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      try {
        await http.delete(`2/tweets/${encodeURIComponent(remote.remoteId)}`, { headers: auth(account) });
        return { ok: true };
      } catch (err) {
        if (err instanceof HTTPError && err.response.statusCode === 404) return { ok: true };
        return { ok: false, failure: classify(err) };
      }
    },
  };
}
