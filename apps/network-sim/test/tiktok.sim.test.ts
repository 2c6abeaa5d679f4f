import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createNetworkSimApp } from '../src/server.js';
import { TIKTOK_SIM_PRIVATE_TOKEN } from '../src/tiktok.sim.js';

// The simulator refuses what TikTok refuses, with TikTok's error envelope.
const app = createNetworkSimApp();
const auth = { authorization: 'Bearer tt-token' };
const MB = 1024 * 1024;
const postInfo = { title: 'hi', privacy_level: 'PUBLIC_TO_EVERYONE' };

function init(body: object, headers: Record<string, string> = auth) {
  return request(app).post('/tiktok/v2/post/publish/video/init/').set(headers).send(body);
}

describe('TikTok simulator refusals', () => {
  it('refuses PULL_FROM_URL from an unverified domain with url_ownership_unverified', async () => {
    const res = await init({
      post_info: postInfo,
      source_info: { source: 'PULL_FROM_URL', video_url: 'https://cdn.example/clip.mp4' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('url_ownership_unverified');
    const photos = await request(app)
      .post('/tiktok/v2/post/publish/content/init/')
      .set(auth)
      .send({
        post_info: postInfo,
        source_info: { source: 'PULL_FROM_URL', photo_images: ['https://cdn.example/a.jpg'] },
        post_mode: 'DIRECT_POST',
        media_type: 'PHOTO',
      });
    expect(photos.status).toBe(403);
    expect(photos.body.error.code).toBe('url_ownership_unverified');
  });

  it('refuses a privacy level the creator does not offer', async () => {
    const res = await init(
      {
        post_info: postInfo,
        source_info: { source: 'FILE_UPLOAD', video_size: 100, chunk_size: 100, total_chunk_count: 1 },
      },
      { authorization: `Bearer ${TIKTOK_SIM_PRIVATE_TOKEN}` },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('privacy_level_option_mismatch');
  });

  it('refuses chunk plans against the media transfer rules', async () => {
    const plans = [
      { video_size: 3 * MB, chunk_size: 1 * MB, total_chunk_count: 3 }, // under 5 MB: one whole chunk
      { video_size: 100 * MB, chunk_size: 70 * MB, total_chunk_count: 1 }, // chunk over 64 MB
      { video_size: 25 * MB, chunk_size: 10 * MB, total_chunk_count: 3 }, // count must round down (2)
    ];
    for (const plan of plans) {
      const res = await init({ post_info: postInfo, source_info: { source: 'FILE_UPLOAD', ...plan } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_params');
    }
  });

  it('refuses a title over 2200 UTF-16 units', async () => {
    const res = await init({
      post_info: { ...postInfo, title: '😀'.repeat(1101) },
      source_info: { source: 'FILE_UPLOAD', video_size: 10, chunk_size: 10, total_chunk_count: 1 },
    });
    expect(res.status).toBe(400);
  });

  it('refuses chunks out of order and reports the upload in status/fetch', async () => {
    const size = 12 * MB;
    const started = await init({
      post_info: postInfo,
      source_info: { source: 'FILE_UPLOAD', video_size: size, chunk_size: 6 * MB, total_chunk_count: 2 },
    });
    expect(started.status).toBe(200);
    const uploadPath = new URL(started.body.data.upload_url).pathname;
    const second = await request(app)
      .put(uploadPath)
      .set({ 'content-type': 'video/mp4', 'content-range': `bytes ${6 * MB}-${size - 1}/${size}` })
      .send(Buffer.alloc(6 * MB));
    expect(second.status).toBe(416);
    const status = await request(app)
      .post('/tiktok/v2/post/publish/status/fetch/')
      .set(auth)
      .send({ publish_id: started.body.data.publish_id });
    expect(status.body.data).toMatchObject({ status: 'PROCESSING_UPLOAD', uploaded_bytes: 0 });
  });
});
