import { z } from 'zod';
import { PLATFORMS, type TPlatform } from './platforms.js';
import { parseOrThrow } from './zod-issues.js';

const ZHttpUrl = z
  .string()
  .max(2000)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without user info');

/** `POST /v1/accounts/connect` (and MCP `connect_account`). */
export const ZConnectStartB = z
  .object({
    platform: z.enum(PLATFORMS),
    redirect_uri: ZHttpUrl.optional(),
    /** The server's base URL for networks that have one (Mastodon). */
    instance: ZHttpUrl.optional(),
    /** Facebook: the Page to connect (otherwise every Page the person grants). */
    page_id: z
      .string()
      .regex(/^\d{1,30}$/, 'must be a numeric Page id')
      .optional(),
    /**
     * LinkedIn: post as the member (default) or as organization pages the member administers; the
     * organization scopes are asked for only then (they need LinkedIn's Community Management approval).
     */
    target: z.enum(['member', 'organization']).optional(),
    /** LinkedIn: the organization to connect (id or `urn:li:organization:<id>`); implies `target: organization`. */
    organization_id: z
      .string()
      .regex(/^(urn:li:organization:)?\d{1,20}$/, 'must be an organization id or urn:li:organization:<id>')
      .optional(),
  })
  .superRefine((input, ctx) => {
    if (input.page_id !== undefined && input.platform !== 'facebook')
      ctx.addIssue({ code: 'custom', path: ['page_id'], message: 'is only for facebook' });
    for (const field of ['target', 'organization_id'] as const) {
      if (input[field] !== undefined && input.platform !== 'linkedin')
        ctx.addIssue({ code: 'custom', path: [field], message: 'is only for linkedin' });
    }
    if (input.target === 'member' && input.organization_id !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['organization_id'],
        message: 'cannot be combined with target member (use target organization)',
      });
  });
export type TConnectStartB = z.output<typeof ZConnectStartB>;

export function parseConnectStartB(body: unknown): TConnectStartB {
  return parseOrThrow(ZConnectStartB, body ?? {});
}

/** The answer of `POST /v1/accounts/connect`: send the user to `url` before `expires_at`. */
export const ZConnectStartedB = z.object({
  url: z.string().meta({ description: "The network's authorization page." }),
  state: z.string().meta({ description: 'Single-use; the network sends it back to the callback.' }),
  expires_at: z.iso.datetime(),
});

const secret = z.string().min(1, 'is required').max(4096);

/** Per network: the credential fields `POST /v1/accounts` takes instead of an OAuth flow. */
export const CREDENTIAL_SCHEMAS = {
  bluesky: z.object({
    identifier: z.string().min(1, 'is required').max(300),
    app_password: secret,
    service: ZHttpUrl.optional(),
  }),
  telegram: z.object({
    bot_token: z.string().regex(/^\d{1,20}:[\w-]{20,100}$/, 'is not a bot token (digits:letters)'),
    chat_id: z.union([
      z.string().regex(/^(-?\d{1,20}|@\w{4,64})$/, 'must be a chat id or @channel'),
      z.int(),
    ]),
  }),
  discord: z.object({
    bot_token: secret,
    channel_id: z.string().regex(/^\d{5,30}$/, 'must be a channel id'),
  }),
  slack: z.object({
    bot_token: secret,
    channel_id: z.string().regex(/^[CGD][A-Z0-9]{2,30}$/, 'must be a channel id'),
  }),
} as const;
export type TCredentialPlatform = keyof typeof CREDENTIAL_SCHEMAS;

export const ZConnectCredentialsB = z.object({
  platform: z.enum(PLATFORMS),
  credentials: z.record(z.string(), z.unknown()).meta({
    description:
      'bluesky {identifier, app_password, service?}; telegram {bot_token, chat_id}; discord {bot_token, channel_id}; slack {bot_token, channel_id}',
  }),
});

/** `POST /v1/accounts`: the platform, then its credential fields named `credentials.<field>`. */
export function parseConnectCredentialsB(body: unknown): {
  platform: TCredentialPlatform;
  credentials: Record<string, string>;
} {
  const { platform, credentials } = parseOrThrow(ZConnectCredentialsB, body ?? {});
  const schema = CREDENTIAL_SCHEMAS[platform as TCredentialPlatform];
  if (!schema) {
    parseOrThrow(
      z.object({
        platform: z.enum(Object.keys(CREDENTIAL_SCHEMAS) as [TPlatform, ...TPlatform[]], {
          message: `is connected through its authorization page: use POST /v1/accounts/connect`,
        }),
      }),
      { platform },
    );
  }
  const parsed = parseOrThrow(z.object({ credentials: schema as z.ZodType }), { credentials }) as {
    credentials: Record<string, unknown>;
  };
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed.credentials)) if (v !== undefined) out[k] = String(v);
  return { platform: platform as TCredentialPlatform, credentials: out };
}

/**
 * What the person chose at connect, kept with the OAuth state and handed to the network's provider: a
 * Facebook Page id, or for LinkedIn `organization` (every administered organization) or
 * `organization:<id>` (that one). Null: the default (every Page; the LinkedIn member).
 */
export function connectSelectionOf(input: TConnectStartB): string | null {
  if (input.platform === 'facebook') return input.page_id ?? null;
  if (input.platform === 'linkedin' && (input.target === 'organization' || input.organization_id)) {
    const id = input.organization_id?.replace(/^urn:li:organization:/, '');
    return id ? `organization:${id}` : 'organization';
  }
  return null;
}
