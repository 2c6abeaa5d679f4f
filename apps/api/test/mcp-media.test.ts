import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import request from 'supertest';
import { startTestApi, type TTestApi } from './harness.js';
import { mcpClients, type TToolResult } from './mcp-helpers.js';

describe('MCP media tools (upload_media, list_media, delete_media)', () => {
  let api: TTestApi;
  let server: Server;
  let files: Server;
  let filesUrl: string;
  let url: URL;
  let image: Buffer;
  const mcp = mcpClients(() => url);
  const { client, call } = mcp;
  const textOf = (r: TToolResult) => r.content.map((c) => c.text ?? '').join('');

  beforeAll(async () => {
    // The test's file server is on loopback: MEDIA_ALLOW_PRIVATE_URLS lets the API download from it.
    api = await startTestApi({ env: { MEDIA_ALLOW_PRIVATE_URLS: 'true' } });
    image = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#f00' } })
      .jpeg()
      .toBuffer();
    files = createServer((req, res) => {
      if (req.url === '/photo.jpg') res.writeHead(200, { 'content-type': 'image/jpeg' }).end(image);
      else if (req.url === '/page.html')
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello there</html>');
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    server = await new Promise((resolve) => {
      const s = api.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    await mcp.closeAll();
    server.closeAllConnections();
    files.closeAllConnections();
    await new Promise((r) => server.close(r));
    await new Promise((r) => files.close(r));
    await api.close();
  });

  it('uploads from a URL and from base64, lists and deletes', async () => {
    const { apiKey } = await api.account('pro');
    const c = await client(apiKey);
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['upload_media', 'list_media', 'delete_media']));

    const fromUrl = await call(c, 'upload_media', { url: `${filesUrl}/photo.jpg`, alt_text: 'red' });
    expect(fromUrl.isError).toBeFalsy();
    expect(fromUrl.structuredContent).toMatchObject({
      type: 'image',
      mime_type: 'image/jpeg',
      size_bytes: image.length,
      width: 20,
      height: 10,
      alt_text: 'red',
    });
    const served = await request(api.app)
      .get(new URL(String(fromUrl.structuredContent?.url)).pathname)
      .buffer(true);
    expect(Buffer.from(served.body).equals(image)).toBe(true);

    const fromBase64 = await call(c, 'upload_media', { content_base64: image.toString('base64') });
    expect(fromBase64.structuredContent).toMatchObject({ mime_type: 'image/jpeg', size_bytes: image.length });

    const list = await call(c, 'list_media', { limit: 10 });
    expect(list.structuredContent).toMatchObject({ total: 2 });
    const deleted = await call(c, 'delete_media', { id: fromBase64.structuredContent?.id });
    expect(deleted.isError).toBeFalsy();
    expect((await call(c, 'list_media')).structuredContent).toMatchObject({ total: 1 });
  });

  it('refuses both or neither source, non-media bytes, and URLs that cannot be downloaded', async () => {
    const { apiKey } = await api.account('pro');
    const c = await client(apiKey);
    const neither = await call(c, 'upload_media', {});
    expect(neither.isError).toBe(true);
    expect(textOf(neither)).toMatch(/exactly one of url and content_base64/);
    const html = await call(c, 'upload_media', { url: `${filesUrl}/page.html` });
    expect(html.isError).toBe(true);
    expect(textOf(html)).toMatch(/unsupported_media_type|not a media type/);
    const missing = await call(c, 'upload_media', { url: `${filesUrl}/nothing.png` });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/Could not download/);
    const text = await call(c, 'upload_media', {
      content_base64: Buffer.from('hello, plain words').toString('base64'),
    });
    expect(text.isError).toBe(true);
    expect((await call(c, 'list_media')).structuredContent).toMatchObject({ total: 0 });
  });
});
