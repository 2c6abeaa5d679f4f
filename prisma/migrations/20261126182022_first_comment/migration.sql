-- AlterTable
ALTER TABLE "posts" ADD COLUMN     "first_comment" TEXT;
