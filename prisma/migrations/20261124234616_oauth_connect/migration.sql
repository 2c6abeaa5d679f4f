-- AlterTable
ALTER TABLE "social_accounts" ADD COLUMN     "credentials_version" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "reauth_notice" TEXT,
ADD COLUMN     "token_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "token_issued_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "oauth_states" (
    "state_hash" TEXT NOT NULL,
    "account_id" UUID NOT NULL,
    "platform" "Platform" NOT NULL,
    "verifier_encrypted" TEXT,
    "redirect_uri" TEXT,
    "instance_url" TEXT,
    "selection" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_states_pkey" PRIMARY KEY ("state_hash")
);

-- CreateTable
CREATE TABLE "mastodon_apps" (
    "instance_url" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "client_secret_encrypted" TEXT NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mastodon_apps_pkey" PRIMARY KEY ("instance_url")
);

-- CreateIndex
CREATE INDEX "oauth_states_expires_at_idx" ON "oauth_states"("expires_at");

-- CreateIndex
CREATE INDEX "social_accounts_token_expires_at_idx" ON "social_accounts"("token_expires_at");

-- CreateIndex
CREATE INDEX "social_accounts_reauth_notice_idx" ON "social_accounts"("reauth_notice");

-- AddForeignKey
ALTER TABLE "oauth_states" ADD CONSTRAINT "oauth_states_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
