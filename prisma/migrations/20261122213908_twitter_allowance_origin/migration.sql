-- AlterTable
ALTER TABLE "posts" ADD COLUMN     "counts_twitter_allowance" BOOLEAN NOT NULL DEFAULT false;
