-- AlterTable
ALTER TABLE "mastodon_apps" DROP CONSTRAINT "mastodon_apps_pkey",
ADD CONSTRAINT "mastodon_apps_pkey" PRIMARY KEY ("instance_url", "redirect_uri");
