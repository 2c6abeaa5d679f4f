import type { TPlatform } from '@sps/core';
import { assertDeliverableUrl, guardedLookup } from '@sps/safe-fetch';
import got, { HTTPError } from 'got';
import { z } from 'zod';
import { answerBound } from '../http-client.js';
import { parseAnswer, ZNetworkId, ZNetworkName } from './answers.js';
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

/** The most of a credential check's answer that is read (a chat, a channel, an identity: a few kilobytes). */
const CHECK_ANSWER_MAX_BYTES = 256 * 1024;
const bounded = got.extend({ handlers: [answerBound(CHECK_ANSWER_MAX_BYTES)] });

interface TCheckRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  json?: unknown;
  timeoutMs: number;
  /** The caller named the host: it must be a public address, checked on the URL and again at connect. */
  userChosenHost?: boolean;
}

/**
 * One call of a credential check. Its answer is parsed with `schema` (type and length of every field
 * used): an answer that does not fit refuses the credential, naming `field`, rather than reaching the store.
 */
async function call<S extends z.ZodType>(
  url: string,
  options: TCheckRequest,
  answer: { schema: S; field: string; network: string },
  onRefusal: (status: number, body: unknown) => CredentialRefusedError,
): Promise<z.output<S>> {
  const body = await fetchJson(url, options, onRefusal);
  return parseAnswer(
    answer.schema,
    body,
    (problem) =>
      new CredentialRefusedError(
        answer.field,
        `${answer.network} answered in a way that cannot be used (${problem})`,
      ),
  );
}

async function fetchJson(
  url: string,
  options: TCheckRequest,
  onRefusal: (status: number, body: unknown) => CredentialRefusedError,
): Promise<unknown> {
  if (options.userChosenHost) {
    try {
      assertDeliverableUrl(new URL(url), false);
    } catch {
      throw new CredentialRefusedError('credentials.service', 'must be a public HTTPS address');
    }
  }
  try {
    return await bounded(url, {
      ...(options.userChosenHost ? { dnsLookup: guardedLookup(false) as never } : {}),
      method: options.method ?? 'GET',
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.json !== undefined ? { json: options.json } : {}),
      timeout: { request: options.timeoutMs },
      retry: { limit: 0 },
      followRedirect: false,
    }).json<unknown>();
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

// The fields each check uses, as the networks document them.
/** https://core.telegram.org/bots/api#getme (`{ok, result: User}`) */
const ZTelegramMe = z.object({ result: z.object({ id: ZNetworkId }).loose() }).loose();
/** https://core.telegram.org/bots/api#chat: id, and title (groups, channels) or username. */
const ZTelegramChat = z
  .object({
    result: z
      .object({
        id: z.union([z.number().int().safe().transform(String), z.string().regex(/^-?\d{1,20}$/)]),
        title: ZNetworkName.optional(),
        username: ZNetworkName.optional(),
      })
      .loose(),
  })
  .loose();
/** https://discord.com/developers/docs/resources/channel#channel-object (a snowflake id, a name for guild channels). */
const ZDiscordChannel = z.object({ id: ZNetworkId, name: ZNetworkName.nullish() }).loose();
/** Slack answers 200 with `{ok, error}` (https://api.slack.com/web#responses). */
const ZSlackAnswer = z.object({ ok: z.boolean(), error: z.string().max(200).optional() }).loose();
/** https://api.slack.com/methods/conversations.info: the channel's id and name. */
const ZSlackChannelInfo = ZSlackAnswer.extend({
  channel: z.object({ id: ZNetworkId, name: ZNetworkName.optional() }).loose().optional(),
});

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
    // The server answered, but not with a session this service can store (a handle that is not a string…).
    if (error instanceof OAuthError && error.code === 'bad_answer')
      throw new CredentialRefusedError(
        input.service ? 'credentials.service' : 'credentials.identifier',
        error.message,
      );
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
    permissions: null,
  };
}

/** A bot-token account (Telegram, Discord, Slack): the token is stored as given and does not expire. */
function botIdentity(
  externalId: string,
  accountName: string,
  input: Record<string, string>,
): TConnectedIdentity {
  return {
    externalId,
    accountName,
    credentials: { token: input.bot_token ?? '' },
    tokenExpiresAt: null,
    permissions: null,
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
    { schema: ZTelegramMe, field: 'credentials.bot_token', network: 'Telegram' },
    () => new CredentialRefusedError('credentials.bot_token', 'Telegram refused this bot token'),
  );
  const chat = await call(
    `${base}/getChat`,
    { method: 'POST', json: { chat_id: input.chat_id }, timeoutMs: o.timeoutMs },
    { schema: ZTelegramChat, field: 'credentials.chat_id', network: 'Telegram' },
    () =>
      new CredentialRefusedError(
        'credentials.chat_id',
        'The bot cannot see this chat (add it to the chat first)',
      ),
  );
  const title = chat.result.username
    ? `@${chat.result.username}`
    : (chat.result.title ?? String(input.chat_id));
  return botIdentity(chat.result.id, title, input);
}

/** Discord: the bot reads the channel it will post in. https://discord.com/developers/docs/resources/channel#get-channel */
async function checkDiscord(
  input: Record<string, string>,
  o: TCredentialCheckOptions,
): Promise<TConnectedIdentity> {
  const channel = await call(
    `${trimBase(o.baseUrl, 'https://discord.com/api/v10')}/channels/${encodeURIComponent(input.channel_id ?? '')}`,
    { headers: { authorization: `Bot ${input.bot_token}` }, timeoutMs: o.timeoutMs },
    { schema: ZDiscordChannel, field: 'credentials.channel_id', network: 'Discord' },
    (status) =>
      status === 401
        ? new CredentialRefusedError('credentials.bot_token', 'Discord refused this bot token')
        : new CredentialRefusedError('credentials.channel_id', 'The bot cannot see this channel'),
  );
  return botIdentity(channel.id, channel.name ? `#${channel.name}` : channel.id, input);
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
  const auth = await call(
    `${base}/auth.test`,
    { method: 'POST', headers, timeoutMs: o.timeoutMs },
    { schema: ZSlackAnswer, field: 'credentials.bot_token', network: 'Slack' },
    refused('credentials.bot_token', 'Slack refused this bot token'),
  );
  if (!auth.ok)
    throw new CredentialRefusedError(
      'credentials.bot_token',
      `Slack refused this bot token (${auth.error ?? 'error'})`,
    );
  const info = await call(
    `${base}/conversations.info?channel=${encodeURIComponent(input.channel_id ?? '')}`,
    { headers, timeoutMs: o.timeoutMs },
    { schema: ZSlackChannelInfo, field: 'credentials.channel_id', network: 'Slack' },
    refused('credentials.channel_id', 'Slack refused this channel'),
  );
  if (!info.ok)
    throw new CredentialRefusedError(
      'credentials.channel_id',
      `Slack refused this channel (${info.error ?? 'error'})`,
    );
  if (!info.channel)
    throw new CredentialRefusedError('credentials.channel_id', 'Slack answered without the channel');
  return botIdentity(info.channel.id, info.channel.name ? `#${info.channel.name}` : info.channel.id, input);
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
