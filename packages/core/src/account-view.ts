import { z } from 'zod';
import { audienceOf, reconnectWouldAdd } from './network-permission-check.js';
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
  /** The scopes the network granted (space-separated, as stored); null: unknown (a token from outside). */
  grantedScopes?: string | null;
  connectedAt: Date;
  disconnectedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * What the account was granted, and what a reconnect would add (the scopes the service asks for now that
 * the grant lacks: a permission the person unticked, or one asked since the account was connected).
 * Unknown grants (a token from outside) are null with nothing to add.
 */
export function permissionsOf(account: TSocialAccountRecord): {
  permissions: string[] | null;
  reconnectToGrant: string[];
} {
  const stored = account.grantedScopes?.trim();
  if (!stored) return { permissions: null, reconnectToGrant: [] };
  const permissions = stored.split(/\s+/);
  return {
    permissions,
    reconnectToGrant: reconnectWouldAdd(
      account.platform,
      audienceOf(account.platform, account.externalId),
      permissions,
    ),
  };
}

/** Variant A's account is exactly the spec's four fields; permissions are shown by Variant B and the dashboard. */
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
  const { permissions, reconnectToGrant } = permissionsOf(account);
  return {
    id: account.id,
    platform: account.platform,
    account_name: account.accountName,
    external_id: account.externalId,
    instance_url: account.instanceUrl,
    is_active: account.isActive,
    needs_reauth: account.needsReauth,
    token_expires_at: account.tokenExpiresAt?.toISOString() ?? null,
    permissions,
    reconnect_to_grant: reconnectToGrant,
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
  /** The scopes the network granted; null when unknown (connected with a token from outside). */
  permissions: z.array(z.string()).nullable(),
  /** Scopes the service asks for that the grant lacks: reconnect to grant them. */
  reconnect_to_grant: z.array(z.string()),
  connected_at: z.iso.datetime(),
  disconnected_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
presentAccountB satisfies (account: TSocialAccountRecord) => z.output<typeof ZAccountViewB>;
