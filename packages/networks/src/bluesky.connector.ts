import { type Got, HTTPError, RequestError } from 'got';
import { createFacetBuilder } from './bluesky-facets.js';
import { BLUESKY_VIDEO_SERVICE, createBlueskyMedia, type TBlueskyMediaSession } from './bluesky-media.js';
import { blueskyRecordKey } from './bluesky-rkey.js';
import { createBlueskyVideoStep, resumesVideoJob } from './bluesky-video-step.js';
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
import { chosenHostProblem, classifyHttpError, createHttpClient, sameOrigin } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';
import { isSessionJwt, jwtSubject } from './oauth/bluesky-session.js';
import { pendingOutcome } from './processing-step.js';
import { readFailure } from './readback-match.js';

const NETWORK = 'Bluesky';
const POST_COLLECTION = 'app.bsky.feed.post';
const AUTH_ERRORS = new Set(['ExpiredToken', 'InvalidToken', 'AuthenticationRequired', 'AuthMissing']);

interface TSession extends TBlueskyMediaSession {
  handle: string;
}
interface TStrongRef {
  uri: string;
  cid: string;
}

/** The stored token is not a session (an account connected before sessions were kept, or by an operator). */
class NoSessionError extends Error {
  constructor() {
    super('no Bluesky session');
    this.name = 'NoSessionError';
  }
}

/** The account's PDS is one its owner named and it is not a public HTTPS address (now): nothing is sent. */
class RefusedHostError extends Error {
  constructor(readonly failure: TNetworkFailure) {
    super(failure.message);
    this.name = 'RefusedHostError';
  }
}

function xrpcError(err: unknown): string | undefined {
  if (!(err instanceof HTTPError)) return undefined;
  const body = err.response.body as { error?: unknown } | undefined;
  return typeof body?.error === 'string' ? body.error : undefined;
}

