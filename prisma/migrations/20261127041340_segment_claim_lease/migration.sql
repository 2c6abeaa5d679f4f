-- AlterTable
ALTER TABLE "segment_deliveries" ADD COLUMN     "claimed_until" TIMESTAMPTZ(3);
