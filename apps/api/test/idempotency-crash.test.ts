import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { freePort, startNode, type TChild, waitUntil } from '../../../test/processes.js';
import { startTestApi, type TTestApi } from './harness.js';

// The real API process (`node apps/api/dist/main.js`) killed (SIGKILL) between the insert and the answer:
// the client saw no answer, and its retry with the same Idempotency-Key, served by a new process, answers
// the post that was made, which exists once. The kill comes from a test-only preload
// (fixtures/crash-before-answer.mjs) on requests that carry `x-test-crash: before-answer`.

const HOOK = pathToFileURL(resolve(import.meta.dirname, 'fixtures/crash-before-answer.mjs')).href;
const PUBLISH_WAIT_MS = 500;
const LEASE_MS = 500;
// Each test starts two API processes; on a busy two-core box one takes several seconds to listen.
jest.setTimeout(90_000);

describe('Idempotency-Key: a crash between the insert and the answer', () => {
  let api: TTestApi;
  let apiKey: string;
  let accountId: string;
  const children: TChild[] = [];

  beforeAll(async () => {
    // Its database and Redis prefix only: the child processes serve the requests.
    api = await startTestApi();
    ({ apiKey, accountId } = await api.account('pro'));
    await api.connect(accountId, 'twitter');
  });
  afterAll(async () => {
    for (const child of children) await child.stop(2_000);
    await api?.close();
  });

  async function startApi(): Promise<{ child: TChild; base: string }> {
    const port = await freePort();
    const child = startNode(
      'api',
      'apps/api/dist/main.js',
      {
        NODE_ENV: 'test',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: api.env.DATABASE_URL,
        REDIS_URL: api.env.REDIS_URL,
        QUEUE_PREFIX: api.env.QUEUE_PREFIX,
        LOG_LEVEL: 'warn',
        PUBLISH_WAIT: `${PUBLISH_WAIT_MS}ms`,
        IDEMPOTENCY_LEASE: `${LEASE_MS}ms`,
        RATE_LIMIT_A_PER_MINUTE: '100000',
        RATE_LIMIT_A_PUBLISH_PER_HOUR: '100000',
        NETWORK_AVAILABILITY: 'twitter=live',
      },
      ['--import', HOOK],
    );
    children.push(child);
    const base = `http://127.0.0.1:${port}`;
    await waitUntil(
      'the API to answer /healthz',
      async () => {
        if (!child.running()) throw new Error(`api exited early:\n${child.output()}`);
        return (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) })).ok;
      },
      30_000,
    );
    return { child, base };
  }

  async function send(base: string, path: string, headers: Record<string, string>, body: unknown) {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${apiKey}`, ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.json() };
  }

  /** Sends the request that kills the process before its answer; resolves once the process is gone. */
  async function crashOn(path: string, key: string, body: unknown) {
    const { child, base } = await startApi();
    const lost = await send(
      base,
      path,
      { 'Idempotency-Key': key, 'x-test-crash': 'before-answer' },
      body,
    ).then(
      () => 'answered',
      () => 'no answer',
    );
    expect(lost).toBe('no answer');
    expect((await child.exited).signal).toBe('SIGKILL');
  }

  const postsOfAccount = () => api.db.post.findMany({ where: { accountId } });

  it.each([
    ['B', '/v1/posts'],
    ['A', '/api/posts'],
  ])('Variant %s create: the retry replays the post made, which exists once', async (variant, path) => {
    const body = { content: `made before the crash (${variant})`, platforms: ['twitter'] };
    const idOf = (answer: { id?: string; post?: { id: string } }) =>
      variant === 'B' ? answer.id : answer.post?.id;
    const before = (await postsOfAccount()).length;
    const key = randomUUID();
    await crashOn(path, key, body);
    const after = await postsOfAccount();
    expect(after).toHaveLength(before + 1);
    const { base } = await startApi();
    const retry = await send(base, path, { 'Idempotency-Key': key }, body);
    expect(retry.status).toBe(201);
    expect(retry.replayed).toBe('true');
    expect(after.map((p) => p.id)).toContain(idOf(retry.body));
    expect(await postsOfAccount()).toHaveLength(before + 1);
  });

  it('Variant A create with published: true: the retry answers for the post made and does not publish again', async () => {
    const before = (await postsOfAccount()).length;
    const key = randomUUID();
    const body = { content: 'published before the crash', platforms: ['twitter'], published: true };
    await crashOn('/api/posts', key, body);
    const made = await postsOfAccount();
    expect(made).toHaveLength(before + 1);
    const post = made.find((p) => p.content === body.content);
    expect(post?.publishAttempt).toBe(1);
    // The crashed request never stored its answer; once its lease has run out the retry takes over and
    // answers for the post it made (still publishing: no publisher runs here).
    const { base } = await startApi();
    await new Promise((r) => setTimeout(r, PUBLISH_WAIT_MS + LEASE_MS));
    const retry = await send(base, '/api/posts', { 'Idempotency-Key': key }, body);
    expect(retry.status).toBe(201);
    expect(retry.body.post.id).toBe(post?.id);
    expect(await postsOfAccount()).toHaveLength(before + 1);
    expect((await api.db.post.findUniqueOrThrow({ where: { id: post?.id ?? '' } })).publishAttempt).toBe(1);
    const replay = await send(base, '/api/posts', { 'Idempotency-Key': key }, body);
    expect(replay.replayed).toBe('true');
    expect(replay.body).toEqual(retry.body);
  });

  it.each([
    ['B', '/v1/posts', (id: string) => `/v1/posts/${id}/publish`],
    ['A', '/api/posts', (id: string) => `/api/posts/${id}/publish`],
  ])(
    'Variant %s publish: the retry answers for the attempt started, not "already publishing"',
    async (variant, create, publishPath) => {
      const { base } = await startApi();
      const made = await send(
        base,
        create,
        {},
        { content: `publish then crash (${variant})`, platforms: ['twitter'] },
      );
      const id: string = variant === 'B' ? made.body.id : made.body.post.id;
      const key = randomUUID();
      await crashOn(publishPath(id), key, {});
      // The attempt started and the key recorded it in the same statement; no answer was stored.
      const post = await api.db.post.findUniqueOrThrow({ where: { id } });
      expect(post.status).toBe('publishing');
      expect(post.publishAttempt).toBe(1);
      const { base: again } = await startApi();
      await new Promise((r) => setTimeout(r, PUBLISH_WAIT_MS + LEASE_MS));
      const retry = await send(again, publishPath(id), { 'Idempotency-Key': key }, {});
      expect(retry.status).toBe(200);
      expect(variant === 'B' ? retry.body.id : retry.body.post.id).toBe(id);
      expect((await api.db.post.findUniqueOrThrow({ where: { id } })).publishAttempt).toBe(1);
      // Without a key the same publish is refused: the post is already publishing.
      const plain = await send(again, publishPath(id), {}, {});
      expect(plain.status).toBe(variant === 'B' ? 409 : 400);
    },
  );
});
