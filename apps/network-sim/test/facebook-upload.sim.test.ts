import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createNetworkSimApp } from '../src/server.js';
import { SimState } from '../src/sim-state.js';

// The Resumable Upload API and the Page video publish as Facebook answers them (facebook-upload.sim.ts).
const sim = new SimState();
const app = createNetworkSimApp(sim);
const V = '/facebook/v25.0';
const oauth = { authorization: 'OAuth sim-user-token' };
const BYTES = Buffer.from('0123456789abcdefghij');

async function start(length = BYTES.length, type = 'video/mp4') {
  return request(app)
    .post(`${V}/123/uploads`)
    .query({ file_name: 'a.mp4', file_length: String(length), file_type: type })
    .set(oauth);
}

function send(session: string, offset: number | null, body: Buffer, headers: Record<string, string> = oauth) {
  const req = request(app)
    .post(`${V}/${session}`)
    .set(headers)
    .set('content-type', 'application/octet-stream');
  if (offset !== null) req.set('file_offset', String(offset));
  return req.send(body);
}

describe('Facebook Resumable Upload API', () => {
  it('opens a session, takes the bytes in two parts, tells the offset, and hands out a handle', async () => {
    const started = await start();
    expect(started.status).toBe(200);
    expect(started.body.id).toMatch(/^upload:/);
    const first = await send(started.body.id, 0, BYTES.subarray(0, 8));
    expect(first.status).toBe(200);
    expect(first.body).not.toHaveProperty('h');
    const state = await request(app).get(`${V}/${started.body.id}`).set(oauth);
    expect(state.body).toEqual({ id: started.body.id, file_offset: 8 });
    const rest = await send(started.body.id, 8, BYTES.subarray(8));
    expect(rest.body.h).toEqual(expect.any(String));
    const published = await request(app)
      .post(`${V}/555/videos`)
      .set({ authorization: 'Bearer sim-page-token' })
      .send({ description: 'clip', fbuploader_video_file_chunk: rest.body.h });
    expect(published.status).toBe(200);
    expect(sim.getPost('facebook', published.body.id)?.media).toMatchObject({
      video: { length: BYTES.length, sha256: createHash('sha256').update(BYTES).digest('hex') },
    });
  });

  it('refuses a wrong offset with the bytes it holds (6001 / 1363037)', async () => {
    const started = await start();
    const wrong = await send(started.body.id, 5, BYTES);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({
      code: 6001,
      error_subcode: 1363037,
      error_data: { start_offset: 0, end_offset: BYTES.length },
    });
    expect((await send(started.body.id, null, BYTES)).body.error.code).toBe(6001);
  });

  it('refuses more bytes than file_length, a missing or bad length, and types it does not take', async () => {
    const started = await start(4);
    expect((await send(started.body.id, 0, BYTES)).body.error).toMatchObject({ code: 100 });
    expect((await start(0)).body.error).toMatchObject({ code: 100 });
    expect((await start(10, 'video/quicktime')).body.error).toMatchObject({ code: 100 });
  });

  it('refuses no token (2500) and unknown sessions (100 / 33)', async () => {
    const none = await request(app)
      .post(`${V}/123/uploads`)
      .query({ file_length: '4', file_type: 'video/mp4' });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe(2500);
    const started = await start();
    expect((await send(started.body.id, 0, BYTES, {})).status).toBe(401);
    const unknown = await request(app).get(`${V}/upload:nope`).set(oauth);
    expect(unknown.body.error).toMatchObject({ code: 100, error_subcode: 33 });
    expect((await send('upload:nope', 0, BYTES)).body.error).toMatchObject({ code: 100, error_subcode: 33 });
  });

  it('refuses a video publish without a handle or file_url, and with an unknown handle', async () => {
    const page = { authorization: 'Bearer sim-page-token' };
    const before = sim.postsOf('facebook').length;
    const empty = await request(app).post(`${V}/555/videos`).set(page).send({ description: 'x' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe(100);
    const unknown = await request(app)
      .post(`${V}/555/videos`)
      .set(page)
      .send({ description: 'x', fbuploader_video_file_chunk: '4:bm9wZQ==:video/mp4:dead' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.error_user_msg).toMatch(/not a valid uploaded file handle/);
    expect(sim.postsOf('facebook').length).toBe(before);
  });
});
