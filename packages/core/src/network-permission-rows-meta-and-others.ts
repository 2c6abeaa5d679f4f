import type { TPermissionRow } from './network-permission-types.js';
import type { TPlatform } from './platforms.js';

/** Permission table rows (see network-permissions.ts) for Meta's networks, Mastodon, Slack, Discord and Bluesky. */

const META_THREADS = 'https://developers.facebook.com/docs/threads/get-started';

export const PERMISSIONS_META_AND_OTHERS: Partial<Record<TPlatform, readonly TPermissionRow[]>> = {
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
