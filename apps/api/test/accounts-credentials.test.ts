import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { consent } from './oauth-helpers.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

const BOT = '123456:ABCdefGHIjklMNOpqrSTUvwxYZ';

/** Credential networks (POST /v1/accounts), disconnect, tenancy and the MCP tools. */
describe('Connecting with credentials, disconnecting, MCP', () => {
  let api: TTestApi;
  let server: Server;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    server = await new Promise((resolve) => {
      const s = api.app.listen(0, '127.0.0.1', () => resolve(s));
    });
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });

  const connect = (key: string, body: unknown) =>
    request(api.app).post('/v1/accounts').set(bearer(key)).send(body);

  it('telegram: the bot token and chat are checked with getMe/getChat; a negative channel id is kept as given', async () => {
    const { apiKey } = await api.account('pro');
    const res = await connect(apiKey, {
      platform: 'telegram',
      credentials: { bot_token: BOT, chat_id: '-1001234567890' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      platform: 'telegram',
      external_id: '-1001234567890',
      is_active: true,
      token_expires_at: null,
    });
    const methods = (api.sim?.sim.requests ?? [])
      .filter((r) => r.platform === 'telegram')
      .map((r) => r.path.split('/').at(-1));
    expect(methods).toEqual(expect.arrayContaining(['getMe', 'getChat']));
    // The same chat again revives the same account.
    const again = await connect(apiKey, {
      platform: 'telegram',
      credentials: { bot_token: BOT, chat_id: '-1001234567890' },
    });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(res.body.id);
    const marker = uniqueMarker('tg');
    const post = await createB(api, apiKey, { content: `to the channel ${marker}`, platforms: ['telegram'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey)).expect(200);
    expect((await settleB(api, apiKey, post.id)).status).toBe('published');
    expect(simPosts(api, 'telegram', marker)).toHaveLength(1);
  });

  it('a refused credential is 422 naming the field; a malformed one 400 naming it', async () => {
    const { apiKey } = await api.account('pro');
    const revoked = await connect(apiKey, {
      platform: 'telegram',
      credentials: { bot_token: '123456:revokedTokenABCDEFGHIJKLMN', chat_id: '-100123' },
    });
    expect(revoked.status).toBe(422);
    expect(revoked.body).toMatchObject({
      code: 'credential_refused',
      details: { field: 'credentials.bot_token' },
    });
    const noChat = await connect(apiKey, {
      platform: 'telegram',
      credentials: { bot_token: BOT, chat_id: '-1009999999999' },
    });
    expect(noChat.status).toBe(422);
    expect(noChat.body.details.field).toBe('credentials.chat_id');
    const slack = await connect(apiKey, {
      platform: 'slack',
      credentials: { bot_token: 'xoxb-revoked-1', channel_id: 'C0123' },
    });
    expect(slack.status).toBe(422);
    expect(slack.body.details.field).toBe('credentials.bot_token');
    const slackChannel = await connect(apiKey, {
      platform: 'slack',
      credentials: { bot_token: 'xoxb-1', channel_id: 'C0404' },
    });
    expect(slackChannel.status).toBe(422);
    expect(slackChannel.body.details.field).toBe('credentials.channel_id');
    const malformed = await connect(apiKey, {
      platform: 'discord',
      credentials: { bot_token: 'x', channel_id: 'general' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.details.field).toBe('credentials.channel_id');
    const oauthOnly = await connect(apiKey, { platform: 'twitter', credentials: { token: 'x' } });
    expect(oauthOnly.status).toBe(400);
    expect(oauthOnly.body.details.field).toBe('platform');
    const list = await request(api.app).get('/v1/accounts').set(bearer(apiKey));
    expect(list.body.accounts).toEqual([]);
  });

  it('slack, discord and bluesky connect with their credentials', async () => {
    const { apiKey } = await api.account('pro');
    const slack = await connect(apiKey, {
      platform: 'slack',
      credentials: { bot_token: 'xoxb-good', channel_id: 'C0ABC' },
    });
    expect(slack.status).toBe(201);
    expect(slack.body).toMatchObject({ external_id: 'C0ABC', account_name: '#sim-c0abc' });
    const discord = await connect(apiKey, {
      platform: 'discord',
      credentials: { bot_token: 'bot-token', channel_id: '123456789012' },
    });
    expect(discord.status).toBe(201);
    expect(discord.body).toMatchObject({ external_id: '123456789012', account_name: '#general' });
    const bluesky = await connect(apiKey, {
      platform: 'bluesky',
      credentials: { identifier: 'ann.bsky.social', app_password: 'abcd-efgh-ijkl-mnop' },
    });
    expect(bluesky.status).toBe(201);
    expect(bluesky.body).toMatchObject({
      account_name: 'ann.bsky.social',
      external_id: expect.stringMatching(/^did:plc:/),
    });
    const marker = uniqueMarker('bsky');
    const post = await createB(api, apiKey, {
      content: `skeet ${marker}`,
      platforms: ['bluesky', 'slack', 'discord'],
    });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey)).expect(200);
    expect((await settleB(api, apiKey, post.id)).status).toBe('published');
    expect(simPosts(api, 'bluesky', marker)).toHaveLength(1);
    // A PDS the user names elsewhere must be a public HTTPS server.
    const pds = await connect(apiKey, {
      platform: 'bluesky',
      credentials: { identifier: 'ann.example', app_password: 'x', service: 'http://127.0.0.1:9' },
    });
    expect(pds.status).toBe(422);
    expect(pds.body.details.field).toBe('credentials.service');
  });

  it("DELETE disconnects (204, account.disconnected); another tenant's id or a malformed one is 404", async () => {
    const { apiKey, accountId } = await api.account('pro');
    const other = await api.account('pro');
    const created = await connect(apiKey, {
      platform: 'slack',
      credentials: { bot_token: 'xoxb-good', channel_id: 'C0DEF' },
    });
    const id = created.body.id as string;
    expect((await request(api.app).delete(`/v1/accounts/${id}`).set(bearer(other.apiKey))).status).toBe(404);
    expect((await request(api.app).delete('/v1/accounts/not-a-uuid').set(bearer(apiKey))).status).toBe(404);
    expect((await request(api.app).delete(`/v1/accounts/${id}`).set(bearer(apiKey))).status).toBe(204);
    const list = await request(api.app).get('/v1/accounts').set(bearer(apiKey));
    expect(list.body.accounts[0]).toMatchObject({ id, is_active: false, needs_reauth: false });
    const events = await api.db.event.findMany({ where: { accountId, type: 'account.disconnected' } });
    expect(events).toHaveLength(1);
    // Another tenant cannot see it either.
    expect((await request(api.app).get('/v1/accounts').set(bearer(other.apiKey))).body.accounts).toEqual([]);
  });

  it('MCP connect_account returns the authorization URL and disconnect_account disconnects', async () => {
    const { apiKey } = await api.account('pro');
    const c = new Client({ name: 'test-agent', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(
        new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`),
        {
          requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
        },
      ),
    );
    try {
      const names = (await c.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['connect_account', 'disconnect_account']));
      const started = (await c.callTool({ name: 'connect_account', arguments: { platform: 'twitter' } })) as {
        structuredContent?: { url: string };
        content: { text?: string }[];
      };
      const url = started.structuredContent?.url ?? JSON.parse(started.content[0]?.text ?? '{}').url;
      expect(url).toContain('/twitter/i/oauth2/authorize');
      const back = await consent(url, 'mcp_user');
      const done = await request(api.app).get(`${back.pathname}${back.search}`);
      expect(done.status).toBe(200);
      const list = await request(api.app).get('/v1/accounts').set(bearer(apiKey));
      const id = list.body.accounts[0].id as string;
      const off = (await c.callTool({ name: 'disconnect_account', arguments: { id } })) as {
        isError?: boolean;
      };
      expect(off.isError).toBeFalsy();
      const after = await request(api.app).get('/v1/accounts').set(bearer(apiKey));
      expect(after.body.accounts[0].is_active).toBe(false);
      const missing = (await c.callTool({ name: 'disconnect_account', arguments: { id } })) as {
        isError?: boolean;
      };
      expect(missing.isError).toBeFalsy();
      const bad = (await c.callTool({ name: 'disconnect_account', arguments: { id: 'nope' } })) as {
        isError?: boolean;
      };
      expect(bad.isError).toBe(true);
    } finally {
      await c.close();
    }
  });
});
