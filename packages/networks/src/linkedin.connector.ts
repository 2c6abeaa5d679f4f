import { HTTPError } from 'got';
import { findLinkedInComment } from './comment-readback.js';
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
import { classifyHttpError, createHttpClient, type TStep } from './http-client.js';
import { createLinkedInMedia } from './linkedin-media.js';
import { createLinkedInWaits } from './linkedin-waits.js';
import { createMediaFetcher } from './media-fetch.js';
import { pendingOutcome } from './processing-step.js';
import {
  firstUnclaimed,
  inWindow,
  MAX_READ_PAGES,
  readFailure,
  sameText,
  tooMany,
  windowStart,
} from './readback-match.js';

interface TFoundPost {
  id: string;
  commentary?: string;
  createdAt?: number;
  content?: { media?: unknown; multiImage?: { images?: unknown[] } };
}

const NETWORK = 'LinkedIn';
/**
 * Every versioned call needs `LinkedIn-Version: YYYYMM`; a version is served for at least one year after
 * release, then answers 426 NONEXISTENT_VERSION. 202607 is served until about July 2027.
 * https://learn.microsoft.com/en-us/linkedin/marketing/versioning
 * https://learn.microsoft.com/en-us/linkedin/marketing/integrations/migrations (sunset dates)
 */
export const LINKEDIN_DEFAULT_API_VERSION = '202607';
/** A multi-image post holds 2 to 20 images (Posts API, MultiImage content). */
export const LINKEDIN_MAX_IMAGES = 20;

