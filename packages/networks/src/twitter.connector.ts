import { HTTPError } from 'got';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TNetworkConnector,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';
import { createTwitterMedia } from './twitter-media.js';

const NETWORK = 'X';

interface TTweetCreated {
  data: { id: string; text: string };
}

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
