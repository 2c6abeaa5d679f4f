import { z } from 'zod';
import { PLATFORMS, type TPlatform } from './platforms.js';

/** A connected social account as presenters read it (credentials never leave the repository). */
export interface TSocialAccountRecord {
  id: string;
  accountId: string;
  platform: TPlatform;
  accountName: string;
  externalId: string | null;
  instanceUrl: string | null;
  isActive: boolean;
  needsReauth: boolean;
  /** When the access token expires, where known. */
  tokenExpiresAt: Date | null;
  connectedAt: Date;
  disconnectedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function presentAccountA(account: TSocialAccountRecord) {
  return {
    id: account.id,
    platform: account.platform,
    accountName: account.accountName,
    needsReauth: account.needsReauth,
  };
}

/** Variant B's account; also the `data.account` of account events. */
export function presentAccountB(account: TSocialAccountRecord) {
  return {
    id: account.id,
    platform: account.platform,
    account_name: account.accountName,
    external_id: account.externalId,
    instance_url: account.instanceUrl,
    is_active: account.isActive,
    needs_reauth: account.needsReauth,
    token_expires_at: account.tokenExpiresAt?.toISOString() ?? null,
    connected_at: account.connectedAt.toISOString(),
    disconnected_at: account.disconnectedAt?.toISOString() ?? null,
    created_at: account.createdAt.toISOString(),
    updated_at: account.updatedAt.toISOString(),
  };
}

// Response schemas (OpenAPI): the shapes the presenters above return, checked against them at compile time.

export const ZAccountViewA = z.object({
  id: z.string(),
  platform: z.enum(PLATFORMS),
  accountName: z.string(),
  needsReauth: z.boolean(),
});
presentAccountA satisfies (account: TSocialAccountRecord) => z.output<typeof ZAccountViewA>;

export const ZAccountViewB = z.object({
  id: z.string(),
  platform: z.enum(PLATFORMS),
  account_name: z.string(),
  external_id: z.string().nullable(),
  instance_url: z.string().nullable(),
  is_active: z.boolean(),
  needs_reauth: z.boolean(),
  token_expires_at: z.iso.datetime().nullable(),
  connected_at: z.iso.datetime(),
  disconnected_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
presentAccountB satisfies (account: TSocialAccountRecord) => z.output<typeof ZAccountViewB>;
