import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPublishRepository, createSocialAccountRepository, recordEvent } from '@sps/db';
import { createQueues } from '@sps/queue';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { createMailer } from '../src/mailer.js';
import { createWebhooksWorker } from '../src/webhooks.js';
import {
  makeCertificate,
  startReceiver,
  type TCertificate,
  type TReceived,
  type TReceiver,
} from './support/receiver.js';

const ALL = ['post.published', 'post.failed', 'post.scheduled', 'account.connected', 'account.disconnected'];
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

describe('webhook delivery: signatures, envelope, event types, filtering, outbox, SSRF', () => {
  let cert: TCertificate;
  let receiver: TReceiver;
  let api: TTestApi;

  beforeAll(async () => {
    cert = makeCertificate();
    receiver = await startReceiver(cert);
    // The worker trusts the self-signed receiver through an option (NODE_EXTRA_CA_CERTS is read at process start).
    api = await startTestApi({
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
      webhooks: { certificateAuthority: cert.cert },
    });
  });
  afterAll(async () => {
    await api.close();
    await receiver.close();
    cert.remove();
  });

  async function webhook(apiKey: string, path: string, events: string[], url = receiver.url(path)) {
    const res = await request(api.app).post('/v1/webhooks').set(bearer(apiKey)).send({ url, events });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  }

  const envelopeOf = (r: TReceived) =>
    JSON.parse(r.rawBody) as { id: string; type: string; created_at: string; data: Record<string, never> };

  it('delivers each of the five event types, signed both ways over the exact raw body, filtered by subscription and account', async () => {
    const a = await api.account('pro');
    const b = await api.account('pro');
    const all = await webhook(a.apiKey, '/a-all', ALL);
    await webhook(a.apiKey, '/a-connected', ['account.connected']);
    await webhook(b.apiKey, '/b-all', ALL);

    // account.connected (twice), post.scheduled (twice), post.published, post.failed, account.disconnected
    const twitterId = await api.connect(a.accountId, 'twitter', 'wh-a');
    const mastodonId = await api.connect(a.accountId, 'mastodon', 'wh-a2', {
      instanceUrl: 'https://mastodon.example',
    });
    const createPost = async () => {
      const res = await request(api.app)
        .post('/v1/posts')
        .set(bearer(a.apiKey))
        .send({ content: 'webhook test', platforms: ['twitter'], scheduled_for: inAnHour() });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const publishedId = await createPost();
    const failedId = await createPost();
    const publishing = createPublishRepository(api.db);
    const begun = await publishing.begin({
      accountId: a.accountId,
      postId: publishedId,
      from: ['scheduled'],
      accounts: { twitter: twitterId },
    });
    expect(begun.kind).toBe('started');
    await publishing.updateTarget(publishedId, 'twitter', {
      status: 'succeeded',
      remotePostId: 'r-1',
      remoteUrl: 'https://x.com/r-1',
    });
    expect(
      await publishing.finalize(publishedId, begun.kind === 'started' ? begun.attempt : 0),
    ).not.toBeNull();
    expect(
      await publishing.failBeforeSending(failedId, 'scheduled', { twitter: 'no connected account' }),
    ).not.toBeNull();
    await createSocialAccountRepository(api.db).disconnect(a.accountId, mastodonId, 'manual');

    await receiver.waitFor(
      () => receiver.on('/a-all').length >= 7 && receiver.on('/a-connected').length >= 2,
    );
    // Let anything stray arrive before counting.
    await api.webhooks!.dispatchNow();
    await new Promise((r) => setTimeout(r, 400));
    const received = receiver.on('/a-all');
    expect(received).toHaveLength(7);
    expect(receiver.on('/a-connected').map((r) => envelopeOf(r).type)).toEqual([
      'account.connected',
      'account.connected',
    ]);
    expect(receiver.on('/b-all')).toHaveLength(0);

    const events = await api.db.event.findMany({ where: { accountId: a.accountId } });
    const verifier = new Webhook(all.secret);
    for (const r of received) {
      expect(r.headers['content-type']).toBe('application/json');
      // X-Service-Signature: hex HMAC-SHA256 of the raw body, keyed with the secret.
      const expected = createHmac('sha256', all.secret).update(r.rawBody).digest();
      const got = Buffer.from(String(r.headers['x-service-signature']), 'hex');
      expect(got.length === expected.length && timingSafeEqual(got, expected)).toBe(true);
      // Standard Webhooks: verified by the `standardwebhooks` package itself.
      const verified = verifier.verify(r.rawBody, r.headers as Record<string, string>);
      const envelope = envelopeOf(r);
      expect(verified).toEqual(envelope);
      expect(() =>
        verifier.verify(r.rawBody.replace('"data"', '"data" '), r.headers as Record<string, string>),
      ).toThrow();
      expect(Object.keys(envelope).sort()).toEqual(['created_at', 'data', 'id', 'type']);
      expect(r.headers['webhook-id']).toBe(envelope.id);
      const event = events.find((e) => e.id === envelope.id);
      expect(event).toBeDefined();
      expect(envelope.type).toBe(event!.type);
      expect(envelope.created_at).toBe(event!.createdAt.toISOString());
      expect(envelope.data).toEqual(event!.data);
    }
    const byType: Record<string, ReturnType<typeof envelopeOf>[]> = {};
    for (const e of received.map(envelopeOf)) {
      byType[e.type] = [...(byType[e.type] ?? []), e];
    }
    expect(Object.keys(byType).sort()).toEqual([...ALL].sort());
    const published = byType['post.published']![0]!.data.post as {
      id: string;
      status: string;
      platform_results: Record<string, { post_id?: string }>;
    };
    expect(published).toMatchObject({ id: publishedId, status: 'published' });
    expect(published.platform_results.twitter).toBeDefined();
    expect(byType['post.failed']![0]!.data.post).toMatchObject({ id: failedId });
    expect(byType['post.failed']![0]!.data.post).toHaveProperty('platform_results');
    expect(byType['post.scheduled']).toHaveLength(2);
    expect(byType['post.scheduled']![0]!.data.post).toHaveProperty('scheduled_for');
    expect(byType['account.connected']!.map((e) => (e.data.account as { id: string }).id).sort()).toEqual(
      [twitterId, mastodonId].sort(),
    );
    expect(byType['account.disconnected']![0]!.data.account).toMatchObject({
      id: mastodonId,
      is_active: false,
    });

    // Account B's own event reaches only B's webhook.
    await api.connect(b.accountId, 'twitter', 'wh-b');
    await receiver.waitFor(() => receiver.on('/b-all').length === 1);
    const bEnvelope = envelopeOf(receiver.on('/b-all')[0]!);
    expect(bEnvelope.type).toBe('account.connected');
    expect((await api.db.event.findUniqueOrThrow({ where: { id: bEnvelope.id } })).accountId).toBe(
      b.accountId,
    );
    expect(receiver.on('/a-all')).toHaveLength(7);
  });

  it('writes no event and no delivery for a rolled-back transaction', async () => {
    const a = await api.account('pro');
    await webhook(a.apiKey, '/rollback', ALL);
    const before = await api.db.event.count();
    await expect(
      api.db.$transaction(async (tx) => {
        const row = await tx.socialAccount.create({
          data: {
            accountId: a.accountId,
            platform: 'twitter',
            accountName: 'rolled-back',
            credentialsEncrypted: 'x',
          },
        });
        await recordEvent(tx, {
          accountId: a.accountId,
          type: 'account.connected',
          data: { account: { id: row.id } },
        });
        throw new Error('abort the change');
      }),
    ).rejects.toThrow('abort the change');
    await api.webhooks!.dispatchNow();
    await new Promise((r) => setTimeout(r, 300));
    expect(await api.db.event.count()).toBe(before);
    expect(await api.db.socialAccount.count({ where: { accountName: 'rolled-back' } })).toBe(0);
    expect(await api.db.webhookDelivery.count({ where: { webhook: { accountId: a.accountId } } })).toBe(0);
    expect(receiver.on('/rollback')).toHaveLength(0);
  });

  it('refuses private addresses again at delivery time when private URLs are not allowed', async () => {
    const a = await api.account('pro');
    const literal = await webhook(a.apiKey, '/ssrf', ['account.connected']);
    const named = await webhook(
      a.apiKey,
      '/ssrf-named',
      ['account.connected'],
      `https://localhost:${receiver.port}/ssrf-named`,
    );
    // Swap the permissive test worker for one with the guard on, as in production.
    await api.stopWebhooks();
    const connection = api.redisFactory.worker();
    const queues = createQueues(connection, api.env.QUEUE_PREFIX);
    const logger = pino({ level: 'silent' });
    const strict = await createWebhooksWorker({
      db: api.db,
      connection,
      queues,
      queuePrefix: api.env.QUEUE_PREFIX,
      logger,
      mailer: createMailer({ from: 'x@localhost', logger }),
      options: {
        encryptionKey: api.env.encryptionKey,
        retryDelaysMs: [60_000],
        timeoutMs: 2000,
        allowPrivateUrls: false,
        deactivateAfter: 10,
        concurrency: 5,
        certificateAuthority: cert.cert,
      },
      dispatchEveryMs: 100,
      reconcileEveryMs: 60_000,
    });
    try {
      await api.connect(a.accountId, 'twitter', 'ssrf');
      const deadline = Date.now() + 10_000;
      let rows = await api.db.webhookDelivery.findMany({
        where: { webhookId: { in: [literal.id, named.id] } },
      });
      while ((rows.length < 2 || rows.some((r) => r.attempts === 0)) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        rows = await api.db.webhookDelivery.findMany({
          where: { webhookId: { in: [literal.id, named.id] } },
        });
      }
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(row).toMatchObject({ status: 'retrying', attempts: 1, lastStatusCode: null });
        expect(row.lastError).toMatch(/refused/);
      }
      expect(receiver.on('/ssrf')).toHaveLength(0);
      expect(receiver.on('/ssrf-named')).toHaveLength(0);
    } finally {
      await strict.close();
      await queues.close();
      await connection.quit();
      await api.startWebhooks();
    }
  });
});
