import type { TPlatform } from './platforms.js';

/**
 * What each call the service makes needs from the account's grant, per network, from each network's own
 * documentation (cited per row). The OAuth providers ask for exactly `requestedScopes` (the union of the
 * first choice of every row), the publisher refuses a call whose permission the account was not granted
 * before sending it (permission-guard.ts), and apps/network-sim refuses it too, as the network does.
 */

/** The calls a connector or an OAuth provider makes; `metrics` is the engagement read (`<network>-metrics.ts`). */
export type TPermissionCall =
  | 'identity'
  | 'post'
  | 'media'
  | 'reply'
  | 'delete'
  | 'read_back'
  /** Reading back a reply (Threads reads replies with threads_read_replies). */
  | 'read_back_reply'
  | 'refresh'
  | 'metrics';

/** Who the account posts as, where a network's scopes differ by it (LinkedIn members and organizations). */
export type TAudience = 'member' | 'organization';

export interface TPermissionRow {
  call: TPermissionCall;
  /** The endpoint(s) this row covers. */
  endpoint: string;
  /**
   * Every element is needed; an element that is a list is satisfied by any one of its scopes (the first
   * is the one the service asks for). Empty: no scope beyond a valid token.
   */
  needs: readonly (string | readonly string[])[];
  /** The network's page stating the requirement. */
  doc: string;
  /** Only for this audience (LinkedIn). */
  audience?: TAudience;
  /** A scope the service does not ask for (the network grants it to approved partners only). */
  notRequested?: true;
}

const X_POST = 'https://docs.x.com/x-api/posts/create-post';
const GOOGLE_SCOPES_INSERT = 'https://developers.google.com/youtube/v3/docs/videos/insert';
const META_THREADS = 'https://developers.facebook.com/docs/threads/get-started';
const LI_POSTS = 'https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api';
const YT = (s: string) => `https://www.googleapis.com/auth/${s}`;
const YT_READ = [YT('youtube.force-ssl'), YT('youtube.readonly'), YT('youtube'), YT('youtubepartner')];

