import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createNetworkSimApp } from '../src/server.js';

// The simulator refuses what Discord refuses, with Discord's error body.
const app = createNetworkSimApp();
const post = () => request(app).post('/discord/channels/1100/messages').set({ authorization: 'Bot t' });

describe('Discord simulator refusals', () => {
  it('refuses content over 2000 characters (50035) and an empty message (50006)', async () => {
    const long = await post().send({ content: 'x'.repeat(2001) });
    expect(long.status).toBe(400);
    expect(long.body).toEqual({
      message: 'Invalid Form Body',
      code: 50035,
      errors: {
        content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] },
      },
    });
    // Characters, not UTF-16 units: 2,000 emoji are 4,000 units and go through.
    expect((await post().send({ content: '😀'.repeat(2000) })).status).toBe(200);
    const empty = await post().send({ content: '' });
    expect(empty.body.code).toBe(50006);
  });

  it('refuses uploads over 10 MiB (413, 40005), a file without its attachments entry and a description over 1024', async () => {
    const big = await post()
      .field('payload_json', JSON.stringify({ content: 'x', attachments: [{ id: 0, filename: 'a.bin' }] }))
      .attach('files[0]', Buffer.alloc(10 * 1024 * 1024 + 1), 'a.bin');
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ message: 'Request entity too large', code: 40005 });
    const orphan = await post()
      .field('payload_json', JSON.stringify({ content: 'x' }))
      .attach('files[0]', Buffer.from('hi'), 'a.txt');
    expect(orphan.body.code).toBe(50035);
    const described = await post()
      .field(
        'payload_json',
        JSON.stringify({
          content: 'x',
          attachments: [{ id: 0, filename: 'a.txt', description: 'd'.repeat(1025) }],
        }),
      )
      .attach('files[0]', Buffer.from('hi'), 'a.txt');
    expect(described.body.code).toBe(50035);
  });
});
