import type { Request, Response, Router } from 'express';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

/** Slack answers most failures with HTTP 200 and `{ ok: false, error }`. */
function slackError(res: Response, error: string, status = 200): void {
  res.status(status).json({ ok: false, error });
}

const renderSlackError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      slackError(res, 'token_expired');
      return;
    case 'rate_limited':
      res.set('Retry-After', String(fault.retryAfterSeconds ?? 1));
      slackError(res, 'ratelimited', 429);
      return;
    case 'rejected':
      slackError(res, 'invalid_blocks');
      return;
    default:
      slackError(res, 'service_unavailable', 503);
  }
};

/** Slack takes arguments as JSON, as a form, or in the query string. */
function args(req: Request): Record<string, unknown> {
  const body = req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body) ? req.body : {};
  return { ...req.query, ...body };
}

function hasToken(req: Request): boolean {
  const header = req.headers.authorization ?? '';
  if (header.startsWith('Bearer ') && header.length > 7) return true;
  const token = args(req).token;
  return typeof token === 'string' && token.length > 0;
}

const SIM_WORKSPACE = 'https://sps-sim.slack.com';

/**
 * Slack Web API: `chat.postMessage` (channel, text, blocks), `chat.getPermalink` and `chat.delete`.
 * Channel ids must look like Slack's (`C…`, `G…` or `D…`); others answer `channel_not_found`.
 */
export function registerSlackSim(router: Router, sim: SimState): void {
  const channelOf = new Map<string, string>();
  let lastSecond = 0;
  let sequence = 0;

  /** Message timestamps are unique per channel: epoch seconds plus a six-digit sequence. */
  function nextTs(): string {
    const now = Math.floor(Date.now() / 1000);
    sequence = now === lastSecond ? sequence + 1 : 1;
    lastSecond = now;
    return `${now}.${String(sequence).padStart(6, '0')}`;
  }

  router.use(networkMiddleware(sim, 'slack', renderSlackError));
  router.use((req, res, next) => {
    if (hasToken(req)) return next();
    slackError(res, 'not_authed');
  });

  router.post('/chat.postMessage', (req, res) => {
    const { channel, text, blocks } = args(req);
    if (typeof channel !== 'string' || !/^[CGD][A-Z0-9]+$/.test(channel)) {
      slackError(res, 'channel_not_found');
      return;
    }
    if ((typeof text !== 'string' || text === '') && !Array.isArray(blocks)) {
      slackError(res, 'no_text');
      return;
    }
    const ts = nextTs();
    channelOf.set(ts, channel);
    sim.addPost({
      platform: 'slack',
      remoteId: ts,
      text: typeof text === 'string' ? text : '',
      replyTo: null,
      media: Array.isArray(blocks) ? blocks : null,
      idempotencyKey: null,
    });
    answerOrHang(res, () =>
      res.json({
        ok: true,
        channel,
        ts,
        message: { type: 'message', subtype: 'bot_message', text, ts, bot_id: 'B0SIMBOT', blocks },
      }),
    );
  });

  router.all('/chat.getPermalink', (req, res) => {
    const { channel, message_ts: ts } = args(req);
    if (typeof ts !== 'string' || typeof channel !== 'string' || channelOf.get(ts) !== channel) {
      slackError(res, 'message_not_found');
      return;
    }
    res.json({
      ok: true,
      channel,
      permalink: `${SIM_WORKSPACE}/archives/${channel}/p${ts.replace('.', '')}`,
    });
  });

  router.post('/chat.delete', (req, res) => {
    const { channel, ts } = args(req);
    const post = typeof ts === 'string' ? sim.getPost('slack', ts) : undefined;
    if (!post || post.deleted || channelOf.get(post.remoteId) !== channel) {
      slackError(res, 'message_not_found');
      return;
    }
    post.deleted = true;
    res.json({ ok: true, channel, ts });
  });
}
