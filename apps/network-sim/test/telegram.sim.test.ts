import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createNetworkSimApp } from '../src/server.js';

// The simulator refuses what the Bot API refuses, with its `{ ok: false, error_code, description }`.
const app = createNetworkSimApp();
const call = (method: string) => request(app).post(`/telegram/bot123:abc/${method}`);

describe('Telegram simulator refusals', () => {
  it('refuses captions over 1024 and texts over 4096 characters', async () => {
    const caption = await call('sendPhoto').send({
      chat_id: '@c',
      photo: 'https://x/a.jpg',
      caption: 'c'.repeat(1025),
    });
    expect(caption.body).toEqual({
      ok: false,
      error_code: 400,
      description: 'Bad Request: message caption is too long',
    });
    const text = await call('sendMessage').send({ chat_id: '@c', text: 't'.repeat(4097) });
    expect(text.body.description).toBe('Bad Request: message is too long');
  });

  it('refuses media groups outside 2-10 items, a missing attach:// part and a photo over 10 MB', async () => {
    const one = await call('sendMediaGroup').send({
      chat_id: '@c',
      media: [{ type: 'photo', media: 'https://x/a.jpg' }],
    });
    expect(one.body.description).toBe('Bad Request: wrong number of messages in the media group');
    const missing = await call('sendMediaGroup')
      .field('chat_id', '@c')
      .field(
        'media',
        JSON.stringify([
          { type: 'photo', media: 'attach://a' },
          { type: 'photo', media: 'attach://b' },
        ]),
      )
      .attach('a', Buffer.from([0xff, 0xd8, 0xff]), 'a.jpg');
    expect(missing.body.description).toBe('Bad Request: wrong file identifier/HTTP URL specified');
    const big = await call('sendPhoto')
      .field('chat_id', '@c')
      .attach('photo', Buffer.alloc(10 * 1024 * 1024 + 1), 'a.jpg');
    expect(big.body.description).toBe('Bad Request: file is too big');
  });

  it('refuses a reply to a message that does not exist', async () => {
    const res = await call('sendMessage').send({
      chat_id: '@c',
      text: 'hi',
      reply_parameters: { message_id: 999999 },
    });
    expect(res.body.description).toBe('Bad Request: message to be replied not found');
  });
});
