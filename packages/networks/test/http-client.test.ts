import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { classifyHttpError, createHttpClient } from '../src/http-client.js';

describe('connector HTTP client: answers from hosts chosen by users are bounded', () => {
  let server: http.Server;
  let base = '';
  const closed: Promise<void>[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      closed.push(new Promise((resolve) => res.on('close', () => resolve())));
      res.setHeader('content-type', 'application/json');
      if (req.url === '/small') {
        res.end(JSON.stringify({ id: '1' }));
        return;
      }
      // An instance description that never ends.
      res.write('{"configuration":"');
      const timer = setInterval(() => res.write('a'.repeat(16_384)), 2);
      res.on('close', () => clearInterval(timer));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('cuts an answer off past the bound, drops its connection, and reports it as a transient failure', async () => {
    const client = createHttpClient(base, 10_000, { maxAnswerBytes: 64 * 1024 });
    expect(await client.get('small').json()).toEqual({ id: '1' });
    const error = await client
      .get('endless')
      .json()
      .then(
        () => null,
        (e: unknown) => e,
      );
    await closed.at(-1);
    expect(classifyHttpError(error, { network: 'Mastodon' })).toMatchObject({
      kind: 'transient',
      message: expect.stringContaining('cut off'),
    });
  });

  it("a host chosen by a user is resolved through the address guard (loopback refused as 'rejected')", async () => {
    const port = new URL(base).port;
    const client = createHttpClient(`http://localhost:${port}`, 2_000, { chosenByUser: true });
    const before = closed.length;
    const error = await client
      .get('small')
      .json()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(classifyHttpError(error, { network: 'Mastodon' })).toMatchObject({ kind: 'rejected' });
    expect(closed.length).toBe(before);
  });
});
