import { createServer, type Server } from 'node:https';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { RESPONSE_READ_LIMIT } from '../src/delivery.processor.js';
import { makeCertificate, startReceiver, type TCertificate, type TReceiver } from './support/receiver.js';

// Abuse by a tenant's receivers and webhook count (issue #15): answers that are huge or compressed bombs,
// receivers that hang while another tenant waits, and more webhooks than an account may have.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await sleep(50);
  }
}

/** An HTTPS receiver answering 500 with `bytes` of body (streamed) or a gzip bomb; counts what it wrote. */
async function startHostileReceiver(cert: TCertificate) {
  const stats = { written: 0, finished: false, closedEarly: false };
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024)); // 64 MB of zeros in about 64 KB
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/bomb') {
        res.writeHead(500, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(bomb);
        return;
      }
      // 100 MB, written as fast as the client reads.
      const total = 100 * 1024 * 1024;
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.write('upstream exploded\n');
      res.on('close', () => {
        if (!stats.finished) stats.closedEarly = true;
      });
      const pump = () => {
        while (stats.written < total) {
          stats.written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        stats.finished = true;
        res.end();
      };
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    stats,
    url: (path: string) => `https://127.0.0.1:${port}${path}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

describe('webhook receivers and counts cannot hurt other tenants', () => {
  let cert: TCertificate;
  let receiver: TReceiver;
  let hostile: Awaited<ReturnType<typeof startHostileReceiver>>;
  let api: TTestApi;

  beforeAll(async () => {
    cert = makeCertificate();
    receiver = await startReceiver(cert);
    receiver.respond = (r) => (r.path.startsWith('/slow') ? 'hang' : 204);
    hostile = await startHostileReceiver(cert);
    api = await startTestApi({
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
      webhooks: {
        certificateAuthority: cert.cert,
        // Ten slots; an account may hold four of them.
        concurrency: 10,
        perAccountConcurrency: 4,
        // Long enough that, without fair slots, the other tenant would wait for these timeouts.
        timeoutMs: 25_000,
        retryDelaysMs: [60_000],
      },
    });
  });
  afterAll(async () => {
    await api.close();
    await receiver.close();
    await hostile.close();
    cert.remove();
  });

  async function webhook(apiKey: string, url: string) {
    const res = await request(api.app)
      .post('/v1/webhooks')
      .set(bearer(apiKey))
      .send({ url, events: ['account.connected'] });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function events(accountId: string, count: number) {
    await api.db.event.createMany({
      data: Array.from({ length: count }, (_, i) => ({
        accountId,
        type: 'account.connected',
        data: { account: { id: `acc-${i}`, platform: 'twitter' } },
      })),
    });
  }

  const deliveriesOf = (webhookId: string) =>
    api.db.webhookDelivery.findMany({ where: { webhookId }, orderBy: { createdAt: 'asc' } });

  it('reads at most a few kilobytes of an answer and keeps a short excerpt', async () => {
    const a = await api.account('pro');
    const id = await webhook(a.apiKey, hostile.url('/huge'));
    await events(a.accountId, 1);
    const [row] = await until(
      () => deliveriesOf(id),
      (rows) => (rows[0]?.attempts ?? 0) >= 1,
    );
    expect(row!.lastStatusCode).toBe(500);
    expect(row!.lastError).toMatch(/^HTTP 500: upstream exploded x+…$/);
    expect(row!.lastError!.length).toBeLessThanOrEqual(220);
    // The receiver could not push its 100 MB: the connection was dropped after the first bytes (what it
    // wrote is what the socket buffers took before that).
    await until(
      async () => hostile.stats,
      (s) => s.closedEarly || s.finished,
    );
    expect(hostile.stats.finished).toBe(false);
    expect(hostile.stats.written).toBeLessThan(20 * 1024 * 1024);
    expect(RESPONSE_READ_LIMIT).toBeLessThanOrEqual(8192);
  });

  it('never decompresses an answer: a gzip bomb is recorded without being inflated', async () => {
    const a = await api.account('pro');
    const id = await webhook(a.apiKey, hostile.url('/bomb'));
    await events(a.accountId, 1);
    const [row] = await until(
      () => deliveriesOf(id),
      (rows) => (rows[0]?.attempts ?? 0) >= 1,
    );
    expect(row).toMatchObject({ lastStatusCode: 500, lastError: 'HTTP 500 (gzip-encoded body not read)' });
  });

  it("one account's hanging receivers hold at most its share of slots; another account's deliveries go out meanwhile", async () => {
    const slow = await api.account('pro');
    const slowHooks = [];
    for (let i = 0; i < 3; i += 1) slowHooks.push(await webhook(slow.apiKey, receiver.url(`/slow-${i}`)));
    // 30 deliveries that will hang for 25 s each: far more than the ten slots.
    await events(slow.accountId, 10);
    await receiver.waitFor((all) => all.filter((r) => r.path.startsWith('/slow')).length >= 4);

    const fast = await api.account('pro');
    const fastHook = await webhook(fast.apiKey, receiver.url('/fast'));
    await events(fast.accountId, 8);
    // Without per-account slots all ten would hang on the slow receiver until its 25 s timeout.
    await until(
      () => deliveriesOf(fastHook),
      (rows) => rows.length === 8 && rows.every((r) => r.status === 'succeeded'),
      15_000,
    );
    const slowRows = (await Promise.all(slowHooks.map(deliveriesOf))).flat();
    // The slow ones are still hanging (none finished), and never more than the account's four at once.
    expect(slowRows.every((r) => r.attempts === 0)).toBe(true);
    expect(receiver.received.filter((r) => r.path.startsWith('/slow')).length).toBe(4);
  }, 60_000);

  it(`caps webhooks at ${MAX_WEBHOOKS_PER_ACCOUNT} per account, in REST and MCP, also when created at once`, async () => {
    const a = await api.account('pro');
    const ids: string[] = [];
    for (let i = 0; i < MAX_WEBHOOKS_PER_ACCOUNT; i += 1)
      ids.push(await webhook(a.apiKey, receiver.url(`/n${i}`)));
    const over = await request(api.app)
      .post('/v1/webhooks')
      .set(bearer(a.apiKey))
      .send({ url: receiver.url('/one-more'), events: ['post.published'] });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({
      code: 'conflict',
      error: `webhooks: an account may have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks`,
      details: { field: 'webhooks', limit: MAX_WEBHOOKS_PER_ACCOUNT },
    });

    const mcp = await request(api.app)
      .post('/mcp')
      .set(bearer(a.apiKey))
      .set('accept', 'application/json, text/event-stream')
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'create_webhook', arguments: { url: receiver.url('/mcp'), events: ['post.failed'] } },
      });
    expect(mcp.status).toBe(200);
    expect(mcp.body.result.isError).toBe(true);
    expect(mcp.body.result.structuredContent).toMatchObject({
      code: 'conflict',
      details: {
        issues: [{ field: 'webhooks', message: `at most ${MAX_WEBHOOKS_PER_ACCOUNT} per account` }],
        limit: MAX_WEBHOOKS_PER_ACCOUNT,
      },
    });

    // Two places free, five creates at once: exactly two succeed.
    for (const id of ids.slice(0, 2)) {
      await request(api.app).delete(`/v1/webhooks/${id}`).set(bearer(a.apiKey)).expect(204);
    }
    const racing = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        request(api.app)
          .post('/v1/webhooks')
          .set(bearer(a.apiKey))
          .send({ url: receiver.url(`/race${i}`), events: ['post.published'] }),
      ),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 201, 409, 409, 409]);
    expect(await api.db.webhook.count({ where: { accountId: a.accountId } })).toBe(MAX_WEBHOOKS_PER_ACCOUNT);
  }, 60_000);
});
