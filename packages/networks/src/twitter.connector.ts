import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TFindOutcome,
  TNetworkConnector,
  TNetworkFailure,
  TPublishedProbe,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient, failedAnswer } from './http-client.js';
import { createLeanHttp } from './lean-http.js';
import { createMediaFetcher } from './media-fetch.js';
import { pendingOutcome, runToEnd, stillProcessing, type TStepResult, waitSince } from './processing-step.js';
import {
  expandXLinks,
  firstUnclaimed,
  MAX_READ_PAGES,
  readFailure,
  sameText,
  type TXUrlEntity,
  tooMany,
  windowStart,
} from './readback-match.js';
import { createTwitterMedia, X_PROCESSING_MAX_WAIT_MS } from './twitter-media.js';

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
  entities?: { urls?: TXUrlEntity[] };
}
interface TTimeline {
  data?: TTimelineTweet[];
  meta?: { result_count?: number; next_token?: string };
}

/**
 * X rewrites links to t.co (their targets are in `entities.urls`) and appends a link for attached media;
 * the text is compared with its links expanded, so two posts that differ only by a link are told apart.
 */
function isSegment(tweet: TTimelineTweet, probe: TPublishedProbe): boolean {
  const repliedTo = tweet.referenced_tweets?.find((r) => r.type === 'replied_to')?.id ?? null;
  return (
    sameText(probe.text, expandXLinks(tweet.text, tweet.entities?.urls), { schemeless: true }) &&
    repliedTo === (probe.replyTo?.remoteId ?? null) &&
    (tweet.attachments?.media_keys?.length ?? 0) === probe.mediaCount
  );
}

/**
 * X refuses the same text twice from one account: 403 `{"detail":"You are not allowed to create a Tweet
 * with duplicate content.","type":"about:blank","title":"Forbidden","status":403}` (seen in the wild:
 * https://github.com/akrherz/iembot/issues/163; X does not document the rule's window).
 */
function isDuplicateRefusal(err: unknown): boolean {
  const answer = failedAnswer(err);
  if (answer?.statusCode !== 403) return false;
  const body = answer.body;
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  return /duplicate content/i.test(text.slice(0, 2_000));
}

/** `start_time` takes RFC 3339 with second granularity. */
const xTime = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * X through the v2 API: POST /2/tweets, media through the v2 media upload (X fetches nothing by URL, so
 * the bytes are downloaded and uploaded by us). https://docs.x.com/x-api/posts/creation-of-a-post
 */
