import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, uniqueMarker } from './pipeline-helpers.js';

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A Mastodon instance that answers like the simulated one, except that a new status links to `link`: a
 * self-hosted server decides what its answers say.
 */
function hostileInstance(target: () => string, link: () => string): Server {
  return createServer(async (req, res) => {
    const body = await bodyOf(req);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(
        ([k, v]) => k !== 'host' && k !== 'content-length' && typeof v === 'string',
      ),
    ) as Record<string, string>;
    const answer = await fetch(`${target()}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
    let text = await answer.text();
    if (req.method === 'POST' && req.url?.startsWith('/api/v1/statuses') && answer.ok) {
      text = JSON.stringify({ ...(JSON.parse(text) as object), url: link(), uri: link() });
    }
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    res.end(text);
  });
}

describe("a network's link to a post is stored only when it is https", () => {
  let api: TTestApi;
  let server: Server;
  let instance: string;
  let link = 'javascript:alert(document.cookie)';

  beforeAll(async () => {
    server = hostileInstance(
      () => api.sim?.baseUrls.mastodon ?? '',
      () => link,
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    instance = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The operator's own instance (NETWORK_MASTODON_BASE_URL) may be on a private address.
    api = await startTestApi({ publisher: true, env: { NETWORK_MASTODON_BASE_URL: instance } });
  });
  afterAll(async () => {
    await api.close();
    await new Promise((resolve) => server.close(resolve));
  });

  async function publishOn(key: string): Promise<Record<string, unknown>> {
    const post = await createB(api, key, { content: `link ${uniqueMarker('url')}`, platforms: ['mastodon'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key)).expect(200);
    const done = await settleB(api, key, post.id);
    expect(done.status).toBe('published');
    return done.platform_results?.mastodon as Record<string, unknown>;
  }

  it('`javascript:` and plain http links are not stored: the post is published, without a link', async () => {
    const { accountId, apiKey } = await api.account('pro');
    await api.connect(accountId, 'mastodon', 'mona', { instanceUrl: instance });
    for (const hostile of [
      'javascript:alert(document.cookie)',
      'http://instance.example/@mona/1',
      'data:text/html,x',
    ]) {
      link = hostile;
      const result = await publishOn(apiKey);
      expect(result).toMatchObject({ success: true, post_url: '' });
      const rows = await api.db.postTarget.findMany({
        where: { socialAccount: { accountId } },
        select: { remoteUrl: true },
      });
      expect(rows.map((r) => r.remoteUrl)).not.toContain(hostile);
    }
    link = 'https://instance.example/@mona/2';
    expect(await publishOn(apiKey)).toMatchObject({
      success: true,
      post_url: 'https://instance.example/@mona/2',
    });
  });
});
