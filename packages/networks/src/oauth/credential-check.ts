import type { TPlatform } from '@sps/core';
import got, { HTTPError } from 'got';
import { assertDeliverableUrl, guardedLookup } from '../address-guard.js';
import { createBlueskySession } from './bluesky-session.js';
import type { TConnectedIdentity } from './oauth-types.js';
import { OAuthError } from './oauth-types.js';

/** The network refused a credential: the field is named in the 422. */
export class CredentialRefusedError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'CredentialRefusedError';
  }
}

export interface TCredentialCheckOptions {
  /** `NETWORK_<NAME>_BASE_URL` (or the real host); a user-given Bluesky PDS elsewhere must be a public HTTPS address. */
  baseUrl: string | undefined;
  timeoutMs: number;
}

async function call<T>(
  url: string,
  options: {
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    json?: unknown;
    timeoutMs: number;
    userChosenHost?: boolean;
  },
  onRefusal: (status: number, body: unknown) => CredentialRefusedError,
): Promise<T> {
  if (options.userChosenHost) {
    try {
      assertDeliverableUrl(new URL(url), false);
    } catch {
      throw new CredentialRefusedError('credentials.service', 'must be a public HTTPS address');
    }
  }
  try {
    return await got(url, {
      ...(options.userChosenHost ? { dnsLookup: guardedLookup(false) as never } : {}),
      method: options.method ?? 'GET',
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.json !== undefined ? { json: options.json } : {}),
      timeout: { request: options.timeoutMs },
      retry: { limit: 0 },
      followRedirect: false,
    }).json<T>();
  } catch (error) {
    if ((error as { code?: string }).code === 'EFORBIDDENADDRESS')
      throw new CredentialRefusedError('credentials.service', 'must be a public HTTPS address');
    if (error instanceof HTTPError && error.response.statusCode < 500 && error.response.statusCode !== 429) {
      let body: unknown = error.response.body;
      try {
        body = JSON.parse(String(body));
      } catch {
        // status alone
      }
      throw onRefusal(error.response.statusCode, body);
    }
    throw new OAuthError(
      'transient',
      `The network could not check the credential (${(error as Error).message})`,
    );
  }
}

function trimBase(url: string | undefined, fallback: string): string {
  return (url ?? fallback).replace(/\/+$/, '');
}

/**
 * Bluesky: an app password opens a session (access and refresh JWTs) at the account's service
 * (https://docs.bsky.app/docs/api/com-atproto-server-create-session). That session is what is stored and
 * used: the access JWT as the token (its `exp` as the expiry), the refresh JWT to renew it, and the app
 * password sealed beside them for when the refresh JWT has ended (see bluesky-session.ts).
 */
async function checkBluesky(
  input: Record<string, string>,
  o: TCredentialCheckOptions,
): Promise<TConnectedIdentity> {
  const configured = trimBase(o.baseUrl, 'https://bsky.social');
  const service = trimBase(input.service || configured, configured);
  const userChosenHost = new URL(service).origin !== new URL(configured).origin;
  if (userChosenHost) {
    try {
      assertDeliverableUrl(new URL(service), false);
    } catch {
      throw new CredentialRefusedError('credentials.service', 'must be a public HTTPS address');
    }
  }
  let session: Awaited<ReturnType<typeof createBlueskySession>>;
  try {
    session = await createBlueskySession(
      { serviceUrl: service, identifier: input.identifier ?? '', timeoutMs: o.timeoutMs, userChosenHost },
      input.app_password ?? '',
      { service },
    );
  } catch (error) {
    if (error instanceof OAuthError && error.code === 'forbidden_address')
      throw new CredentialRefusedError('credentials.service', 'must be a public HTTPS address');
    if (error instanceof OAuthError && error.kind === 'refused')
      throw new CredentialRefusedError(
        'credentials.app_password',
        'Bluesky refused this identifier and app password',
      );
    throw error;
  }
  if (!session.did || !session.handle)
    throw new CredentialRefusedError('credentials.identifier', 'Bluesky did not return the account');
  return {
    externalId: session.did,
    accountName: session.handle,
    credentials: {
      token: session.accessToken,
      ...(session.refreshToken ? { refreshToken: session.refreshToken } : {}),
      ...(session.refreshExpiresAt ? { refreshExpiresAt: session.refreshExpiresAt.toISOString() } : {}),
      ...(session.extra ? { extra: session.extra } : {}),
    },
    tokenExpiresAt: session.expiresAt,
  };
}