export const NETWORK_PERMISSIONS: Partial<Record<TPlatform, readonly TPermissionRow[]>> = {
  twitter: [
    {
      call: 'post',
      endpoint: 'POST /2/tweets',
      needs: ['tweet.read', 'tweet.write', 'users.read'],
      doc: X_POST,
    },
    {
      call: 'identity',
      endpoint: 'GET /2/users/me',
      needs: ['tweet.read', 'users.read'],
      doc: 'https://docs.x.com/x-api/users/user-lookup-me',
    },
    {
      call: 'reply',
      endpoint: 'POST /2/tweets (reply)',
      needs: ['tweet.read', 'tweet.write', 'users.read'],
      doc: X_POST,
    },
    {
      call: 'media',
      endpoint: 'POST /2/media/upload (initialize, append, finalize), GET /2/media/upload',
      needs: ['media.write'],
      doc: 'https://docs.x.com/x-api/media/media-upload-initialize',
    },
    {
      call: 'delete',
      endpoint: 'DELETE /2/tweets/:id',
      needs: ['tweet.read', 'tweet.write', 'users.read'],
      doc: 'https://docs.x.com/x-api/posts/delete-post',
    },
    {
      call: 'read_back',
      endpoint: 'GET /2/users/:id/tweets',
      needs: ['tweet.read', 'users.read'],
      doc: 'https://docs.x.com/x-api/users/get-posts',
    },
    {
      call: 'refresh',
      endpoint: 'POST /2/oauth2/token (refresh_token)',
      needs: ['offline.access'],
      doc: 'https://docs.x.com/fundamentals/authentication/oauth-2-0/authorization-code',
    },
    {
      call: 'metrics',
      // non_public_metrics (impressions, clicks) come only with the author's own user token, which is the
      // token the service holds (https://developer.x.com/en/docs/twitter-api/metrics).
      endpoint: 'GET /2/tweets?ids=…&tweet.fields=public_metrics,non_public_metrics',
      needs: ['tweet.read', 'users.read'],
      doc: 'https://docs.x.com/x-api/posts/get-posts-by-ids',
    },
  ],
  youtube: [
    {
      call: 'identity',
      endpoint: 'GET /youtube/v3/channels?mine=true',
      needs: [YT_READ],
      doc: 'https://developers.google.com/youtube/v3/docs/channels/list',
    },
    {
      call: 'post',
      endpoint: 'POST /upload/youtube/v3/videos (resumable)',
      needs: [[YT('youtube.force-ssl'), YT('youtube.upload'), YT('youtube'), YT('youtubepartner')]],
      doc: GOOGLE_SCOPES_INSERT,
    },
    {
      // A post's first comment (commentThreads.insert takes youtube.force-ssl only), and its delete.
      call: 'reply',
      endpoint: 'POST /youtube/v3/commentThreads?part=snippet, DELETE /youtube/v3/comments',
      needs: [YT('youtube.force-ssl')],
      doc: 'https://developers.google.com/youtube/v3/docs/commentThreads/insert',
    },
    {
      // A first comment read back after a lost answer (1 quota unit a page).
      call: 'read_back_reply',
      endpoint: 'GET /youtube/v3/commentThreads?part=snippet&videoId=…&order=time',
      needs: [YT('youtube.force-ssl')],
      doc: 'https://developers.google.com/youtube/v3/docs/commentThreads/list',
    },
    {
      call: 'read_back',
      endpoint: 'GET /youtube/v3/videos?part=status (the privacy status the upload got)',
      needs: [YT_READ],
      doc: 'https://developers.google.com/youtube/v3/docs/videos/list',
    },
    {
      call: 'delete',
      endpoint: 'DELETE /youtube/v3/videos',
      needs: [[YT('youtube.force-ssl'), YT('youtube'), YT('youtubepartner')]],
      doc: 'https://developers.google.com/youtube/v3/docs/videos/delete',
    },
    {
      call: 'refresh',
      endpoint: 'POST /token (refresh_token; access_type=offline at connect)',
      needs: [],
      doc: 'https://developers.google.com/identity/protocols/oauth2/web-server#offline',
    },
    {
      call: 'metrics',
      endpoint:
        'GET /youtube/v3/videos?part=statistics (youtube.readonly or youtube.force-ssl, either grants it)',
      needs: [YT_READ],
      doc: 'https://developers.google.com/youtube/v3/docs/videos/list',
    },
  ],
  linkedin: [
    {
      call: 'identity',
      endpoint: 'GET /v2/userinfo',
      needs: ['openid', 'profile'],
      doc: 'https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2',
      audience: 'member',
    },
    {
      call: 'identity',
      endpoint: 'GET /rest/organizationAcls, GET /rest/organizations/{id}',
      needs: [['r_organization_admin', 'rw_organization_admin']],
      doc: 'https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/organization-access-control-by-role',
      audience: 'organization',
    },
    ...(['member', 'organization'] as const).flatMap((audience): TPermissionRow[] => {
      const write = audience === 'member' ? 'w_member_social' : 'w_organization_social';
      return [
        { call: 'post', endpoint: 'POST /rest/posts', needs: [write], doc: LI_POSTS, audience },
        {
          call: 'media',
          endpoint: 'POST /rest/images?action=initializeUpload, POST /rest/videos?action=initializeUpload',
          needs: [write],
          doc: 'https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api',
          audience,
        },
        {
          call: 'reply',
          endpoint: 'POST /rest/socialActions/{urn}/comments',
          needs: [write],
          doc: 'https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/comments-api',
          audience,
        },
        { call: 'delete', endpoint: 'DELETE /rest/posts/{urn}', needs: [write], doc: LI_POSTS, audience },
        {
          call: 'read_back',
          endpoint: 'GET /rest/posts?q=author',
          needs: [audience === 'member' ? 'r_member_social' : 'r_organization_social'],
          doc: LI_POSTS,
          audience,
          ...(audience === 'member' ? { notRequested: true as const } : {}),
        },
        {
          // Comments (thread segments, first comments) read back: the same read permission as posts.
          call: 'read_back_reply',
          endpoint: 'GET /rest/socialActions/{urn}/comments',
          needs: [audience === 'member' ? 'r_member_social' : 'r_organization_social'],
          doc: 'https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/comments-api',
          audience,
          ...(audience === 'member' ? { notRequested: true as const } : {}),
        },
      ];
    }),
    {
      call: 'refresh',
      endpoint: 'POST /oauth/v2/accessToken (refresh_token, programmatic refresh apps only)',
      needs: [],
      doc: 'https://learn.microsoft.com/en-us/linkedin/shared/authentication/programmatic-refresh-tokens',
    },
    {
      call: 'metrics',
      // The page's Permissions table names rw_organization_admin ("retrieve reporting data"), not
      // r_organization_social (the Posts API read).
      endpoint: 'GET /rest/organizationalEntityShareStatistics?q=organizationalEntity&shares=List(…)',
      needs: ['rw_organization_admin'],
      doc: 'https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/share-statistics',
      audience: 'organization',
    },
  ],
  tiktok: [
    {
      call: 'identity',
      endpoint: 'GET /v2/user/info/?fields=open_id,display_name (username would need user.info.profile)',
      needs: ['user.info.basic'],
      doc: 'https://developers.tiktok.com/doc/tiktok-api-v2-get-user-info',
    },
    {
      call: 'post',
      endpoint: 'POST /v2/post/publish/creator_info/query/, /video/init/, /content/init/',
      needs: ['video.publish'],
      doc: 'https://developers.tiktok.com/doc/content-posting-api-reference-direct-post',
    },
    {
      call: 'media',
      endpoint: 'PUT upload_url (authorized by the URL the init answer gave)',
      needs: ['video.publish'],
      doc: 'https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide',
    },
    {
      call: 'read_back',
      endpoint: 'POST /v2/post/publish/status/fetch/',
      needs: [['video.publish', 'video.upload']],
      doc: 'https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status',
    },
    {
      call: 'refresh',
      endpoint: 'POST /v2/oauth/token/ (refresh_token)',
      needs: [],
      doc: 'https://developers.tiktok.com/doc/oauth-user-access-token-management',
    },
    {
      call: 'metrics',
      endpoint: 'POST /v2/video/query/?fields=id,like_count,comment_count,share_count,view_count',
      needs: ['video.list'],
      doc: 'https://developers.tiktok.com/doc/tiktok-api-v2-video-query',
    },
  ],
  threads: [
    {
      call: 'identity',
      endpoint: 'GET /me?fields=id,username',
      needs: ['threads_basic'],
      doc: 'https://developers.facebook.com/docs/threads/threads-profiles',
    },
    {
      call: 'post',
      endpoint: 'POST /{user}/threads, POST /{user}/threads_publish',
      needs: ['threads_basic', 'threads_content_publish'],
      doc: META_THREADS,
    },
    {
      call: 'reply',
      endpoint: 'POST /{user}/threads (reply_to_id), POST /{user}/threads_publish',
      needs: ['threads_basic', 'threads_content_publish'],
      doc: 'https://developers.facebook.com/docs/threads/reply-management',
    },
    {
      call: 'read_back',
      endpoint: 'GET /{user}/threads',
      needs: ['threads_basic'],
      doc: 'https://developers.facebook.com/docs/threads/posts/retrieve-posts',
    },
    {
      call: 'read_back_reply',
      endpoint: 'GET /{user}/replies',
      needs: ['threads_basic', 'threads_read_replies'],
      doc: META_THREADS,
    },
    {
      call: 'delete',
      endpoint: 'DELETE /{threads-media-id}',
      needs: ['threads_basic', 'threads_delete'],
      doc: 'https://developers.facebook.com/docs/threads/posts/delete-posts',
    },
    {
      call: 'refresh',
      endpoint: 'GET /refresh_access_token (th_refresh_token)',
      needs: ['threads_basic'],
      doc: 'https://developers.facebook.com/docs/threads/get-started/long-lived-tokens/',
    },
    {
      call: 'metrics',
      endpoint: 'GET /{threads-media-id}/insights?metric=views,likes,replies,reposts,quotes,shares',
      needs: ['threads_basic', 'threads_manage_insights'],
      doc: 'https://developers.facebook.com/docs/threads/insights',
    },
  ],
  instagram: [
    {
      call: 'identity',
      endpoint: 'GET /me?fields=user_id,username',
      needs: ['instagram_business_basic'],
      doc: 'https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/get-started',
    },
    {
      call: 'post',
      endpoint: 'POST /{ig}/media, POST /{ig}/media_publish, GET /{container}?fields=status_code',
      needs: ['instagram_business_basic', 'instagram_business_content_publish'],
      doc: 'https://developers.facebook.com/docs/instagram-platform/content-publishing',
    },
    {
      // A post's first comment.
      call: 'reply',
      endpoint: 'POST /{ig-media-id}/comments',
      needs: ['instagram_business_basic', 'instagram_business_manage_comments'],
      doc: 'https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media/comments',
    },
    {
      // Reading a first comment back after a lost answer.
      call: 'read_back_reply',
      endpoint: 'GET /{ig-media-id}/comments',
      needs: ['instagram_business_basic', 'instagram_business_manage_comments'],
      doc: 'https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media/comments',
    },
    {
      call: 'read_back',
      endpoint: 'GET /{ig}/media, GET /{media}?fields=permalink',
      needs: ['instagram_business_basic'],
      doc: 'https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media',
    },
    {
      call: 'refresh',
      endpoint: 'GET /refresh_access_token (ig_refresh_token)',
      needs: ['instagram_business_basic'],
      doc: 'https://developers.facebook.com/documentation/instagram-platform/reference/refresh_access_token',
    },
    {
      call: 'metrics',
      endpoint: 'GET /{ig-media-id}/insights?metric=views,likes,comments,shares,saved',
      needs: ['instagram_business_basic', 'instagram_business_manage_insights'],
      doc: 'https://developers.facebook.com/docs/instagram-platform/reference/instagram-media/insights',
    },
  ],
  facebook: [
    {
      call: 'identity',
      endpoint: 'GET /me/accounts',
      needs: ['pages_show_list'],
      doc: 'https://developers.facebook.com/docs/pages-api/getting-started',
    },
    {
      call: 'post',
      endpoint: 'POST /{page}/feed, POST /{page}/photos',
      needs: ['pages_manage_posts', 'pages_read_engagement'],
      doc: 'https://developers.facebook.com/docs/pages-api/posts',
    },
    {
      call: 'media',
      endpoint: 'POST graph-video.facebook.com/{page}/videos (fbuploader_video_file_chunk)',
      needs: ['pages_show_list', 'pages_manage_posts', 'pages_read_engagement'],
      doc: 'https://developers.facebook.com/docs/video-api/guides/publishing',
    },
    {
      call: 'media',
      endpoint:
        'POST /{app-id}/uploads, POST|GET /upload:{session} (Resumable Upload API, with the user token kept at connect)',
      needs: [],
      doc: 'https://developers.facebook.com/docs/graph-api/guides/upload',
    },
    {
      call: 'reply',
      endpoint: 'POST /{object}/comments',
      needs: ['pages_manage_engagement', 'pages_read_engagement'],
      doc: 'https://developers.facebook.com/docs/graph-api/reference/object/comments',
    },
    {
      // "The same permissions required to view the parent object": a Page post, pages_read_engagement.
      call: 'read_back_reply',
      endpoint: 'GET /{page-post}/comments',
      needs: ['pages_read_engagement'],
      doc: 'https://developers.facebook.com/docs/graph-api/reference/object/comments',
    },
    {
      call: 'read_back',
      endpoint: 'GET /{page}/published_posts',
      needs: ['pages_read_engagement'],
      doc: 'https://developers.facebook.com/docs/graph-api/reference/page/published_posts/',
    },
    {
      call: 'delete',
      endpoint: 'DELETE /{post}',
      needs: ['pages_manage_posts', 'pages_read_engagement'],
      doc: 'https://developers.facebook.com/docs/pages-api/posts#delete-a-post',
    },
    {
      call: 'refresh',
      endpoint: 'none: Page tokens from a long-lived user token do not expire',
      needs: [],
      doc: 'https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived',
    },
    {
      call: 'metrics',
      // The reader asks the post's own counters, not /insights (which would need read_insights): the
      // reactions edge lists pages_read_engagement (and pages_show_list, already asked for identity).
      endpoint:
        'GET /{page-post-id}?fields=shares,reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0)',
      needs: ['pages_read_engagement'],
      doc: 'https://developers.facebook.com/docs/graph-api/reference/object/reactions',
    },
  ],
  mastodon: [
    {
      call: 'identity',
      endpoint: 'GET /api/v1/accounts/verify_credentials',
      needs: [['read:accounts', 'read']],
      doc: 'https://docs.joinmastodon.org/methods/accounts/#verify_credentials',
    },
    {
      call: 'post',
      endpoint: 'POST /api/v1/statuses',
      needs: [['write:statuses', 'write']],
      doc: 'https://docs.joinmastodon.org/methods/statuses/#create',
    },
    {
      call: 'media',
      endpoint: 'POST /api/v2/media, GET /api/v1/media/:id',
      needs: [['write:media', 'write']],
      doc: 'https://docs.joinmastodon.org/methods/media/#v2',
    },
    {
      call: 'reply',
      endpoint: 'POST /api/v1/statuses (in_reply_to_id)',
      needs: [['write:statuses', 'write']],
      doc: 'https://docs.joinmastodon.org/methods/statuses/#create',
    },
    {
      call: 'read_back',
      endpoint: 'GET /api/v1/accounts/:id/statuses',
      needs: [['read:statuses', 'read']],
      doc: 'https://docs.joinmastodon.org/methods/accounts/#statuses',
    },
    {
      call: 'delete',
      endpoint: 'DELETE /api/v1/statuses/:id',
      needs: [['write:statuses', 'write']],
      doc: 'https://docs.joinmastodon.org/methods/statuses/#delete',
    },
    {
      call: 'metrics',
      endpoint: 'GET /api/v1/statuses?id[]=… (4.3+), else GET /api/v1/statuses/:id',
      needs: [['read:statuses', 'read']],
      doc: 'https://docs.joinmastodon.org/methods/statuses/#index',
    },
  ],
  slack: [
    {
      call: 'identity',
      endpoint: 'auth.test, conversations.info',
      needs: [['channels:read', 'groups:read']],
      doc: 'https://docs.slack.dev/reference/methods/conversations.info',
    },
    {
      call: 'post',
      endpoint: 'chat.postMessage, chat.getPermalink',
      needs: ['chat:write'],
      doc: 'https://docs.slack.dev/reference/methods/chat.postMessage',
    },
    {
      call: 'media',
      endpoint: 'files.getUploadURLExternal, files.completeUploadExternal, files.info',
      needs: ['files:write'],
      doc: 'https://docs.slack.dev/reference/methods/files.getUploadURLExternal',
    },
    {
      call: 'read_back',
      endpoint: 'conversations.history, conversations.replies',
      needs: [['channels:history', 'groups:history']],
      doc: 'https://docs.slack.dev/reference/methods/conversations.history',
    },
    {
      call: 'delete',
      endpoint: 'chat.delete, files.delete',
      needs: ['chat:write', 'files:write'],
      doc: 'https://docs.slack.dev/reference/methods/chat.delete',
    },
    {
      call: 'metrics',
      endpoint: 'reactions.get (channel, timestamp, full)',
      needs: ['reactions:read'],
      doc: 'https://docs.slack.dev/reference/scopes/reactions.read',
    },
  ],
  // Discord bots hold channel permissions (set in the server), not OAuth scopes: named as Discord does.
  discord: [
    {
      call: 'post',
      endpoint: 'POST /channels/{id}/messages',
      needs: ['VIEW_CHANNEL', 'SEND_MESSAGES'],
      doc: 'https://discord.com/developers/docs/resources/message#create-message',
    },
    {
      call: 'media',
      endpoint: 'POST /channels/{id}/messages (files)',
      needs: ['ATTACH_FILES'],
      doc: 'https://discord.com/developers/docs/resources/message#create-message',
    },
    {
      call: 'read_back',
      endpoint: 'GET /channels/{id}/messages',
      needs: ['VIEW_CHANNEL', 'READ_MESSAGE_HISTORY'],
      doc: 'https://discord.com/developers/docs/resources/message#get-channel-messages',
    },
    {
      call: 'delete',
      endpoint: "DELETE /channels/{id}/messages/{id} (the bot's own message: no permission)",
      needs: [],
      doc: 'https://discord.com/developers/docs/resources/message#delete-message',
    },
    {
      call: 'metrics',
      endpoint: 'GET /channels/{id}/messages/{id} (its reactions)',
      needs: ['VIEW_CHANNEL', 'READ_MESSAGE_HISTORY'],
      doc: 'https://discord.com/developers/docs/resources/message#get-channel-message',
    },
  ],
  // Bluesky: an app password's session reads public posts; there is no scope to ask.
  bluesky: [
    {
      call: 'metrics',
      endpoint: 'GET /xrpc/app.bsky.feed.getPosts?uris=… (up to 25)',
      needs: [],
      doc: 'https://docs.bsky.app/docs/api/app-bsky-feed-get-posts',
    },
  ],
  // Telegram: the Bot API offers no read of a message's views or reactions, so there is no metrics row
  // (UNREADABLE_METRICS in metrics-model.ts says so per post).
};