/** PDSes answer an expired access token with HTTP 400 and announce rate-limit resets in `ratelimit-reset`. */
function classify(err: unknown): TNetworkFailure {
  if (err instanceof RefusedHostError) return err.failure;
  if (err instanceof NoSessionError)
    return {
      kind: 'auth_expired',
      message: `${NETWORK} has no session for this account; reconnect it with a valid app password if signing in fails.`,
    };
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

/** An answer that may hide a record already written: a server error, or no answer at all. */
const mayHaveLanded = (err: unknown) =>
  (err instanceof HTTPError && err.response.statusCode >= 500) ||
  (err instanceof RequestError && !(err instanceof HTTPError));

/** `at://did/collection/rkey` → rkey */
function rkeyOf(uri: string): string {
  return uri.split('/').pop() ?? uri;
}

function strongRef(ref: TRemoteRef): TStrongRef | null {
  const uri = ref.meta?.uri ?? ref.remoteId;
  const cid = ref.meta?.cid;
  return uri.startsWith('at://') && cid ? { uri, cid } : null;
}

/**
 * Bluesky through the account's PDS (XRPC): posts are `app.bsky.feed.post` records written with
 * `com.atproto.repo.createRecord` at a record key derived from (post, network, segment), so a resend finds
 * the record instead of writing a second one. https://docs.bsky.app/docs/advanced-guides/posts
 */
export function createBlueskyConnector(options: TConnectorOptions): TNetworkConnector {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const clients = new Map<string, Got>();
  const facetsOf = createFacetBuilder();
  const media = createBlueskyMedia({
    fetchMedia: options.fetchMedia ?? createMediaFetcher({ timeoutMs }),
    videoServiceUrl: options.videoServiceUrl ?? BLUESKY_VIDEO_SERVICE,
    timeoutMs,
  });
  const videoReady = createBlueskyVideoStep(media, options.processingWait);

  const baseOf = (account: TConnectorAccount) =>
    account.instanceUrl ?? options.baseUrl ?? 'https://bsky.social';

  /**
   * The account's PDS. One its owner named (anything but the operator's NETWORK_BLUESKY_BASE_URL, or
   * bsky.social without one) was checked at connect time; its name may resolve elsewhere since, so it must
   * still be public HTTPS and every connection goes through the address guard, with bounded answers.
   */
  function clientFor(account: TConnectorAccount): Got {
    const base = baseOf(account);
    const chosenByUser = !sameOrigin(base, options.baseUrl ?? 'https://bsky.social');
    if (chosenByUser) {
      const problem = chosenHostProblem(base, NETWORK);
      if (problem) throw new RefusedHostError(problem);
    }
    let client = clients.get(base);
    if (!client) {
      client = createHttpClient(base, timeoutMs, { chosenByUser });
      clients.set(base, client);
    }
    return client;
  }

  /**
   * The account's session: the access JWT the publisher hands over (kept and refreshed by the service,
   * see oauth/bluesky-session.ts), its DID (`sub`) and the PDS named at sign-in. Nothing is signed in
   * here: createSession is rate limited per account, so a missing or expired session is reported as
   * `auth_expired` and the publisher renews it under the account's lock, then repeats the call.
   */
  function sessionOf(account: TConnectorAccount): TSession | null {
    if (!isSessionJwt(account.token)) return null;
    const did =
      jwtSubject(account.token) ?? (account.externalId?.startsWith('did:') ? account.externalId : null);
    if (!did) return null;
    return {
      accessJwt: account.token,
      did,
      handle: account.accountName,
      pdsUrl: account.extra?.pds ?? baseOf(account),
    };
  }

  /** Runs `call` with the account's session; without one, the publisher is asked to renew it. */
  async function withSession<T>(
    account: TConnectorAccount,
    call: (s: TSession, http: Got) => Promise<T>,
  ): Promise<T> {
    const s = sessionOf(account);
    if (!s) throw new NoSessionError();
    return call(s, clientFor(account));
  }

  const auth = (s: TSession) => ({ authorization: `Bearer ${s.accessJwt}` });

  /** com.atproto.repo.getRecord at our key: the record a lost answer may have written, or null. */
  async function existing(http: Got, s: TSession, rkey: string): Promise<TStrongRef | null> {
    try {
      const found = await http
        .get('xrpc/com.atproto.repo.getRecord', {
          headers: auth(s),
          searchParams: { repo: s.did, collection: POST_COLLECTION, rkey },
        })
        .json<{ uri?: string; cid?: string }>();
      return found.uri && found.cid ? { uri: found.uri, cid: found.cid } : null;
    } catch (err) {
      if (xrpcError(err) === 'RecordNotFound') return null;
      throw err;
    }
  }

  return {
    platform: 'bluesky',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      const record: Record<string, unknown> = {
        $type: POST_COLLECTION,
        text: input.text,
        createdAt: new Date().toISOString(),
      };
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
      // A video job an earlier call started is resumed from the progress: its video is not fetched again.
      const resuming = input.media?.video ? resumesVideoJob(input.progress) : false;
      const videoUrl = input.media?.video?.url ?? '';
      const downloads = await media.download(
        resuming && input.media ? { ...input.media, video: null } : input.media,
        input.account.id,
      );
      if (!downloads.ok) return downloads;
      const images = downloads.value.filter((d) => d.kind === 'image');
      const video = downloads.value.find((d) => d.kind === 'video');
      const rkey = blueskyRecordKey(input.idempotencyKey, input.postCreatedAt ?? new Date());

      try {
        const created = await withSession(account, async (s, http): Promise<TPublishOutcome> => {
          // Links and mentions are only clickable on Bluesky as facets; a mention needs its DID.
          const facets = await facetsOf(http, input.text);
          if (facets.length > 0) record.facets = facets;
          if (images.length > 0) record.embed = await media.imagesEmbed(http, s, images);
          if (video || resuming) {
            const embed = await videoReady(input.progress, http, s, video, videoUrl);
            if (embed.kind === 'failed') return { ok: false, failure: embed.failure };
            // Still processing: the job id is saved, the publisher calls again later (no slot waits).
            if (embed.kind === 'pending') return pendingOutcome(NETWORK, embed);
            record.embed = embed.value;
          }
          let ref: TStrongRef;
          let readBack = false;
          try {
            ref = await http
              .post('xrpc/com.atproto.repo.createRecord', {
                headers: auth(s),
                json: { repo: s.did, collection: POST_COLLECTION, rkey, record },
              })
              .json<TStrongRef>();
          } catch (err) {
            // A record at our key is this segment, written by an attempt whose answer was lost: the PDS
            // answers a second create at the same key with a 500, a lost answer with nothing.
            if (!mayHaveLanded(err)) throw err;
            const found = await existing(http, s, rkey).catch(() => null);
            if (!found) throw err;
            ref = found;
            readBack = true;
          }
          return {
            ok: true,
            remoteId: ref.uri,
            url: `https://bsky.app/profile/${s.handle}/post/${rkeyOf(ref.uri)}`,
            meta: { uri: ref.uri, cid: ref.cid },
            ...(readBack ? { readBack } : {}),
          };
        });
        return created;
      } catch (err) {
        // The record key makes a resend harmless (it finds the record), so no outcome is ever unknown here.
        const { outcomeUnknown: _safe, ...failure } = classify(err);
        return { ok: false, failure };
      } finally {
        // The video's temporary file, once it was sent (or the attempt gave up).
        await video?.file?.dispose();
      }
    },

    /**
     * The segment's record key is derived from its idempotency key and the post's creation time, so the
     * question is one `com.atproto.repo.getRecord` at that key (public, no rate-limit cost of a listing).
     * https://docs.bsky.app/docs/api/com-atproto-repo-get-record
     */
    async findPublished(probe: TPublishedProbe): Promise<TFindOutcome> {
      if (!probe.postCreatedAt) {
        return {
          kind: 'cannot_tell',
          reason: `the post's creation time, part of its ${NETWORK} record key, is unknown.`,
        };
      }
      const rkey = blueskyRecordKey(probe.idempotencyKey, probe.postCreatedAt);
      try {
        return await withSession(probe.account, async (s, http): Promise<TFindOutcome> => {
          const found = await existing(http, s, rkey);
          if (!found) return { kind: 'absent' };
          return {
            kind: 'found',
            remoteId: found.uri,
            url: `https://bsky.app/profile/${s.handle}/post/${rkeyOf(found.uri)}`,
            meta: { uri: found.uri, cid: found.cid },
          };
        });
      } catch (err) {
        return readFailure(err, classify, NETWORK);
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
