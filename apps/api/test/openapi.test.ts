import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import request from 'supertest';
import { buildOpenApiDocument, type TOpenApiDocument } from '../src/openapi/openapi-document.js';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const CLIENT_DIR = join(ROOT, 'packages/client');

/**
 * Routes that are not part of the OpenAPI description, each with its reason. Everything else an Express router
 * registers must be in the document.
 */
const UNDOCUMENTED_PREFIXES = [
  '/mcp', // the MCP server (Streamable HTTP): its tools describe themselves over MCP
  '/admin/queues', // Bull Board's UI, behind ADMIN_TOKEN
  '/metrics', // Prometheus metrics, behind ADMIN_TOKEN: for operators, not API clients
  '/v1/media/uploads', // tus 1.0 resumable uploads (HEAD/PATCH with offsets, no JSON bodies): see the tus protocol and the docs
  '/dashboard', // the dashboard's own session API (cookie + CSRF) and web app; the routers it mounts again are /api's and /v1's
];

type TLayer = {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: TLayer[] };
  rawPath?: unknown;
};

/** `/posts/:id` → `/posts/{id}`; any other path syntax must be taught here before it is used. */
function toOpenApiPath(path: string): string {
  if (/[*?()[\]]|\{/.test(path)) throw new Error(`route path syntax not understood by this test: ${path}`);
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Every `METHOD /path` registered in an Express 5 router tree (routes, and routers mounted with `use`). */
function registeredRoutes(stack: TLayer[], prefix = ''): string[] {
  const out: string[] = [];
  for (const layer of stack) {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const path of paths) {
        for (const method of Object.keys(layer.route.methods)) {
          out.push(`${method === '_all' ? 'ALL' : method.toUpperCase()} ${toOpenApiPath(prefix + path)}`);
        }
      }
    } else if (layer.handle?.stack) {
      if (typeof layer.rawPath !== 'string') throw new Error('a router mounted on a non-string path');
      const mount = layer.rawPath === '/' ? '' : layer.rawPath;
      out.push(...registeredRoutes(layer.handle.stack, prefix + mount));
    }
  }
  return out;
}

function documentedRoutes(doc: TOpenApiDocument): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString();

