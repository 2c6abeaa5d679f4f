import { type Got, HTTPError } from 'got';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TNetworkConnector,
  TNetworkFailure,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyGraphError } from './graph-api.js';
import { createHttpClient } from './http-client.js';

const NETWORK = 'Threads';
const classify = (err: unknown): TNetworkFailure =>
  classifyGraphError(err, NETWORK, ['x-business-use-case-usage', 'x-app-usage']);

export function createThreadsConnector(options: TConnectorOptions): TNetworkConnector {
  const http: Got = createHttpClient(options.baseUrl ?? 'https://graph.threads.net/v1.0', options.timeoutMs);
  const auth = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });
  const userOf = (account: TConnectorAccount) => encodeURIComponent(account.externalId ?? 'me');

  async function container(account: TConnectorAccount, params: Record<string, unknown>): Promise<string> {
    const res = await http
      .post(`${userOf(account)}/threads`, { headers: auth(account), json: params })
      .json<{ id: string }>();
    return res.id;
  }

  /** Builds the container to publish: text, one image, one video, or a carousel of images. */
  async function mainContainer(input: TPublishInput): Promise<string> {
    const { account } = input;
    const base: Record<string, unknown> = { text: input.text };
    if (input.replyTo) base.reply_to_id = input.replyTo.remoteId;
    const images = input.media?.images ?? [];
    const video = input.media?.video;
    // Threads downloads media from the given public URLs itself.
    if (video) return container(account, { ...base, media_type: 'VIDEO', video_url: video.url });
    const [first] = images;
    if (images.length === 1 && first) {
      return container(account, {
        ...base,
        media_type: 'IMAGE',
        image_url: first.url,
        ...(first.altText ? { alt_text: first.altText } : {}),
      });
    }
    if (images.length > 1) {
      const children: string[] = [];
      for (const image of images) {
        children.push(
          await container(account, {
            media_type: 'IMAGE',
            image_url: image.url,
            is_carousel_item: true,
            ...(image.altText ? { alt_text: image.altText } : {}),
          }),
        );
      }
      return container(account, { ...base, media_type: 'CAROUSEL', children: children.join(',') });
    }
    return container(account, { ...base, media_type: 'TEXT' });
  }

  return {
    platform: 'threads',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      let id: string;
      try {
        const creationId = await mainContainer(input);
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
