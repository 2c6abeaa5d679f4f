import { HTTPError } from 'got';
import { openMediaFile, type TMediaFile } from './chunked-upload.js';
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
import { classifyHttpError, createHttpClient, type TStep } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';

// Telegram Bot API, read 2026-11-24 (https://core.telegram.org/bots/api): sendMessage text 1-4096
// characters; sendPhoto / sendVideo / sendMediaGroup captions 0-1024; albums of 2-10 photos and videos;
// files uploaded as multipart/form-data up to 10 MB for photos and 50 MB for other files (a photo's
// width + height at most 10000), album items referring to their parts as `attach://<name>`
// (https://core.telegram.org/bots/api#sending-files). Lengths are counted in UTF-16 code units here,
// Telegram's own unit for entities, which is never less than the characters it counts.
const DEFAULT_BASE_URL = 'https://api.telegram.org';
const NETWORK = 'Telegram';
const CAPTION_MAX = 1024;
const TEXT_MAX = 4096;
const MEDIA_GROUP_MAX = 10;
/** "A message can only be deleted if it was sent less than 48 hours ago." https://core.telegram.org/bots/api#deletemessage */
const DELETE_WINDOW_MS = 48 * 3_600_000;
const PHOTO_MAX_BYTES = 10 * 1024 * 1024;
const FILE_MAX_BYTES = 50 * 1024 * 1024;

