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
import {
  classifyGraphError,
  findInGraphList,
  graphBaseUrl,
  type TContainerStatusSpec,
  THREADS_DEFAULT_VERSION,
} from './graph-api.js';
import { stepContainers, type TContainerPlan } from './graph-containers.js';
import { createHttpClient } from './http-client.js';
import { pendingOutcome, runToEnd } from './processing-step.js';
import { sameText } from './readback-match.js';

interface TThreadsItem {
  id: string;
  text?: string;
  permalink?: string;
  media_type?: string;
  replied_to?: { id?: string };
}

const NETWORK = 'Threads';
/**
 * A carousel holds 2 to 20 images and videos; `alt_text` (up to 1,000 characters) goes on IMAGE and VIDEO
 * containers. https://developers.facebook.com/docs/threads/posts#carousel-posts
 */
export const THREADS_MAX_CAROUSEL_ITEMS = 20;
const MAX_ALT_TEXT = 1000;
const classify = (err: unknown): TNetworkFailure =>
  classifyGraphError(err, NETWORK, ['x-business-use-case-usage', 'x-app-usage']);

export function createThreadsConnector(options: TConnectorOptions): TNetworkConnector {
  const version = options.apiVersion ?? THREADS_DEFAULT_VERSION;
  const http: Got = createHttpClient(
    graphBaseUrl(options.baseUrl, 'https://graph.threads.net', version),
    options.timeoutMs,
  );
  const auth = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });
  const userOf = (account: TConnectorAccount) => encodeURIComponent(account.externalId ?? 'me');
  const statusSpec = (account: TConnectorAccount): TContainerStatusSpec => ({
    http,
    headers: auth(account),
    network: NETWORK,
    stateField: 'status',
    detailField: 'error_message',
    wait: options.processingWait,
  });

  /**
   * Makes a container; Threads answers 24/4279009 to a publish (or a carousel) that uses it before it is
   * FINISHED (see `stepContainers`). https://developers.facebook.com/docs/threads/troubleshooting
   */
  async function container(account: TConnectorAccount, params: Record<string, unknown>): Promise<string> {
    const res = await http
      .post(`${userOf(account)}/threads`, { headers: auth(account), json: params })
      .json<{ id: string }>();
    return res.id;
  }

  const altText = (text: string | undefined) => (text ? { alt_text: text.slice(0, MAX_ALT_TEXT) } : {});

  /** The containers to make: text, one image, one video, or a carousel of images and a video. */
  function plan(input: TPublishInput): TContainerPlan {
    const base: Record<string, unknown> = { text: input.text };
    if (input.replyTo) base.reply_to_id = input.replyTo.remoteId;
    // Threads downloads media from the given public URLs itself.
    const items = [
      ...(input.media?.images ?? []).map((image) => ({
        media_type: 'IMAGE',
        image_url: image.url,
        ...altText(image.altText),
      })),
      ...(input.media?.video ? [{ media_type: 'VIDEO', video_url: input.media.video.url }] : []),
    ];
    const [only] = items;
    if (items.length === 1 && only) return { children: [], main: () => ({ ...base, ...only }) };
    if (items.length > 1) {
      return {
        children: items.map((item) => ({ ...item, is_carousel_item: true })),
        main: (children) => ({ ...base, media_type: 'CAROUSEL', children: children.join(',') }),
      };
    }
    return { children: [], main: () => ({ ...base, media_type: 'TEXT' }) };
  }

  return {
    platform: 'threads',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      const count = (input.media?.images.length ?? 0) + (input.media?.video ? 1 : 0);
      if (count > THREADS_MAX_CAROUSEL_ITEMS) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `A ${NETWORK} carousel holds at most ${THREADS_MAX_CAROUSEL_ITEMS} items (got ${count}). Remove some media and retry.`,
          },
        };
      }
      let id: string;
      let creationId: string;
      try {
        const steps = {
          spec: statusSpec(account),
          create: (params: Record<string, unknown>) => container(account, params),
        };
        const step = await runToEnd(input.progress, (progress) =>
          stepContainers(steps, plan(input), progress),
        );
        if (step.kind === 'failed') return { ok: false, failure: step.failure };
        // Still processing: the ids are saved, the publisher calls again later (no slot waits).
        if (step.kind === 'pending') return pendingOutcome(NETWORK, step);
        creationId = step.value;
      } catch (err) {
        // Containers stay private until threads_publish: a timeout before it cannot have posted anything.
        const { outcomeUnknown: _ignored, ...failure } = classify(err);
        return { ok: false, failure };
      }
      try {
        const published = await http
          .post(`${userOf(account)}/threads_publish`, {
            headers: auth(account),
            searchParams: { creation_id: creationId },
          })
          .json<{ id: string }>();
        id = published.id;
      } catch (err) {
        return { ok: false, failure: classify(err) };
      }
      // The post exists now: a failed permalink lookup must not turn it into a failure (a retry would duplicate it).
      let url = `https://www.threads.net/@${account.accountName.replace(/^@/, '')}`;
      try {
        const res = await http
          .get(encodeURIComponent(id), { headers: auth(account), searchParams: { fields: 'permalink' } })
          .json<{ permalink?: string }>();
        if (res.permalink) url = res.permalink;
      } catch {
        // Keep the profile URL.
      }
      return { ok: true, remoteId: id, url };
    },

    /**
     * The user's own posts since the write-ahead: `GET /{user-id}/threads` lists top-level posts and
     * `GET /{user-id}/replies` the replies (with `replied_to`); threads_basic covers both. Matched on the
     * text, the reply target and whether media was attached.
     * https://developers.facebook.com/documentation/threads/retrieve-and-discover-posts/retrieve-posts
     * https://developers.facebook.com/docs/threads/retrieve-and-manage-replies
     */
    async findPublished(probe: TPublishedProbe): Promise<TFindOutcome> {
      const { account } = probe;
      const reply = probe.replyTo?.remoteId ?? null;
      return findInGraphList<TThreadsItem>({
        http,
        headers: auth(account),
        network: NETWORK,
        classify,
        path: `${userOf(account)}/${reply ? 'replies' : 'threads'}`,
        fields: 'id,text,timestamp,permalink,media_type,replied_to',
        probe,
        matches: (item) =>
          sameText(probe.text, item.text) &&
          (item.replied_to?.id ?? null) === reply &&
          (item.media_type === 'TEXT_POST') === (probe.mediaCount === 0),
        found: (item) => ({
          kind: 'found',
          remoteId: item.id,
          url: item.permalink ?? `https://www.threads.net/@${account.accountName.replace(/^@/, '')}`,
        }),
      });
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      try {
        await http.delete(encodeURIComponent(remote.remoteId), { headers: auth(account) });
        return { ok: true };
      } catch (err) {
        if (err instanceof HTTPError && err.response.statusCode === 404) return { ok: true };
        return { ok: false, failure: classify(err) };
      }
    },
  };
}
