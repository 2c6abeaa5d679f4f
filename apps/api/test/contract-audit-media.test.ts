import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { listenOnLoopback, png, type TListening } from './media-helpers.js';

// The contract's letter (shared/CONTRACT.md: Media library, Idempotent requests) on the points the feature
// tests leave out: Variant A's shapes and refusals, and an upload's Idempotency-Key compared by content
// (another file or alt text of the same length is 422) and held while the first request still reads.
// Black-box: HTTP only, with the default PUBLIC_URL (loopback) as a test suite would.

describe('contract audit: uploads in both variants and their Idempotency-Key', () => {
  let api: TTestApi;
  let server: TListening;
  let port: number;
  let key: string;
  let otherKey: string;
  let image: Buffer;

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key } = await api.account('pro'));
    ({ apiKey: otherKey } = await api.account('pro'));
    image = await png(32, 16);
    server = await listenOnLoopback(api.app);
    port = server.port;
  });
  afterAll(async () => {
    await server.close();
    await api.close();
  });

  const uploadA = (bytes: Buffer, name = 'f.bin') =>
    request(api.app).post('/api/media').set('x-api-key', key).attach('file', bytes, name);

  describe('Variant A /api/media', () => {
    it('answers 201 {success, media} with every field in camelCase, the type from the bytes', async () => {
      const res = await uploadA(image, 'not-a-picture.txt');
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        media: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/media\/[0-9a-f-]{36}\.png$/),
          type: 'image',
          mimeType: 'image/png',
          sizeBytes: image.length,
          width: 32,
          height: 16,
          durationS: null,
          altText: null,
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      });
      const got = await request(api.app).get(`/api/media/${res.body.media.id}`).set('x-api-key', key);
      expect(got.body).toEqual({ success: true, media: res.body.media });
      // Another account's item is 404 (never 403).
      const foreign = await request(api.app)
        .get(`/api/media/${res.body.media.id}`)
        .set('x-api-key', otherKey);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error).toEqual(expect.any(String));
    });

    it('names `file` in a 400 when it is missing, 415 for non-media, 413 over the cap', async () => {
      const none = await request(api.app).post('/api/media').set('x-api-key', key).field('altText', 'x');
      expect(none.status).toBe(400);
      expect(none.body.error).toMatch(/file/);
      expect(none.body.details.field).toBe('file');
      const pdf = await uploadA(Buffer.from('%PDF-1.7\n1 0 obj << >> endobj\n'), 'doc.png');
      expect(pdf.status).toBe(415);
      const { apiKey: free } = await api.account('free');
      const big = Buffer.alloc(51 * 1024 * 1024);
      image.copy(big, 0, 0, 32);
      const tooBig = await request(api.app)
        .post('/api/media')
        .set('x-api-key', free)
        .attach('file', big, 'b.png');
      expect(tooBig.status).toBe(413);
      expect(tooBig.body.details.field).toBe('file');
    });
  });

  describe('Idempotency-Key on uploads', () => {
    it('another body of the same length is 422 idempotency_key_reused (B and A)', async () => {
      // Two PNGs of one size that differ in their pixels, and one alt text changed in place.
      const red = await png(8, 8, 200);
      const blue = await png(8, 8, 100);
      expect(red.length).toBe(blue.length);
      for (const [prefix, auth] of [
        ['/v1', bearer(key)],
        ['/api', { 'x-api-key': key }],
      ] as const) {
        const send = (bytes: Buffer, alt: string) =>
          request(api.app)
            .post(`${prefix}/media`)
            .set(auth)
            .set('Idempotency-Key', `audit-same-length${prefix}`)
            .field(prefix === '/v1' ? 'alt_text' : 'altText', alt)
            .attach('file', bytes, 'p.png');
        const first = await send(red, 'aaaa');
        expect(first.status).toBe(201);
        const replay = await send(red, 'aaaa');
        expect(replay.status).toBe(201);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body).toEqual(first.body);
        const otherPixels = await send(blue, 'aaaa');
        expect(otherPixels.status).toBe(422);
        const otherAlt = await send(red, 'bbbb');
        expect(otherAlt.status).toBe(422);
        expect(prefix === '/v1' ? otherAlt.body.code : 'A').toBe(
          prefix === '/v1' ? 'idempotency_key_reused' : 'A',
        );
      }
    });

    it('compares a large upload by its length and first megabytes; a JSON body under a key is 400 naming file', async () => {
      const big = Buffer.alloc(5 * 1024 * 1024, 1);
      image.copy(big, 0, 0, 33);
      const send = (bytes: Buffer) =>
        request(api.app)
          .post('/v1/media')
          .set(bearer(key))
          .set('Idempotency-Key', 'audit-large')
          .attach('file', bytes, 'big.png');
      const first = await send(big);
      expect(first.status).toBe(201);
      expect(first.body.size_bytes).toBe(big.length);
      const again = await send(big);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.id).toBe(first.body.id);
      const changed = Buffer.from(big);
      changed[1024 * 1024] = 2;
      expect((await send(changed)).status).toBe(422);
      // A declared length past the plan's cap is refused at once, key or not (no body is waited for).
      const declared = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/v1/media',
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'idempotency-key': 'audit-declared',
              'content-type': 'multipart/form-data; boundary=x',
              'content-length': String(5 * 1024 ** 3),
            },
          },
          (res) => {
            resolve(res.statusCode ?? 0);
            res.resume();
            req.destroy();
          },
        );
        req.on('error', reject);
        req.write('--x\r\n');
      });
      expect(declared).toBe(413);
      const json = await request(api.app)
        .post('/v1/media')
        .set(bearer(key))
        .set('Idempotency-Key', 'audit-json')
        .send({ file: 'x' });
      expect(json.status).toBe(400);
      expect(json.body.details.field).toBe('file');
    });

    it('answers 409 idempotency_key_in_use while the first upload still runs, then replays it', async () => {
      const boundary = 'auditboundary1234';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`,
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const body = Buffer.concat([head, image, tail]);
      const headers = {
        authorization: `Bearer ${key}`,
        'idempotency-key': 'audit-in-flight',
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(body.length),
      };
      let firstStatus = 0;
      const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/media', method: 'POST', headers });
      const answered = new Promise<string>((resolve, reject) => {
        req.on('response', (res) => {
          firstStatus = res.statusCode ?? 0;
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
      });
      // Half the body: the first request holds the key while it waits for the rest.
      await new Promise<void>((resolve) => req.write(body.subarray(0, head.length + 8), () => resolve()));
      // Until the first request holds its lease (the write's callback fires when the bytes leave, not when the
      // API has read them): a second request arriving before would claim the key itself and answer 201.
      for (let i = 0; i < 500; i += 1) {
        const held = await api.db.idempotencyKey.findFirst({
          where: { key: { startsWith: 'audit-in-flight' }, lockToken: { not: null } },
        });
        if (held) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      let second: request.Response | undefined;
      for (let i = 0; i < 100; i += 1) {
        second = await request(`http://127.0.0.1:${port}`)
          .post('/v1/media')
          .set({ authorization: headers.authorization, 'idempotency-key': 'audit-in-flight' })
          .set('Content-Type', headers['content-type'])
          .send(body);
        if (second.status === 409) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(second?.status).toBe(409);
      expect(second?.body.code).toBe('idempotency_key_in_use');
      req.end(body.subarray(head.length + 8));
      const first = JSON.parse(await answered);
      expect(firstStatus).toBe(201);
      const replay = await request(`http://127.0.0.1:${port}`)
        .post('/v1/media')
        .set({ authorization: headers.authorization, 'idempotency-key': 'audit-in-flight' })
        .set('Content-Type', headers['content-type'])
        .send(body);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.id).toBe(first.id);
    });
  });
});
