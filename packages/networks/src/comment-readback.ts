import type { Got } from 'got';
import type { TFindOutcome, TNetworkFailure, TPublishedProbe, TRemoteRef } from './connector.js';
import { findInGraphList } from './graph-api.js';
import {
  firstUnclaimed,
  inWindow,
  MAX_READ_PAGES,
  readFailure,
  sameText,
  tooMany,
  windowStart,
} from './readback-match.js';

// Reading a comment back after a lost answer, on the networks whose replies are comments under the post
// (LinkedIn and Facebook thread segments and first comments, YouTube first comments): the post's comments
// are listed, and the one with the text sent, by the account, in the probe's time window and not recorded
// for another segment, is the one that landed.

type TCommentProbe = TPublishedProbe & { replyTo: TRemoteRef };

interface TLinkedInComment {
  id?: string;
  $URN?: string;
  actor?: string;
  message?: { text?: string };
  created?: { time?: number };
}

/**
 * LinkedIn "Get Comments on Shares": `GET /rest/socialActions/{share or ugcPost URN}/comments` (the version
 * headers), `start`/`count` paging, each element with `$URN`, `id`, `actor`, `message.text` and
 * `created.time` (epoch ms). Reading needs r_organization_social for an organization's comments and
 * r_member_social (granted to select developers only) for a member's: without it LinkedIn answers 403 and
 * the outcome stays for a person to check. The order is not documented, so every page read is searched.
 * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/comments-api
 */
export async function findLinkedInComment(
  http: Got,
  headers: Record<string, string>,
  probe: TCommentProbe,
  classify: (error: unknown) => TNetworkFailure,
): Promise<TFindOutcome> {
  const postUrn = probe.replyTo.remoteId;
  const author = probe.account.externalId;
  const count = 50;
  try {
    for (let page = 0; page < MAX_READ_PAGES; page += 1) {
      const body = await http
        .get(`rest/socialActions/${encodeURIComponent(postUrn)}/comments`, {
          headers,
          searchParams: { start: page * count, count },
        })
        .json<{ elements?: TLinkedInComment[]; paging?: { total?: number } }>();
      const elements = body.elements ?? [];
      const hit = await firstUnclaimed(
        probe,
        elements.filter(
          (c) =>
            sameText(probe.text, c.message?.text) &&
            (!author || !c.actor || c.actor === author) &&
            inWindow(probe, c.created?.time),
        ),
        (c) => c.$URN,
      );
      if (hit?.$URN) {
        const commentId = hit.id ?? /,(\d+)\)$/.exec(hit.$URN)?.[1] ?? hit.$URN;
        return {
          kind: 'found',
          remoteId: hit.$URN,
          url: `https://www.linkedin.com/feed/update/${postUrn}?commentUrn=${encodeURIComponent(hit.$URN)}`,
          meta: { kind: 'comment', parent: postUrn, commentId },
        };
      }
      const total = body.paging?.total;
      if (elements.length < count || (total !== undefined && (page + 1) * count >= total)) {
        return { kind: 'absent' };
      }
    }
    return tooMany('LinkedIn', MAX_READ_PAGES * count);
  } catch (error) {
    return readFailure(error, classify, 'LinkedIn');
  }
}

/**
 * Facebook: `GET /{page-post-id}/comments` (the comments edge; "the same permissions required to view the
 * parent object", for a Page post the Page token with pages_read_engagement, and comment ids only for a
 * token that may MODERATE the Page, which the Page's own token can), fields id, message, created_time and
 * from, `order=reverse_chronological` (the edge's `order`: chronological or reverse_chronological),
 * `filter=toplevel` (the default), cursor paging, the probe's window as `since`/`until`. Only the Page's
 * own comments are taken.
 * https://developers.facebook.com/docs/graph-api/reference/object/comments
 */
