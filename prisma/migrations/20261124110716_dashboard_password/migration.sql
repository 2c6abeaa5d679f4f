-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "password_hash" TEXT;
