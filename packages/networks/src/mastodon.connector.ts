import { type Got, HTTPError } from 'got';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TMediaImage,
  TNetworkConnector,
  TNetworkFailure,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient, type TStep } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';

const NETWORK = 'Mastodon';
// Mastodon's default image_size_limit (16 MB), announced in /api/v2/instance configuration.media_attachments.
const MAX_IMAGE_BYTES = 16 * 1024 * 1024;

interface TStatus {
  id: string;
  url: string | null;
  uri: string;
}
interface TMediaAttachment {
  id: string;
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

export function createMastodonConnector(options: TConnectorOptions): TNetworkConnector {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const fetchMedia = options.fetchMedia ?? createMediaFetcher({ timeoutMs });
  const clients = new Map<string, Got>();

  /** Every account lives on its own instance; its instance URL wins over the configured one. */
  function clientFor(account: TConnectorAccount): TStep<Got> {
    const base = account.instanceUrl ?? options.baseUrl;
    if (!base) {
      return {
        ok: false,
        failure: {
          kind: 'rejected',
          message: `The ${NETWORK} account ${account.accountName} has no instance URL. Reconnect it with its instance URL.`,
        },
      };
    }
    let client = clients.get(base);
    if (!client) {
      client = createHttpClient(base, timeoutMs);
      clients.set(base, client);
    }
    return { ok: true, value: client };
  }
  const auth = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });

  async function uploadImage(
    http: Got,
    account: TConnectorAccount,
    image: TMediaImage,
  ): Promise<TStep<string>> {
    const downloaded = await fetchMedia({
      url: image.url,
      kind: 'image',
      network: NETWORK,
      maxBytes: MAX_IMAGE_BYTES,
    });
    if (!downloaded.ok) return downloaded;
    const form = new FormData();
    const name = new URL(image.url).pathname.split('/').pop() || 'image';
    form.append('file', new Blob([downloaded.value.bytes], { type: downloaded.value.type }), name);
    if (image.altText) form.append('description', image.altText);
    try {
      const media = await http
        .post('api/v2/media', { headers: auth(account), body: form })
        .json<TMediaAttachment>();
      return { ok: true, value: media.id };
    } catch (err) {
      return { ok: false, failure: classify(err) };
    }
  }

  return {
    platform: 'mastodon',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      const client = clientFor(account);
      if (!client.ok) return client;
      const http = client.value;
      if (input.media?.video) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `Video upload is not supported for ${NETWORK} yet (it needs asynchronous processing). Post without the video.`,
          },
        };
      }
      const mediaIds: string[] = [];
      for (const image of input.media?.images ?? []) {
        const uploaded = await uploadImage(http, account, image);
        if (!uploaded.ok) return uploaded;
        mediaIds.push(uploaded.value);
      }
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

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      const client = clientFor(account);
      if (!client.ok) return client;
      try {
        await client.value.delete(`api/v1/statuses/${encodeURIComponent(remote.remoteId)}`, {
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
