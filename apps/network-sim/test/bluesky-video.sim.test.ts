import { beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { BLUESKY_DAILY_BYTES_REASON, BLUESKY_DAILY_VIDEOS_REASON } from '../src/bluesky-video.sim.js';
import { createNetworkSimApp } from '../src/server.js';
import { SimState } from '../src/sim-state.js';

// The video service's daily allowance and the aspect ratios a PDS validates, with Bluesky's own words.
const sim = new SimState();
const app = createNetworkSimApp(sim);
// Service tokens name the service by host (did:web), so every request reaches the same one.
const HOST = 'sim.test';
const SERVICE = `did:web:${HOST}`;
let jwt = '';
let did = '';

const get = (path: string, token = jwt) =>
  request(app)
    .get(path)
    .set({ host: HOST, authorization: `Bearer ${token}` });
const post = (path: string, token = jwt) =>
  request(app)
    .post(path)
    .set({ host: HOST, authorization: `Bearer ${token}` });

async function serviceToken(lxm: string): Promise<string> {
  const res = await get(`/bluesky/xrpc/com.atproto.server.getServiceAuth?aud=${SERVICE}&lxm=${lxm}`);
  return String(res.body.token);
}
const limits = async () =>
  get(
    '/bluesky/video/xrpc/app.bsky.video.getUploadLimits',
    await serviceToken('app.bsky.video.getUploadLimits'),
  );
const upload = async (bytes: Buffer) =>
  post(
    `/bluesky/video/xrpc/app.bsky.video.uploadVideo?did=${did}&name=v.mp4`,
    await serviceToken('com.atproto.repo.uploadBlob'),
  )
    .set('content-type', 'video/mp4')
    .send(bytes);
const quota = (body: object) => request(app).put('/__sim/video-quota/bluesky').send(body);
const createRecord = (embed: object) =>
  post('/bluesky/xrpc/com.atproto.repo.createRecord').send({
    repo: did,
    collection: 'app.bsky.feed.post',
    record: { $type: 'app.bsky.feed.post', text: 'hi', createdAt: new Date().toISOString(), embed },
  });

beforeEach(async () => {
  sim.reset();
  const session = await request(app)
    .post('/bluesky/xrpc/com.atproto.server.createSession')
    .set('host', HOST)
    .send({ identifier: 'video.bsky.social', password: 'p' });
  ({ accessJwt: jwt, did } = session.body as { accessJwt: string; did: string });
});

describe('Bluesky video service daily allowance', () => {
  it('reports the allowance, and once the day of videos is spent answers canUpload false and refuses the upload with the reason', async () => {
    expect((await limits()).body).toEqual({
      canUpload: true,
      remainingDailyVideos: 25,
      remainingDailyBytes: 10_000_000_000,
    });
    expect((await quota({ videos: 0, bytes: 1000 })).status).toBe(204);
    expect((await limits()).body).toEqual({
      canUpload: false,
      remainingDailyVideos: 0,
      remainingDailyBytes: 1000,
      message: BLUESKY_DAILY_VIDEOS_REASON,
    });
    const refused = await upload(Buffer.from('a video'));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: BLUESKY_DAILY_VIDEOS_REASON,
      message: BLUESKY_DAILY_VIDEOS_REASON,
    });
    expect(sim.uploads).toHaveLength(0);
  });

  it('spends videos and bytes with each accepted upload and refuses a video larger than the bytes left', async () => {
    await quota({ videos: 2, bytes: 30 });
    const tooBig = await upload(Buffer.alloc(31, 1));
    expect(tooBig.body).toEqual({ error: BLUESKY_DAILY_BYTES_REASON, message: BLUESKY_DAILY_BYTES_REASON });
    expect((await upload(Buffer.alloc(20, 2))).body).toMatchObject({ state: 'JOB_STATE_CREATED' });
    expect((await limits()).body).toMatchObject({
      canUpload: true,
      remainingDailyVideos: 1,
      remainingDailyBytes: 10,
    });
    expect((await quota({ videos: -1, bytes: 0 })).status).toBe(400);
    // `{}` stops counting; so does a reset.
    await quota({});
    expect((await limits()).body).toMatchObject({ canUpload: true, remainingDailyVideos: 25 });
  });
});

describe('Bluesky aspect ratios (app.bsky.embed.defs#aspectRatio)', () => {
  it('refuses a width or height under 1, missing or not whole, with the lexicon validator words', async () => {
    const png = await post('/bluesky/xrpc/com.atproto.repo.uploadBlob')
      .set('content-type', 'image/png')
      .send(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const image = png.body.blob as object;
    const cases: [object, string][] = [
      [
        {
          $type: 'app.bsky.embed.images',
          images: [{ alt: '', image, aspectRatio: { width: 0, height: 1 } }],
        },
        'Record/embed/images/0/aspectRatio/width can not be less than 1',
      ],
      [
        { $type: 'app.bsky.embed.video', video: {}, aspectRatio: { width: 16 } },
        'Record/embed/aspectRatio must have the property "height"',
      ],
      [
        { $type: 'app.bsky.embed.video', video: {}, aspectRatio: { width: 16, height: 1.5 } },
        'Record/embed/aspectRatio/height must be an integer',
      ],
      [
        { $type: 'app.bsky.embed.video', video: {}, aspectRatio: 'wide' },
        'Record/embed/aspectRatio must be an object',
      ],
    ];
    for (const [embed, words] of cases) {
      const res = await createRecord(embed);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'InvalidRequest',
        message: `Invalid app.bsky.feed.post record: ${words}`,
      });
    }
    const ok = await createRecord({
      $type: 'app.bsky.embed.images',
      images: [{ alt: '', image, aspectRatio: { width: 4, height: 3 } }],
    });
    expect(ok.status).toBe(200);
  });

  it('records the video embed with its aspect ratio', async () => {
    const job = (await upload(Buffer.from('a processed video'))).body as { jobId: string };
    let blob: object | undefined;
    for (let i = 0; i < 3 && !blob; i += 1) {
      const status = await get(`/bluesky/video/xrpc/app.bsky.video.getJobStatus?jobId=${job.jobId}`);
      blob = status.body.jobStatus.blob;
    }
    const embed = { $type: 'app.bsky.embed.video', video: blob, aspectRatio: { width: 9, height: 16 } };
    expect((await createRecord(embed)).status).toBe(200);
    expect(sim.postsOf('bluesky')[0]?.media).toEqual(embed);
  });
});
