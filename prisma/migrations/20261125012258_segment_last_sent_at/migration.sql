-- AlterTable
ALTER TABLE "segment_deliveries" ADD COLUMN     "last_sent_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- CreateIndex
CREATE INDEX "segment_deliveries_platform_remote_id_idx" ON "segment_deliveries"("platform", "remote_id");
