import type { TPlatform } from '@sps/core';
import type { Request } from 'express';

/**
 * The scopes each simulated endpoint needs (DESIGN invariant 12), the simulator's own reading of each
 * network's pages (cited per network), kept apart from the service's (packages/core network-permissions.ts)
 * so that a mistake there makes a test fail instead of being mirrored. The guard (scope-guard.sim.ts)
 * applies it; each network's refusal is in scope-refusal.sim.ts.
 */

/** Each element needed; a list: any one of it. */
export type TNeeds = (string | string[])[];
export interface TRule {
  method: string;
  path: RegExp;
  needs: TNeeds | ((req: Request) => TNeeds);
  /** The resource LinkedIn names in its ACCESS_DENIED message. */
  resource?: string;
}

const YT = (s: string) => `https://www.googleapis.com/auth/${s}`;
const YT_READ = [YT('youtube.readonly'), YT('youtube'), YT('youtube.force-ssl'), YT('youtubepartner')];
const V = '/v\\d+\\.\\d+';
const ID = '[^/]+';
const re = (source: string) => new RegExp(`^${source}/?$`);

/** TikTok's user fields and the scope each needs (https://developers.tiktok.com/bulletin/user-info-scope-migration). */
const TIKTOK_FIELD_SCOPES: Record<string, string> = {
  open_id: 'user.info.basic',
  union_id: 'user.info.basic',
  avatar_url: 'user.info.basic',
  avatar_url_100: 'user.info.basic',
  avatar_large_url: 'user.info.basic',
  display_name: 'user.info.basic',
  bio_description: 'user.info.profile',
  profile_deep_link: 'user.info.profile',
  is_verified: 'user.info.profile',
  username: 'user.info.profile',
  follower_count: 'user.info.stats',
  following_count: 'user.info.stats',
  likes_count: 'user.info.stats',
  video_count: 'user.info.stats',
};

const LI_WRITE = ['w_member_social', 'w_organization_social'];