describe('OpenAPI document (GET /openapi.json) and docs (GET /docs)', () => {
  let api: TTestApi;
  let doc: TOpenApiDocument;
  let keyA: string;
  let accountA: string;
  let keyB: string;
  let accountB: string;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const DOC_ID = 'https://sps.invalid/openapi.json';

  beforeAll(async () => {
    api = await startTestApi({
      env: {
        // One publishing request per hour per IP in Variant A and 3 requests per minute for free-tier keys in
        // Variant B, so this file can see a real 429 of each variant. Other calls use pro keys and no publishing.
        RATE_LIMIT_A_PUBLISH_PER_HOUR: '1',
        RATE_LIMIT_B_TIERS: 'free=3/3',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      },
    });
    ({ apiKey: keyA, accountId: accountA } = await api.account('pro'));
    ({ apiKey: keyB, accountId: accountB } = await api.account('pro'));
    const res = await request(api.app).get('/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body as TOpenApiDocument;
    ajv.addSchema({ $id: DOC_ID, components: doc.components });
  });
  afterAll(() => api.close());

  /** Resolves `#/components/...` references of the document. */
  function deref<T>(value: T | { $ref: string }): T {
    if (value && typeof value === 'object' && '$ref' in value) {
      const parts = value.$ref.replace(/^#\//, '').split('/');
      return parts.reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], doc) as T;
    }
    return value as T;
  }

  type TResponse = {
    headers?: Record<string, unknown>;
    content?: Record<string, { schema: { $ref: string } }>;
  };

  /**
   * The real response must be one the document declares for this operation: its status is listed, the
   * headers it declares are present, and the body validates against its schema.
   */
  function expectDocumented(res: request.Response, method: string, path: string): void {
    const operation = doc.paths[path]?.[method] as { responses: Record<string, unknown> } | undefined;
    expect(operation).toBeDefined();
    const declared = operation?.responses[String(res.status)];
    if (!declared) throw new Error(`${method.toUpperCase()} ${path} answered ${res.status}, not documented`);
    const response = deref(declared as TResponse);
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      // A header declared `required: false` is sent only sometimes (Idempotent-Replayed, on a replay).
      if ((header as { required?: boolean }).required === false) continue;
      expect([`${method} ${path} ${res.status} header ${name}`, res.headers[name.toLowerCase()]]).toEqual([
        expect.any(String),
        expect.any(String),
      ]);
    }
    const json = response.content?.['application/json'];
    if (!json) {
      expect(res.text ?? '').toBe('');
      return;
    }
    expect(json.schema.$ref).toMatch(/^#\/components\/schemas\//);
    const validate = ajv.getSchema(`${DOC_ID}${json.schema.$ref}`);
    if (!validate) throw new Error(`no schema ${json.schema.$ref}`);
    const ok = validate(res.body);
    if (!ok) {
      throw new Error(
        `${method.toUpperCase()} ${path} ${res.status} does not match ${json.schema.$ref}: ` +
          `${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body, null, 2)}`,
      );
    }
  }

  /** Calls `METHOD template` with path parameters filled in, then checks the answer against the document. */
  async function call(
    method: 'get' | 'post' | 'put' | 'delete',
    template: string,
    opts: { key?: string | null; params?: Record<string, string>; query?: string; body?: unknown } = {},
  ): Promise<request.Response> {
    const url = template.replace(/\{(\w+)\}/g, (_, name: string) => opts.params?.[name] ?? `missing-${name}`);
    let req = request(api.app)[method](url + (opts.query ?? ''));
    if (opts.key !== null) req = req.set(bearer(opts.key ?? (template.startsWith('/api') ? keyA : keyB)));
    const res = await (opts.body === undefined ? req : req.send(opts.body as object));
    expectDocumented(res, method, template);
    return res;
  }

  describe('the document', () => {
    it('is OpenAPI 3.1 with both variants, their security schemes and error shapes', () => {
      expect(doc.openapi).toMatch(/^3\.1\./);
      expect(doc.components.securitySchemes).toMatchObject({
        bearerAuth: { type: 'http', scheme: 'bearer' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      });
      const createA = doc.paths['/api/posts']?.post as { security: unknown };
      const createB = doc.paths['/v1/posts']?.post as { security: unknown };
      expect(createA.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
      expect(createB.security).toEqual([{ bearerAuth: [] }]);
      expect(doc.components.schemas?.ErrorA).toMatchObject({ required: ['error'] });
      expect(doc.components.schemas?.ErrorB).toMatchObject({ required: ['error', 'code', 'details'] });
      expect(Object.keys(doc.components.responses?.ErrorB429?.headers as object).sort()).toEqual(
        ['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'].sort(),
      );
      // The same document as the builder makes (what the client generator reads), and valid JSON Schema.
      expect(doc).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
      for (const [name, schema] of Object.entries(doc.components.schemas ?? {})) {
        expect([name, ajv.validateSchema(schema)]).toEqual([name, true]);
      }
    });

    it('describes every route the Express routers register, and no route that does not exist', () => {
      const stack = (api.app as unknown as { router: { stack: TLayer[] } }).router.stack;
      const registered = [...new Set(registeredRoutes(stack))]
        .filter((r) => !UNDOCUMENTED_PREFIXES.some((p) => r.split(' ')[1]?.startsWith(p)))
        .sort();
      // The walk must see the routers (a broken walk must not pass by finding nothing).
      expect(registered).toEqual(
        expect.arrayContaining([
          'POST /api/posts',
          'GET /v1/posts/{id}',
          'PUT /v1/webhooks/{id}',
          'GET /healthz',
        ]),
      );
      expect(registered).toEqual(documentedRoutes(doc).sort());
    });

    it("matches the client package's committed generated sources (packages/client/src/generated)", () => {
      const dir = mkdtempSync(join(tmpdir(), 'sps-openapi-'));
      try {
        writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
        // --check exits 1, naming the stale files and the command that refreshes them, when they differ.
        const run = spawnSync(
          process.execPath,
          ['scripts/generate.mjs', '--check', '--doc', join(dir, 'openapi.json')],
          { cwd: CLIENT_DIR, encoding: 'utf8' },
        );
        expect(run.stderr).toBe('');
        expect(run.status).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  });

  describe('real responses match it', () => {
    it('Variant A posts: create, list, get, update, approve, delete', async () => {
      const created = await call('post', '/api/posts', {
        body: {
          content: 'Hello from A https://example.com',
          platforms: ['twitter', 'mastodon'],
          mediaUrls: [
            'https://cdn.example.com/a.png',
            { url: 'https://cdn.example.com/b.png', altText: 'B' },
          ],
          segments: [{ content: 'A reply' }],
        },
      });
      expect(created.status).toBe(201);
      const id = created.body.post.id as string;
      const polled = await call('post', '/api/posts', {
        body: {
          content: 'Which one?',
          platforms: ['twitter'],
          queue_status: 'pending',
          poll: { options: ['a', 'b'], durationMinutes: 60 },
        },
      });
      expect(polled.status).toBe(201);
      expect((await call('get', '/api/posts')).body.posts).toHaveLength(2);
      expect((await call('get', '/api/posts', { query: '?status=pending' })).body.posts).toHaveLength(1);
      expect((await call('get', '/api/posts/{id}', { params: { id } })).status).toBe(200);
      const updated = await call('put', '/api/posts/{id}', {
        params: { id },
        body: { content: 'Later', platforms: ['twitter'], scheduledFor: tomorrow() },
      });
      expect(updated.body.post.scheduledFor).not.toBeNull();
      expect(
        (await call('post', '/api/posts/{id}/approve', { params: { id: polled.body.post.id } })).status,
      ).toBe(200);
      const deleted = await call('delete', '/api/posts/{id}', { params: { id } });
      expect(deleted.body).toMatchObject({ success: true, id, deleted: true });
    });

    it('Variant A errors: 400, 401, 403, 404 and 429 in the {error, fix?, details?} shape', async () => {
      expect((await call('post', '/api/posts', { body: { content: '', platforms: [] } })).status).toBe(400);
      expect((await call('get', '/api/posts', { key: null })).status).toBe(401);
      const { apiKey: noPlan } = await api.account('none');
      expect(
        (await call('post', '/api/posts', { key: noPlan, body: { content: 'x', platforms: ['twitter'] } }))
          .status,
      ).toBe(403);
      const missing = '00000000-0000-4000-8000-000000000000';
      expect((await call('get', '/api/posts/{id}', { params: { id: missing } })).status).toBe(404);
      // The only publishing requests of this file: the first is refused (no connected account), the next limited.
      const draft = await call('post', '/api/posts', { body: { content: 'draft', platforms: ['linkedin'] } });
      const id = draft.body.post.id as string;
      expect((await call('post', '/api/posts/{id}/publish', { params: { id } })).status).toBe(400);
      const limited = await call('post', '/api/posts/{id}/publish', { params: { id } });
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    });

    it('Variant A accounts and queue settings', async () => {
      await api.connect(accountA, 'twitter');
      expect((await call('get', '/api/accounts')).body.accounts).toHaveLength(1);
      expect((await call('get', '/api/queue-settings')).status).toBe(200);
      const put = await call('put', '/api/queue-settings', {
        body: { enabled: true, intervalHours: 3, startHour: 8, endHour: 20, timezone: 'Europe/Berlin' },
      });
      expect(put.body).toEqual({
        enabled: true,
        intervalHours: 3,
        startHour: 8,
        endHour: 20,
        timezone: 'Europe/Berlin',
      });
      expect((await call('put', '/api/queue-settings', { body: { startHour: 24 } })).status).toBe(400);
    });

    it('Variant B posts: create, list, get, update, delete, with the rate-limit headers', async () => {
      const created = await call('post', '/v1/posts', {
        body: {
          content: 'Hello from B',
          platforms: ['twitter', 'facebook'],
          media: { images: [{ url: 'https://cdn.example.com/a.png', alt_text: 'A' }] },
          segments: [{ content: 'reply', media_urls: ['https://cdn.example.com/b.png'] }],
        },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const scheduled = await call('post', '/v1/posts', {
        body: {
          content: 'Later',
          platforms: ['slack'],
          scheduled_for: tomorrow(),
          media: {
            video: { url: 'https://cdn.example.com/v.mp4', thumbnail_url: 'https://cdn.example.com/t.png' },
          },
        },
      });
      expect(scheduled.body.status).toBe('scheduled');
      expect((await call('get', '/v1/posts', { query: '?limit=5&status=draft' })).body.total).toBe(1);
      expect((await call('get', '/v1/posts/{id}', { params: { id } })).body.id).toBe(id);
      expect(
        (await call('put', '/v1/posts/{id}', { params: { id }, body: { segments: [] } })).body.segments,
      ).toBeNull();
      expect((await call('post', '/v1/posts/{id}/publish', { params: { id } })).status).toBe(422);
      expect((await call('delete', '/v1/posts/{id}', { params: { id } })).status).toBe(204);
    });

    it('Variant B errors: 400, 401, 404, 409 and 429 in the {error, code, details} shape', async () => {
      expect(
        (await call('post', '/v1/posts', { body: { content: 'x', platforms: ['myspace'] } })).status,
      ).toBe(400);
      expect((await call('get', '/v1/posts', { query: '?limit=1000' })).status).toBe(400);
      expect((await call('get', '/v1/posts', { key: null })).status).toBe(401);
      const missing = '00000000-0000-4000-8000-000000000000';
      expect((await call('get', '/v1/posts/{id}', { params: { id: missing } })).status).toBe(404);
      const preset = { name: 'Daily', platforms: ['twitter'], defaults: { content: 'Hi' } };
      expect((await call('post', '/v1/presets', { body: preset })).status).toBe(201);
      expect((await call('post', '/v1/presets', { body: preset })).status).toBe(409);
      const { apiKey: free } = await api.account('free');
      let last = await call('get', '/v1/accounts', { key: free });
      for (let i = 0; i < 3 && last.status !== 429; i += 1)
        last = await call('get', '/v1/accounts', { key: free });
      expect(last.status).toBe(429);
      expect(last.body.code).toBe('rate_limited');
    });

    it('Variant B accounts, presets and webhooks (with deliveries)', async () => {
      await api.connect(accountB, 'mastodon');
      expect((await call('get', '/v1/accounts')).body.accounts).toHaveLength(1);
      expect((await call('get', '/v1/presets')).status).toBe(200);
      const created = await call('post', '/v1/webhooks', {
        body: { url: 'https://127.0.0.1:9/hooks', events: ['post.published', 'account.connected'] },
      });
      expect(created.status).toBe(201);
      expect(created.body.secret).toEqual(expect.any(String));
      const id = created.body.id as string;
      expect((await call('get', '/v1/webhooks')).body.webhooks).toHaveLength(1);
      expect((await call('get', '/v1/webhooks/{id}', { params: { id } })).body).not.toHaveProperty('secret');
      expect(
        (await call('put', '/v1/webhooks/{id}', { params: { id }, body: { is_active: false } })).status,
      ).toBe(200);
      expect(
        (await call('put', '/v1/webhooks/{id}', { params: { id }, body: { url: 'http://x' } })).status,
      ).toBe(400);
      await call('put', '/v1/webhooks/{id}', { params: { id }, body: { is_active: true } });
      const event = await api.db.event.create({
        data: {
          accountId: accountB,
          type: 'account.connected',
          data: { account: {} },
          dispatchedAt: new Date(),
        },
      });
      const delivery = await api.db.webhookDelivery.create({
        data: {
          webhookId: id,
          eventId: event.id,
          status: 'failed',
          attempts: 6,
          lastStatusCode: 500,
          lastError: 'HTTP 500',
        },
      });
      const page = await call('get', '/v1/webhooks/{id}/deliveries', { params: { id }, query: '?limit=10' });
      expect(page.body.total).toBe(1);
      const params = { id, deliveryId: delivery.id };
      expect((await call('post', '/v1/webhooks/{id}/deliveries/{deliveryId}/retry', { params })).status).toBe(
        202,
      );
      expect((await call('post', '/v1/webhooks/{id}/deliveries/{deliveryId}/retry', { params })).status).toBe(
        409,
      );
      expect((await call('delete', '/v1/webhooks/{id}', { params: { id } })).status).toBe(204);
      expect((await call('get', '/v1/webhooks/{id}', { params: { id } })).status).toBe(404);
    });

    it('media library in both variants (upload, list, get, delete, 415) and the public URL', async () => {
      const png = Buffer.from(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
        'base64',
      );
      const uploadB = await request(api.app).post('/v1/media').set(bearer(keyB)).attach('file', png, 'a.png');
      expectDocumented(uploadB, 'post', '/v1/media');
      expect(uploadB.status).toBe(201);
      const refused = await request(api.app)
        .post('/v1/media')
        .set(bearer(keyB))
        .attach('file', Buffer.from('plain text here!'), 'a.png');
      expectDocumented(refused, 'post', '/v1/media');
      expect(refused.status).toBe(415);
      const uploadA = await request(api.app)
        .post('/api/media')
        .set(bearer(keyA))
        .attach('file', png, 'a.png');
      expectDocumented(uploadA, 'post', '/api/media');
      expect(uploadA.status).toBe(201);
      expect((await call('get', '/v1/media', { query: '?limit=5' })).status).toBe(200);
      expect((await call('get', '/api/media')).status).toBe(200);
      expect((await call('get', '/v1/media/{id}', { params: { id: uploadB.body.id } })).status).toBe(200);
      expect((await call('get', '/api/media/{id}', { params: { id: uploadA.body.media.id } })).status).toBe(
        200,
      );
      const file = new URL(uploadB.body.url).pathname.split('/').pop() as string;
      expect((await call('get', '/media/{file}', { key: null, params: { file } })).status).toBe(200);
      expect((await call('delete', '/v1/media/{id}', { params: { id: uploadB.body.id } })).status).toBe(204);
      expect(
        (await call('delete', '/api/media/{id}', { params: { id: uploadA.body.media.id } })).status,
      ).toBe(200);
      expect((await call('get', '/v1/media/{id}', { params: { id: uploadB.body.id } })).status).toBe(404);
    });

    it('operations routes', async () => {
      expect((await call('get', '/healthz', { key: null })).status).toBe(200);
      expect((await call('get', '/readyz', { key: null })).status).toBe(200);
    });
  });

  describe('GET /docs', () => {
    it('serves Swagger UI from this origin only, with no inline script', async () => {
      const page = await request(api.app).get('/docs');
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
      expect(refs.length).toBeGreaterThanOrEqual(5);
      for (const ref of refs) expect(ref).toMatch(/^\/docs\/[\w.-]+$/);
      expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(page.text).not.toMatch(/https?:\/\//);
      for (const ref of refs) {
        const asset = await request(api.app).get(ref);
        expect([ref, asset.status]).toEqual([ref, 200]);
        const type = ref.endsWith('.js') ? /javascript/ : ref.endsWith('.css') ? /text\/css/ : /image\/png/;
        expect(asset.headers['content-type']).toMatch(type);
      }
      const init = await request(api.app).get('/docs/swagger-initializer.js');
      expect(init.text).toContain("url: '/openapi.json'");
      expect(init.text).toContain('validatorUrl: null');
      expect(init.text).not.toMatch(/https?:\/\//);
      // Only the listed assets: swagger-ui-dist's own index.html (which points at an external demo) is not served.
      expect((await request(api.app).get('/docs/index.html')).status).toBe(404);
      expect((await request(api.app).get('/docs/package.json')).status).toBe(404);
    });
  });
});
