import { HTTPError } from 'got';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TMediaImage,
  TNetworkConnector,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient, type TStep } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';

const NETWORK = 'X';
// X's simple upload takes images up to 5 MB: https://docs.x.com/x-api/media/quickstart/media-upload-chunked
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

interface TTweetCreated {
  data: { id: string; text: string };
}
interface TMediaUploaded {
  data: { id: string; media_key?: string };
}

/** X fetches nothing by URL: the image bytes have to be downloaded and uploaded by us. */

export function createTwitterConnector(options: TConnectorOptions): TNetworkConnector {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const fetchMedia = options.fetchMedia ?? createMediaFetcher({ timeoutMs });
  const http = createHttpClient(options.baseUrl ?? 'https://api.x.com', timeoutMs);
  const classify = (err: unknown) => classifyHttpError(err, { network: NETWORK });
  const auth = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });

  async function uploadImage(account: TConnectorAccount, image: TMediaImage): Promise<TStep<string>> {
    const downloaded = await fetchMedia({
      url: image.url,
      kind: 'image',
      network: NETWORK,
      maxBytes: MAX_IMAGE_BYTES,
    });
    if (!downloaded.ok) return downloaded;
    try {
      const uploaded = await http
        .post('2/media/upload', {
          headers: auth(account),
          json: {
            media: downloaded.value.bytes.toString('base64'),
            media_category: 'tweet_image',
            media_type: downloaded.value.type,
          },
        })
        .json<TMediaUploaded>();
      const mediaId = uploaded.data.id;
      if (image.altText) {
        await http.post('2/media/metadata', {
          headers: auth(account),
          json: { id: mediaId, metadata: { alt_text: { text: image.altText } } },
        });
      }
      return { ok: true, value: mediaId };
    } catch (err) {
      return { ok: false, failure: classify(err) };
    }
  }

  return {
    platform: 'twitter',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      if (input.media?.video) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message:
              'Video upload is not supported for X yet (it needs the chunked media upload). Post without the video.',
          },
        };
      }
      const mediaIds: string[] = [];
      for (const image of input.media?.images ?? []) {
        const uploaded = await uploadImage(account, image);
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
