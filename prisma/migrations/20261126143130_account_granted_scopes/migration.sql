-- AlterTable
ALTER TABLE "social_accounts" ADD COLUMN     "granted_scopes" TEXT;

-- Accounts connected before the grant was stored hold what the connect asked for then (issue 21): the
-- publisher checks those, and `permissions` shows what a reconnect would add. Mastodon, Bluesky and the
-- bot-token networks stay unknown (NULL): the network decides, and its refusal names the permission.
UPDATE "social_accounts" SET "granted_scopes" = 'tweet.read tweet.write users.read media.write offline.access'
  WHERE "platform" = 'twitter' AND "granted_scopes" IS NULL;
UPDATE "social_accounts" SET "granted_scopes" = 'https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly'
  WHERE "platform" = 'youtube' AND "granted_scopes" IS NULL;
UPDATE "social_accounts" SET "granted_scopes" = 'openid profile w_member_social w_organization_social r_organization_social r_organization_admin'
  WHERE "platform" = 'linkedin' AND "external_id" LIKE 'urn:li:organization:%' AND "granted_scopes" IS NULL;
UPDATE "social_accounts" SET "granted_scopes" = 'openid profile w_member_social'
  WHERE "platform" = 'linkedin' AND "granted_scopes" IS NULL;
UPDATE "social_accounts" SET "granted_scopes" = 'user.info.basic video.publish'
  WHERE "platform" = 'tiktok' AND "granted_scopes" IS NULL;
UPDATE "social_accounts" SET "granted_scopes" = 'threads_basic threads_content_publish'
  WHERE "platform" = 'threads' AND "granted_scopes" IS NULL;
UPDATE "social_accounts" SET "granted_scopes" = 'instagram_business_basic instagram_business_content_publish'
  WHERE "platform" = 'instagram' AND "granted_scopes" IS NULL;
UPDATE "social_accounts" SET "granted_scopes" = 'pages_show_list pages_manage_posts pages_read_engagement'
  WHERE "platform" = 'facebook' AND "granted_scopes" IS NULL;