function flat(need: string | readonly string[]): readonly string[] {
  return typeof need === 'string' ? [need] : need;
}

/** The audience of an account: LinkedIn organizations post as `urn:li:organization:…`. */
export function audienceOf(platform: TPlatform, externalId: string | null): TAudience {
  return platform === 'linkedin' && externalId?.startsWith('urn:li:organization:')
    ? 'organization'
    : 'member';
}

/** The rows that apply to an account of this audience. */
export function permissionRows(platform: TPlatform, audience: TAudience = 'member'): TPermissionRow[] {
  return (NETWORK_PERMISSIONS[platform] ?? []).filter((r) => !r.audience || r.audience === audience);
}

/** What the connect asks for: the first choice of every needed scope of every call made today. */
export function requestedScopes(platform: TPlatform, audience: TAudience = 'member'): string[] {
  const out = new Set<string>();
  for (const row of permissionRows(platform, audience)) {
    if (row.notRequested) continue;
    for (const need of row.needs) out.add(flat(need)[0] as string);
  }
  return [...out];
}

/**
 * The permissions a call needs that `granted` lacks (each named by the scope the service asks for);
 * empty when granted covers it. Scope comparison is exact, as the networks grant them.
 */
export function missingFor(
  platform: TPlatform,
  audience: TAudience,
  calls: readonly TPermissionCall[],
  granted: ReadonlySet<string>,
): string[] {
  const missing = new Set<string>();
  for (const row of permissionRows(platform, audience)) {
    if (!calls.includes(row.call)) continue;
    for (const need of row.needs) {
      const options = flat(need);
      if (!options.some((scope) => granted.has(scope))) missing.add(options[0] as string);
    }
  }
  return [...missing];
}

/** Every permission a call needs, named by the scope the service asks for (for an account whose grant is unknown). */
export function neededFor(
  platform: TPlatform,
  audience: TAudience,
  calls: readonly TPermissionCall[],
): string[] {
  return missingFor(platform, audience, calls, new Set());
}

/** Scopes a reconnect would add to what an account holds (what the service asks minus what was granted). */
export function reconnectWouldAdd(
  platform: TPlatform,
  audience: TAudience,
  granted: readonly string[],
): string[] {
  const have = new Set(granted);
  return missingFor(
    platform,
    audience,
    permissionRows(platform, audience)
      .filter((r) => !r.notRequested)
      .map((r) => r.call),
    have,
  );
}

/** Parses a token answer's `scope` (space- or comma-separated, as each network writes it). */
export function parseScopes(value: unknown): string[] | null {
  if (Array.isArray(value)) {
    const list = value.filter((s): s is string => typeof s === 'string' && s.length > 0 && s.length <= 200);
    return list.length > 0 ? [...new Set(list)].slice(0, 100) : null;
  }
  if (typeof value !== 'string' || !value.trim()) return null;
  return [...new Set(value.split(/[\s,]+/).filter((s) => s.length > 0 && s.length <= 200))].slice(0, 100);
}
