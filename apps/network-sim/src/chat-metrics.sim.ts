import type { Request, Router } from 'express';
import { count } from './metrics-state.sim.js';
import type { SimState } from './sim-state.js';

/** A message's reactions as one emoji holding the count a test set (likes). */
const reactionsOf = (sim: SimState, platform: 'discord' | 'slack', id: string) => {
  const likes = count(sim, platform, id, 'likes');
  return likes > 0 ? [{ likes }] : [];
};

/**
 * Discord `GET /channels/{channel.id}/messages/{message.id}`
 * (https://discord.com/developers/docs/resources/message#get-channel-message): 404 Unknown Message (10008)
 * for a deleted one; a channel id starting with "nohistory" stands for a bot without Read Message History
 * (403 Missing Access, 50001), as discord.sim.ts's message list.
 */
export function registerDiscordMetricsSim(router: Router, sim: SimState): void {
  router.get('/channels/:channelId/messages/:messageId', (req, res) => {
    if (req.params.channelId.startsWith('nohistory')) {
      res.status(403).json({ message: 'Missing Access', code: 50001 });
      return;
    }
    const post = sim.getPost('discord', req.params.messageId);
    if (!post || post.deleted) {
      res.status(404).json({ message: 'Unknown Message', code: 10008 });
      return;
    }
    res.json({
      id: post.remoteId,
      channel_id: req.params.channelId,
      content: post.text,
      timestamp: post.at,
      reactions: reactionsOf(sim, 'discord', post.remoteId).map((r) => ({
        count: r.likes,
        count_details: { burst: 0, normal: r.likes },
        me: false,
        me_burst: false,
        emoji: { id: null, name: '👍' },
        burst_colors: [],
      })),
    });
  });
}

const argsOf = (req: Request): Record<string, unknown> => ({
  ...req.query,
  ...(req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body) ? req.body : {}),
});

/**
 * Slack `reactions.get` (https://docs.slack.dev/reference/methods/reactions.get): 200 with `ok: false` on
 * errors (`not_authed`, `message_not_found`; a token containing "noreactions" stands for one without
 * `reactions:read`: `missing_scope` with `needed`).
 */
export function registerSlackMetricsSim(router: Router, sim: SimState): void {
  router.all('/reactions.get', (req, res) => {
    const a = argsOf(req);
    const token = req.headers.authorization?.startsWith('Bearer ')
      ? req.headers.authorization.slice(7)
      : String(a.token ?? '');
    if (!token) {
      res.json({ ok: false, error: 'not_authed' });
      return;
    }
    if (token.includes('noreactions')) {
      res.json({
        ok: false,
        error: 'missing_scope',
        needed: 'reactions:read',
        provided: 'chat:write,files:write',
      });
      return;
    }
    const post = sim.getPost('slack', String(a.timestamp ?? ''));
    if (!post || post.deleted) {
      res.json({ ok: false, error: 'message_not_found' });
      return;
    }
    const reactions = reactionsOf(sim, 'slack', post.remoteId).map((r) => ({
      name: 'thumbsup',
      users: [],
      count: r.likes,
    }));
    res.json({
      ok: true,
      type: 'message',
      channel: a.channel,
      message: {
        type: 'message',
        text: post.text,
        ts: post.remoteId,
        ...(reactions.length > 0 ? { reactions } : {}),
        reply_count: count(sim, 'slack', post.remoteId, 'replies'),
      },
    });
  });
}
