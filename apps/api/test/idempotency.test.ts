import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createIdempotencyRepository,
  createPostRepository,
  createPublishRepository,
  createWebhookRepository,
} from '@sps/db';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

// Idempotency-Key on both variants (CONTRACT "Idempotent requests"), through HTTP against real PostgreSQL.

const PUBLISH_WAIT_MS = 4_000;

describe('Idempotency-Key', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    // No publisher: a Variant A publish waits its whole PUBLISH_WAIT, long enough to be seen running.
    api = await startTestApi({
      env: { PUBLISH_WAIT: `${PUBLISH_WAIT_MS}ms` },
    });
    const account = await api.account('pro');
    key = account.apiKey;
    accountId = account.accountId;
    await api.connect(accountId, 'twitter');
  });
  afterAll(async () => {
    await api?.close();
  });

  const postB = (path: string, idem: string | undefined, body: unknown) => {
    const req = request(api.app).post(path).set(bearer(key));
    if (idem !== undefined) req.set('Idempotency-Key', idem);
    return req.send(body as object);
  };

  async function postCount(): Promise<number> {
    return api.db.post.count({ where: { accountId } });
  }

  async function sql(text: string, values: unknown[]) {
    return { rows: await api.db.$queryRawUnsafe<Record<string, unknown>[]>(text, ...values) };
  }

  async function keyRow(idem: string) {
    const { rows } = await sql(
      'SELECT resource_id, response_status, lock_token FROM idempotency_keys WHERE account_id = $1::uuid AND key = $2',
      [accountId, idem],
    );
    return rows[0] as { resource_id: string | null; response_status: number | null } | undefined;
  }

  describe('Variant B POST /v1/posts', () => {
    it('twenty concurrent creates with one key make one post; the others replay it or are 409', async () => {
      const before = await postCount();
      const idem = randomUUID();
      const body = { content: 'twenty at once', platforms: ['twitter'] };
      const answers = await Promise.all(Array.from({ length: 20 }, () => postB('/v1/posts', idem, body)));
      expect(await postCount()).toBe(before + 1);
      const created = answers.filter((a) => a.status === 201);
      const inUse = answers.filter((a) => a.status === 409);
      expect(created.length + inUse.length).toBe(20);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
      expect(created.filter((a) => a.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
      for (const a of inUse) {
        expect(a.body).toEqual({
          error: expect.any(String),
          code: 'idempotency_key_in_use',
          details: expect.objectContaining({ field: 'Idempotency-Key' }),
        });
      }
      // Once settled, every retry replays the first answer exactly.
      const again = await postB('/v1/posts', idem, body);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(created.find((a) => !a.headers['idempotent-replayed'])?.text);
      expect(await postCount()).toBe(before + 1);
    });

    it('the same body in another key order and spacing is the same request; another body is 422', async () => {
      const idem = `order-${randomUUID()}`;
      const first = await postB('/v1/posts', idem, { content: 'same', platforms: ['twitter'] });
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const reordered = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .set('Idempotency-Key', idem)
        .set('Content-Type', 'application/json')
        .send('{ "platforms": ["twitter"],   "content": "same" }');
      expect(reordered.status).toBe(201);
      expect(reordered.headers['idempotent-replayed']).toBe('true');
      expect(reordered.body.id).toBe(first.body.id);
      const other = await postB('/v1/posts', idem, { content: 'different', platforms: ['twitter'] });
      expect(other.status).toBe(422);
      expect(other.body).toEqual({
        error: expect.stringContaining('Idempotency-Key'),
        code: 'idempotency_key_reused',
        details: expect.objectContaining({ field: 'Idempotency-Key' }),
      });
      // The same key on another route is another request too.
      const elsewhere = await postB(`/v1/posts/${first.body.id}/publish`, idem, {});
      expect(elsewhere.status).toBe(422);
    });

    it('keys are per account: another account with the same key gets its own post', async () => {
      const idem = `shared-${randomUUID()}`;
      const other = await api.account('pro');
      const mine = await postB('/v1/posts', idem, { content: 'mine', platforms: ['twitter'] });
      const theirs = await request(api.app)
        .post('/v1/posts')
        .set(bearer(other.apiKey))
        .set('Idempotency-Key', idem)
        .send({ content: 'mine', platforms: ['twitter'] });
      expect(mine.status).toBe(201);
      expect(theirs.status).toBe(201);
      expect(theirs.headers['idempotent-replayed']).toBeUndefined();
      expect(theirs.body.id).not.toBe(mine.body.id);
    });

    it('a malformed request (400) is not remembered: the key then serves the corrected request', async () => {
      const idem = `bad-${randomUUID()}`;
      const bad = await postB('/v1/posts', idem, { content: '', platforms: ['nowhere'] });
      expect(bad.status).toBe(400);
      expect(await keyRow(idem)).toBeUndefined();
      const good = await postB('/v1/posts', idem, { content: 'fixed', platforms: ['twitter'] });
      expect(good.status).toBe(201);
      expect(good.headers['idempotent-replayed']).toBeUndefined();
    });

    it('a refusal of a request that ran (404) is remembered and replayed', async () => {
      const idem = `missing-${randomUUID()}`;
      const path = `/v1/posts/${randomUUID()}/publish`;
      const first = await postB(path, idem, {});
      expect(first.status).toBe(404);
      const again = await postB(path, idem, {});
      expect(again.status).toBe(404);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
    });

    it('a key whose holder crashed before making anything is taken over once its lease has run out', async () => {
      const idem = `stale-${randomUUID()}`;
      const body = { content: 'after a crash', platforms: ['twitter'] };
      // What a request leaves that died after claiming its key: a live lease, no resource, no answer.
      const held = await postB('/v1/posts', idem, body);
      expect(held.status).toBe(201);
      await sql(
        `UPDATE idempotency_keys SET resource_id = NULL, response_status = NULL, response_body = NULL,
           lock_token = gen_random_uuid(), locked_until = now() + interval '1 hour'
         WHERE account_id = $1::uuid AND key = $2`,
        [accountId, idem],
      );
      const whileHeld = await postB('/v1/posts', idem, body);
      expect(whileHeld.status).toBe(409);
      expect(whileHeld.body.code).toBe('idempotency_key_in_use');
      await sql(
        `UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE account_id = $1::uuid AND key = $2`,
        [accountId, idem],
      );
      const taken = await postB('/v1/posts', idem, body);
      expect(taken.status).toBe(201);
      expect(taken.headers['idempotent-replayed']).toBeUndefined();
      expect((await keyRow(idem))?.resource_id).toBe(taken.body.id);
    });

    it('a key past its 24 hours is new again', async () => {
      const idem = `old-${randomUUID()}`;
      const first = await postB('/v1/posts', idem, { content: 'yesterday', platforms: ['twitter'] });
      await sql(
        `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE account_id = $1::uuid AND key = $2`,
        [accountId, idem],
      );
      const second = await postB('/v1/posts', idem, { content: 'today', platforms: ['twitter'] });
      expect(second.status).toBe(201);
      expect(second.body.id).not.toBe(first.body.id);
    });

    it.each([
      ['empty', ''],
      ['too long', 'k'.repeat(256)],
      ['not printable ASCII', 'clé'],
    ])('refuses a key that is %s with 400 naming the header', async (_what, value) => {
      const before = await postCount();
      const res = await postB('/v1/posts', value, { content: 'x', platforms: ['twitter'] });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(res.body.details.field).toBe('Idempotency-Key');
      expect(await postCount()).toBe(before);
    });

    it('accepts a key of 255 printable characters', async () => {
      const idem = `${randomUUID()} ~!`.padEnd(255, 'x');
      const res = await postB('/v1/posts', idem, { content: 'long key', platforms: ['twitter'] });
      expect(res.status).toBe(201);
    });

    it('a request without the header is not affected', async () => {
      const a = await postB('/v1/posts', undefined, { content: 'plain', platforms: ['twitter'] });
      const b = await postB('/v1/posts', undefined, { content: 'plain', platforms: ['twitter'] });
      expect(a.body.id).not.toBe(b.body.id);
    });
  });

  describe('Variant B publish and webhooks', () => {
    it('POST /v1/posts/{id}/publish replays its answer and starts one attempt', async () => {
      const made = await postB('/v1/posts', undefined, { content: 'to publish', platforms: ['twitter'] });
      const idem = randomUUID();
      const first = await postB(`/v1/posts/${made.body.id}/publish`, idem, {});
      expect(first.status).toBe(200);
      expect(first.body.status).toBe('publishing');
      const again = await postB(`/v1/posts/${made.body.id}/publish`, idem, {});
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      const post = await api.db.post.findUniqueOrThrow({ where: { id: made.body.id } });
      expect(post.publishAttempt).toBe(1);
    });

    it('POST /v1/webhooks replays the created webhook, secret included, and makes one', async () => {
      const idem = randomUUID();
      const body = { url: 'https://93.184.216.34/hook', events: ['post.published'] };
      const first = await postB('/v1/webhooks', idem, body);
      expect(first.status).toBe(201);
      const again = await postB('/v1/webhooks', idem, body);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(again.body.secret).toMatch(/^whsec_/);
      expect(await api.db.webhook.count({ where: { accountId } })).toBe(1);
      // The stored answer is sealed: the secret is not readable in the table.
      const { rows } = await sql(
        'SELECT response_body FROM idempotency_keys WHERE account_id = $1::uuid AND key = $2',
        [accountId, idem],
      );
      expect(rows[0]?.response_body).not.toContain(first.body.secret);
    });
  });

  describe('Variant A', () => {
    const postA = (path: string, idem: string | undefined, body: unknown) => {
      const req = request(api.app).post(path).set('x-api-key', key);
      if (idem !== undefined) req.set('Idempotency-Key', idem);
      return req.send(body as object);
    };

    it('POST /api/posts: twenty concurrent creates with one key make one post', async () => {
      const before = await postCount();
      const idem = randomUUID();
      const body = { content: 'A twenty', platforms: ['twitter'] };
      const answers = await Promise.all(Array.from({ length: 20 }, () => postA('/api/posts', idem, body)));
      expect(await postCount()).toBe(before + 1);
      expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
      const created = answers.filter((a) => a.status === 201);
      expect(new Set(created.map((a) => a.body.post.id)).size).toBe(1);
      for (const a of answers.filter((x) => x.status === 409)) {
        expect(a.body).toEqual({
          error: expect.any(String),
          fix: expect.any(String),
          details: expect.objectContaining({ code: 'idempotency_key_in_use', field: 'Idempotency-Key' }),
        });
      }
      const again = await postA('/api/posts', idem, body);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.post.id).toBe(created[0]?.body.post.id);
    });

    it('POST /api/posts with another body under the same key is 422 in Variant A’s shape', async () => {
      const idem = randomUUID();
      expect((await postA('/api/posts', idem, { content: 'one', platforms: ['twitter'] })).status).toBe(201);
      const other = await postA('/api/posts', idem, { content: 'two', platforms: ['twitter'] });
      expect(other.status).toBe(422);
      expect(other.body).toEqual({
        error: expect.stringContaining('Idempotency-Key'),
        fix: expect.any(String),
        details: expect.objectContaining({ code: 'idempotency_key_reused', field: 'Idempotency-Key' }),
      });
    });

    it('refuses a malformed key with 400 naming the header', async () => {
      const res = await postA('/api/posts', 'k'.repeat(256), { content: 'x', platforms: ['twitter'] });
      expect(res.status).toBe(400);
      expect(res.body.details.field).toBe('Idempotency-Key');
      expect(res.body.error).toContain('Idempotency-Key');
    });

    it('POST /api/posts/{id}/publish: 409 while the first waits for the outcome, then its answer', async () => {
      const made = await postA('/api/posts', undefined, { content: 'A publish', platforms: ['twitter'] });
      const path = `/api/posts/${made.body.post.id}/publish`;
      const idem = randomUUID();
      const first = postA(path, idem, {}).then((r) => r);
      // The first holds its key while it waits (no publisher runs, so it waits its whole PUBLISH_WAIT).
      const isPublishing = async () =>
        (await api.db.post.findUnique({ where: { id: made.body.post.id } }))?.status === 'publishing';
      for (let i = 0; i < 150 && !(await isPublishing()); i += 1) await new Promise((r) => setTimeout(r, 20));
      const during = await postA(path, idem, {});
      expect(during.status).toBe(409);
      expect(during.body.details.code).toBe('idempotency_key_in_use');
      const answer = await first;
      expect(answer.status).toBe(200);
      const replay = await postA(path, idem, {});
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(answer.text);
      const post = await api.db.post.findUniqueOrThrow({ where: { id: made.body.post.id } });
      expect(post.publishAttempt).toBe(1);
    }, 20_000);
  });

  it('the OpenAPI document declares the header, the replay header and both errors on each such operation', async () => {
    const doc = (await request(api.app).get('/openapi.json')).body;
    for (const [path, variant] of [
      ['/v1/posts', 'B'],
      ['/v1/posts/{id}/publish', 'B'],
      ['/v1/webhooks', 'B'],
      ['/api/posts', 'A'],
      ['/api/posts/{id}/publish', 'A'],
    ] as const) {
      const operation = doc.paths[path].post;
      expect(operation.parameters).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
        ]),
      );
      const success = operation.responses[path.endsWith('publish') ? '200' : '201'];
      expect(success.headers['Idempotent-Replayed']).toBeDefined();
      expect(operation.responses['409']).toEqual({ $ref: `#/components/responses/Error${variant}409` });
      expect(operation.responses['422']).toEqual({ $ref: `#/components/responses/Error${variant}422` });
    }
    expect(doc.paths['/v1/posts'].get.parameters ?? []).not.toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key' })]),
    );
    expect(JSON.stringify(doc.components.schemas.ErrorB)).toContain('idempotency_key_reused');
  });

  it('the sweep removes expired keys, a bounded number per statement', async () => {
    const keys = createIdempotencyRepository(api.db);
    const live = `live-${randomUUID()}`;
    await postB('/v1/posts', live, { content: 'live', platforms: ['twitter'] });
    for (const idem of ['gone-1', 'gone-2'].map((k) => `${k}-${randomUUID()}`)) {
      await postB('/v1/posts', idem, { content: idem, platforms: ['twitter'] });
    }
    await sql(
      `UPDATE idempotency_keys SET expires_at = now() - interval '1 minute' WHERE account_id = $1::uuid AND key LIKE 'gone-%'`,
      [accountId],
    );
    expect(await keys.deleteExpired(1)).toBe(1);
    while ((await keys.deleteExpired(1)) > 0);
    const { rows } = await sql(
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE expires_at <= now()`,
      [],
    );
    expect(rows[0]?.n).toBe(0);
    expect(await keyRow(live)).toBeDefined();
  });

  describe('a request that lost its key to a retry writes nothing', () => {
    /** Claims a key, then lets "a retry" take it over (a new token): the first holder's token is stale. */
    async function staleHolder(fingerprint: string) {
      const keys = createIdempotencyRepository(api.db);
      const key = `fence-${randomUUID()}`;
      const claim = await keys.claim({ accountId, key, fingerprint, leaseMs: 60_000, ttlMs: 60_000 });
      if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
      await sql(
        'UPDATE idempotency_keys SET lock_token = gen_random_uuid() WHERE account_id = $1::uuid AND key = $2',
        [accountId, key],
      );
      return { accountId, key, token: claim.token, status: null, body: null };
    }

    it('a post insert', async () => {
      const before = await postCount();
      const write = await staleHolder('f1');
      await expect(
        createPostRepository(api.db).create(
          accountId,
          'draft',
          { content: 'x', platforms: ['twitter'] },
          new Date(),
          () => write,
        ),
      ).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
      expect(await postCount()).toBe(before);
    });

    it('a publish start', async () => {
      const made = await postB('/v1/posts', undefined, { content: 'fenced publish', platforms: ['twitter'] });
      const write = await staleHolder('f2');
      const [twitter] = await api.db.socialAccount.findMany({ where: { accountId, platform: 'twitter' } });
      const outcome = await createPublishRepository(api.db).begin({
        accountId,
        postId: made.body.id,
        from: ['draft'],
        accounts: { twitter: twitter?.id ?? '' },
        idempotency: write,
      });
      expect(outcome).toEqual({ kind: 'key_lost' });
      const post = await api.db.post.findUniqueOrThrow({ where: { id: made.body.id } });
      expect([post.status, post.publishAttempt]).toEqual(['draft', 0]);
    });

    it('a webhook create', async () => {
      const before = await api.db.webhook.count({ where: { accountId } });
      const write = await staleHolder('f3');
      await expect(
        createWebhookRepository(api.db).create(
          {
            accountId,
            url: 'https://93.184.216.34/fenced',
            events: ['post.published'],
            secretEncrypted: 'x',
          },
          25,
          () => write,
        ),
      ).rejects.toMatchObject({ code: 'idempotency_key_in_use' });
      expect(await api.db.webhook.count({ where: { accountId } })).toBe(before);
    });
  });
});
