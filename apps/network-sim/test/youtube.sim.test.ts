import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createNetworkSimApp } from '../src/server.js';
import { YOUTUBE_SIM_QUOTA_TOKEN } from '../src/youtube.sim.js';

// The simulator refuses what videos.insert refuses, with Google's error body.
const app = createNetworkSimApp();
const start = (snippet: object, token = 'yt-token', length = 10) =>
  request(app)
    .post('/youtube/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status')
    .set({ authorization: `Bearer ${token}`, 'x-upload-content-length': String(length) })
    .send({ snippet });

describe('YouTube simulator refusals', () => {
  it('refuses < or > in the title or description, a title over 100 characters and a description over 5000 bytes', async () => {
    const cases: [object, string][] = [
      [{ title: 'a <b>', description: '' }, 'invalidTitle'],
      [{ title: 't'.repeat(101), description: '' }, 'invalidTitle'],
      [{ title: 'ok', description: 'x > y' }, 'invalidDescription'],
      [{ title: 'ok', description: 'é'.repeat(2501) }, 'invalidDescription'],
    ];
    for (const [snippet, reason] of cases) {
      const res = await start(snippet);
      expect(res.status).toBe(400);
      expect(res.body.error.errors[0].reason).toBe(reason);
    }
    expect((await start({ title: 'ok', description: 'é'.repeat(2500) })).status).toBe(200);
  });

  it('answers quotaExceeded (403) for a project without quota', async () => {
    const res = await start({ title: 'ok' }, YOUTUBE_SIM_QUOTA_TOKEN);
    expect(res.status).toBe(403);
    expect(res.body.error.errors[0]).toMatchObject({ reason: 'quotaExceeded', domain: 'youtube.quota' });
  });

  it('answers a status query with 308 and the Range received, and refuses a chunk that does not continue it', async () => {
    const started = await start({ title: 'ok' }, 'yt-token', 256 * 1024 + 6);
    const session = new URL(String(started.headers.location));
    const path = `${session.pathname}${session.search}`;
    const auth = { authorization: 'Bearer yt-token' };
    // Every chunk but the last is a multiple of 256 KiB (the resumable protocol's rule).
    const unit = 256 * 1024;
    const total = unit + 6;
    const odd = await request(app)
      .put(path)
      .set({ ...auth, 'content-range': `bytes 0-3/${total}` })
      .send(Buffer.alloc(4));
    expect(odd.status).toBe(400);
    expect(odd.body.error.message).toContain('multiple of 256 KiB');
    const first = await request(app)
      .put(path)
      .set({ ...auth, 'content-range': `bytes 0-${unit - 1}/${total}` })
      .send(Buffer.alloc(unit));
    expect(first.status).toBe(308);
    expect(first.headers.range).toBe(`bytes=0-${unit - 1}`);
    const query = await request(app)
      .put(path)
      .set({ ...auth, 'content-range': `bytes */${total}` });
    expect(query.status).toBe(308);
    expect(query.headers.range).toBe(`bytes=0-${unit - 1}`);
    const gap = await request(app)
      .put(path)
      .set({ ...auth, 'content-range': `bytes ${unit + 2}-${total - 1}/${total}` })
      .send(Buffer.alloc(4));
    expect(gap.status).toBe(400);
    const rest = await request(app)
      .put(path)
      .set({ ...auth, 'content-range': `bytes ${unit}-${total - 1}/${total}` })
      .send(Buffer.alloc(6));
    expect(rest.status).toBe(200);
    expect(rest.body.kind).toBe('youtube#video');
  });
});
