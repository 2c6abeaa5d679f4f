import type { Got } from 'got';
import type {
  TFindOutcome,
  TNetworkFailure,
  TPublishedProbe,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { findInGraphList } from './graph-api.js';
import { sameText } from './readback-match.js';

// Comments under a post, for a post's first comment on the networks whose replies are comments and whose
// thread segments are not (Instagram, YouTube). LinkedIn and Facebook comment through their thread path.

/** A comment's remote record: `kind: comment` tells delete and read-back it is no post. */
const commentMeta = (parent: TRemoteRef) => ({ kind: 'comment', parent: parent.remoteId });

/**
 * Instagram: `POST /{ig-media-id}/comments?message=…` (instagram_business_basic +
 * instagram_business_manage_comments) answers `{id}`; comments on live video are not supported.
 * https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media/comments
 */
export async function instagramComment(
  http: Got,
  input: TPublishInput & { replyTo: TRemoteRef },
  mediaUrl: (mediaId: string) => Promise<string>,
  classify: (error: unknown) => TNetworkFailure,
): Promise<TPublishOutcome> {
  const parent = input.replyTo;
  try {
    const body = await http
      .post(`${encodeURIComponent(parent.remoteId)}/comments`, {
        form: { message: input.text },
        headers: { authorization: `Bearer ${input.account.token}` },
      })
      .json<{ id?: string }>();
    if (!body.id) {
      return {
        ok: false,
        failure: {
          kind: 'transient',
          outcomeUnknown: true,
          message: 'Instagram answered the comment call without an id; check the post before retrying.',
        },
      };
    }
    // A comment has no permalink of its own: the post's link, where it shows.
    return { ok: true, remoteId: body.id, url: await mediaUrl(parent.remoteId), meta: commentMeta(parent) };
  } catch (error) {
    return { ok: false, failure: classify(error) };
  }
}

interface TCommentThread {
  id?: string;
  snippet?: { topLevelComment?: { id?: string } };
}

/**
 * YouTube: `commentThreads.insert` (`POST /youtube/v3/commentThreads?part=snippet`, scope
 * youtube.force-ssl, 50 quota units) with `snippet.channelId`, `snippet.videoId` and
 * `snippet.topLevelComment.snippet.textOriginal`; answers the commentThread resource.
 * https://developers.google.com/youtube/v3/docs/commentThreads/insert
 */
export async function youtubeComment(
  http: Got,
  input: TPublishInput & { replyTo: TRemoteRef },
  classify: (error: unknown) => TNetworkFailure,
): Promise<TPublishOutcome> {
  const video = input.replyTo;
  try {
    const thread = await http
      .post('youtube/v3/commentThreads', {
        searchParams: { part: 'snippet' },
        json: {
          snippet: {
            ...(input.account.externalId ? { channelId: input.account.externalId } : {}),
            videoId: video.remoteId,
            topLevelComment: { snippet: { textOriginal: input.text } },
          },
        },
        headers: { authorization: `Bearer ${input.account.token}` },
      })
      .json<TCommentThread>();
    const id = thread.snippet?.topLevelComment?.id ?? thread.id;
    if (!id) {
      return {
        ok: false,
        failure: {
          kind: 'transient',
          outcomeUnknown: true,
          message: 'YouTube answered the comment call without an id; check the video before retrying.',
        },
      };
    }
    return {
      ok: true,
      remoteId: id,
      url: `https://www.youtube.com/watch?v=${encodeURIComponent(video.remoteId)}&lc=${encodeURIComponent(id)}`,
      meta: commentMeta(video),
    };
  } catch (error) {
    return { ok: false, failure: classify(error) };
  }
}

/** `comments.delete` (`DELETE /youtube/v3/comments?id=…`). https://developers.google.com/youtube/v3/docs/comments/delete */
export const YOUTUBE_COMMENTS_PATH = 'youtube/v3/comments';

/**
 * Reads an Instagram comment back after a lost answer: the media's comments (`GET /{ig-media-id}/comments`,
 * fields id, text, timestamp; instagram_business_manage_comments), newest first within the probe's window,
 * matched on the text.
 * https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media/comments
 */
export function findComment(
  http: Got,
  headers: Record<string, string>,
  probe: TPublishedProbe & { replyTo: TRemoteRef },
  classify: (error: unknown) => TNetworkFailure,
): Promise<TFindOutcome> {
  const parent = probe.replyTo;
  const name = probe.account.accountName.replace(/^@/, '');
  return findInGraphList<{ id: string; text?: string }>({
    http,
    headers,
    network: 'Instagram',
    classify,
    path: `${encodeURIComponent(parent.remoteId)}/comments`,
    fields: 'id,text,timestamp',
    probe,
    matches: (item) => sameText(probe.text, item.text ?? ''),
    found: (item) => ({
      kind: 'found',
      remoteId: item.id,
      url: `https://www.instagram.com/${name}/`,
      meta: commentMeta(parent),
    }),
  });
}
