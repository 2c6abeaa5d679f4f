import { describe, expect, it } from '@jest/globals';
import { createClient } from '../src/index.js';
import { json, postB, scriptedServer } from './support/scripted-server.js';

// The list iterators against a real local HTTP server serving pages.

const srv = scriptedServer();
const client = () => ({ c: createClient({ baseUrl: srv.baseUrl, apiKey: 'sps_test_key' }) });

describe('pagination', () => {
  const ids = Array.from({ length: 250 }, (_, i) => `p${i}`);

  it('iterates every Variant B post, one page per request, only as far as it is read', async () => {
    srv.handler = (req, res) => {
      const url = new URL(req.url, srv.baseUrl);
      const limit = Number(url.searchParams.get('limit'));
      const offset = Number(url.searchParams.get('offset'));
      json(res, 200, { posts: ids.slice(offset, offset + limit).map(postB), total: ids.length });
    };
    const { c } = client();
    const got: string[] = [];
    for await (const post of c.v1.posts.iterate({ query: { status: 'draft' } })) got.push(post.id);
    expect(got).toEqual(ids);
    expect(srv.seen.map((s) => s.url)).toEqual([
      '/v1/posts?status=draft&limit=100&offset=0',
      '/v1/posts?status=draft&limit=100&offset=100',
      '/v1/posts?status=draft&limit=100&offset=200',
    ]);
    srv.seen = [];
    const firstFive: string[] = [];
    for await (const post of c.v1.posts.iterate({ pageSize: 3 })) {
      firstFive.push(post.id);
      if (firstFive.length === 5) break;
    }
    expect(firstFive).toEqual(ids.slice(0, 5));
    expect(srv.seen).toHaveLength(2);
  });

  it('follows Variant A hasMore/nextOffset, skips an item srv.seen twice and honours maxItems', async () => {
    srv.handler = (req, res) => {
      const url = new URL(req.url, srv.baseUrl);
      const offset = Number(url.searchParams.get('offset'));
      // A post created meanwhile shifts the second page by one: p1 comes again.
      const page = offset === 0 ? ['p0', 'p1'] : ['p1', 'p2'];
      json(res, 200, {
        success: true,
        posts: page.map((id) => ({ id })),
        total: 4,
        hasMore: offset === 0,
        ...(offset === 0 ? { nextOffset: 2 } : {}),
      });
    };
    const { c } = client();
    const got: string[] = [];
    for await (const post of c.api.posts.iterate({ pageSize: 2 })) got.push(post.id);
    expect(got).toEqual(['p0', 'p1', 'p2']);
    const limited: string[] = [];
    for await (const post of c.api.posts.iterate({ pageSize: 2, maxItems: 1 })) limited.push(post.id);
    expect(limited).toEqual(['p0']);
  });
});
