import type { Request, Response, Router } from 'express';
import { fileOf, readForm } from './multipart.sim.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';
import { codePoints } from './text-limits.sim.js';

// Discord REST v10, read 2026-11-24: messages take files as multipart `files[n]` with `payload_json`,
// `attachments[].id` naming n and `description` (alt text, at most 1024 characters); content at most 2000
// characters; uploads at most 10 MiB in a server without boosts (https://discord.com/developers/docs/reference#uploading-files,
// https://discord.com/developers/docs/resources/message#create-message).
export const DISCORD_SIM_UPLOAD_LIMIT = 10 * 1024 * 1024;
const DISCORD_CONTENT_MAX = 2000;

/** The guild every simulated channel belongs to, except `dm-*` channels (direct messages). */
const DISCORD_SIM_GUILD_ID = '900000000000000001';
/** The bot user every simulated bot token speaks for. */
const SIM_BOT = { id: '900000000000000099', username: 'sps-bot', bot: true };
/** Snowflakes count milliseconds from the first second of 2015. https://discord.com/developers/docs/reference#snowflakes */
const DISCORD_EPOCH = 1_420_070_400_000n;
let increment = 0n;
function snowflake(ms = Date.now()): string {
  increment = (increment + 1n) % 4096n;
  return String(((BigInt(ms) - DISCORD_EPOCH) << 22n) | (1n << 17n) | increment);
}

/** Discord errors: `{ message, code }` (JSON error codes; 0 for general errors). */
function discordError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ message, code });
}

const renderDiscordError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      discordError(res, 401, 0, '401: Unauthorized');
      return;
    case 'rate_limited': {
      const seconds = fault.retryAfterSeconds ?? 1;
      res
        .status(429)
        .set({ 'Retry-After': String(seconds), 'X-RateLimit-Scope': 'user' })
        .json({ message: 'You are being rate limited.', retry_after: seconds, global: false });
      return;
    }
    case 'rejected':
      discordError(res, 400, 50035, 'Invalid Form Body');
      return;
    default:
      discordError(res, 503, 0, 'upstream connect error or disconnect/reset before headers');
  }
};

interface TCreateMessage {
  content?: string;
  embeds?: { image?: { url?: string } }[];
  attachments?: { id?: number | string; filename?: string; description?: string }[];
  nonce?: string;
  enforce_nonce?: boolean;
}

type TAttached = { id: string; filename: string; description?: string; content_type: string; size: number };

/** JSON body, or multipart with `payload_json` and `files[n]`; a string is the refusal. */
async function readMessage(
  req: Request,
  sim: SimState,
): Promise<{ body: TCreateMessage; files: TAttached[] } | string> {
  const form = await readForm(req);
  if (!form) return { body: (req.body ?? {}) as TCreateMessage, files: [] };
  let body: TCreateMessage;
  try {
    body = JSON.parse(String(form.get('payload_json') ?? '{}')) as TCreateMessage;
  } catch {
    return 'Invalid Form Body: payload_json is not JSON';
  }
  const files: TAttached[] = [];
  let total = 0;
  for (const [key, value] of form.entries()) {
    const index = /^files\[(\d+)\]$/.exec(key)?.[1];
    const file = index === undefined ? null : await fileOf(value);
    if (index === undefined || !file) continue;
    const meta = (body.attachments ?? []).find((a) => String(a.id) === index);
    if (!meta) return `Invalid Form Body: attachments has no entry for files[${index}]`;
    if ((meta.description ?? '').length > 1024)
      return 'Invalid Form Body: description must be 1024 or fewer in length.';
    total += file.bytes.length;
    sim.recordUpload('discord', file.name, file.bytes);
    files.push({
      id: index,
      filename: meta.filename ?? file.name,
      ...(meta.description ? { description: meta.description } : {}),
      content_type: file.type,
      size: file.bytes.length,
    });
  }
  if (total > DISCORD_SIM_UPLOAD_LIMIT) return 'too_large';
  return { body, files };
}

/**
 * Discord REST v10 with a bot token: create message (with nonce dedupe), get channel (for the
 * guild id in jump links) and delete message. Channels named `dm-*` behave as direct messages.
 */
