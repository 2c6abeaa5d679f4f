-- AlterTable
ALTER TABLE "posts" ADD COLUMN     "wait_until" TIMESTAMPTZ(3);
