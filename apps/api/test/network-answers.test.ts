import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

/**
 * One server standing in for every network, answering with the wrong types where the service reads names
 * and ids: a number for a Bluesky handle, an object for a Telegram chat title, a 5,000-character Discord
 * channel name, a Slack channel id that is an object, a Mastodon account name that is a number.
 */
async function oddNetworks() {
  const sessionJwt = (sub: string) =>
    `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(
      JSON.stringify({ sub, exp: Math.floor(Date.now() / 1000) + 7200 }),
    ).toString('base64url')}.sig`;
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    const send = (body: unknown) => res.end(JSON.stringify(body));
    const url = req.url ?? '';
    req.resume();
    if (url.endsWith('/xrpc/com.atproto.server.createSession'))
      return send({
        did: 'did:plc:abc',
        handle: 12345,
        accessJwt: sessionJwt('did:plc:abc'),
        refreshJwt: sessionJwt('did:plc:abc'),
      });
    if (url.includes('/getMe')) return send({ ok: true, result: { id: 1, is_bot: true } });
    if (url.includes('/getChat')) return send({ ok: true, result: { id: -100123, title: { text: 'x' } } });
    if (url.startsWith('/discord/channels/')) return send({ id: '123456', name: 'n'.repeat(5000) });
    if (url.startsWith('/slack/auth.test')) return send({ ok: true });
    if (url.startsWith('/slack/conversations.info')) return send({ ok: true, channel: { id: { $gt: '' } } });
    if (url === '/mastodon/api/v1/apps') return send({ client_id: 'c', client_secret: 's' });
    if (url === '/mastodon/oauth/token') return send({ access_token: 't', token_type: 'Bearer' });
    if (url === '/mastodon/api/v1/accounts/verify_credentials') return send({ id: '7', acct: 42 });
    res.statusCode = 404;
    send({});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('network answers of the wrong type or length are refused by name, never a 500', () => {
  let api: TTestApi;
  let networks: Awaited<ReturnType<typeof oddNetworks>>;
  let key = '';

  beforeAll(async () => {
    networks = await oddNetworks();
    api = await startTestApi({
      env: {
        NETWORK_BLUESKY_BASE_URL: networks.url,
        NETWORK_TELEGRAM_BASE_URL: networks.url,
        NETWORK_DISCORD_BASE_URL: `${networks.url}/discord`,
        NETWORK_SLACK_BASE_URL: `${networks.url}/slack`,
        NETWORK_MASTODON_BASE_URL: `${networks.url}/mastodon`,
      },
    });
    key = (await api.account('pro')).apiKey;
  });
  afterAll(async () => {
    await api.close();
    await networks.close();
  });

  const connect = (platform: string, credentials: Record<string, unknown>) =>
    request(api.app).post('/v1/accounts').set(bearer(key)).send({ platform, credentials });

  it('a Bluesky PDS answering a number as the handle: 422 naming the field', async () => {
    const res = await connect('bluesky', { identifier: 'me.example', app_password: 'abcd-efgh-ijkl-mnop' });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: 'credential_refused',
      details: { field: 'credentials.identifier' },
    });
    expect(res.body.error).toContain('handle');
    const named = await connect('bluesky', {
      identifier: 'me.example',
      app_password: 'abcd-efgh-ijkl-mnop',
      service: networks.url,
    });
    expect(named.status).toBe(422);
    expect(named.body.details.field).toBe('credentials.service');
  });

  it('Telegram, Discord and Slack answers with odd fields: 422 naming the field', async () => {
    const telegram = await connect('telegram', {
      bot_token: '123456:abcdefghijklmnopqrstuvwxyz',
      chat_id: '-100123',
    });
    expect(telegram.status).toBe(422);
    expect(telegram.body.details.field).toBe('credentials.chat_id');
    const discord = await connect('discord', { bot_token: 'bot', channel_id: '123456' });
    expect(discord.status).toBe(422);
    expect(discord.body.details.field).toBe('credentials.channel_id');
    const slack = await connect('slack', { bot_token: 'xoxb-1', channel_id: 'C0123' });
    expect(slack.status).toBe(422);
    expect(slack.body.details.field).toBe('credentials.channel_id');
    expect((await request(api.app).get('/v1/accounts').set(bearer(key))).body.accounts).toEqual([]);
  });

  it('a Mastodon instance answering a number as the account name: the callback reports exchange_failed', async () => {
    const started = await request(api.app)
      .post('/v1/accounts/connect')
      .set(bearer(key))
      .send({
        platform: 'mastodon',
        instance: `${networks.url}/mastodon`,
        redirect_uri: 'https://app.example/done',
      });
    expect(started.status).toBe(200);
    const back = await request(api.app).get(
      `/oauth/callback/mastodon?code=c&state=${encodeURIComponent(started.body.state)}`,
    );
    expect(back.status).toBe(302);
    expect(new URL(back.headers.location ?? '').searchParams.get('error')).toBe('exchange_failed');
  });
});