/** Bot API answers: `{ ok: true, result }` or `{ ok: false, error_code, description, parameters }`. */
interface TBotAnswer<T> {
  ok?: boolean;
  result?: T;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

interface TMessage {
  message_id: number;
  /** Unix time the message was sent. */
  date?: number;
  chat: { id: number; type?: string; username?: string };
}

function answerOf(error: unknown): TBotAnswer<unknown> | undefined {
  if (!(error instanceof HTTPError)) return undefined;
  const body = error.response.body;
  return typeof body === 'object' && body !== null ? (body as TBotAnswer<unknown>) : undefined;
}

function classify(error: unknown): TNetworkFailure {
  const failure = classifyHttpError(error, { network: NETWORK });
  // Telegram states the wait in the body, not in a Retry-After header.
  const retryAfter = answerOf(error)?.parameters?.retry_after;
  if (failure.kind === 'rate_limited' && typeof retryAfter === 'number') {
    return {
      ...failure,
      retryAfterMs: retryAfter * 1000,
      message: `${NETWORK} rate limit reached. The post will be retried in ${retryAfter} s.`,
    };
  }
  return failure;
}

/** Public chats link by username; private supergroups and channels (`-100…` ids) by `t.me/c/` for members. */
function messageUrl(message: TMessage): string {
  const { chat, message_id: id } = message;
  if (chat.username) return `https://t.me/${chat.username}/${id}`;
  const chatId = String(chat.id);
  return chatId.startsWith('-100') ? `https://t.me/c/${chatId.slice(4)}/${id}` : '';
}

/** A file to send: a video spooled to a temporary file (its part streams from disk), an image in memory. */
type TItem = { type: 'photo' | 'video'; name: string; file: TMediaFile };

/** Saved once the media messages exist, so a retry sends only the text that follows them. */
type TProgress = { mediaIds: string; chatId: string };

export function createTelegramConnector(options: TConnectorOptions = {}): TNetworkConnector {
  const http = createHttpClient(options.baseUrl ?? DEFAULT_BASE_URL, options.timeoutMs);
  const fetchMedia = options.fetchMedia ?? createMediaFetcher();

  /** The bot token is part of the path; got's errors never carry the URL into our failure messages. */
  async function call<T>(
    account: TConnectorAccount,
    method: string,
    payload: Record<string, unknown>,
  ): Promise<T> {
    const body = await http.post(`bot${account.token}/${method}`, { json: payload }).json<TBotAnswer<T>>();
    if (!body.ok || body.result === undefined) {
      throw new Error(`${NETWORK} answered ${method} without a result`);
    }
    return body.result;
  }

  /** A multipart call: fields as strings, files as parts. */
  async function upload<T>(
    account: TConnectorAccount,
    method: string,
    fields: Record<string, string>,
    parts: { field: string; item: TItem }[],
  ): Promise<T> {
    const form = new FormData();
    for (const [key, value] of Object.entries(fields)) form.append(key, value);
    for (const { field, item } of parts) {
      form.append(field, await item.file.blob(), item.name);
    }
    const body = await http.post(`bot${account.token}/${method}`, { body: form }).json<TBotAnswer<T>>();
    if (!body.ok || body.result === undefined) {
      throw new Error(`${NETWORK} answered ${method} without a result`);
    }
    return body.result;
  }

  async function download(input: TPublishInput): Promise<TStep<TItem[]>> {
    const { media } = input;
    const wanted = [
      ...(media?.images ?? []).map((image) => ({ kind: 'image' as const, url: image.url })),
      ...(media?.video ? [{ kind: 'video' as const, url: media.video.url }] : []),
    ];
    const items: TItem[] = [];
    for (const [index, item] of wanted.entries()) {
      const got = await openMediaFile(fetchMedia, {
        url: item.url,
        kind: item.kind,
        network: NETWORK,
        maxBytes: item.kind === 'image' ? PHOTO_MAX_BYTES : FILE_MAX_BYTES,
        account: input.account.id,
      });
      if (!got.ok) {
        await Promise.all(items.map((done) => done.file.dispose()));
        return got;
      }
      items.push({ type: item.kind === 'image' ? 'photo' : 'video', name: `file${index}`, file: got.value });
    }
    return { ok: true, value: items };
  }

  /** The media as one message (sendPhoto, sendVideo) or an album (sendMediaGroup), captioned when given. */
  async function sendMedia(
    account: TConnectorAccount,
    chatId: string,
    items: TItem[],
    caption: string,
  ): Promise<TMessage[]> {
    const captioned: Record<string, string> = caption ? { caption } : {};
    const [first] = items;
    if (items.length === 1 && first) {
      const method = first.type === 'photo' ? 'sendPhoto' : 'sendVideo';
      // A single file goes in the method's own field (photo, video) as a multipart part.
      const fields: Record<string, string> = { chat_id: chatId, ...captioned };
      return [await upload<TMessage>(account, method, fields, [{ field: first.type, item: first }])];
    }
    // The caption of the first item is shown as the album's caption.
    const group = items.map((item, index) => ({
      type: item.type,
      media: `attach://${item.name}`,
      ...(index === 0 ? captioned : {}),
    }));
    return upload<TMessage[]>(
      account,
      'sendMediaGroup',
      { chat_id: chatId, media: JSON.stringify(group) },
      items.map((item) => ({ field: item.name, item })),
    );
  }

  /**
   * Text alone is one sendMessage. With media, text within the caption limit is the caption; a longer
   * text follows the media as its own message replying to them (README, Decisions), so neither is cut.
   */
  async function send(
    account: TConnectorAccount,
    chatId: string,
    input: TPublishInput,
  ): Promise<TStep<TMessage[]>> {
    const { text } = input;
    const count = (input.media?.images.length ?? 0) + (input.media?.video ? 1 : 0);
    const saved = input.progress?.saved as TProgress | null | undefined;
    if (count === 0)
      return { ok: true, value: [await call<TMessage>(account, 'sendMessage', { chat_id: chatId, text })] };
    const fits = text.length <= CAPTION_MAX;
    let head: TMessage[];
    if (saved?.mediaIds && !fits) {
      head = saved.mediaIds
        .split(',')
        .map((id) => ({ message_id: Number(id), chat: { id: Number(saved.chatId) } }));
    } else {
      const items = await download(input);
      if (!items.ok) return items;
      try {
        // Multipart upload (https://core.telegram.org/bots/api#sending-files); temporary files go afterwards.
        head = await sendMedia(account, chatId, items.value, fits ? text : '');
      } finally {
        await Promise.all(items.value.map((item) => item.file.dispose()));
      }
      if (fits) return { ok: true, value: head };
      const first = head[0];
      if (first) {
        await input.progress?.save({
          mediaIds: head.map((m) => m.message_id).join(','),
          chatId: String(first.chat.id),
        } satisfies TProgress);
      }
    }
    const first = head[0];
    const message = await call<TMessage>(account, 'sendMessage', {
      chat_id: chatId,
      text,
      ...(first
        ? { reply_parameters: { message_id: first.message_id, allow_sending_without_reply: true } }
        : {}),
    });
    return { ok: true, value: [...head, message] };
  }

  return {
    platform: 'telegram',
    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account, media } = input;
      const chatId = account.externalId;
      if (!chatId) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `The ${NETWORK} account has no chat id. Reconnect it with the target chat and retry.`,
          },
        };
      }
      const count = (media?.images.length ?? 0) + (media?.video ? 1 : 0);
      if (input.text.length > TEXT_MAX) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${NETWORK} messages hold at most ${TEXT_MAX} characters; this one has ${input.text.length}. Shorten it and retry.`,
          },
        };
      }
      if (count > MEDIA_GROUP_MAX) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${NETWORK} albums hold at most ${MEDIA_GROUP_MAX} items (got ${count}). Remove some media and retry.`,
          },
        };
      }
      try {
        const sent = await send(account, chatId, input);
        if (!sent.ok) return sent;
        const messages = sent.value;
        const head = messages[0];
        if (!head) {
          return {
            ok: false,
            failure: {
              kind: 'transient',
              outcomeUnknown: true,
              message: `${NETWORK} answered without a message; check the chat before retrying.`,
            },
          };
        }
        return {
          ok: true,
          remoteId: String(head.message_id),
          url: messageUrl(head),
          meta: {
            chatId: String(head.chat.id),
            // When Telegram says it was sent: a bot may delete it only within 48 hours of this.
            ...(typeof head.date === 'number' ? { sentAt: String(head.date) } : {}),
            ...(messages.length > 1 ? { messageIds: messages.map((m) => m.message_id).join(',') } : {}),
          },
        };
      } catch (error) {
        return { ok: false, failure: classify(error) };
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      const chatId = remote.meta?.chatId ?? account.externalId;
      if (!chatId) {
        return {
          ok: false,
          failure: { kind: 'rejected', message: `No ${NETWORK} chat is known for this message.` },
        };
      }
      const sentAt = Number(remote.meta?.sentAt);
      if (Number.isFinite(sentAt) && sentAt > 0 && Date.now() - sentAt * 1000 >= DELETE_WINDOW_MS) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${NETWORK} lets a bot delete a message only within 48 hours of sending it; this one was sent ${new Date(sentAt * 1000).toISOString()}. Delete it in Telegram itself.`,
          },
        };
      }
      const ids = (remote.meta?.messageIds ?? remote.remoteId).split(',').map(Number);
      try {
        if (ids.length > 1) {
          // An album is one message per item; deleteMessages removes them together.
          await call<boolean>(account, 'deleteMessages', { chat_id: chatId, message_ids: ids });
        } else {
          await call<boolean>(account, 'deleteMessage', { chat_id: chatId, message_id: ids[0] });
        }
        return { ok: true };
      } catch (error) {
        // An already deleted message is a 400 here; Telegram's 404 means a malformed bot token, not a gone message.
        const answer = answerOf(error);
        if (answer?.error_code === 400 && /message to delete not found/i.test(answer.description ?? '')) {
          return { ok: true };
        }
        return { ok: false, failure: classify(error) };
      }
    },
  };
}
