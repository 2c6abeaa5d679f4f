-- AlterTable
ALTER TABLE "queue_settings" ADD COLUMN     "last_slot_at" TIMESTAMPTZ(3),
ADD COLUMN     "next_slot_at" TIMESTAMPTZ(3);
