// The composer's uploads and the Media page in Debian's Chromium against the real API, PostgreSQL and Redis:
// an image by the file input (multipart), a video above 5 MB (tus, tus-js-client), thumbnails, the per-network
// fit, a saved post that references the upload by its URL, usage on the Media page, and a refused delete.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, type TTestApi } from '../../api/test/harness.js';
import { sidewaysOverflow, startDashboardRig, type TDashboardRig } from './browser-harness.js';

const MB = 1024 * 1024;

/** A JPEG of noise: over Bluesky's 1,000,000 bytes, under X's 5 MB. */
async function noisyJpeg(): Promise<Buffer> {
  const side = 900;
  const raw = randomBytes(side * side * 3);
  return sharp(raw, { raw: { width: side, height: side, channels: 3 } })
    .jpeg({ quality: 95, chromaSubsampling: '4:4:4' })
    .toBuffer();
}

describe('dashboard media in a browser', () => {
  let rig: TDashboardRig;
  let api: TTestApi;
  let apiKey: string;
  let jpeg: Buffer;

  beforeAll(async () => {
    rig = await startDashboardRig();
    api = rig.api;
    apiKey = rig.owner.apiKey;
    await api.connect(rig.owner.accountId, 'twitter', 'media_x');
    await api.connect(rig.owner.accountId, 'bluesky', 'media_bsky');
    await api.connect(rig.owner.accountId, 'tiktok', 'media_tiktok');
    jpeg = await noisyJpeg();
    expect(jpeg.length).toBeGreaterThan(1_000_000);
    expect(jpeg.length).toBeLessThan(5 * MB);
  }, 60_000);

  afterEach(() => {
    expect(rig.takePageErrors()).toEqual([]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  async function composeFor(page: Page, content: string) {
    await page.getByLabel('Content').fill(content);
    await page.getByRole('checkbox', { name: 'twitter' }).check();
    await page.getByRole('checkbox', { name: 'bluesky' }).check();
  }
  /** At 390 px the page does not scroll sideways (wide tables scroll in their own box); back to desktop. */
  async function expectFitsAPhone(page: Page) {
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await sidewaysOverflow(page)).toEqual({ fits: true, culprits: [] });
    await page.setViewportSize({ width: 1200, height: 900 });
  }
  const fitOf = (page: Page) => page.getByRole('list', { name: 'Media fit per network' });

  it('uploads an image, shows its thumbnail and fit, saves the post, and the Media page shows its use', async () => {
    const page = await rig.signedIn();
    await composeFor(page, 'A post with an uploaded photo');
    await page
      .getByLabel(/Photos or a video/)
      .setInputFiles({ name: 'noise.jpg', mimeType: 'image/jpeg', buffer: jpeg });
    await page.getByRole('img', { name: 'Thumbnail of noise.jpg' }).waitFor();
    const fit = fitOf(page);
    await fit.waitFor({ timeout: 10_000 });
    // Bluesky takes images up to 1,000,000 bytes: this one will be re-encoded (a warning); X takes it as is.
    await fit
      .getByText(/Warning \(noise\.jpg\): larger than bluesky's 1 MB: it will be re-encoded to fit/)
      .waitFor();
    expect(await fit.textContent()).toMatch(/twitter: fits(?!,)/);
    await page.getByLabel('Alt text for noise.jpg').fill('Grey noise');
    await rig.shot(page, 'composer-media');
    await expectFitsAPhone(page);
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Saved as a draft.').waitFor();
    // The attachments were cleared with the form.
    expect(await page.getByRole('list', { name: 'Attached media' }).count()).toBe(0);

    const posts = await request(api.app).get('/v1/posts').set(bearer(apiKey));
    const post = posts.body.posts.find(
      (p: { content: string }) => p.content === 'A post with an uploaded photo',
    );
    const library = await request(api.app).get('/v1/media').set(bearer(apiKey));
    const item = library.body.media[0] as { id: string; url: string; size_bytes: number };
    expect(item.size_bytes).toBe(jpeg.length);
    expect(post.media.images).toEqual([{ url: item.url, alt_text: 'Grey noise' }]);

    await page.getByRole('link', { name: 'Media' }).click();
    const row = page.locator(`tr[data-media-id="${item.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toMatch(/image\/jpeg.*900×900.*1 post \(1 pending\)/);
    expect(await page.locator('.quota').textContent()).toMatch(/Storage used: 1\.\d MB of 250\.0 GB/);
    await rig.shot(page, 'media-page');
    await expectFitsAPhone(page);
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('alert').waitFor();
    expect(await row.getByRole('alert').textContent()).toMatch(/Not deleted: it is used by 1 post/);
    expect((await request(api.app).get(`/v1/media/${item.id}`).set(bearer(apiKey))).status).toBe(200);

    // Once the post is gone the item can go.
    expect((await request(api.app).delete(`/v1/posts/${post.id}`).set(bearer(apiKey))).status).toBeLessThan(
      300,
    );
    await page.reload();
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await request(api.app).get(`/v1/media/${item.id}`).set(bearer(apiKey))).status).toBe(404);
    await page.close();
  });

  it('uploads a video over 5 MB with tus and says it is too long for Bluesky', async () => {
    const video = Buffer.alloc(6 * MB, 1);
    Buffer.from(fakeMp4(200, 64, { width: 640, height: 360 })).copy(video);
    const page = await rig.signedIn();
    const calls: string[] = [];
    page.on('request', (r) => calls.push(`${r.method()} ${new URL(r.url()).pathname}`));
    await composeFor(page, 'A long video');
    await page
      .getByLabel(/Photos or a video/)
      .setInputFiles({ name: 'long.mp4', mimeType: 'video/mp4', buffer: video });
    const fit = fitOf(page);
    await fit.waitFor({ timeout: 20_000 });
    await fit.getByText(/Refused \(long\.mp4\): too long for bluesky: 200 s, it takes up to 180 s/).waitFor();
    expect(await fit.textContent()).toMatch(/bluesky: does not fit/);
    expect(await fit.textContent()).toMatch(/twitter: fits, with a warning.*too long for twitter: 200 s/);
    const library = await request(api.app).get('/v1/media').set(bearer(apiKey));
    expect(library.body.media[0]).toMatchObject({ type: 'video', size_bytes: video.length, duration_s: 200 });
    // By tus: a creation, then the bytes by PATCH to the upload's path under the dashboard.
    expect(calls).toContain('POST /dashboard/api/v1/media/uploads');
    expect(calls.some((c) => /^PATCH \/dashboard\/api\/v1\/media\/uploads\/[0-9a-f]{64}$/.test(c))).toBe(
      true,
    );
    expect(calls).not.toContain('POST /dashboard/api/v1/media');
    await page.getByRole('button', { name: 'Remove long.mp4' }).click();
    expect(await fit.count()).toBe(0);
    // The library keeps it (no post uses it): the Media page shows it with its size and duration.
    await page.getByRole('link', { name: 'Media' }).click();
    const row = page.locator(`tr[data-media-id="${library.body.media[0].id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toMatch(/video\/mp4.*6\.0 MB.*640×360, 200 s.*0 posts/);
    await page.close();
  });

  it('takes a file dropped on the composer, and says TikTok photos do not take a PNG', async () => {
    const png = await sharp({ create: { width: 20, height: 20, channels: 3, background: '#36c' } })
      .png()
      .toBuffer();
    const page = await rig.signedIn();
    await page.getByLabel('Content').fill('A dropped PNG');
    await page.getByRole('checkbox', { name: 'tiktok' }).check();
    await page.getByRole('checkbox', { name: 'twitter' }).check();
    // A drop as the browser makes it: a DataTransfer holding the file, on the drop zone.
    const dataTransfer = await page.evaluateHandle(
      (bytes) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(bytes)], 'dot.png', { type: 'image/png' }));
        return transfer;
      },
      [...png],
    );
    const zone = page.getByRole('region', { name: 'Drop photos or a video here' });
    await zone.dispatchEvent('dragover', { dataTransfer });
    await zone.dispatchEvent('drop', { dataTransfer });
    await page.getByRole('img', { name: 'Thumbnail of dot.png' }).waitFor();
    const fit = fitOf(page);
    await fit
      .getByText(/Refused \(dot\.png\): tiktok does not accept \.png images/)
      .waitFor({ timeout: 10_000 });
    expect(await fit.textContent()).toMatch(/tiktok: does not fit.*twitter: fits/);
    // Saving anyway is refused by the API with the same rule, named on the media field.
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.locator('#media-error').waitFor();
    expect(await page.locator('#media-error').textContent()).toMatch(/tiktok does not accept \.png/);
    await page.close();
  });

  it('uploads a photo while editing a saved draft: added to its images, the ones it had keep their alt text', async () => {
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({
        content: 'A draft edited with an upload',
        platforms: ['twitter'],
        media: { images: [{ url: 'https://images.example/kept.jpg', alt_text: 'The kept one' }] },
      });
    expect(created.status).toBe(201);
    const page = await rig.signedIn();
    await page.locator(`tr[data-post-id="${created.body.id}"]`).getByRole('button', { name: 'Edit' }).click();
    const editor = page.getByRole('form', { name: 'Edit the post' });
    await editor
      .getByLabel(/Photos or a video/)
      .setInputFiles({ name: 'edit.jpg', mimeType: 'image/jpeg', buffer: jpeg });
    await editor.getByRole('img', { name: 'Thumbnail of edit.jpg' }).waitFor();
    await editor.getByLabel('Alt text for edit.jpg').fill('Added while editing');
    // Saving waits for the upload to finish (the button is disabled until then).
    await editor.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved; the post is now a draft.' }).waitFor();

    const post = await request(api.app).get(`/v1/posts/${created.body.id}`).set(bearer(apiKey));
    const library = await request(api.app).get('/v1/media').set(bearer(apiKey));
    const item = (library.body.media as { url: string; size_bytes: number }[]).find(
      (m) => post.body.media.images[1]?.url === m.url,
    );
    expect(item?.size_bytes).toBe(jpeg.length);
    expect(post.body.media.images).toEqual([
      { url: 'https://images.example/kept.jpg', alt_text: 'The kept one' },
      { url: item?.url, alt_text: 'Added while editing' },
    ]);
    await page.close();
  });
});