export function createTwitterConnector(options: TConnectorOptions): TNetworkConnector {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const baseUrl = options.baseUrl ?? 'https://api.x.com';
  // Media uploads go through got (streams, multipart); the JSON calls through the lean client.
  const http = createHttpClient(baseUrl, timeoutMs);
  const api = createLeanHttp(baseUrl, timeoutMs);
  const classify = (err: unknown) => classifyHttpError(err, { network: NETWORK });
  const auth = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });
  const media = createTwitterMedia({
    http,
    fetchMedia: options.fetchMedia ?? createMediaFetcher({ timeoutMs }),
    ...(options.uploadChunkBytes ? { chunkBytes: options.uploadChunkBytes } : {}),
  });

  type TUploaded = Awaited<ReturnType<typeof media.uploadVideoUnwaited>>;

  /**
   * A video's or animated GIF's media id once X has processed it: uploaded on the first call, then one
   * STATUS read per call (after X's `check_after_secs`), with the id, its URL and the wait's start saved in
   * the segment's progress. The progress is cleared before the id is answered: the Post call that follows
   * may post, so an interrupted one is read back, never resumed into a second Post. A Post carries one GIF
   * or one video, never both, so one saved id is enough ("up to 4 photos, 1 animated GIF or 1 video").
   * https://docs.x.com/x-api/media/quickstart/media-upload-chunked
   * https://developer.x.com/en/docs/media/upload-media/api-reference/get-media-upload-status
   */
  async function processedMedia(
    input: TPublishInput,
    url: string,
    what: string,
    upload: () => Promise<TUploaded>,
    whenReady?: (
      id: string,
      resumed: boolean,
    ) => Promise<{ ok: true } | { ok: false; failure: TNetworkFailure }>,
  ) {
    const { account } = input;
    return runToEnd<string>(input.progress, async (progress) => {
      // Progress saved before GIFs were resumable names no URL: it was the video's.
      const kept = progress.saved?.xMediaId ? progress.saved : null;
      const saved = kept && (kept.xMediaUrl ?? url) === url ? kept : null;
      let id = saved?.xMediaId;
      let info: Awaited<ReturnType<typeof media.videoStatus>>;
      if (id) {
        info = await media.videoStatus(account, id);
      } else {
        const uploaded = await upload();
        if (!uploaded.ok) return { kind: 'failed', failure: uploaded.failure };
        id = uploaded.value.id;
        info = { ok: true, value: uploaded.value.info };
      }
      // A failed read keeps the progress: the retry asks about the same media id.
      if (!info.ok) return { kind: 'failed', failure: info.failure };
      const found = media.videoState(info.value, url);
      const since = waitSince(saved);
      const budget = {
        network: NETWORK,
        defaults: {
          intervalMs: found.state === 'pending' ? found.afterMs : 1000,
          maxWaitMs: X_PROCESSING_MAX_WAIT_MS,
        },
        wait: options.processingWait,
      };
      const next: TStepResult<string> =
        found.state === 'ready'
          ? { kind: 'ready', value: id }
          : found.state === 'failed'
            ? { kind: 'failed', failure: found.failure }
            : stillProcessing(budget, since, what);
      if (next.kind === 'ready' && whenReady) {
        // Alt text once processed; a failure here keeps the progress, so the retry only asks again.
        const done = await whenReady(id, saved !== null);
        if (!done.ok) return { kind: 'failed', failure: done.failure };
      }
      if (next.kind !== 'pending') {
        // Ready (the Post call follows) or over (a retry uploads afresh): nothing to resume.
        if (saved) await progress.save(null);
        return next;
      }
      if (!saved) await progress.save({ xMediaId: id, xMediaUrl: url, waitSince: String(since) });
      return next;
    });
  }

  return {
    platform: 'twitter',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      const mediaIds: string[] = [];
      // "Up to 4 photos, 1 animated GIF or 1 video in a Post": the media rules refuse other mixes up front.
      for (const image of input.media?.images ?? []) {
        let gif = false;
        const ready = await processedMedia(
          input,
          image.url,
          `the GIF ${image.url}`,
          async () => {
            const uploaded = await media.uploadImage(account, image);
            if (uploaded.ok) gif = uploaded.value.gif;
            return uploaded;
          },
          // A GIF (uploaded now, or resumed from the progress) is described once X has processed it.
          async (id, resumed) =>
            gif || resumed ? media.describeProcessed(account, id, image.altText) : { ok: true },
        );
        if (ready.kind === 'failed') return { ok: false, failure: ready.failure };
        // An animated GIF still processing: its id is saved, the publisher calls again later.
        if (ready.kind === 'pending') return pendingOutcome(NETWORK, ready);
        mediaIds.push(ready.value);
      }
      if (input.media?.video) {
        const video = input.media.video;
        const ready = await processedMedia(input, video.url, `the video ${video.url}`, () =>
          media.uploadVideoUnwaited(account, video),
        );
        if (ready.kind === 'failed') return { ok: false, failure: ready.failure };
        // Still processing: the media id is saved, the publisher calls again later (no slot waits).
        if (ready.kind === 'pending') return pendingOutcome(NETWORK, ready);
        mediaIds.push(ready.value);
      }
      const body: Record<string, unknown> = { text: input.text };
      if (input.replyTo) body.reply = { in_reply_to_tweet_id: input.replyTo.remoteId };
      if (mediaIds.length > 0) body.media = { media_ids: mediaIds };
      if (input.poll) {
        body.poll = { options: input.poll.options, duration_minutes: input.poll.durationMinutes };
      }
      try {
        const created = await api.request<TTweetCreated>('POST', '2/tweets', {
          headers: auth(account),
          json: body,
        });
        const id = created.data.id;
        const handle = account.accountName.replace(/^@/, '');
        return { ok: true, remoteId: id, url: `https://x.com/${handle}/status/${id}` };
      } catch (err) {
        if (isDuplicateRefusal(err)) {
          const { status, body: refused } = classify(err);
          const common = { kind: 'rejected' as const, status, ...(refused ? { body: refused } : {}) };
          if (input.sentBefore) {
            // An earlier send whose answer was lost did post it: the publisher reads the account back.
            return {
              ok: false,
              failure: {
                ...common,
                outcomeUnknown: true,
                duplicate: true,
                message: `${NETWORK} refused to post this again as a duplicate of a recent post of the account, and no earlier attempt's post with this text could be found on the account (it may be another post with the same text). Check the ${NETWORK} account ${account.accountName}; change the text to post it anyway.`,
              },
            };
          }
          return {
            ok: false,
            failure: {
              ...common,
              message: `${NETWORK} refused this post as a duplicate: the account ${account.accountName} recently posted the same text. Change the text and retry.`,
            },
          };
        }
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
          (await api.request<{ data: { id: string } }>('GET', '2/users/me', { headers: auth(account) })).data
            .id;
        let token: string | undefined;
        let read = 0;
        for (let page = 0; page < MAX_READ_PAGES; page += 1) {
          const body = await api.request<TTimeline>('GET', `2/users/${encodeURIComponent(userId)}/tweets`, {
            headers: auth(account),
            searchParams: {
              start_time: xTime(windowStart(probe)),
              max_results: 100,
              'tweet.fields': 'created_at,referenced_tweets,attachments,entities',
              ...(token ? { pagination_token: token } : {}),
            },
          });
          const tweets = body.data ?? [];
          read += tweets.length;
          const found = await firstUnclaimed(
            probe,
            tweets.filter((t) => isSegment(t, probe)),
            (t) => t.id,
          );
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
        await api.request('DELETE', `2/tweets/${encodeURIComponent(remote.remoteId)}`, {
          headers: auth(account),
        });
        return { ok: true };
      } catch (err) {
        if (failedAnswer(err)?.statusCode === 404) return { ok: true };
        return { ok: false, failure: classify(err) };
      }
    },
  };
}
