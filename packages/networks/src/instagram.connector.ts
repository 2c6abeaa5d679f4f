import { setTimeout as sleep } from 'node:timers/promises';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TMedia,
  TNetworkConnector,
  TNetworkFailure,
  TPublishInput,
  TPublishOutcome,
} from './connector.js';
import { classifyGraphError } from './graph-api.js';
import { createHttpClient } from './http-client.js';

/** Instagram API with Instagram Login; point `baseUrl` at graph.facebook.com for Facebook Login tokens. */
const DEFAULT_BASE_URL = 'https://graph.instagram.com/v23.0';
const NETWORK = 'Instagram';
const MAX_CAROUSEL_ITEMS = 10;

export interface TInstagramOptions extends TConnectorOptions {
  /** Pause between container status checks (video processing usually takes tens of seconds). */
  pollIntervalMs?: number;
  /** Status checks before giving up on a video container. */
  maxPolls?: number;
}

/** A failure decided by the connector itself, carried out of the multi-step flow. */
class StepFailure extends Error {
  constructor(readonly failure: TNetworkFailure) {
    super(failure.message);
  }
}

function classify(error: unknown): TNetworkFailure {
  if (error instanceof StepFailure) return error.failure;
  return classifyGraphError(error, NETWORK, []);
}

/**
 * Containers are private drafts until `media_publish`: a failure before that step leaves nothing
 * public, so the publisher may safely retry even after a timeout.
 */
function beforePublish(error: unknown): StepFailure {
  const { outcomeUnknown: _ignored, ...failure } = classify(error);
  return new StepFailure(failure);
}

type TContainerFields = Record<string, string>;

export function createInstagramConnector(options: TInstagramOptions = {}): TNetworkConnector {
  const http = createHttpClient(options.baseUrl ?? DEFAULT_BASE_URL, options.timeoutMs);
  const pollIntervalMs = options.pollIntervalMs ?? 3000;
  const maxPolls = options.maxPolls ?? 20;
  // A bearer header keeps the token out of URLs (and so out of proxies' access logs).
  const headers = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });

  async function createContainer(account: TConnectorAccount, userId: string, fields: TContainerFields) {
    const body = await http
      .post(`${encodeURIComponent(userId)}/media`, { form: fields, headers: headers(account) })
      .json<{ id?: string }>();
    if (!body.id) {
      throw new StepFailure({
        kind: 'transient',
        message: `${NETWORK} created no media container. Retrying.`,
      });
    }
    return body.id;
  }

  async function waitUntilFinished(account: TConnectorAccount, containerId: string): Promise<void> {
    for (let attempt = 0; attempt < maxPolls; attempt += 1) {
      if (attempt > 0) await sleep(pollIntervalMs);
      const body = await http
        .get(encodeURIComponent(containerId), {
          searchParams: { fields: 'status_code,status' },
          headers: headers(account),
        })
        .json<{ status_code?: string; status?: string }>();
      if (body.status_code === 'FINISHED') return;
      if (body.status_code === 'ERROR' || body.status_code === 'EXPIRED') {
        throw new StepFailure({
          kind: 'rejected',
          body: JSON.stringify(body).slice(0, 500),
          message: `${NETWORK} could not process the video (${body.status ?? body.status_code}). Check the video format and retry.`,
        });
      }
    }
    throw new StepFailure({
      kind: 'transient',
      message: `${NETWORK} was still processing the video after ${maxPolls} checks. It will be retried automatically.`,
    });
  }

  /** Builds the container to publish: one image, one reel, or a carousel of up to ten items. */
  async function prepare(account: TConnectorAccount, userId: string, text: string, media: TMedia) {
    const items = [
      ...media.images.map((image) => ({ kind: 'image' as const, url: image.url })),
      ...(media.video ? [{ kind: 'video' as const, url: media.video.url }] : []),
    ];
    const caption: TContainerFields = text ? { caption: text } : {};
    const only = items.length === 1 ? items[0] : undefined;
    if (only?.kind === 'image') return createContainer(account, userId, { image_url: only.url, ...caption });
    if (only?.kind === 'video') {
      const thumbnail = media.video?.thumbnailUrl;
      const id = await createContainer(account, userId, {
        media_type: 'REELS',
        video_url: only.url,
        ...(thumbnail ? { cover_url: thumbnail } : {}),
        ...caption,
      });
      await waitUntilFinished(account, id);
      return id;
    }
    const children: string[] = [];
    for (const item of items) {
      const fields: TContainerFields =
        item.kind === 'image'
          ? { image_url: item.url, is_carousel_item: 'true' }
          : { media_type: 'VIDEO', video_url: item.url, is_carousel_item: 'true' };
      const id = await createContainer(account, userId, fields);
      if (item.kind === 'video') await waitUntilFinished(account, id);
      children.push(id);
    }
    const parent = await createContainer(account, userId, {
      media_type: 'CAROUSEL',
      children: children.join(','),
      ...caption,
    });
    if (media.video) await waitUntilFinished(account, parent);
    return parent;
  }

  /** The permalink holds a shortcode the media id cannot be turned into, so it has to be asked for. */
  async function permalink(account: TConnectorAccount, mediaId: string): Promise<string> {
    try {
      const body = await http
        .get(encodeURIComponent(mediaId), {
          searchParams: { fields: 'permalink' },
          headers: headers(account),
        })
        .json<{ permalink?: string }>();
      if (body.permalink) return body.permalink;
    } catch {
      // The post is already public: a failed lookup must not turn it into a failure (and a repost).
    }
    return `https://www.instagram.com/${account.accountName.replace(/^@/, '')}/`;
  }

  return {
    platform: 'instagram',
    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account, media, text } = input;
      const count = (media?.images.length ?? 0) + (media?.video ? 1 : 0);
      if (!media || count === 0) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${NETWORK} posts need at least one image or a video. Add media and retry.`,
          },
        };
      }
      if (count > MAX_CAROUSEL_ITEMS) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${NETWORK} carousels hold at most ${MAX_CAROUSEL_ITEMS} items (got ${count}). Remove some media and retry.`,
          },
        };
      }
      // Instagram Login tokens resolve `me` to their own professional account.
      const userId = account.externalId ?? 'me';
      try {
        let containerId: string;
        try {
          containerId = await prepare(account, userId, text, media);
        } catch (error) {
          throw beforePublish(error);
        }
        const published = await http
          .post(`${encodeURIComponent(userId)}/media_publish`, {
            form: { creation_id: containerId },
            headers: headers(account),
          })
          .json<{ id?: string }>();
        if (!published.id) {
          return {
            ok: false,
            failure: {
              kind: 'transient',
              outcomeUnknown: true,
              message: `${NETWORK} answered the publish call without a media id; check the account before retrying.`,
            },
          };
        }
        return { ok: true, remoteId: published.id, url: await permalink(account, published.id) };
      } catch (error) {
        return { ok: false, failure: classify(error) };
      }
    },
    // No delete: the Instagram Graph API cannot delete published media.
  };
}
