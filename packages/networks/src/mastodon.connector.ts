import { mastodonTextLength } from '@sps/core';
import { type Got, HTTPError } from 'got';
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
import { classifyHttpError } from './http-client.js';
import { createInstanceCache, mastodonClientFor, type TInstanceCacheOptions } from './mastodon-instance.js';
import {
  createMastodonMedia,
  mastodonMediaState,
  mastodonProcessingBudget,
  type TMastodonMediaItem,
} from './mastodon-media.js';
import { localMentions, mastodonStatusText } from './mastodon-text.js';
import { createMediaFetcher } from './media-fetch.js';
import { pendingOutcome, runToEnd, stillProcessing, waitSince } from './processing-step.js';
import {
  firstUnclaimed,
  inWindow,
  MAX_READ_PAGES,
  readFailure,
  sameText,
  tooMany,
  windowStart,
} from './readback-match.js';

const NETWORK = 'Mastodon';

interface TStatus {
  id: string;
  url: string | null;
  uri: string;
}

interface TListedStatus extends TStatus {
  created_at?: string;
  content?: string;
  in_reply_to_id?: string | null;
  media_attachments?: unknown[];
}

/** Statuses per page of an account's list (Mastodon's maximum). */
const PAGE = 40;

/** Whether a listed status is the segment that was sent: its text (links and all), reply target, media, time. */
function isSegment(status: TListedStatus, probe: TPublishedProbe): boolean {
  return (
    inWindow(probe, status.created_at) &&
    (status.in_reply_to_id ?? null) === (probe.replyTo?.remoteId ?? null) &&
    (status.media_attachments?.length ?? 0) === probe.mediaCount &&
    sameText(localMentions(probe.text), localMentions(mastodonStatusText(status.content)))
  );
}

/** Mastodon announces the rate-limit reset as an ISO timestamp, which the shared classifier does not read. */
function classify(err: unknown): TNetworkFailure {
  const failure = classifyHttpError(err, { network: NETWORK });
  if (failure.kind === 'rate_limited' && failure.retryAfterMs === undefined && err instanceof HTTPError) {
    const raw = err.response.headers['x-ratelimit-reset'];
    const reset = Date.parse(Array.isArray(raw) ? (raw[0] ?? '') : (raw ?? ''));
    if (Number.isFinite(reset)) {
      const retryAfterMs = Math.max(0, reset - Date.now());
      return {
        ...failure,
        retryAfterMs,
        message: `${NETWORK} rate limit reached. The post will be retried in ${Math.ceil(retryAfterMs / 1000)} s.`,
      };
    }
  }
  return failure;
}

/**
 * Mastodon through its REST API on the account's own server: media with `POST /api/v2/media` (processing
 * awaited), statuses with `POST /api/v1/statuses` and an Idempotency-Key, limits from `GET /api/v2/instance`.
 * https://docs.joinmastodon.org/methods/statuses/#create
 */
