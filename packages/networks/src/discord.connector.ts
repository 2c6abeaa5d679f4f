import { createHash } from 'node:crypto';
import { HTTPError } from 'got';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TNetworkConnector,
  TNetworkFailure,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient } from './http-client.js';

const DEFAULT_BASE_URL = 'https://discord.com/api/v10';
const NETWORK = 'Discord';
const MAX_EMBEDS = 10;

function classify(error: unknown): TNetworkFailure {
  const failure = classifyHttpError(error, { network: NETWORK });
  // Discord's body carries the exact (fractional) wait, the header only whole seconds.
  if (failure.kind === 'rate_limited' && error instanceof HTTPError) {
    const body = error.response.body as { retry_after?: unknown } | undefined;
    if (typeof body === 'object' && typeof body?.retry_after === 'number') {
      return { ...failure, retryAfterMs: Math.ceil(body.retry_after * 1000) };
    }
  }
  return failure;
}

/**
 * Discord dedupes messages by `nonce` (at most 25 characters) when `enforce_nonce` is set, so a
 * retried segment whose first answer was lost is not posted twice.
 */
function nonceOf(idempotencyKey: string): string {
  return createHash('sha256').update(idempotencyKey).digest('base64url').slice(0, 25);
}

function rejected(message: string): TPublishOutcome {
  return { ok: false, failure: { kind: 'rejected', message } };
}

export function createDiscordConnector(options: TConnectorOptions = {}): TNetworkConnector {
  const http = createHttpClient(options.baseUrl ?? DEFAULT_BASE_URL, options.timeoutMs);
  const headers = (account: TConnectorAccount) => ({ authorization: `Bot ${account.token}` });
  /** Channel → guild; channels do not move between guilds. */
  const guilds = new Map<string, string>();

  /** Message answers omit the guild, but jump links need it; DMs use `@me`. */
  async function guildOf(account: TConnectorAccount, channelId: string): Promise<string> {
    const known = guilds.get(channelId);
    if (known) return known;
    try {
      const channel = await http
        .get(`channels/${encodeURIComponent(channelId)}`, { headers: headers(account) })
        .json<{ guild_id?: string | null }>();
      const guild = channel.guild_id ?? '@me';
      guilds.set(channelId, guild);
      return guild;
    } catch {
      // The message is already posted: a missing link detail must not fail (and repost) it.
      return '@me';
    }
  }

  return {
    platform: 'discord',
    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account, text, media } = input;
      const channelId = account.externalId;
      if (!channelId) {
        return rejected(
          `The ${NETWORK} account has no channel id. Reconnect it with the target channel and retry.`,
        );
      }
      const images = media?.images ?? [];
      if (images.length > MAX_EMBEDS) {
        return rejected(`${NETWORK} messages show at most ${MAX_EMBEDS} images. Remove some and retry.`);
      }
      // Bots cannot embed video players; Discord unfurls a video link in the content instead.
      const video = media?.video?.url;
      const content = video ? [text, video].filter(Boolean).join('\n') : text;
      try {
        const message = await http
          .post(`channels/${encodeURIComponent(channelId)}/messages`, {
            json: {
              content,
              ...(images.length > 0
                ? { embeds: images.map((image) => ({ image: { url: image.url } })) }
                : {}),
              nonce: nonceOf(input.idempotencyKey),
              enforce_nonce: true,
            },
            headers: headers(account),
          })
          .json<{ id?: string; channel_id?: string; guild_id?: string }>();
        if (!message.id) {
          return {
            ok: false,
            failure: {
              kind: 'transient',
              outcomeUnknown: true,
              message: `${NETWORK} answered without a message id; it will be retried (the nonce prevents a duplicate).`,
            },
          };
        }
        const channel = message.channel_id ?? channelId;
        const guild = message.guild_id ?? (await guildOf(account, channel));
        return {
          ok: true,
          remoteId: message.id,
          url: `https://discord.com/channels/${guild}/${channel}/${message.id}`,
          meta: { channelId: channel },
        };
      } catch (error) {
        return { ok: false, failure: classify(error) };
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      const channelId = remote.meta?.channelId ?? account.externalId;
      if (!channelId) {
        return {
          ok: false,
          failure: { kind: 'rejected', message: `No ${NETWORK} channel is known for this message.` },
        };
      }
      try {
        await http.delete(
          `channels/${encodeURIComponent(channelId)}/messages/${encodeURIComponent(remote.remoteId)}`,
          { headers: headers(account) },
        );
        return { ok: true };
      } catch (error) {
        if (error instanceof HTTPError && error.response.statusCode === 404) return { ok: true };
        return { ok: false, failure: classify(error) };
      }
    },
  };
}
