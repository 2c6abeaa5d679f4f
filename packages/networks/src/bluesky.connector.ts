import { RichText } from '@atproto/api';
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
import { classifyHttpError, createHttpClient } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';

const NETWORK = 'Bluesky';
// app.bsky.embed.images: each image blob at most 1,000,000 bytes (lexicon maxSize).
const MAX_IMAGE_BYTES = 1_000_000;
const POST_COLLECTION = 'app.bsky.feed.post';
const AUTH_ERRORS = new Set(['ExpiredToken', 'InvalidToken', 'AuthenticationRequired', 'AuthMissing']);

interface TSession {
  accessJwt: string;
  did: string;
  handle: string;
}
interface TStrongRef {
  uri: string;
  cid: string;
}
interface TBlob {
  blob: Record<string, unknown>;
}

function xrpcError(err: unknown): string | undefined {
  if (!(err instanceof HTTPError)) return undefined;
  const body = err.response.body as { error?: unknown } | undefined;
  return typeof body?.error === 'string' ? body.error : undefined;
}

/** PDSes answer an expired access token with HTTP 400 and announce rate-limit resets in `ratelimit-reset`. */
function classify(err: unknown): TNetworkFailure {
  const failure = classifyHttpError(err, {
    network: NETWORK,
    isAuthError: (_status, body) => AUTH_ERRORS.has(String((body as { error?: unknown } | null)?.error)),
  });
  if (failure.kind === 'rate_limited' && failure.retryAfterMs === undefined && err instanceof HTTPError) {
    const raw = err.response.headers['ratelimit-reset'];
    const reset = Number(Array.isArray(raw) ? raw[0] : raw);
    if (Number.isFinite(reset) && reset > 0) {
      const retryAfterMs = Math.max(0, reset * 1000 - Date.now());
      return {
        ...failure,
        retryAfterMs,
        message: `${NETWORK} rate limit reached. The post will be retried in ${Math.ceil(retryAfterMs / 1000)} s.`,
      };
    }
  }
  return failure;
}

/** `at://did/collection/rkey` → rkey */
function rkeyOf(uri: string): string {
  return uri.split('/').pop() ?? uri;
}

function strongRef(ref: TRemoteRef): TStrongRef | null {
  const uri = ref.meta?.uri ?? ref.remoteId;
  const cid = ref.meta?.cid;
  return uri.startsWith('at://') && cid ? { uri, cid } : null;
}

export function createBlueskyConnector(options: TConnectorOptions): TNetworkConnector {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const fetchMedia = options.fetchMedia ?? createMediaFetcher({ timeoutMs });
  const clients = new Map<string, Got>();
  // Sessions live in memory only: one createSession per account and process, redone when the token expires.
  const sessions = new Map<string, TSession>();

  function clientFor(account: TConnectorAccount): Got {
    const base = account.instanceUrl ?? options.baseUrl ?? 'https://bsky.social';
    let client = clients.get(base);
    if (!client) {
      client = createHttpClient(base, timeoutMs);
      clients.set(base, client);
    }
    return client;
  }

  async function session(account: TConnectorAccount): Promise<TSession> {
    const cached = sessions.get(account.id);
    if (cached) return cached;
    const created = await clientFor(account)
      .post('xrpc/com.atproto.server.createSession', {
        json: { identifier: account.externalId ?? account.accountName, password: account.token },
      })
      .json<TSession>();
    const fresh = { accessJwt: created.accessJwt, did: created.did, handle: created.handle };
    sessions.set(account.id, fresh);
    return fresh;
  }

  /** Runs `call` with a session; an expired session is replaced once and the call repeated. */
  async function withSession<T>(
    account: TConnectorAccount,
    call: (s: TSession, http: Got) => Promise<T>,
  ): Promise<T> {
    const http = clientFor(account);
    try {
      return await call(await session(account), http);
    } catch (err) {
      const code = xrpcError(err);
      if (code !== 'ExpiredToken' && code !== 'InvalidToken') throw err;
      sessions.delete(account.id);
      return call(await session(account), http);
    }
  }

  const auth = (s: TSession) => ({ authorization: `Bearer ${s.accessJwt}` });

  return {
    platform: 'bluesky',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      if (input.media?.video) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `Video upload is not supported for ${NETWORK} yet. Post without the video.`,
          },
        };
      }
      const record: Record<string, unknown> = {
        $type: POST_COLLECTION,
        text: input.text,
        createdAt: new Date().toISOString(),
      };
      // Links are only clickable on Bluesky when they are marked up as facets.
      const rich = new RichText({ text: input.text });
      rich.detectFacetsWithoutResolution();
      if (rich.facets?.length) record.facets = rich.facets;
      if (input.replyTo) {
        const parent = strongRef(input.replyTo);
        const root = input.root ? strongRef(input.root) : parent;
        if (!parent || !root) {
          return {
            ok: false,
            failure: {
              kind: 'rejected',
              message: `${NETWORK} replies need the uri and cid of the earlier post.`,
            },
          };
        }
        record.reply = { root, parent };
      }
      const downloads: { bytes: Buffer; type: string; alt: string }[] = [];
      for (const image of input.media?.images ?? []) {
        const downloaded = await fetchMedia({
          url: image.url,
          kind: 'image',
          network: NETWORK,
          maxBytes: MAX_IMAGE_BYTES,
        });
        if (!downloaded.ok) return downloaded;
        downloads.push({ ...downloaded.value, alt: image.altText ?? '' });
      }
      try {
        const created = await withSession(account, async (s, http) => {
          if (downloads.length > 0) {
            const images = [];
            for (const d of downloads) {
              const uploaded = await http
                .post('xrpc/com.atproto.repo.uploadBlob', {
                  headers: { ...auth(s), 'content-type': d.type },
                  body: d.bytes,
                })
                .json<TBlob>();
              images.push({ alt: d.alt, image: uploaded.blob });
            }
            record.embed = { $type: 'app.bsky.embed.images', images };
          }
          const ref = await http
            .post('xrpc/com.atproto.repo.createRecord', {
              headers: auth(s),
              json: { repo: s.did, collection: POST_COLLECTION, record },
            })
            .json<TStrongRef>();
          return { ref, handle: s.handle };
        });
        return {
          ok: true,
          remoteId: created.ref.uri,
          url: `https://bsky.app/profile/${created.handle}/post/${rkeyOf(created.ref.uri)}`,
          meta: { uri: created.ref.uri, cid: created.ref.cid },
        };
      } catch (err) {
        return { ok: false, failure: classify(err) };
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      const uri = remote.meta?.uri ?? remote.remoteId;
      try {
        await withSession(account, (s, http) =>
          http.post('xrpc/com.atproto.repo.deleteRecord', {
            headers: auth(s),
            json: { repo: uri.split('/')[2] ?? s.did, collection: POST_COLLECTION, rkey: rkeyOf(uri) },
          }),
        );
        return { ok: true };
      } catch (err) {
        if (err instanceof HTTPError && err.response.statusCode === 404) return { ok: true };
        return { ok: false, failure: classify(err) };
      }
    },
  };
}
