-- AlterTable
ALTER TABLE "posts" ADD COLUMN     "counts_twitter_allowance" BOOLEAN NOT NULL DEFAULT false;

-- Posts waiting in the interval queue, or carrying a poll, can only come from Variant A or MCP: they take
-- their unit when they fire, like those created from now on. (Scheduled posts of either variant cannot be
-- told apart and keep counting as before: not at all.)
UPDATE "posts" SET "counts_twitter_allowance" = true
WHERE "status" IN ('draft', 'scheduled') AND ("queue_state" IS NOT NULL OR "poll" IS NOT NULL);
