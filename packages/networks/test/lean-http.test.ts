import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { classifyHttpError } from '../src/http-client.js';
import { createLeanHttp, LeanHttpError } from '../src/lean-http.js';

const caught = (work: Promise<unknown>) =>
  work.then(
    () => null,
    (error: unknown) => error,
  );

describe('lean connector HTTP client: what the publish calls rely on from got', () => {
  let server: http.Server;
  let base = '';
  const sockets = new Set<Socket>();
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  beforeAll(async () => {
    server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/v/echo') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: { id: '42' } }));
      } else if (path === '/v/refused') {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ detail: 'You are not allowed to create a Tweet with duplicate content.' }));
      } else if (path === '/v/limited') {
        res.writeHead(429, { 'retry-after': '7', 'content-type': 'text/plain' });
        res.end('Too Many Requests');
      } else if (path === '/v/down') {
        res.writeHead(503);
        res.end('<html>busy</html>');
      } else if (path === '/v/not-json') {
        res.end('created, maybe');
      } else if (path === '/v/big') {
        res.setHeader('content-type', 'application/json');
        res.write('{"data":"');
        const timer = setInterval(() => res.write('a'.repeat(16_384)), 2);
        res.on('close', () => clearInterval(timer));
      } else if (path === '/v/cut') {
        res.writeHead(200, { 'content-length': '100' });
        res.write('{"data":');
        setTimeout(() => res.socket?.destroy(), 20);
      } else if (path === '/v/moved') {
        res.writeHead(302, { location: '/v/echo' });
        res.end();
      }
      // '/v/slow' never answers.
    });
    server.on('connection', (socket) => sockets.add(socket));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends JSON with the headers given and the query, answers the parsed JSON, reuses its connection', async () => {
    const api = createLeanHttp(`${base}/`, 2_000);
    const before = sockets.size;
    expect(
      await api.request('POST', 'echo', {
        headers: { authorization: 'Bearer t' },
        json: { text: 'héllo' },
        searchParams: { a: 'b c', n: 2 },
      }),
    ).toEqual({ data: { id: '42' } });
    expect(await api.request('GET', 'echo')).toEqual({ data: { id: '42' } });
    const [post, get] = seen.slice(-2);
    expect(post).toMatchObject({ method: 'POST', url: '/v/echo?a=b+c&n=2', body: '{"text":"héllo"}' });
    expect(post?.headers).toMatchObject({
      authorization: 'Bearer t',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength('{"text":"héllo"}')),
      'user-agent': 'social-post-service/0.1',
    });
    expect(get).toMatchObject({ method: 'GET', body: '' });
    expect(sockets.size - before).toBe(1);
  });

  it('a refusal carries its status, headers and parsed body; classified like got errors', async () => {
    const api = createLeanHttp(base, 2_000);
    const refused = await caught(api.request('POST', 'refused', { json: {} }));
    expect(refused).toBeInstanceOf(LeanHttpError);
    expect((refused as LeanHttpError).response.body).toEqual({
      detail: 'You are not allowed to create a Tweet with duplicate content.',
    });
    expect(classifyHttpError(refused, { network: 'X' })).toMatchObject({
      kind: 'rejected',
      status: 403,
      body: expect.stringContaining('duplicate content'),
    });
    const limited = await caught(api.request('POST', 'limited'));
    expect(classifyHttpError(limited, { network: 'X' })).toMatchObject({
      kind: 'rate_limited',
      retryAfterMs: 7000,
      body: 'Too Many Requests',
    });
    const down = await caught(api.request('POST', 'down'));
    expect(classifyHttpError(down, { network: 'X' })).toMatchObject({ kind: 'transient', status: 503 });
    // No redirect is followed: a 3xx is not an answer of the API.
    const moved = await caught(api.request('POST', 'moved'));
    expect(classifyHttpError(moved, { network: 'X' })).toMatchObject({ kind: 'rejected', status: 302 });
  });

  it('a timeout, a cut answer and an unreadable success leave the outcome unknown', async () => {
    const api = createLeanHttp(base, 300);
    for (const path of ['slow', 'cut', 'not-json']) {
      const error = await caught(api.request('POST', path, { json: {} }));
      expect(classifyHttpError(error, { network: 'X' })).toMatchObject({
        kind: 'transient',
        outcomeUnknown: true,
      });
    }
  });

  it('an answer past the bound is cut off and its connection dropped', async () => {
    const api = createLeanHttp(base, 10_000, { maxAnswerBytes: 64 * 1024 });
    const error = await caught(api.request('GET', 'big'));
    expect(classifyHttpError(error, { network: 'X' })).toMatchObject({
      kind: 'transient',
      outcomeUnknown: true,
      message: expect.stringContaining('cut off'),
    });
  });

  it('a refused connection was never sent: transient without doubt', async () => {
    const closed = http.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await caught(createLeanHttp(`http://127.0.0.1:${port}`, 2_000).request('POST', 'x'));
    const failure = classifyHttpError(error, { network: 'X' });
    expect(failure).toMatchObject({ kind: 'transient', message: expect.stringContaining('ECONNREFUSED') });
    expect(failure.outcomeUnknown).toBeUndefined();
  });

  it('a host chosen by a user goes through the address guard (loopback refused, nothing sent)', async () => {
    const port = new URL(base).port;
    const before = seen.length;
    const api = createLeanHttp(`http://localhost:${port}/v`, 2_000, { chosenByUser: true });
    const error = await caught(api.request('GET', 'echo'));
    expect(classifyHttpError(error, { network: 'Mastodon' })).toMatchObject({ kind: 'rejected' });
    expect(seen.length).toBe(before);
  });
});
