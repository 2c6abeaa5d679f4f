import type { Response, Router } from 'express';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

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
  nonce?: string;
  enforce_nonce?: boolean;
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

  const messageBody = (id: string, channelId: string, body: TCreateMessage) => ({
    id,
    type: 0,
    channel_id: channelId,
    content: body.content ?? '',
    embeds: body.embeds ?? [],
    attachments: [],
    author: { id: '900000000000000099', username: 'sps-bot', bot: true },
    timestamp: new Date().toISOString(),
    nonce: body.nonce,
  });

  router.post('/channels/:channelId/messages', (req, res) => {
    const channelId = req.params.channelId;
    const body = (req.body ?? {}) as TCreateMessage;
    if (!body.content && !(body.embeds ?? []).length) {
      discordError(res, 400, 50006, 'Cannot send an empty message');
      return;
    }
    if ((body.content ?? '').length > 2000) {
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
      media: body.embeds ?? [],
      idempotencyKey: body.enforce_nonce ? (body.nonce ?? null) : null,
    });
    answerOrHang(res, () => res.json(messageBody(id, channelId, body)));
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
