import { z } from 'zod';
import { open, seal, sealContext } from './secret-box.js';

/**
 * What `social_accounts.credentials_encrypted` holds once opened. `token` is what a connector sends
 * (OAuth access token, bot token, Bluesky access JWT); the rest is what keeps it alive. Older rows hold
 * `{token}` only and stay valid.
 */
export const ZSocialCredentials = z.object({
  token: z.string(),
  /** OAuth refresh token (single-use at X, TikTok and Slack with rotation: the newest one is kept). */
  refreshToken: z.string().optional(),
  /** When the refresh token itself stops working, where the network says (TikTok `refresh_expires_in`). */
  refreshExpiresAt: z.string().optional(),
  /** Network-specific secrets a refresh needs (Bluesky app password, Mastodon app id). */
  extra: z.record(z.string(), z.string()).optional(),
});
export type TSocialCredentials = z.output<typeof ZSocialCredentials>;

/** The associated data of a social account's credentials: they open only in their own row. */
export function credentialsContext(socialAccountId: string): string {
  return sealContext('social_accounts', socialAccountId);
}

export function sealCredentials(
  credentials: TSocialCredentials,
  key: Buffer,
  socialAccountId: string,
): string {
  return seal(JSON.stringify(credentials), key, credentialsContext(socialAccountId));
}

/** Opens sealed credentials; a row written by an older version (`{token}`, or sealed as v1) opens too. */
export function openCredentials(sealed: string, key: Buffer, socialAccountId: string): TSocialCredentials {
  const parsed = ZSocialCredentials.safeParse(
    JSON.parse(open(sealed, key, credentialsContext(socialAccountId))),
  );
  if (!parsed.success) throw new Error('Stored credentials are not in a known shape');
  return parsed.data;
}
