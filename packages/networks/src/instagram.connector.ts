import type {
  TConnectorAccount,
  TConnectorOptions,
  TFindOutcome,
  TMedia,
  TNetworkConnector,
  TNetworkFailure,
  TPublishedProbe,
  TPublishInput,
  TPublishOutcome,
} from './connector.js';
import {
  classifyGraphError,
  findInGraphList,
  graphBaseUrl,
  META_GRAPH_DEFAULT_VERSION,
  type TContainerStatusSpec,
} from './graph-api.js';
import { stepContainers, type TContainerPlan } from './graph-containers.js';
import { createHttpClient } from './http-client.js';
import { findComment, instagramComment } from './network-comments.js';
import { pendingOutcome, runToEnd } from './processing-step.js';
import { sameText } from './readback-match.js';

/**
 * Instagram API with Instagram Login (graph.instagram.com); point `baseUrl` at graph.facebook.com for
 * Facebook Login tokens. https://developers.facebook.com/docs/instagram-platform/content-publishing
 */
const REAL_HOST = 'https://graph.instagram.com';
const NETWORK = 'Instagram';
/** A carousel holds up to 10 images and videos. https://developers.facebook.com/docs/instagram-platform/content-publishing#carousel-posts */
const MAX_CAROUSEL_ITEMS = 10;
/** `alt_text` on image containers (added March 2025), at most 1,000 characters. */
const MAX_ALT_TEXT = 1000;

/** A failure decided by the connector itself, carried out of the multi-step flow. */
class StepFailure extends Error {
  constructor(readonly failure: TNetworkFailure) {
    super(failure.message);
  }
}

function classify(error: unknown): TNetworkFailure {
  if (error instanceof StepFailure) return error.failure;
  return classifyGraphError(error, NETWORK, ['x-business-use-case-usage', 'x-app-usage']);
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

export function createInstagramConnector(options: TConnectorOptions = {}): TNetworkConnector {
  const version = options.apiVersion ?? META_GRAPH_DEFAULT_VERSION;
  const http = createHttpClient(graphBaseUrl(options.baseUrl, REAL_HOST, version), options.timeoutMs);
  // A bearer header keeps the token out of URLs (and so out of proxies' access logs).
  const headers = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });
  const statusSpec = (account: TConnectorAccount): TContainerStatusSpec => ({
    http,
    headers: headers(account),
    network: NETWORK,
    stateField: 'status_code',
    detailField: 'status',
    wait: options.processingWait,
  });

  /** Makes a container; Instagram refuses to use it before it is FINISHED (see `stepContainers`). */
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

  const altText = (text: string | undefined): TContainerFields =>
    text ? { alt_text: text.slice(0, MAX_ALT_TEXT) } : {};

  /** The containers to make: one image, one reel, or a carousel of up to ten items. */
  function plan(text: string, media: TMedia): TContainerPlan {
    const items = [
      ...media.images.map((image) => ({ kind: 'image' as const, url: image.url, alt: image.altText })),
      ...(media.video ? [{ kind: 'video' as const, url: media.video.url, alt: undefined }] : []),
    ];
    const caption: TContainerFields = text ? { caption: text } : {};
    const only = items.length === 1 ? items[0] : undefined;
    if (only?.kind === 'image') {
      return { children: [], main: () => ({ image_url: only.url, ...altText(only.alt), ...caption }) };
    }
    if (only?.kind === 'video') {
      const thumbnail = media.video?.thumbnailUrl;
      return {
        children: [],
        main: () => ({
          media_type: 'REELS',
          video_url: only.url,
          ...(thumbnail ? { cover_url: thumbnail } : {}),
          ...caption,
        }),
      };
    }
    return {
      children: items.map((item) =>
        item.kind === 'image'
          ? { image_url: item.url, is_carousel_item: 'true', ...altText(item.alt) }
          : { media_type: 'VIDEO', video_url: item.url, is_carousel_item: 'true' },
      ),
      main: (children) => ({ media_type: 'CAROUSEL', children: children.join(','), ...caption }),
    };
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
      // A reply is a comment under the media (a post's first comment).
      const { replyTo } = input;
      if (replyTo)
        return instagramComment(http, { ...input, replyTo }, (id) => permalink(input.account, id), classify);
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
          const steps = {
            spec: statusSpec(account),
            create: (fields: Record<string, unknown>) =>
              createContainer(account, userId, fields as TContainerFields),
          };
          const step = await runToEnd(input.progress, (progress) =>
            stepContainers(steps, plan(text, media), progress),
          );
          if (step.kind === 'failed') return { ok: false, failure: step.failure };
          // Still processing: the ids are saved, the publisher calls again later (no slot waits).
          if (step.kind === 'pending') return pendingOutcome(NETWORK, step);
          containerId = step.value;
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
    /**
     * The account's published media since the write-ahead (`GET /{ig-user-id}/media`, newest first, with
     * instagram_business_basic), matched on the caption and on being a carousel or not.
     * https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media
     */
    async findPublished(probe: TPublishedProbe): Promise<TFindOutcome> {
      const { account } = probe;
      const { replyTo } = probe;
      if (replyTo) return findComment(http, headers(account), { ...probe, replyTo }, classify);
      return findInGraphList<{ id: string; caption?: string; media_type?: string; permalink?: string }>({
        http,
        headers: headers(account),
        network: NETWORK,
        classify,
        path: `${encodeURIComponent(account.externalId ?? 'me')}/media`,
        fields: 'id,caption,timestamp,media_type,permalink',
        probe,
        matches: (item) =>
          sameText(probe.text, item.caption ?? '') &&
          (item.media_type === 'CAROUSEL_ALBUM') === probe.mediaCount > 1,
        found: (item) => ({
          kind: 'found',
          remoteId: item.id,
          url: item.permalink ?? `https://www.instagram.com/${account.accountName.replace(/^@/, '')}/`,
        }),
      });
    },
    // No delete: the Instagram API cannot delete published media.
  };
}
