-- CreateTable
CREATE TABLE "metric_snapshots" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "post_id" UUID NOT NULL,
    "platform" "Platform" NOT NULL,
    "collected_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "impressions" BIGINT,
    "views" BIGINT,
    "likes" BIGINT,
    "reposts" BIGINT,
    "replies" BIGINT,
    "quotes" BIGINT,
    "bookmarks" BIGINT,
    "clicks" BIGINT,
    "error" TEXT,

    CONSTRAINT "metric_snapshots_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "metric_snapshots_post_id_platform_collected_at_idx" ON "metric_snapshots"("post_id", "platform", "collected_at" DESC);

-- CreateIndex
CREATE INDEX "metric_snapshots_account_id_collected_at_idx" ON "metric_snapshots"("account_id", "collected_at");

-- CreateIndex
CREATE INDEX "post_targets_social_account_id_published_at_idx" ON "post_targets"("social_account_id", "published_at");

-- CreateIndex
CREATE INDEX "post_targets_status_published_at_idx" ON "post_targets"("status", "published_at");

-- CreateIndex
CREATE INDEX "posts_account_id_published_at_idx" ON "posts"("account_id", "published_at");

-- AddForeignKey
ALTER TABLE "metric_snapshots" ADD CONSTRAINT "metric_snapshots_post_id_fkey" FOREIGN KEY ("post_id") REFERENCES "posts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
