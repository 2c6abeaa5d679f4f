import { randomBytes } from 'node:crypto';
import type { TPlatform } from '@sps/core';
import type { Request, Response, Router } from 'express';
import { graphError } from '../graph-sim.js';
import type { SimState } from '../sim-state.js';
import { bearerOf, hashIdOf, numericIdOf, oauthStoreOf } from './oauth-store.js';

/**
 * "Who is this token?" on each network, answered for the simulated users, and the other calls a
 * connect makes: Mastodon app registration, Slack `auth.test`/`conversations.info`, Telegram
 * `getMe`/`getChat`. A token the simulator issued speaks for its user; an expired or revoked one gets the
 * network's 401; a foreign token is the default user `sim_user` (unless strict).
 */
export function registerIdentitySims(routerOf: (platform: TPlatform) => Router, sim: SimState): void {
  const store = oauthStoreOf(sim);

  function userOf(platform: TPlatform, req: Request): string | null {
    const token = bearerOf(req);
    if (!token) return null;
    const status = store.statusOf(token, platform, 'access');
    if (status === 'foreign') return store.strict ? null : 'sim_user';
    if (status !== 'valid') return null;
    return store.tokens.get(token)?.user ?? null;
  }

  function identity(
    platform: TPlatform,
    method: 'get' | 'post',
    path: string,
    answer: (user: string, req: Request, res: Response) => void,
    unauthorized: (res: Response) => void,
  ) {
    routerOf(platform)[method](path, (req, res) => {
      sim.record(platform, req);
      const user = userOf(platform, req);
      if (!user) return unauthorized(res);
      answer(user, req, res);
    });
  }

  // https://docs.x.com/x-api/users/user-lookup-me
  identity(
    'twitter',
    'get',
    '/2/users/me',
    (user, _req, res) => res.json({ data: { id: numericIdOf(user, 19), name: user, username: user } }),
    (res) =>
      res
        .status(401)
        .json({ title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' }),
  );
  // https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
  identity(
    'linkedin',
    'get',
    '/v2/userinfo',
    (user, _req, res) =>
      res.json({ sub: hashIdOf(user, 10), name: user, given_name: user, email_verified: true }),
    (res) =>
      res.status(401).json({
        status: 401,
        serviceErrorCode: 65600,
        code: 'INVALID_ACCESS_TOKEN',
        message: 'Invalid access token',
      }),
  );
  // https://developers.google.com/youtube/v3/docs/channels/list
  identity(
    'youtube',
    'get',
    '/youtube/v3/channels',
    (user, req, res) => {
      if (req.query.mine !== 'true')
        return res.status(400).json({ error: { code: 400, message: 'No filter selected.' } });
      res.json({
        kind: 'youtube#channelListResponse',
        items: [
          {
            kind: 'youtube#channel',
            id: `UC${hashIdOf(user, 22)}`,
            snippet: { title: `${user}'s channel`, customUrl: `@${user}` },
          },
        ],
      });
    },
    (res) =>
      res.status(401).json({
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials.',
          status: 'UNAUTHENTICATED',
        },
      }),
  );
  // https://developers.tiktok.com/doc/tiktok-api-v2-get-user-info
  identity(
    'tiktok',
    'get',
    '/v2/user/info/',
    (user, _req, res) =>
      res.json({
        data: { user: { open_id: `sim-open-${user}`, display_name: user, username: user } },
        error: { code: 'ok', message: '', log_id: 'SIMLOG0002' },
      }),
    (res) =>
      res.status(401).json({
        error: {
          code: 'access_token_invalid',
          message: 'The access token is invalid or not found in the request.',
          log_id: 'SIMLOG0003',
        },
      }),
  );
  const graphUnauthorized = (res: Response) =>
    graphError(res, 401, 190, 'Error validating access token: Session has expired', { error_subcode: 463 });
  // https://developers.facebook.com/docs/threads/threads-profiles
  identity(
    'threads',
    'get',
    '/v1.0/me',
    (user, _req, res) => res.json({ id: numericIdOf(user, 17), username: user }),
    graphUnauthorized,
  );
  // https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/get-started
  identity(
    'instagram',
    'get',
    '/v25.0/me',
    (user, _req, res) =>
      res.json({ user_id: numericIdOf(user, 17), id: numericIdOf(`${user}-app`, 17), username: user }),
    graphUnauthorized,
  );
  // https://developers.facebook.com/docs/pages-api/getting-started: two Pages per simulated person.
  identity(
    'facebook',
    'get',
    '/v25.0/me/accounts',
    (user, req, res) =>
      res.json({
        data: ['1', '2'].map((n) => {
          // Page tokens obtained with a long-lived user token do not expire; they belong to its grant.
          const token = `sim-facebook-at-page-${randomBytes(12).toString('hex')}`;
          const family = store.tokens.get(bearerOf(req) ?? '')?.family ?? 'foreign';
          store.tokens.set(token, {
            platform: 'facebook',
            family,
            user,
            kind: 'access',
            expiresAt: null,
            revoked: false,
            spent: false,
            issuedAt: store.now(),
            scopes: store.tokens.get(bearerOf(req) ?? '')?.scopes ?? '',
          });
          return {
            id: `${numericIdOf(user, 14)}${n}`,
            name: `${user} page ${n}`,
            category: 'Brand',
            access_token: token,
          };
        }),
        paging: { cursors: { before: 'a', after: 'b' } },
      }),
    graphUnauthorized,
  );
  // What the person granted: https://developers.facebook.com/docs/graph-api/reference/user/permissions/
  identity(
    'facebook',
    'get',
    '/v25.0/me/permissions',
    (_user, req, res) =>
      res.json({
        data: (store.tokens.get(bearerOf(req) ?? '')?.scopes ?? '')
          .split(/[ ,]+/)
          .filter(Boolean)
          .map((permission) => ({ permission, status: 'granted' })),
      }),
    graphUnauthorized,
  );
  // https://docs.joinmastodon.org/methods/accounts/#verify_credentials
  identity(
    'mastodon',
    'get',
    '/api/v1/accounts/verify_credentials',
    (user, _req, res) => res.json({ id: numericIdOf(user, 18), username: user, acct: user }),
    (res) => res.status(401).json({ error: 'The access token is invalid' }),
  );

  // https://docs.joinmastodon.org/methods/apps/#create
  routerOf('mastodon').post('/api/v1/apps', (req, res) => {
    sim.record('mastodon', req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const redirects = typeof body.redirect_uris === 'string' ? body.redirect_uris.split(/\s+/) : [];
    if (typeof body.client_name !== 'string' || !body.client_name || redirects.length === 0) {
      res.status(422).json({ error: "Validation failed: Name can't be blank, Redirect URI can't be blank" });
      return;
    }
    const clientId = `sim-mastodon-app-${randomBytes(8).toString('hex')}`;
    const secret = randomBytes(16).toString('hex');
    store.apps.set(clientId, { secret, redirectUris: redirects, platform: 'mastodon' });
    res.json({
      id: numericIdOf(clientId, 6),
      name: body.client_name,
      redirect_uri: redirects.join('\n'),
      redirect_uris: redirects,
      client_id: clientId,
      client_secret: secret,
      client_secret_expires_at: 0,
      scopes: typeof body.scopes === 'string' ? body.scopes.split(' ') : ['read'],
    });
  });

  // Slack answers HTTP 200 with `ok: false`. https://api.slack.com/methods/auth.test
  // A bot token containing "revoked" is refused (invalid_auth); a channel id ending in "404" is not found.
  const slackToken = (req: Request) =>
    bearerOf(req) ?? (typeof req.body?.token === 'string' ? req.body.token : null);
  routerOf('slack').post('/auth.test', (req, res) => {
    sim.record('slack', req);
    const token = slackToken(req);
    if (!token) return res.json({ ok: false, error: 'not_authed' });
    if (token.includes('revoked')) return res.json({ ok: false, error: 'invalid_auth' });
    res.json({
      ok: true,
      url: 'https://sps-sim.slack.com/',
      team: 'sps-sim',
      user: 'sps-bot',
      team_id: 'T0SIM',
      user_id: 'U0SIMBOT',
      bot_id: 'B0SIM',
    });
  });
  routerOf('slack').get('/conversations.info', (req, res) => {
    sim.record('slack', req);
    const token = slackToken(req);
    if (!token) return res.json({ ok: false, error: 'not_authed' });
    if (token.includes('revoked')) return res.json({ ok: false, error: 'invalid_auth' });
    const channel = typeof req.query.channel === 'string' ? req.query.channel : '';
    if (!/^[CGD][A-Z0-9]+$/.test(channel) || channel.endsWith('404'))
      return res.json({ ok: false, error: 'channel_not_found' });
    res.json({
      ok: true,
      channel: { id: channel, name: `sim-${channel.toLowerCase()}`, is_channel: true, is_member: true },
    });
  });

  // https://core.telegram.org/bots/api#getme, #getchat. A bot token whose secret starts with "revoked" is
  // refused (401 Unauthorized); the chat -1009999999999 does not exist for the bot.
  const telegramError = (res: Response, code: number, description: string) =>
    res.status(code).json({ ok: false, error_code: code, description });
  /** `bot<id>:<secret>`, with a secret that is not marked revoked. */
  const knownBot = (bot: string) =>
    bot.startsWith('bot') && /^\d+:[\w-]+$/.test(bot.slice(3)) && !bot.split(':')[1]?.startsWith('revoked');
  routerOf('telegram').post('/:bot/getMe', (req, res) => {
    sim.record('telegram', req);
    const bot = req.params.bot;
    if (!knownBot(bot)) return telegramError(res, 401, 'Unauthorized');
    res.json({
      ok: true,
      result: {
        id: Number(bot.slice(3).split(':')[0]),
        is_bot: true,
        first_name: 'SPS Sim',
        username: 'sps_sim_bot',
      },
    });
  });
  routerOf('telegram').post('/:bot/getChat', (req, res) => {
    sim.record('telegram', req);
    const bot = req.params.bot;
    if (!knownBot(bot)) return telegramError(res, 401, 'Unauthorized');
    const chatId = String((req.body as { chat_id?: unknown } | undefined)?.chat_id ?? '');
    if (!/^(-?\d+|@\w+)$/.test(chatId) || chatId === '-1009999999999')
      return telegramError(res, 400, 'Bad Request: chat not found');
    const isChannel = chatId.startsWith('-100') || chatId.startsWith('@');
    res.json({
      ok: true,
      result: {
        id: chatId.startsWith('@') ? -1001000000001 : Number(chatId),
        type: isChannel ? 'channel' : 'private',
        title: isChannel ? `Sim channel ${chatId}` : undefined,
        ...(chatId.startsWith('@') ? { username: chatId.slice(1) } : {}),
      },
    });
  });
}