/** LinkedIn's "little text" format treats these as markup; unescaped, they cut or garble the post. */
function escapeLittleText(text: string): string {
  return text.replace(/[\\|{}@[\]()<>#*_~]/g, '\\$&');
}

function restliId(headers: Record<string, string | string[] | undefined>): string | undefined {
  const raw = headers['x-restli-id'] ?? headers['x-linkedin-id'];
  return Array.isArray(raw) ? raw[0] : raw;
}

const rejected = (message: string): TPublishOutcome => ({
  ok: false,
  failure: { kind: 'rejected', message },
});

/**
 * LinkedIn through the versioned REST APIs (https://api.linkedin.com/rest/): the Posts API for posts,
 * the Images and Videos APIs for media, the Comments API for later thread segments.
 * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api
 */
export function createLinkedInConnector(options: TConnectorOptions): TNetworkConnector {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const http = createHttpClient(options.baseUrl ?? 'https://api.linkedin.com', timeoutMs);
  const version = options.apiVersion ?? LINKEDIN_DEFAULT_API_VERSION;
  const classify = (err: unknown) => classifyHttpError(err, { network: NETWORK });
  // Both headers are required on every call: X-Restli-Protocol-Version selects Rest.li 2.0 (encoded URNs
  // in paths). https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/protocol-version
  const headers = (account: TConnectorAccount) => ({
    authorization: `Bearer ${account.token}`,
    'linkedin-version': version,
    'x-restli-protocol-version': '2.0.0',
  });
  const media = createLinkedInMedia({
    http,
    headers,
    timeoutMs,
    fetchMedia: options.fetchMedia ?? createMediaFetcher({ timeoutMs }),
    processingWait: options.processingWait,
  });

  async function comment(input: TPublishInput, author: string, parent: TRemoteRef): Promise<TPublishOutcome> {
    const postUrn = parent.remoteId;
    const res = await http.post(`rest/socialActions/${encodeURIComponent(postUrn)}/comments`, {
      headers: headers(input.account),
      json: { actor: author, object: postUrn, message: { text: input.text } },
    });
    const body = res.body as { id?: string; $URN?: string } | undefined;
    const urn = restliId(res.headers) ?? body?.$URN ?? '';
    const commentId = body?.id ?? /,(\d+)\)$/.exec(urn)?.[1] ?? urn;
    return {
      ok: true,
      remoteId: urn,
      url: `https://www.linkedin.com/feed/update/${postUrn}?commentUrn=${encodeURIComponent(urn)}`,
      meta: { kind: 'comment', parent: postUrn, commentId },
    };
  }

  const { videoReady, imagesReady } = createLinkedInWaits(media, options.processingWait);

  /** Uploads the post's media and returns the Posts API `content` for it (none for a text post). */
  async function content(
    input: TPublishInput,
    author: string,
  ): Promise<TStep<Record<string, unknown> | null> & { pending?: { checkAfterMs: number; what: string } }> {
    const images = input.media?.images ?? [];
    const video = input.media?.video;
    if (video) {
      const ready = await videoReady(input, author, video.url);
      if (ready.kind === 'failed') return { ok: false, failure: ready.failure };
      if (ready.kind === 'pending') return { ok: true, value: null, pending: ready };
      return { ok: true, value: { media: { id: ready.value } } };
    }
    if (images.length === 0) return { ok: true, value: null };
    const ready = await imagesReady(input, author);
    if (ready.kind === 'failed') return { ok: false, failure: ready.failure };
    if (ready.kind === 'pending') return { ok: true, value: null, pending: ready };
    // altText: up to 4086 characters, shown to screen readers (Posts API, Media / MultiImage content).
    const refs = ready.value.map((id, i) => {
      const altText = images[i]?.altText;
      return { id, ...(altText ? { altText: altText.slice(0, 4086) } : {}) };
    });
    const [only] = refs;
    return {
      ok: true,
      value: refs.length === 1 && only ? { media: only } : { multiImage: { images: refs } },
    };
  }

  return {
    platform: 'linkedin',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      const author = account.externalId;
      if (!author?.startsWith('urn:li:')) {
        return rejected(
          `The ${NETWORK} account ${account.accountName} has no author URN (urn:li:person:… or urn:li:organization:…). Reconnect it with its URN.`,
        );
      }
      const images = input.media?.images ?? [];
      const video = input.media?.video ?? null;
      const parent = input.root ?? input.replyTo;
      if (parent && (images.length > 0 || video)) {
        return rejected(
          `${NETWORK} thread segments are comments, which this service posts as text only. Put the media on the first segment.`,
        );
      }
      if (video && images.length > 0) {
        return rejected(
          `A ${NETWORK} post holds either images or one video, not both. Split the media and retry.`,
        );
      }
      if (images.length > LINKEDIN_MAX_IMAGES) {
        return rejected(
          `A ${NETWORK} post holds at most ${LINKEDIN_MAX_IMAGES} images (got ${images.length}). Remove some and retry.`,
        );
      }
      try {
        // Later segments are comments under the main post (LinkedIn's thread style), not new posts.
        if (parent) return await comment(input, author, parent);
        const attached = await content(input, author);
        if (!attached.ok) return attached;
        // Still processing: the URN is saved, the publisher calls again later.
        if (attached.pending) return pendingOutcome(NETWORK, attached.pending);
        const res = await http.post('rest/posts', {
          headers: headers(account),
          json: {
            author,
            commentary: escapeLittleText(input.text),
            visibility: 'PUBLIC',
            distribution: {
              feedDistribution: 'MAIN_FEED',
              targetEntities: [],
              thirdPartyDistributionChannels: [],
            },
            ...(attached.value ? { content: attached.value } : {}),
            lifecycleState: 'PUBLISHED',
            isReshareDisabledByAuthor: false,
          },
        });
        const urn = restliId(res.headers);
        if (!urn) {
          return {
            ok: false,
            failure: {
              kind: 'transient',
              outcomeUnknown: true,
              status: res.statusCode,
              message: `${NETWORK} accepted the post but did not return its id. Check the ${NETWORK} account before retrying.`,
            },
          };
        }
        return { ok: true, remoteId: urn, url: `https://www.linkedin.com/feed/update/${urn}` };
      } catch (err) {
        return { ok: false, failure: classify(err) };
      }
    },

    /**
     * Find Posts by Author (`GET /rest/posts?q=author&author=…&sortBy=CREATED`, `X-RestLi-Method: FINDER`,
     * the version headers), newest first, 50 a page, at most three pages, matched on the commentary as sent
     * (escaped). Reading a member's posts needs r_member_social, which LinkedIn grants to few apps: without
     * it LinkedIn answers 403 and the outcome stays for a person to check. Comments are read from the main
     * post's comments (comment-readback.ts).
     * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api
     */
    async findPublished(probe: TPublishedProbe): Promise<TFindOutcome> {
      const { account } = probe;
      const author = account.externalId;
      if (!author?.startsWith('urn:li:')) {
        return { kind: 'cannot_tell', reason: `the ${NETWORK} account has no author URN to read.` };
      }
      // Thread segments and first comments are comments under the main post: read from its comments.
      const parent = probe.root ?? probe.replyTo;
      if (parent) return findLinkedInComment(http, headers(account), { ...probe, replyTo: parent }, classify);
      const sent = escapeLittleText(probe.text);
      const count = 50;
      try {
        for (let page = 0; page < MAX_READ_PAGES; page += 1) {
          const body = await http
            .get('rest/posts', {
              headers: { ...headers(account), 'x-restli-method': 'FINDER' },
              searchParams: { q: 'author', author, count, start: page * count, sortBy: 'CREATED' },
            })
            .json<{ elements?: TFoundPost[] }>();
          const elements = body.elements ?? [];
          const hit = await firstUnclaimed(
            probe,
            elements.filter((p) => sameText(sent, p.commentary) && inWindow(probe, p.createdAt)),
            (p) => p.id,
          );
          if (hit) {
            return { kind: 'found', remoteId: hit.id, url: `https://www.linkedin.com/feed/update/${hit.id}` };
          }
          const oldest = elements.at(-1)?.createdAt;
          if (elements.length < count || (oldest !== undefined && oldest < windowStart(probe).getTime())) {
            return { kind: 'absent' };
          }
        }
        return tooMany(NETWORK, MAX_READ_PAGES * count);
      } catch (err) {
        return readFailure(err, classify, NETWORK);
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      const parent = remote.meta?.parent;
      const path =
        remote.meta?.kind === 'comment' && parent
          ? `rest/socialActions/${encodeURIComponent(parent)}/comments/${encodeURIComponent(remote.meta.commentId ?? remote.remoteId)}`
          : `rest/posts/${encodeURIComponent(remote.remoteId)}`;
      try {
        await http.delete(path, {
          headers: headers(account),
          ...(parent && account.externalId ? { searchParams: { actor: account.externalId } } : {}),
        });
        return { ok: true };
      } catch (err) {
        if (err instanceof HTTPError && err.response.statusCode === 404) return { ok: true };
        return { ok: false, failure: classify(err) };
      }
    },
  };
}

/** Same factory under the plain `create<Platform>Connector` spelling. */
export const createLinkedinConnector = createLinkedInConnector;