export const SCOPE_RULES: Partial<Record<TPlatform, TRule[]>> = {
  // Each X v2 endpoint's "OAuth 2.0 scopes required" (https://docs.x.com/x-api/posts/create-post,
  // /delete-post, /users/user-lookup-me, /users/get-posts, /media/media-upload-initialize).
  twitter: [
    { method: 'GET', path: re('/2/users/me'), needs: ['tweet.read', 'users.read'] },
    { method: 'POST', path: re('/2/tweets'), needs: ['tweet.read', 'tweet.write', 'users.read'] },
    { method: 'DELETE', path: re(`/2/tweets/${ID}`), needs: ['tweet.read', 'tweet.write', 'users.read'] },
    { method: 'GET', path: re(`/2/users/${ID}/tweets`), needs: ['tweet.read', 'users.read'] },
    // Post lookup by ids (the metrics read): https://docs.x.com/x-api/posts/get-posts-by-ids
    { method: 'GET', path: re('/2/tweets'), needs: ['tweet.read', 'users.read'] },
    { method: '*', path: /^\/2\/media\//, needs: ['media.write'] },
  ],
  // "Authorization" of channels.list, videos.insert, videos.list and videos.delete
  // (https://developers.google.com/youtube/v3/docs/videos/delete: youtube, youtube.force-ssl, youtubepartner).
  youtube: [
    { method: 'GET', path: re('/youtube/v3/channels'), needs: [YT_READ] },
    { method: 'GET', path: re('/youtube/v3/videos'), needs: [YT_READ] },
    {
      method: '*',
      path: re('/upload/youtube/v3/videos'),
      needs: [[YT('youtube.upload'), YT('youtube'), YT('youtube.force-ssl'), YT('youtubepartner')]],
    },
    {
      method: 'DELETE',
      path: re('/youtube/v3/videos'),
      needs: [[YT('youtube'), YT('youtube.force-ssl'), YT('youtubepartner')]],
    },
    // commentThreads.insert, commentThreads.list and comments.delete: youtube.force-ssl only
    // (https://developers.google.com/youtube/v3/docs/commentThreads/insert, .../commentThreads/list).
    { method: '*', path: re('/youtube/v3/commentThreads'), needs: [YT('youtube.force-ssl')] },
    { method: 'DELETE', path: re('/youtube/v3/comments'), needs: [YT('youtube.force-ssl')] },
  ],
  // Posts API (w_member_social / w_organization_social; reading by author r_member_social or
  // r_organization_social), Images/Videos/Comments APIs, Organization Access Control (r_organization_admin).
  // https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api
  linkedin: [
    { method: 'GET', path: re('/v2/userinfo'), needs: ['openid', 'profile'], resource: 'userinfo.GET' },
    {
      method: 'POST',
      path: re('/rest/posts'),
      needs: [LI_WRITE],
      resource: 'partnerApiPostsExternal.CREATE',
    },
    {
      method: 'GET',
      path: re('/rest/posts'),
      needs: (req) => [
        String(req.query.author ?? '').startsWith('urn:li:organization:')
          ? 'r_organization_social'
          : 'r_member_social',
      ],
      resource: 'partnerApiPostsExternal.FINDER-author',
    },
    {
      method: 'DELETE',
      path: /^\/rest\/posts\//,
      needs: [LI_WRITE],
      resource: 'partnerApiPostsExternal.DELETE',
    },
    {
      method: 'POST',
      path: re('/rest/(images|videos)'),
      needs: [LI_WRITE],
      resource: 'partnerApiAssets.ACTION',
    },
    // Reading comments: r_organization_social ("retrieve organizations' comments") or r_member_social
    // (a member's, select developers only); the commented post's author is not in the path, so either.
    // https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/comments-api
    {
      method: 'GET',
      path: re('/rest/socialActions/[^/]+/comments'),
      needs: [['r_organization_social', 'r_member_social']],
      resource: 'partnerApiSocialActions.GET_ALL',
    },
    {
      method: '*',
      path: /^\/rest\/socialActions\//,
      needs: [LI_WRITE],
      resource: 'partnerApiSocialActions.CREATE',
    },
    // Share statistics: "rw_organization_admin ... retrieve reporting data"
    // (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/share-statistics).
    {
      method: 'GET',
      path: re('/rest/organizationalEntityShareStatistics'),
      needs: ['rw_organization_admin'],
      resource: 'organizationalEntityShareStatistics.FINDER-organizationalEntity',
    },
    {
      method: 'GET',
      path: /^\/rest\/organization(Acls|s\/)/,
      needs: [['r_organization_admin', 'rw_organization_admin']],
      resource: 'organizationAcls.FINDER-roleAssignee',
    },
  ],
  // Get User Info (fields by scope), Content Posting API (video.publish; status fetch video.publish or
  // video.upload). https://developers.tiktok.com/doc/content-posting-api-reference-direct-post
  tiktok: [
    {
      method: 'GET',
      path: re('/v2/user/info'),
      needs: (req) => [
        ...new Set(
          String(req.query.fields ?? '')
            .split(',')
            .map((f) => TIKTOK_FIELD_SCOPES[f.trim()])
            .filter((s): s is string => s !== undefined),
        ),
      ],
    },
    {
      method: 'POST',
      path: re('/v2/post/publish/(creator_info/query|video/init|content/init)'),
      needs: ['video.publish'],
    },
    { method: 'POST', path: re('/v2/post/publish/status/fetch'), needs: [['video.publish', 'video.upload']] },
    // Query Videos (https://developers.tiktok.com/doc/tiktok-api-v2-video-query): video.list.
    { method: 'POST', path: re('/v2/video/query'), needs: ['video.list'] },
  ],
  // Threads "Get started" permissions and Delete Posts (threads_delete); replies need threads_read_replies.
  // https://developers.facebook.com/docs/threads/get-started, .../posts/delete-posts
  threads: [
    { method: 'GET', path: re(`${V}/me`), needs: ['threads_basic'] },
    {
      method: 'POST',
      path: re(`${V}/${ID}/(threads|threads_publish)`),
      needs: ['threads_basic', 'threads_content_publish'],
    },
    {
      method: 'GET',
      path: re(`${V}/${ID}/(replies|conversation)`),
      needs: ['threads_basic', 'threads_read_replies'],
    },
    { method: 'DELETE', path: re(`${V}/${ID}`), needs: ['threads_basic', 'threads_delete'] },
    // Media insights (https://developers.facebook.com/docs/threads/insights): threads_manage_insights.
    {
      method: 'GET',
      path: re(`${V}/${ID}/insights`),
      needs: ['threads_basic', 'threads_manage_insights'],
    },
    { method: 'GET', path: new RegExp(`^${V}/`), needs: ['threads_basic'] },
  ],
  // Instagram API with Instagram Login: content publishing and media reads.
  // https://developers.facebook.com/docs/instagram-platform/content-publishing
  instagram: [
    {
      method: 'POST',
      path: re(`${V}/${ID}/(media|media_publish)`),
      needs: ['instagram_business_basic', 'instagram_business_content_publish'],
    },
    // https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media/comments
    {
      method: '*',
      path: re(`${V}/${ID}/comments`),
      needs: ['instagram_business_basic', 'instagram_business_manage_comments'],
    },
    // Media insights (https://developers.facebook.com/docs/instagram-platform/reference/instagram-media/insights).
    {
      method: 'GET',
      path: re(`${V}/${ID}/insights`),
      needs: ['instagram_business_basic', 'instagram_business_manage_insights'],
    },
    { method: 'GET', path: new RegExp(`^${V}/`), needs: ['instagram_business_basic'] },
  ],
  // Pages API: posts (pages_manage_posts + pages_read_engagement), comments as the Page
  // (pages_manage_engagement), published_posts (pages_read_engagement), /me/accounts (pages_show_list).
  // https://developers.facebook.com/docs/pages-api/posts
  facebook: [
    { method: 'GET', path: re(`${V}/me/accounts`), needs: ['pages_show_list'] },
    { method: 'GET', path: re(`${V}/me/permissions`), needs: [] },
    {
      method: 'POST',
      path: re(`${V}/${ID}/(feed|photos)`),
      needs: ['pages_manage_posts', 'pages_read_engagement'],
    },
    // Publishing a video: pages_show_list, pages_read_engagement, pages_manage_posts
    // (https://developers.facebook.com/docs/video-api/guides/publishing, "Requirements").
    {
      method: 'POST',
      path: re(`${V}/${ID}/videos`),
      needs: ['pages_show_list', 'pages_manage_posts', 'pages_read_engagement'],
    },
    // The Resumable Upload API asks a user access token and names no permission
    // (https://developers.facebook.com/docs/graph-api/guides/upload).
    { method: 'POST', path: re(`${V}/${ID}/uploads`), needs: [] },
    { method: '*', path: re(`${V}/upload:${ID}`), needs: [] },
    {
      method: 'POST',
      path: re(`${V}/${ID}/comments`),
      needs: ['pages_manage_engagement', 'pages_read_engagement'],
    },
    { method: 'GET', path: re(`${V}/${ID}/published_posts`), needs: ['pages_read_engagement'] },
    // Reading a Page post's comments: the permission to view the post
    // (https://developers.facebook.com/docs/graph-api/reference/object/comments).
    { method: 'GET', path: re(`${V}/${ID}/comments`), needs: ['pages_read_engagement'] },
    { method: 'DELETE', path: re(`${V}/${ID}`), needs: ['pages_manage_posts', 'pages_read_engagement'] },
    // A Page post's counters (`?fields=shares,reactions.summary…`): the reactions edge lists
    // pages_read_engagement (https://developers.facebook.com/docs/graph-api/reference/object/reactions).
    // Only Page posts (`<page>_<post>`); other objects read by id need nothing more here.
    {
      method: 'GET',
      path: re(`${V}/${ID}`),
      needs: (req) => (/^\/[^/]+\/[^/_]+_\d+\/?$/.test(req.path) ? ['pages_read_engagement'] : []),
    },
  ],
  // Mastodon's OAuth scopes per method (https://docs.joinmastodon.org/api/oauth-scopes/).
  mastodon: [
    { method: 'GET', path: re('/api/v1/accounts/verify_credentials'), needs: [['read:accounts', 'read']] },
    { method: 'GET', path: re(`/api/v1/accounts/${ID}/statuses`), needs: [['read:statuses', 'read']] },
    // Reading statuses (the metrics read): https://docs.joinmastodon.org/methods/statuses/#get, #index.
    { method: 'GET', path: re(`/api/v1/statuses(/${ID})?`), needs: [['read:statuses', 'read']] },
    { method: '*', path: re(`/api/v1/statuses(/${ID})?`), needs: [['write:statuses', 'write']] },
    { method: '*', path: /^\/api\/v[12]\/media/, needs: [['write:media', 'write']] },
  ],
  // reactions.get needs reactions:read (https://docs.slack.dev/reference/scopes/reactions.read).
  slack: [{ method: '*', path: re('/reactions.get'), needs: ['reactions:read'] }],
};