/**
 * Telegram: the bot token must answer getMe and the bot must see the chat (getChat).
 * https://core.telegram.org/bots/api#getme https://core.telegram.org/bots/api#getchat
 */
async function checkTelegram(
  input: Record<string, string>,
  o: TCredentialCheckOptions,
): Promise<TConnectedIdentity> {
  const base = `${trimBase(o.baseUrl, 'https://api.telegram.org')}/bot${input.bot_token}`;
  await call(
    `${base}/getMe`,
    { method: 'POST', json: {}, timeoutMs: o.timeoutMs },
    () => new CredentialRefusedError('credentials.bot_token', 'Telegram refused this bot token'),
  );
  const chat = await call<{ result?: { id?: number | string; title?: string; username?: string } }>(
    `${base}/getChat`,
    { method: 'POST', json: { chat_id: input.chat_id }, timeoutMs: o.timeoutMs },
    () =>
      new CredentialRefusedError(
        'credentials.chat_id',
        'The bot cannot see this chat (add it to the chat first)',
      ),
  );
  const title = chat.result?.username
    ? `@${chat.result.username}`
    : (chat.result?.title ?? String(input.chat_id));
  return {
    externalId: String(chat.result?.id ?? input.chat_id),
    accountName: title,
    credentials: { token: input.bot_token ?? '' },
    tokenExpiresAt: null,
  };
}

/** Discord: the bot reads the channel it will post in. https://discord.com/developers/docs/resources/channel#get-channel */
async function checkDiscord(
  input: Record<string, string>,
  o: TCredentialCheckOptions,
): Promise<TConnectedIdentity> {
  const channel = await call<{ id?: string; name?: string }>(
    `${trimBase(o.baseUrl, 'https://discord.com/api/v10')}/channels/${encodeURIComponent(input.channel_id ?? '')}`,
    { headers: { authorization: `Bot ${input.bot_token}` }, timeoutMs: o.timeoutMs },
    (status) =>
      status === 401
        ? new CredentialRefusedError('credentials.bot_token', 'Discord refused this bot token')
        : new CredentialRefusedError('credentials.channel_id', 'The bot cannot see this channel'),
  );
  return {
    externalId: channel.id ?? input.channel_id ?? '',
    accountName: channel.name ? `#${channel.name}` : (input.channel_id ?? ''),
    credentials: { token: input.bot_token ?? '' },
    tokenExpiresAt: null,
  };
}

/**
 * Slack: auth.test for the token, conversations.info for the channel (Slack answers 200 `{ok:false}`).
 * https://api.slack.com/methods/auth.test https://api.slack.com/methods/conversations.info
 */
async function checkSlack(
  input: Record<string, string>,
  o: TCredentialCheckOptions,
): Promise<TConnectedIdentity> {
  const base = trimBase(o.baseUrl, 'https://slack.com/api');
  const headers = { authorization: `Bearer ${input.bot_token}` };
  const refused = (field: string, message: string) => () => new CredentialRefusedError(field, message);
  const auth = await call<{ ok?: boolean; error?: string }>(
    `${base}/auth.test`,
    { method: 'POST', headers, timeoutMs: o.timeoutMs },
    refused('credentials.bot_token', 'Slack refused this bot token'),
  );
  if (!auth.ok)
    throw new CredentialRefusedError(
      'credentials.bot_token',
      `Slack refused this bot token (${auth.error ?? 'error'})`,
    );
  const info = await call<{ ok?: boolean; error?: string; channel?: { id?: string; name?: string } }>(
    `${base}/conversations.info?channel=${encodeURIComponent(input.channel_id ?? '')}`,
    { headers, timeoutMs: o.timeoutMs },
    refused('credentials.channel_id', 'Slack refused this channel'),
  );
  if (!info.ok)
    throw new CredentialRefusedError(
      'credentials.channel_id',
      `Slack refused this channel (${info.error ?? 'error'})`,
    );
  return {
    externalId: info.channel?.id ?? input.channel_id ?? '',
    accountName: info.channel?.name ? `#${info.channel.name}` : (input.channel_id ?? ''),
    credentials: { token: input.bot_token ?? '' },
    tokenExpiresAt: null,
  };
}

export const CREDENTIAL_CHECKS: Partial<
  Record<
    TPlatform,
    (input: Record<string, string>, options: TCredentialCheckOptions) => Promise<TConnectedIdentity>
  >
> = {
  bluesky: checkBluesky,
  telegram: checkTelegram,
  discord: checkDiscord,
  slack: checkSlack,
};
