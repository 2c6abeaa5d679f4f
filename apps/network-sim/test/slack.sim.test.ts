import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createNetworkSimApp } from '../src/server.js';

// The simulator refuses what Slack refuses: HTTP 200 with `{ ok: false, error }`.
const app = createNetworkSimApp();
const auth = { authorization: 'Bearer xoxb-t' };
const call = (method: string) => request(app).post(`/slack/${method}`).set(auth);

describe('Slack simulator refusals', () => {
  it('refuses text over 40,000 characters (msg_too_long) and an unknown thread_ts (thread_not_found)', async () => {
    expect((await call('chat.postMessage').send({ channel: 'C1', text: 'x'.repeat(40_001) })).body).toEqual({
      ok: false,
      error: 'msg_too_long',
    });
    expect(
      (await call('chat.postMessage').send({ channel: 'C1', text: 'x', thread_ts: '1.000001' })).body.error,
    ).toBe('thread_not_found');
  });

  it('refuses alt text over 1000 characters, a missing length, and completing a file never uploaded', async () => {
    expect(
      (
        await call('files.getUploadURLExternal')
          .type('form')
          .send({ filename: 'a.png', length: '5', alt_txt: 'a'.repeat(1001) })
      ).body.error,
    ).toBe('alt_txt_too_large');
    expect(
      (await call('files.getUploadURLExternal').type('form').send({ filename: 'a.png' })).body.error,
    ).toBe('missing_argument');
    const slot = await call('files.getUploadURLExternal')
      .type('form')
      .send({ filename: 'a.png', length: '5' });
    const done = await call('files.completeUploadExternal').send({
      files: [{ id: slot.body.file_id }],
      channel_id: 'C1',
    });
    expect(done.body).toEqual({ ok: false, error: 'file_not_found' });
    // The upload host refuses a body whose length is not the declared one.
    const path = new URL(slot.body.upload_url).pathname;
    expect(
      (await request(app).post(path).set('content-type', 'image/png').send(Buffer.alloc(4))).status,
    ).toBe(400);
  });

  it('shows a completed share in files.info only after processing', async () => {
    const slot = await call('files.getUploadURLExternal')
      .type('form')
      .send({ filename: 'a.png', length: '4' });
    await request(app)
      .post(new URL(slot.body.upload_url).pathname)
      .set('content-type', 'image/png')
      .send(Buffer.alloc(4));
    expect(
      (
        await call('files.completeUploadExternal').send({
          files: [{ id: slot.body.file_id }],
          channel_id: 'C1',
        })
      ).body.ok,
    ).toBe(true);
    const info = () => request(app).get(`/slack/files.info?file=${slot.body.file_id}`).set(auth);
    expect((await info()).body.file.shares).toEqual({});
    expect(Object.keys((await info()).body.file.shares.public)).toEqual(['C1']);
  });
});
