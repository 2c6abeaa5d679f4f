import type { Request, Response, Router } from 'express';
import { fileOf, readForm } from './multipart.sim.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

// Discord REST v10, read 2026-11-24: messages take files as multipart `files[n]` with `payload_json`,
// `attachments[].id` naming n and `description` (alt text, at most 1024 characters); content at most 2000
// characters; uploads at most 10 MiB in a server without boosts (https://discord.com/developers/docs/reference#uploading-files,
// https://discord.com/developers/docs/resources/message#create-message).
export const DISCORD_SIM_UPLOAD_LIMIT = 10 * 1024 * 1024;

/** The guild every simulated channel belongs to, except `dm-*` channels (direct messages). */
const DISCORD_SIM_GUILD_ID = '900000000000000001';

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
async function readMessage(req: Request): Promise<{ body: TCreateMessage; files: TAttached[] } | string> {
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
    author: { id: '900000000000000099', username: 'sps-bot', bot: true },
    timestamp: new Date().toISOString(),
    nonce: body.nonce,
  });

  router.post('/channels/:channelId/messages', async (req, res) => {
    const channelId = req.params.channelId;
    const read = await readMessage(req);
    if (read === 'too_large') {
      discordError(res, 413, 40005, 'Request entity too large');
      return;
    }
    if (typeof read === 'string') {
      discordError(res, 400, 50035, read);
      return;
    }
    const { body, files } = read;
    if (!body.content && !(body.embeds ?? []).length && files.length === 0) {
      discordError(res, 400, 50006, 'Cannot send an empty message');
      return;
    }
    if (Array.from(body.content ?? '').length > 2000) {
      discordError(res, 400, 50035, 'Invalid Form Body: content must be 2000 or fewer in length.');
      return;
    }
    if (body.nonce && body.enforce_nonce) {
      const existing = sim.findByIdempotencyKey('discord', body.nonce);
      if (existing && channelOf.get(existing.remoteId) === channelId) {
        res.json(messageBody(existing.remoteId, channelId, body));
        return;
      }
    }
    const id = sim.nextNumericId();
    channelOf.set(id, channelId);
    sim.addPost({
      platform: 'discord',
      remoteId: id,
      text: body.content ?? '',
      replyTo: null,
      media: files.length > 0 ? files : (body.embeds ?? []),
      idempotencyKey: body.enforce_nonce ? (body.nonce ?? null) : null,
    });
    answerOrHang(res, () => res.json(messageBody(id, channelId, body, files)));
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
