import { createHash } from 'node:crypto';
import { HTTPError } from 'got';
import { openMediaFile, type TMediaFile } from './chunked-upload.js';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TFindOutcome,
  TNetworkConnector,
  TNetworkFailure,
  TPublishedProbe,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient, type TStep } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';
import { mediaFileName } from './media-file-name.js';
import {
  firstUnclaimed,
  inWindow,
  MAX_READ_PAGES,
  readFailure,
  sameText,
  tooMany,
  windowStart,
} from './readback-match.js';

// Discord REST v10, read 2026-11-24: files go as multipart `files[n]` beside `payload_json`, whose
// `attachments[]` name each n and carry `description` (alt text, at most 1024 characters)
// (https://discord.com/developers/docs/reference#uploading-files); a message's content is at most 2000
// characters and at most 10 files (https://discord.com/developers/docs/resources/message#create-message);
// uploads are limited to 10 MiB in a server without boosts, which is what a bot can count on.
const DEFAULT_BASE_URL = 'https://discord.com/api/v10';
const NETWORK = 'Discord';
const MAX_FILES = 10;
const CONTENT_MAX = 2000;
const DESCRIPTION_MAX = 1024;
const UPLOAD_LIMIT = 10 * 1024 * 1024;

interface TFile {
  name: string;
  /** A video spooled to a temporary file (its part streams from disk), an image in memory; disposed after the send. */
  file: TMediaFile;
  description?: string;
}

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

/** Snowflakes count milliseconds since 2015 in their top bits: a time becomes an `after` bound. */
const DISCORD_EPOCH = 1_420_070_400_000n;
const snowflakeAt = (d: Date) => String((BigInt(Math.max(0, d.getTime())) - DISCORD_EPOCH) << 22n);

interface TFetchedMessage {
  id: string;
  channel_id?: string;
  content?: string;
  timestamp?: string;
  author?: { id?: string };
  attachments?: unknown[];
}

function rejected(message: string): TPublishOutcome {
  return { ok: false, failure: { kind: 'rejected', message } };
}