export function registerDiscordSim(router: Router, sim: SimState): void {
  const channelOf = new Map<string, string>();

  router.use(networkMiddleware(sim, 'discord', renderDiscordError));
  router.use((req, res, next) => {
    const header = req.headers.authorization ?? '';
    if (header.startsWith('Bot ') && header.length > 4) return next();
    discordError(res, 401, 0, '401: Unauthorized');
  });

  const messageBody = (id: string, channelId: string, body: TCreateMessage, files: TAttached[] = []) => ({
    id,
    type: 0,
    channel_id: channelId,
    content: body.content ?? '',
    embeds: body.embeds ?? [],
    attachments: files.map((f) => ({
      ...f,
      id: `${id}${f.id}`,
      url: `https://cdn.discordapp.com/attachments/${channelId}/${id}${f.id}/${f.filename}`,
    })),
    author: SIM_BOT,
    timestamp: new Date().toISOString(),
    nonce: body.nonce,
  });

  router.post('/channels/:channelId/messages', async (req, res) => {
    const channelId = req.params.channelId;
    const read = await readMessage(req, sim);
    if (read === 'too_large') {
      discordError(res, 413, 40005, 'Request entity too large');
      return;
    }
    if (typeof read === 'string') {
      discordError(res, 400, 50035, read);
      return;
    }
    const { body, files } = read;
    // A channel where the bot lacks SEND_MESSAGES (a channel id starting `nosend-`), or ATTACH_FILES for a
    // message with files (`noattach-`): 403 50013 Missing Permissions.
    // https://discord.com/developers/docs/topics/opcodes-and-status-codes#json
    if (channelId.startsWith('nosend-') || (files.length > 0 && channelId.startsWith('noattach-'))) {
      discordError(res, 403, 50013, 'Missing Permissions');
      return;
    }
    if (!body.content && !(body.embeds ?? []).length && files.length === 0) {
      discordError(res, 400, 50006, 'Cannot send an empty message');
      return;
    }
    // Discord counts characters (code points here; its page gives no other unit) and names the field in
    // `errors`, as client libraries quote it ("In content: Must be 2000 or fewer in length.").
    if (typeof body.content === 'string' && codePoints(body.content) > DISCORD_CONTENT_MAX) {
      res.status(400).json({
        message: 'Invalid Form Body',
        code: 50035,
        errors: {
          content: {
            _errors: [
              { code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${DISCORD_CONTENT_MAX} or fewer in length.` },
            ],
          },
        },
      });
      return;
    }
    if (body.nonce && body.enforce_nonce) {
      const existing = sim.findByIdempotencyKey('discord', body.nonce);
      if (existing && channelOf.get(existing.remoteId) === channelId) {
        res.json(messageBody(existing.remoteId, channelId, body));
        return;
      }
    }
    const id = snowflake();
    channelOf.set(id, channelId);
    sim.addPost({
      platform: 'discord',
      remoteId: id,
      text: body.content ?? '',
      replyTo: null,
      media: files.length > 0 ? files : (body.embeds ?? []),
      idempotencyKey: body.enforce_nonce ? (body.nonce ?? null) : null,
      author: channelId,
    });
    answerOrHang(res, () => res.json(messageBody(id, channelId, body, files)));
  });

  router.get('/users/@me', (_req, res) => {
    res.json({ ...SIM_BOT, discriminator: '0', global_name: null, avatar: null });
  });

  /**
   * Get Channel Messages: `around`/`before`/`after` (one of them) and `limit` 1-100 (50 by default), newest
   * first; `after` gives the messages right after that id. The nonce is not part of a fetched message.
   * Needs VIEW_CHANNEL and READ_MESSAGE_HISTORY: a channel named `nohistory-*` answers 50001 Missing Access.
   * https://discord.com/developers/docs/resources/message#get-channel-messages
   */
  router.get('/channels/:channelId/messages', (req, res) => {
    const channelId = req.params.channelId;
    if (channelId.startsWith('nohistory')) {
      discordError(res, 403, 50001, 'Missing Access');
      return;
    }
    const limit = req.query.limit === undefined ? 50 : Number(req.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      discordError(res, 400, 50035, 'Invalid Form Body: limit must be between 1 and 100.');
      return;
    }
    const anchors = ['around', 'before', 'after'].filter((k) => req.query[k] !== undefined);
    if (anchors.length > 1) {
      discordError(res, 400, 50035, 'Invalid Form Body: only one of around, before or after may be given.');
      return;
    }
    const big = (v: unknown) => (typeof v === 'string' && /^\d+$/.test(v) ? BigInt(v) : null);
    const after = big(req.query.after);
    const before = big(req.query.before);
    const newestFirst = sim.timelineOf('discord', channelId);
    const picked =
      after !== null
        ? newestFirst.filter((p) => BigInt(p.remoteId) > after).slice(-limit)
        : newestFirst.filter((p) => before === null || BigInt(p.remoteId) < before).slice(0, limit);
    res.json(
      picked.map((p) => ({
        ...messageBody(p.remoteId, channelId, { content: p.text }),
        attachments: Array.isArray(p.media)
          ? (p.media as TAttached[])
              .filter((m) => typeof m.filename === 'string')
              .map((f) => ({ ...f, id: `${p.remoteId}${f.id}` }))
          : [],
        timestamp: p.at,
        nonce: undefined,
      })),
    );
  });

  router.get('/channels/:channelId', (req, res) => {
    const id = req.params.channelId;
    res.json(
      id.startsWith('dm-')
        ? { id, type: 1, recipients: [] }
        : { id, type: 0, guild_id: DISCORD_SIM_GUILD_ID, name: 'general', position: 0 },
    );
  });

  router.delete('/channels/:channelId/messages/:messageId', (req, res) => {
    const post = sim.getPost('discord', req.params.messageId);
    if (!post || post.deleted || channelOf.get(post.remoteId) !== req.params.channelId) {
      discordError(res, 404, 10008, 'Unknown Message');
      return;
    }
    post.deleted = true;
    res.status(204).end();
  });
}
