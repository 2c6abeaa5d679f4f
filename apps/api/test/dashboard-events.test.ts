// GET /dashboard/api/events: server-sent events for the signed-in account, from the outbox and the API's change
// notices, over a real socket (the stream never ends by itself, so it is read chunk by chunk with fetch).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashPassword } from '@sps/core';
import { createOwnerRepository } from '@sps/db';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const PASSWORD = 'events password 1';

interface TStream {
  status: number;
  headers: Headers;
  /** The next message whose event name and data match; rejects after `ms` (a bound, not a measurement). */
  next(
    match: (event: string, data: Record<string, unknown>) => boolean,
    ms?: number,
  ): Promise<Record<string, unknown>>;
  /** Resolves when a comment line with this text arrives. */
  comment(text: string, ms?: number): Promise<void>;
  /** Resolves when the server ends the stream. */
  ended(ms?: number): Promise<void>;
  close(): void;
  body: unknown;
}

describe('dashboard live events', () => {
  let api: TTestApi;
  let server: Server;
  let base: string;
  let owner: { accountId: string; apiKey: string; email: string };

  beforeAll(async () => {
    api = await startTestApi({
      env: { DASHBOARD_EVENTS_PER_ACCOUNT: '2', DASHBOARD_EVENTS_HEARTBEAT: '100ms' },
    });
    server = await new Promise<Server>((done) => {
      const s = api.app.listen(0, '127.0.0.1', () => done(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const account = await api.account('pro');
    const row = await api.db.account.findUniqueOrThrow({ where: { id: account.accountId } });
    await createOwnerRepository(api.db).setPasswordHash(account.accountId, await hashPassword(PASSWORD));
    owner = { ...account, email: row.ownerEmail };
    await api.connect(owner.accountId, 'twitter', 'events_x');
  });
  afterAll(async () => {
    await api.live.close();
    await new Promise((r) => server.close(r));
    await api.close();
  });

  async function signIn(): Promise<{ cookie: string; csrf: string }> {
    const res = await fetch(`${base}/dashboard/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: owner.email, password: PASSWORD }),
    });
    expect(res.status).toBe(200);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
    return { cookie, csrf: ((await res.json()) as { csrf_token: string }).csrf_token };
  }

  async function open(cookie: string | null): Promise<TStream> {
    const controller = new AbortController();
    const res = await fetch(`${base}/dashboard/api/events`, {
      headers: { accept: 'text/event-stream', ...(cookie ? { cookie } : {}) },
      signal: controller.signal,
    });
    if (res.status !== 200) {
      return {
        status: res.status,
        headers: res.headers,
        body: await res.json(),
        next: () => Promise.reject(new Error('not a stream')),
        comment: () => Promise.reject(new Error('not a stream')),
        ended: () => Promise.resolve(),
        close: () => undefined,
      };
    }
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const blocks: string[] = [];
    let done = false;
    const waiters = new Set<() => void>();
    void (async () => {
      try {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          buffer += decoder.decode(chunk.value, { stream: true });
          let cut = buffer.indexOf('\n\n');
          while (cut !== -1) {
            blocks.push(buffer.slice(0, cut));
            buffer = buffer.slice(cut + 2);
            cut = buffer.indexOf('\n\n');
          }
          for (const w of waiters) w();
        }
      } catch {
        // aborted by close()
      }
      done = true;
      for (const w of waiters) w();
    })();
    let read = 0;
    const waitFor = <T>(find: () => T | undefined, ms: number, what: string): Promise<T> =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = find();
          if (found !== undefined) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${what} within ${ms} ms; got: ${blocks.join(' | ')}`));
        }, ms);
        waiters.add(check);
        check();
      });
    return {
      status: res.status,
      headers: res.headers,
      body: null,
      next: (match, ms = 3000) =>
        waitFor(
          () => {
            for (; read < blocks.length; read += 1) {
              const lines = blocks[read]!.split('\n');
              const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
              const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
              if (event && data) {
                const parsed = JSON.parse(data) as Record<string, unknown>;
                if (match(event, parsed)) {
                  read += 1;
                  return parsed;
                }
              }
            }
            return undefined;
          },
          ms,
          'matching event',
        ),
      comment: (text, ms = 3000) =>
        waitFor(
          () => (blocks.some((b) => b.includes(`: ${text}`)) ? true : undefined),
          ms,
          `comment ${text}`,
        ).then(() => undefined),
      ended: (ms = 3000) =>
        waitFor(() => (done ? true : undefined), ms, 'end of stream').then(() => undefined),
      close: () => controller.abort(),
    };
  }

  it('refuses a request without a session (401, Variant B shape)', async () => {
    const stream = await open(null);
    expect(stream.status).toBe(401);
    expect(stream.body).toEqual(expect.objectContaining({ code: 'unauthorized' }));
  });

  it("streams the account's own post changes (a draft made with an API key), never another account's", async () => {
    const { cookie } = await signIn();
    const stream = await open(cookie);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).toMatch(/no-cache/);
    await stream.next((event) => event === 'ready');

    const other = await api.account('pro');
    const theirs = await request(api.app)
      .post('/v1/posts')
      .set(bearer(other.apiKey))
      .send({ content: 'not yours', platforms: ['twitter'] });
    expect(theirs.status).toBe(201);
    const mine = await request(api.app)
      .post('/v1/posts')
      .set(bearer(owner.apiKey))
      .send({ content: 'a draft from an API client', platforms: ['twitter'] });
    expect(mine.status).toBe(201);

    const first = await stream.next((event) => event === 'post.changed');
    // The other account's change came first and is not in this stream.
    expect(first).toEqual({ type: 'post.changed', post_id: mine.body.id });
    expect(JSON.stringify(first)).not.toContain('a draft from an API client');
    stream.close();
  });

  it('streams outbox events: a scheduled post and a connected account', async () => {
    const { cookie } = await signIn();
    const stream = await open(cookie);
    await stream.next((event) => event === 'ready');
    const scheduled = await request(api.app)
      .post('/v1/posts')
      .set(bearer(owner.apiKey))
      .send({
        content: 'later',
        platforms: ['twitter'],
        scheduled_for: new Date(Date.now() + 86_400_000).toISOString(),
      });
    expect(scheduled.status).toBe(201);
    const event = await stream.next((name) => name === 'post.scheduled');
    expect(event).toEqual(
      expect.objectContaining({ type: 'post.scheduled', post_id: scheduled.body.id, status: 'scheduled' }),
    );
    expect(event['id']).toEqual(expect.any(String));

    const socialId = await api.connect(owner.accountId, 'mastodon', 'events_masto');
    const connected = await stream.next((name) => name === 'account.connected');
    expect(connected).toEqual(expect.objectContaining({ account_id: socialId }));
    stream.close();
  });

  it('bounds the streams of one account (429 with Retry-After), and frees a slot when one closes', async () => {
    const { cookie } = await signIn();
    // Earlier tests' streams were aborted by the client; the server notices the closed sockets.
    for (let i = 0; i < 100 && api.live.openFor(owner.accountId) > 0; i += 1)
      await new Promise((r) => setTimeout(r, 20));
    const a = await open(cookie);
    const b = await open(cookie);
    expect([a.status, b.status]).toEqual([200, 200]);
    const c = await open(cookie);
    expect(c.status).toBe(429);
    expect(c.headers.get('retry-after')).toBe('30');
    expect(c.body).toEqual(expect.objectContaining({ code: 'rate_limited' }));
    a.close();
    for (let i = 0; i < 100 && api.live.openFor(owner.accountId) > 1; i += 1)
      await new Promise((r) => setTimeout(r, 20));
    const d = await open(cookie);
    expect(d.status).toBe(200);
    b.close();
    d.close();
  });

  it('sends heartbeats, and ends the stream when its session is signed out', async () => {
    for (let i = 0; i < 100 && api.live.openFor(owner.accountId) > 0; i += 1)
      await new Promise((r) => setTimeout(r, 20));
    const { cookie, csrf } = await signIn();
    const stream = await open(cookie);
    await stream.comment('ping');
    const out = await fetch(`${base}/dashboard/api/session`, {
      method: 'DELETE',
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(out.status).toBe(204);
    await stream.ended();
    // Reconnecting with the old cookie is refused.
    expect((await open(cookie)).status).toBe(401);
  });
});