export function createMastodonConnector(
  options: TConnectorOptions & { instanceCache?: TInstanceCacheOptions },
): TNetworkConnector {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const clients = new Map<string, Got>();
  const limitsOf = createInstanceCache(options.instanceCache);
  const upload = createMastodonMedia({
    fetchMedia: options.fetchMedia ?? createMediaFetcher({ timeoutMs }),
    processingWait: options.processingWait,
  });

  const clientFor = (account: TConnectorAccount) => mastodonClientFor(account, options, clients, timeoutMs);
  const auth = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });

  /**
   * The status's attachment ids once the server has processed them: uploaded on the first call; a 202 is
   * then checked once per call, with the ids and the wait's start saved in the segment's progress. Cleared
   * before the status is posted: an interrupted post is settled by its Idempotency-Key or a read-back.
   */
  async function attachments(
    http: Got,
    input: TPublishInput,
    items: TMastodonMediaItem[],
    limits: Parameters<typeof upload>[3],
  ) {
    const headers = auth(input.account);
    return runToEnd<string[]>(input.progress, async (progress) => {
      const saved = progress.saved?.mediaIds ? progress.saved : null;
      const ids = saved?.mediaIds ? saved.mediaIds.split(',') : [];
      let waiting = new Set(saved?.processing ? saved.processing.split(',') : []);
      if (!saved || ids.length !== items.length) {
        ids.length = 0;
        waiting = new Set();
        for (const item of items) {
          const uploaded = await upload(http, input.account, item, limits, { wait: false });
          if (!uploaded.ok) return { kind: 'failed', failure: uploaded.failure };
          ids.push(uploaded.value);
          if (uploaded.processing) waiting.add(uploaded.value);
        }
      } else {
        for (const [i, id] of ids.entries()) {
          const item = items[i];
          if (!item || !waiting.has(id)) continue;
          let found: Awaited<ReturnType<typeof mastodonMediaState>>;
          try {
            found = await mastodonMediaState(http, headers, id, item);
          } catch (err) {
            // A status read posts nothing: never an unknown outcome. The ids stay for the retry.
            const { outcomeUnknown: _ignored, ...failure } = classify(err);
            return { kind: 'failed', failure };
          }
          if (found.state === 'failed') {
            await progress.save(null);
            return { kind: 'failed', failure: found.failure };
          }
          if (found.state === 'ready') waiting.delete(id);
        }
      }
      if (waiting.size === 0) {
        if (saved) await progress.save(null);
        return { kind: 'ready', value: ids };
      }
      const slowest = items.some((item, i) => item.kind === 'video' && waiting.has(ids[i] ?? ''))
        ? 'video'
        : 'image';
      const since = waitSince(saved);
      const budget = {
        network: NETWORK,
        defaults: mastodonProcessingBudget(slowest),
        wait: options.processingWait,
      };
      const next = stillProcessing(budget, since, `the attached ${slowest}`);
      if (next.kind === 'failed') {
        if (saved) await progress.save(null);
        return next;
      }
      await progress.save({
        mediaIds: ids.join(','),
        processing: [...waiting].join(','),
        waitSince: String(since),
      });
      return next;
    });
  }

  return {
    platform: 'mastodon',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      const client = clientFor(account);
      if (!client.ok) return client;
      const { base, http } = client.value;
      const limits = await limitsOf(base, http);
      // Counted as the server counts (links 23, remote mentions by their local part), against its own limit.
      const measured =
        limits.maxCharacters === null ? null : mastodonTextLength(input.text, limits.maxCharacters);
      if (measured && limits.maxCharacters !== null && measured.length > limits.maxCharacters) {
        const length = measured.exact ? `${measured.length}` : `more than ${limits.maxCharacters}`;
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `The text is ${length} characters as ${NETWORK} counts them, over the ${limits.maxCharacters} that ${base} allows. Shorten it and retry.`,
          },
        };
      }
      const items: TMastodonMediaItem[] = [
        ...(input.media?.images ?? []).map((i) => ({
          url: i.url,
          kind: 'image' as const,
          altText: i.altText,
        })),
        ...(input.media?.video ? [{ url: input.media.video.url, kind: 'video' as const }] : []),
      ];
      if (items.length > limits.maxMediaAttachments) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${base} takes at most ${limits.maxMediaAttachments} attachments per status; this one has ${items.length}.`,
          },
        };
      }
      const attached = await attachments(http, input, items, limits);
      if (attached.kind === 'failed') return { ok: false, failure: attached.failure };
      // Still processing: the ids are saved, the publisher calls again later (no slot waits).
      if (attached.kind === 'pending') return pendingOutcome(NETWORK, attached);
      const mediaIds = attached.value;
      const body: Record<string, unknown> = { status: input.text };
      if (input.replyTo) body.in_reply_to_id = input.replyTo.remoteId;
      if (mediaIds.length > 0) body.media_ids = mediaIds;
      if (input.poll) {
        body.poll = { options: input.poll.options, expires_in: input.poll.durationMinutes * 60 };
      }
      try {
        // The Idempotency-Key makes a resend after an unknown outcome return the same status, not a duplicate.
        const status = await http
          .post('api/v1/statuses', {
            headers: { ...auth(account), 'idempotency-key': input.idempotencyKey },
            json: body,
          })
          .json<TStatus>();
        return { ok: true, remoteId: status.id, url: status.url ?? status.uri };
      } catch (err) {
        return { ok: false, failure: classify(err) };
      }
    },

    /**
     * The account's own statuses, newest first: GET /api/v1/accounts/:id/statuses (40 a page, `max_id`
     * paging, at most three pages), the id from GET /api/v1/accounts/verify_credentials when the account
     * has none. Needs `read:statuses` (asked at connect since read-back; an older connection answers 403,
     * so a person checks). Asked once the Idempotency-Key (kept an hour) may have expired.
     * https://docs.joinmastodon.org/methods/accounts/#statuses
     */
    async findPublished(probe: TPublishedProbe): Promise<TFindOutcome> {
      const { account } = probe;
      const client = clientFor(account);
      if (!client.ok) return { kind: 'cannot_tell', reason: client.failure.message };
      const { http } = client.value;
      try {
        const id =
          account.externalId ??
          (
            await http
              .get('api/v1/accounts/verify_credentials', { headers: auth(account) })
              .json<{ id: string }>()
          ).id;
        let maxId: string | undefined;
        let read = 0;
        for (let page = 0; page < MAX_READ_PAGES; page += 1) {
          const statuses = await http
            .get(`api/v1/accounts/${encodeURIComponent(id)}/statuses`, {
              headers: auth(account),
              searchParams: { limit: PAGE, exclude_reblogs: 'true', ...(maxId ? { max_id: maxId } : {}) },
            })
            .json<TListedStatus[]>();
          const list = Array.isArray(statuses) ? statuses.slice(0, PAGE) : [];
          read += list.length;
          const hit = await firstUnclaimed(
            probe,
            list.filter((s) => isSegment(s, probe)),
            (s) => s.id,
          );
          if (hit) return { kind: 'found', remoteId: hit.id, url: hit.url ?? hit.uri };
          const oldest = list.at(-1);
          const older = oldest?.created_at
            ? Date.parse(oldest.created_at) < windowStart(probe).getTime()
            : false;
          if (!oldest || list.length < PAGE || older) return { kind: 'absent' };
          maxId = oldest.id;
        }
        return tooMany(NETWORK, read);
      } catch (err) {
        if (err instanceof HTTPError && err.response.statusCode === 403) {
          return {
            kind: 'cannot_tell',
            reason: `${NETWORK} refused to list the account's statuses (HTTP 403): the connection lacks the read:statuses permission; reconnect the account to allow it.`,
          };
        }
        return readFailure(err, classify, NETWORK);
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      const client = clientFor(account);
      if (!client.ok) return client;
      try {
        await client.value.http.delete(`api/v1/statuses/${encodeURIComponent(remote.remoteId)}`, {
          headers: auth(account),
        });
        return { ok: true };
      } catch (err) {
        if (err instanceof HTTPError && err.response.statusCode === 404) return { ok: true };
        return { ok: false, failure: classify(err) };
      }
    },
  };
}