export function createDiscordConnector(options: TConnectorOptions = {}): TNetworkConnector {
  const http = createHttpClient(options.baseUrl ?? DEFAULT_BASE_URL, options.timeoutMs);
  const fetchMedia = options.fetchMedia ?? createMediaFetcher();
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

  /**
   * Images and the video as attachments, all within the upload limit: each image gets an equal share
   * (re-encoded to fit it), a video the whole limit; alt text is the attachment's description.
   */
  async function download(media: TPublishInput['media'], account: string): Promise<TStep<TFile[]>> {
    const items = [
      ...(media?.images ?? []).map((image) => ({ kind: 'image' as const, ...image })),
      ...(media?.video ? [{ kind: 'video' as const, url: media.video.url, altText: undefined }] : []),
    ];
    if (items.length > MAX_FILES) {
      return {
        ok: false,
        failure: {
          kind: 'rejected',
          message: `${NETWORK} messages hold at most ${MAX_FILES} files. Remove some and retry.`,
        },
      };
    }
    const share = Math.floor(UPLOAD_LIMIT / Math.max(1, items.length));
    const files: TFile[] = [];
    for (const [index, item] of items.entries()) {
      const got = await openMediaFile(fetchMedia, {
        url: item.url,
        kind: item.kind,
        network: NETWORK,
        maxBytes: share,
        account,
      });
      if (!got.ok) {
        await Promise.all(files.map((done) => done.file.dispose()));
        return got;
      }
      const description = item.altText?.slice(0, DESCRIPTION_MAX);
      files.push({
        name: mediaFileName(item.url, got.value.type, index),
        file: got.value,
        ...(description ? { description } : {}),
      });
    }
    return { ok: true, value: files };
  }

  /** The bot's own user id (`GET /users/@me`), asked once per token. */
  const botIds = new Map<string, string>();
  async function botIdOf(account: TConnectorAccount): Promise<string> {
    const known = botIds.get(account.token);
    if (known) return known;
    const me = await http.get('users/@me', { headers: headers(account) }).json<{ id: string }>();
    botIds.set(account.token, me.id);
    return me.id;
  }

  return {
    platform: 'discord',

    /**
     * The channel's messages since the write-ahead (`GET /channels/{id}/messages?after=<snowflake of the
     * window's start>&limit=100`, at most three pages), matched on the bot as author, the content and the
     * attachment count: a fetched message does not carry the nonce, and `enforce_nonce` only dedupes for a
     * few minutes, so after a longer outage this is what keeps a resend from posting twice. Needs
     * VIEW_CHANNEL and READ_MESSAGE_HISTORY.
     * https://discord.com/developers/docs/resources/message#get-channel-messages
     */
    async findPublished(probe: TPublishedProbe): Promise<TFindOutcome> {
      const { account } = probe;
      const channelId = account.externalId;
      if (!channelId) return { kind: 'cannot_tell', reason: `the ${NETWORK} account has no channel id.` };
      try {
        const botId = await botIdOf(account);
        let after = snowflakeAt(windowStart(probe));
        let read = 0;
        for (let page = 0; page < MAX_READ_PAGES; page += 1) {
          const messages = await http
            .get(`channels/${encodeURIComponent(channelId)}/messages`, {
              headers: headers(account),
              searchParams: { after, limit: 100 },
            })
            .json<TFetchedMessage[]>();
          read += messages.length;
          const hit = await firstUnclaimed(
            probe,
            messages.filter(
              (m) =>
                m.author?.id === botId &&
                sameText(probe.text, m.content) &&
                (m.attachments?.length ?? 0) === probe.mediaCount &&
                inWindow(probe, m.timestamp),
            ),
            (m) => m.id,
          );
          if (hit) {
            const channel = hit.channel_id ?? channelId;
            const guild = await guildOf(account, channel);
            return {
              kind: 'found',
              remoteId: hit.id,
              url: `https://discord.com/channels/${guild}/${channel}/${hit.id}`,
              meta: { channelId: channel },
            };
          }
          if (messages.length < 100) return { kind: 'absent' };
          after = messages.reduce((max, m) => (BigInt(m.id) > BigInt(max) ? m.id : max), after);
        }
        return tooMany(NETWORK, read);
      } catch (error) {
        return readFailure(error, classify, NETWORK);
      }
    },

    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account, text, media } = input;
      const channelId = account.externalId;
      if (!channelId) {
        return rejected(
          `The ${NETWORK} account has no channel id. Reconnect it with the target channel and retry.`,
        );
      }
      // The limit holds for the text as sent: no link or suffix is added after this check.
      const length = Array.from(text).length;
      if (length > CONTENT_MAX) {
        return rejected(
          `${NETWORK} messages hold at most ${CONTENT_MAX} characters; this one has ${length}. Shorten it and retry.`,
        );
      }
      const files = await download(media, account.id);
      if (!files.ok) return files;
      const payload = {
        content: text,
        nonce: nonceOf(input.idempotencyKey),
        enforce_nonce: true,
        ...(files.value.length > 0
          ? {
              attachments: files.value.map((file, id) => ({
                id,
                filename: file.name,
                ...(file.description ? { description: file.description } : {}),
              })),
            }
          : {}),
      };
      try {
        // Inside the try: the temporary files are removed (finally) whatever throws from here on.
        let body: FormData | undefined;
        if (files.value.length > 0) {
          body = new FormData();
          body.append('payload_json', JSON.stringify(payload));
          for (const [id, file] of files.value.entries()) {
            // https://discord.com/developers/docs/reference#uploading-files (multipart `files[n]`)
            body.append(`files[${id}]`, await file.file.blob(), file.name);
          }
        }
        const message = await http
          .post(`channels/${encodeURIComponent(channelId)}/messages`, {
            ...(body ? { body } : { json: payload }),
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
      } finally {
        await Promise.all(files.value.map((file) => file.file.dispose()));
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
