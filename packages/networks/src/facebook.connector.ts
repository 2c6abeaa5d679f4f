import { type Got, HTTPError } from 'got';
import { findFacebookComment } from './comment-readback.js';
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
import { createFacebookVideoPublisher } from './facebook-video.js';
import {
  classifyGraphError,
  findInGraphList,
  graphBaseUrl,
  META_GRAPH_DEFAULT_VERSION,
} from './graph-api.js';
import { createHttpClient } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';
import { sameText } from './readback-match.js';

const NETWORK = 'Facebook';
/** Page tokens report throttling in the page usage header too. */
const classify = (err: unknown): TNetworkFailure =>
  classifyGraphError(err, NETWORK, ['x-business-use-case-usage', 'x-page-usage', 'x-app-usage']);

/**
 * A page photo's own alt text (`alt_text_custom`) instead of Facebook's generated one; Facebook fetches the
 * photo from `url` itself. https://developers.facebook.com/docs/graph-api/reference/photo/
 */
const altText = (text: string | undefined) => (text ? { alt_text_custom: text } : {});

export function createFacebookConnector(options: TConnectorOptions): TNetworkConnector {
  // Pages API on the Graph API version in use (v21.0 stops working on January 21, 2027).
  // https://developers.facebook.com/docs/graph-api/changelog/versions/
  const version = options.apiVersion ?? META_GRAPH_DEFAULT_VERSION;
  const http: Got = createHttpClient(
    graphBaseUrl(options.baseUrl, 'https://graph.facebook.com', version),
    options.timeoutMs,
  );
  const timeoutMs = options.timeoutMs ?? 15_000;
  // Videos are published on graph-video.facebook.com; a configured base URL (a proxy, the simulator)
  // serves both hosts unless the video host is configured on its own.
  const publishVideo = createFacebookVideoPublisher({
    network: NETWORK,
    graph: http,
    videoHost: createHttpClient(
      graphBaseUrl(options.videoBaseUrl ?? options.baseUrl, 'https://graph-video.facebook.com', version),
      options.timeoutMs,
    ),
    appId: options.appId,
    fetchMedia: options.fetchMedia ?? createMediaFetcher(),
    classify,
    timeoutMs,
  });
  const auth = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });
  const postTo = (account: TConnectorAccount, path: string, json: Record<string, unknown>) =>
    http.post(path, { headers: auth(account), json }).json<{ id: string; post_id?: string }>();

  /** Posts to the page: text (Facebook previews links itself), one photo or several photos. */
  async function pagePost(input: TPublishInput, pageId: string): Promise<string> {
    const { account } = input;
    const page = encodeURIComponent(pageId);
    const images = input.media?.images ?? [];
    const [first] = images;
    if (images.length === 1 && first) {
      const res = await postTo(account, `${page}/photos`, {
        url: first.url,
        caption: input.text,
        ...altText(first.altText),
      });
      return res.post_id ?? res.id;
    }
    const attached: { media_fbid: string }[] = [];
    for (const image of images) {
      // Unpublished photos become part of the one feed post below instead of separate posts.
      const res = await postTo(account, `${page}/photos`, {
        url: image.url,
        published: false,
        ...altText(image.altText),
      });
      attached.push({ media_fbid: res.id });
    }
    const res = await postTo(account, `${page}/feed`, {
      message: input.text,
      ...(attached.length > 0 ? { attached_media: attached } : {}),
    });
    return res.id;
  }

  return {
    platform: 'facebook',

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account } = input;
      const pageId = account.externalId;
      if (!pageId) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `The ${NETWORK} account ${account.accountName} has no page id. Reconnect it with the page id.`,
          },
        };
      }
      try {
        // Later segments are comments under the main post (Facebook's thread style), not new page posts.
        const parent = input.root ?? input.replyTo;
        if (parent) {
          const image = input.media?.images[0];
          const res = await postTo(account, `${encodeURIComponent(parent.remoteId)}/comments`, {
            message: input.text,
            ...(image ? { attachment_url: image.url } : {}),
          });
          const commentId = res.id.split('_').pop() ?? res.id;
          return {
            ok: true,
            remoteId: res.id,
            url: `https://www.facebook.com/${parent.remoteId}?comment_id=${commentId}`,
            meta: { kind: 'comment', parent: parent.remoteId },
          };
        }
        const video = input.media?.video;
        if (video) return await publishVideo(input, pageId, video.url);
        const id = await pagePost(input, pageId);
        return { ok: true, remoteId: id, url: `https://www.facebook.com/${id}` };
      } catch (err) {
        return { ok: false, failure: classify(err) };
      }
    },

    /**
     * The Page's own published posts since the write-ahead (`GET /{page-id}/published_posts`, newest first;
     * the Page token with pages_read_engagement), matched on the message. A video is found as its feed post,
     * whose id then stands for it (delete works on either). Comments are read from the main post's comments
     * (comment-readback.ts).
     * https://developers.facebook.com/docs/graph-api/reference/page/published_posts/
     */
    async findPublished(probe: TPublishedProbe): Promise<TFindOutcome> {
      const { account } = probe;
      if (!account.externalId) {
        return { kind: 'cannot_tell', reason: `the ${NETWORK} account has no page id to read.` };
      }
      // Thread segments and first comments are comments under the main post: read from its comments.
      const parent = probe.root ?? probe.replyTo;
      if (parent) return findFacebookComment(http, auth(account), { ...probe, replyTo: parent }, classify);
      return findInGraphList<{ id: string; message?: string; permalink_url?: string }>({
        http,
        headers: auth(account),
        network: NETWORK,
        classify,
        path: `${encodeURIComponent(account.externalId)}/published_posts`,
        fields: 'id,message,created_time,permalink_url',
        probe,
        matches: (item) => sameText(probe.text, item.message ?? ''),
        found: (item) => ({
          kind: 'found',
          remoteId: item.id,
          url: `https://www.facebook.com/${item.id}`,
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
