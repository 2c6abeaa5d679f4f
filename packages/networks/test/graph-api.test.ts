import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import got from 'got';
import { classifyGraphError, graphBaseUrl } from '../src/graph-api.js';

// A server that answers whatever Graph error body the test asks for, so classification is checked on
// real got HTTPErrors rather than hand-built objects.
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const params = new URL(req.url ?? '/', 'http://x').searchParams;
    const status = Number(params.get('status') ?? 400);
    const code = Number(params.get('code'));
    const subcode = params.get('subcode');
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: {
          message: 'm',
          type: 'OAuthException',
          code,
          ...(subcode ? { error_subcode: Number(subcode) } : {}),
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function kindOf(query: Record<string, number>) {
  const err = await got(url, { searchParams: query, responseType: 'json', retry: { limit: 0 } }).then(
    () => null,
    (e: unknown) => e,
  );
  return classifyGraphError(err, 'Graph', []).kind;
}

describe('classifyGraphError', () => {
  it('treats the throttling codes (4, 17, 32, 613, 80001–80014) as rate limited, whatever the HTTP status', async () => {
    for (const code of [4, 17, 32, 613, 80001, 80014]) {
      expect([code, await kindOf({ code })]).toEqual([code, 'rate_limited']);
    }
    expect(await kindOf({ code: 80002, status: 403 })).toBe('rate_limited');
    expect(await kindOf({ code: 80015 })).toBe('rejected');
  });

  it('treats "media not ready" answers as transient and code 190 as an expired token', async () => {
    expect(await kindOf({ code: 9007, subcode: 2207027 })).toBe('transient');
    expect(await kindOf({ code: 24, subcode: 4279009 })).toBe('transient');
    expect(await kindOf({ code: 9007 })).toBe('rejected');
    expect(await kindOf({ code: 190 })).toBe('auth_expired');
    expect(await kindOf({ code: 100 })).toBe('rejected');
    expect(await kindOf({ code: 2, status: 500 })).toBe('transient');
  });

  it('puts the version after the configured or real host', () => {
    expect(graphBaseUrl(undefined, 'https://graph.facebook.com', 'v25.0')).toBe(
      'https://graph.facebook.com/v25.0',
    );
    expect(graphBaseUrl('http://sim:1/facebook/', 'https://graph.facebook.com', 'v26.0')).toBe(
      'http://sim:1/facebook/v26.0',
    );
  });
});
