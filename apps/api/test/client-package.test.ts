import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createClient,
  SpsApiErrorA,
  SpsApiErrorB,
  type TPostB,
  type TSpsClient,
  verifyWebhook,
} from '@social-posts/client';
import {
  makeCertificate,
  startReceiver,
  type TCertificate,
  type TReceiver,
} from '../../webhooks/test/support/receiver.js';
import { startTestApi, type TTestApi } from './harness.js';

// packages/client (@social-posts/client) against the whole service in-process over real HTTP: the API, the
// publisher on the network simulator, and the webhooks worker delivering to an HTTPS receiver.

const CLIENT_DIR = resolve(import.meta.dirname, '../../../packages/client');

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in 15 s (${JSON.stringify(value)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('@social-posts/client against the running service', () => {
  let api: TTestApi;
  let server: Server;
  let baseUrl: string;
  let cert: TCertificate;
  let receiver: TReceiver;
  let a: TSpsClient;
  let b: TSpsClient;

  beforeAll(async () => {
    cert = makeCertificate();
    receiver = await startReceiver(cert);
    api = await startTestApi({
      publisher: true,
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
      webhooks: { certificateAuthority: cert.cert },
    });
    server = await new Promise((done) => {
      const s = api.app.listen(0, '127.0.0.1', () => done(s));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const accountA = await api.account('pro');
    const accountB = await api.account('pro');
    for (const account of [accountA, accountB]) {
      await api.connect(account.accountId, 'twitter');
      await api.connect(account.accountId, 'mastodon');
    }
    a = createClient({ baseUrl, apiKey: accountA.apiKey });
    b = createClient({ baseUrl, apiKey: accountB.apiKey });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await api.close();
    await receiver.close();
    cert.remove();
  });

  it("its generated sources match the served GET /openapi.json (the package's drift check)", async () => {
    // Asynchronously: this process serves the document the script fetches.
    const run = await promisify(execFile)(
      process.execPath,
      ['scripts/generate.mjs', '--check', '--url', baseUrl],
      { cwd: CLIENT_DIR, encoding: 'utf8' },
    ).catch((error: { stderr: string }) => ({ stdout: '', stderr: error.stderr }));
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('generated sources match the OpenAPI document');
  }, 30_000);

  it('Variant B: creates, lists, iterates, publishes, and verifies the signed post.published delivery', async () => {
    const hook = await b.v1.webhooks.create({ url: receiver.url('/client-b'), events: ['post.published'] });
    expect(hook.secret).toMatch(/^whsec_/);

    const created: TPostB[] = [];
    for (const n of [1, 2, 3]) {
      created.push(
        await b.v1.posts.create({ content: `Client post ${n}`, platforms: ['twitter', 'mastodon'] }),
      );
    }
    expect(created.map((p) => p.status)).toEqual(['draft', 'draft', 'draft']);
    const page = await b.v1.posts.list({ query: { limit: 2 } });
    expect(page.total).toBe(3);
    expect(page.posts.map((p) => p.id)).toEqual([created[2]?.id, created[1]?.id]);
    const all: string[] = [];
    for await (const post of b.v1.posts.iterate({ pageSize: 2 })) all.push(post.id);
    expect(all).toEqual(created.map((p) => p.id).reverse());

    const target = created[0] as TPostB;
    const publishing = await b.v1.posts.publish(target.id);
    expect(publishing.status).toBe('publishing');
    const published = await until(
      () => b.v1.posts.get(target.id),
      (p) => p.status !== 'publishing',
      'published',
    );
    expect(published.status).toBe('published');
    expect(published.platform_results?.['twitter']).toMatchObject({ success: true });

    const [delivery] = await receiver.waitFor((all) => all.some((r) => r.path === '/client-b'));
    const event = verifyWebhook(
      receiver.on('/client-b')[0]?.rawBody ?? '',
      receiver.on('/client-b')[0]?.headers ?? {},
      hook.secret,
    );
    expect(delivery).toBeDefined();
    expect(event.type).toBe('post.published');
    expect(event.data.post?.id).toBe(target.id);
    expect(() =>
      verifyWebhook('{"id":"x"}', receiver.on('/client-b')[0]?.headers ?? {}, hook.secret),
    ).toThrow('no webhook-signature entry matches');

    // Publishing again is refused in Variant B's shape, typed.
    const again = await b.v1.posts.publish(target.id).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(SpsApiErrorB);
    expect((again as SpsApiErrorB).status).toBe(409);

    await b.v1.posts.delete(created[1]?.id ?? '');
    const gone = (await b.v1.posts.get(created[1]?.id ?? '').catch((e: unknown) => e)) as SpsApiErrorB;
    expect([gone.status, gone.code]).toEqual([404, 'not_found']);
  }, 30_000);

  it('Variant A: creates a draft, lists it, publishes it, and creates one published at once', async () => {
    const { post } = await a.api.posts.create({ content: 'Client hello from A', platforms: ['twitter'] });
    expect([post.published, post.queueStatus]).toEqual([false, null]);
    const listed = await a.api.posts.list();
    expect(listed.posts.map((p) => p.id)).toContain(post.id);
    const outcome = await a.api.posts.publish(post.id);
    expect(outcome.success).toBe(true);
    expect(outcome.publishResults).toEqual([expect.objectContaining({ platform: 'twitter', success: true })]);
    expect((await a.api.posts.get(post.id)).post.published).toBe(true);

    const now = await a.api.posts.create({
      content: 'Published now',
      platforms: ['mastodon'],
      published: true,
    });
    expect(now.post.published).toBe(true);
    expect(now.publishResults?.[0]).toMatchObject({ platform: 'mastodon', success: true });

    const ids: string[] = [];
    for await (const p of a.api.posts.iterate({ pageSize: 1 })) ids.push(p.id);
    expect(ids).toEqual([now.post.id, post.id]);
  }, 30_000);

  it("throws each variant's error body typed, naming the field", async () => {
    const errA = (await a.api.posts
      .create({ content: 'x', platforms: [] as never })
      .catch((e: unknown) => e)) as SpsApiErrorA;
    expect(errA).toBeInstanceOf(SpsApiErrorA);
    expect([errA.status, errA.field]).toEqual([400, 'platforms']);

    const errB = (await b.v1.posts
      .create({ content: 'x', platforms: [] as never })
      .catch((e: unknown) => e)) as SpsApiErrorB;
    expect(errB).toBeInstanceOf(SpsApiErrorB);
    expect([errB.status, errB.code, errB.field]).toEqual([400, 'validation_error', 'platforms']);

    const stranger = createClient({ baseUrl, apiKey: 'sps_not_a_key' });
    const unauthorized = (await stranger.v1.accounts.list().catch((e: unknown) => e)) as SpsApiErrorB;
    expect([unauthorized.status, unauthorized.code, unauthorized.attempts]).toEqual([401, 'unauthorized', 1]);
  });

  it("surfaces a rate limit longer than it will wait at once, with the spec's 429 body", async () => {
    const free = await api.account('free');
    const client = createClient({ baseUrl, apiKey: free.apiKey });
    // The free tier's publish allowance is 10 an hour: the 11th publish call is refused for most of an hour.
    const answers: unknown[] = [];
    for (let i = 0; i < 11; i += 1)
      answers.push(await client.v1.posts.publish('no-such-post').catch((e) => e));
    const last = answers.at(-1) as SpsApiErrorB;
    expect(last).toBeInstanceOf(SpsApiErrorB);
    expect([last.status, last.code, last.attempts]).toEqual([429, 'rate_limited', 1]);
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(60);
    expect(last.body.details).toMatchObject({ limit: 10, remaining: 0 });
  });
});
