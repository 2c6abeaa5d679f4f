-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "session_generation" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "oauth_states" ADD COLUMN     "session_hash" TEXT;
