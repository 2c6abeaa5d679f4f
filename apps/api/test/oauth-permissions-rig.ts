// The set-up the OAuth permission tests share (oauth-permissions*.test.ts): the API with the publisher and the
// network simulator, a server of a small video clip, and helpers reading accounts, publishing and counting
// the simulator's requests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from '@jest/globals';
import { fakeMp4, type TPlatform } from '@sps/core';
import type { TConnectorAccount } from '@sps/networks';
import request from 'supertest';
import { connectorAccount } from '../../publisher/src/credentials.js';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB } from './pipeline-helpers.js';

export const YT = (s: string) => `https://www.googleapis.com/auth/${s}`;
export const redirect = 'https://app.example/cb';
export const text = (m: string) => ({ content: `perm ${m}` });

/** Registers the describe block's beforeAll/afterAll; the rig's `api` and `clipUrl` are set from then on. */
export function permissionsRig() {
  let api: TTestApi;
  let clips: Server;
  let clipUrl: string;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    const clip = Buffer.from(fakeMp4(8, 4096));
    clips = createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end(clip));
    await new Promise<void>((resolve) => clips.listen(0, '127.0.0.1', resolve));
    clipUrl = `http://127.0.0.1:${(clips.address() as AddressInfo).port}/clip.mp4`;
  });
  afterAll(async () => {
    await new Promise((resolve) => clips.close(resolve));
    await api.close();
  });

  async function view(key: string, id: string) {
    const list = await request(api.app).get('/v1/accounts').set(bearer(key));
    expect(list.status).toBe(200);
    return (list.body.accounts as Record<string, unknown>[]).find((a) => a.id === id);
  }

  /** The account as the publisher loads it (decrypted, with its stored grant). */
  async function loaded(tenantId: string, id: string, platform: TPlatform): Promise<TConnectorAccount> {
    const ctx = api.publisher?.context;
    if (!ctx) throw new Error('no publisher');
    const rows = await ctx.socialAccounts.activeWithCredentials(tenantId, [platform]);
    const row = rows.find((r) => r.id === id);
    if (!row) throw new Error('account not loaded');
    return connectorAccount(row, ctx.options.encryptionKey);
  }

  async function publish(key: string, body: object) {
    const post = await createB(api, key, body);
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
    return settleB(api, key, post.id, 20_000);
  }

  const requests = (platform: TPlatform, method: string, part: string) =>
    (api.sim?.sim.requests ?? []).filter(
      (r) => r.platform === platform && r.method === method && r.path.includes(part),
    );

  /** A publish that fails for a permission: named, saying to reconnect, and the create call never made. */
  async function refusedBeforeSending(
    key: string,
    platform: TPlatform,
    body: object,
    createPath: string,
    permission: string,
  ) {
    const before = requests(platform, 'POST', createPath).length;
    const done = await publish(key, { ...body, platforms: [platform] });
    expect(done.status).toBe('failed');
    const result = done.platform_results?.[platform];
    expect(result?.success).toBe(false);
    const error = result && !result.success ? result.error : '';
    expect(error).toContain(permission);
    expect(error).toMatch(/reconnect/);
    expect(requests(platform, 'POST', createPath).length).toBe(before);
  }

  return {
    get api() {
      return api;
    },
    get clipUrl() {
      return clipUrl;
    },
    view,
    loaded,
    publish,
    requests,
    refusedBeforeSending,
  };
}
