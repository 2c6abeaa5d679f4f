import type { TPermissionRow } from './network-permission-types.js';
import type { TPlatform } from './platforms.js';

/** Permission table rows (see network-permissions.ts) for X, YouTube, LinkedIn and TikTok. */

const X_POST = 'https://docs.x.com/x-api/posts/create-post';
const GOOGLE_SCOPES_INSERT = 'https://developers.google.com/youtube/v3/docs/videos/insert';
const LI_POSTS = 'https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api';
const YT = (s: string) => `https://www.googleapis.com/auth/${s}`;
const YT_READ = [YT('youtube.force-ssl'), YT('youtube.readonly'), YT('youtube'), YT('youtubepartner')];

export const PERMISSIONS_X_YOUTUBE_LINKEDIN_TIKTOK: Partial<Record<TPlatform, readonly TPermissionRow[]>> = {
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
};