export function findFacebookComment(
  http: Got,
  headers: Record<string, string>,
  probe: TCommentProbe,
  classify: (error: unknown) => TNetworkFailure,
): Promise<TFindOutcome> {
  const parent = probe.replyTo.remoteId;
  const page = probe.account.externalId;
  return findInGraphList<{ id: string; message?: string; created_time?: string; from?: { id?: string } }>({
    http,
    headers,
    network: 'Facebook',
    classify,
    path: `${encodeURIComponent(parent)}/comments`,
    fields: 'id,message,created_time,from',
    // Newest first where the comments are not ranked; the window is checked here too, should the edge
    // not apply `since`/`until`.
    params: { order: 'reverse_chronological', filter: 'toplevel' },
    probe,
    matches: (item) =>
      sameText(probe.text, item.message ?? '') &&
      (!page || !item.from?.id || item.from.id === page) &&
      inWindow(probe, item.created_time),
    found: (item) => ({
      kind: 'found',
      remoteId: item.id,
      url: `https://www.facebook.com/${parent}?comment_id=${item.id.split('_').pop() ?? item.id}`,
      meta: { kind: 'comment', parent },
    }),
  });
}

interface TYoutubeThread {
  id?: string;
  snippet?: {
    topLevelComment?: {
      id?: string;
      snippet?: {
        textOriginal?: string;
        textDisplay?: string;
        authorChannelId?: { value?: string };
        publishedAt?: string;
      };
    };
  };
}

/**
 * YouTube: `commentThreads.list` (`GET /youtube/v3/commentThreads?part=snippet&videoId=…`, 1 quota unit a
 * call, youtube.force-ssl) newest first (`order=time`, the default), 100 a page (`maxResults` at most 100),
 * `pageToken`/`nextPageToken` paging, `textFormat=plainText`; matched on `textOriginal` (returned to the
 * comment's author, which the account is) and the channel that wrote it. Stops at a thread older than the
 * window.
 * https://developers.google.com/youtube/v3/docs/commentThreads/list
 */
export async function findYoutubeComment(
  http: Got,
  headers: Record<string, string>,
  probe: TCommentProbe,
  classify: (error: unknown) => TNetworkFailure,
): Promise<TFindOutcome> {
  const videoId = probe.replyTo.remoteId;
  const channel = probe.account.externalId;
  const maxResults = 100;
  let pageToken: string | undefined;
  try {
    for (let page = 0; page < MAX_READ_PAGES; page += 1) {
      const body = await http
        .get('youtube/v3/commentThreads', {
          headers,
          searchParams: {
            part: 'snippet',
            videoId,
            order: 'time',
            textFormat: 'plainText',
            maxResults,
            ...(pageToken ? { pageToken } : {}),
          },
        })
        .json<{ items?: TYoutubeThread[]; nextPageToken?: string }>();
      const items = body.items ?? [];
      const top = (t: TYoutubeThread) => t.snippet?.topLevelComment;
      const hit = await firstUnclaimed(
        probe,
        items.filter((t) => {
          const s = top(t)?.snippet;
          const author = s?.authorChannelId?.value;
          return (
            sameText(probe.text, s?.textOriginal ?? s?.textDisplay) &&
            (!channel || !author || author === channel) &&
            inWindow(probe, s?.publishedAt)
          );
        }),
        (t) => top(t)?.id ?? t.id,
      );
      const id = hit ? (top(hit)?.id ?? hit.id) : undefined;
      if (id) {
        return {
          kind: 'found',
          remoteId: id,
          url: `https://www.youtube.com/watch?v=${encodeURIComponent(videoId)}&lc=${encodeURIComponent(id)}`,
          meta: { kind: 'comment', parent: videoId },
        };
      }
      const oldest = items.at(-1) ? top(items.at(-1) as TYoutubeThread)?.snippet?.publishedAt : undefined;
      pageToken = body.nextPageToken;
      if (!pageToken || (oldest !== undefined && Date.parse(oldest) < windowStart(probe).getTime())) {
        return { kind: 'absent' };
      }
    }
    return tooMany('YouTube', MAX_READ_PAGES * maxResults);
  } catch (error) {
    return readFailure(error, classify, 'YouTube');
  }
}
