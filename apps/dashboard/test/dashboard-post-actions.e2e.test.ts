// The dashboard's post actions (parity with the API), its per-network preview and its keyboard use, in
// Debian's Chromium against the real API, publisher, PostgreSQL, Redis and the network simulator.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Locator, Page } from 'playwright-core';
import request from 'supertest';
import { bearer, type TTestApi } from '../../api/test/harness.js';
import { startDashboardRig, type TDashboardRig } from './browser-harness.js';

describe('dashboard post actions in a browser', () => {
  let rig: TDashboardRig;
  let api: TTestApi;
  let apiKey: string;

  beforeAll(async () => {
    rig = await startDashboardRig({ publisher: true });
    api = rig.api;
    apiKey = rig.owner.apiKey;
    await api.connect(rig.owner.accountId, 'twitter', 'acts_x');
    await api.connect(rig.owner.accountId, 'mastodon', 'acts_masto');
    await api.connect(rig.owner.accountId, 'slack', 'acts_slack');
  }, 60_000);

  afterEach(() => {
    expect(rig.takePageErrors()).toEqual([]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  const v1 = (path: string) => request(api.app).get(path).set(bearer(apiKey));
  async function draft(content: string, platforms = ['twitter'], extra: Record<string, unknown> = {}) {
    const res = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({ content, platforms, ...extra });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }
  const rowOf = (page: Page, id: string): Locator => page.locator(`tr[data-post-id="${id}"]`);
  /** Waits until the row's text matches (the list refetches on the live stream's messages). */
  async function rowSays(row: Locator, text: RegExp, timeout = 10_000) {
    await row
      .filter({ hasText: text })
      .waitFor({ timeout })
      .catch(async (e) => {
        throw new Error(`${e}\nrow: ${await row.textContent().catch(() => '(no row)')}`);
      });
  }
  async function statusOf(id: string): Promise<string> {
    return (await v1(`/v1/posts/${id}`)).body.status as string;
  }

  it('publishes a saved draft from its row in the list', async () => {
    const id = await draft('A saved draft, published from its row');
    const page = await rig.signedIn();
    const row = rowOf(page, id);
    await rowSays(row, /draft/);
    await rig.shot(page, 'post-actions');
    await row.getByRole('button', { name: 'Publish', exact: true }).click();
    // Said in the row, next to the button (on a phone the top of the page is far away).
    await row
      .getByRole('status')
      .filter({ hasText: 'Publishing: the results appear in this row.' })
      .waitFor();
    await row.getByRole('link', { name: 'published' }).waitFor({ timeout: 20_000 });
    await rowSays(row, /^.*published/);
    expect(await statusOf(id)).toBe('published');
    await page.close();
  }, 40_000);

  it('publishes a saved draft from the editor, with the changes saved first', async () => {
    const id = await draft('Draft before the edit');
    const page = await rig.signedIn();
    const row = rowOf(page, id);
    await row.getByRole('button', { name: 'Edit' }).click();
    const editor = page.getByRole('form', { name: 'Edit the post' });
    await editor.getByLabel('Content').fill('Draft after the edit, published from the editor');
    await editor.getByRole('button', { name: 'Save and publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved and publishing' }).waitFor();
    await row.getByRole('link', { name: 'published' }).waitFor({ timeout: 20_000 });
    const post = (await v1(`/v1/posts/${id}`)).body;
    expect(post).toEqual(
      expect.objectContaining({
        status: 'published',
        content: 'Draft after the edit, published from the editor',
      }),
    );
    await page.close();
  }, 40_000);

  it("retries only the failed networks of a post (Variant A's retry)", async () => {
    api.sim?.sim.addFault({
      platform: 'mastodon',
      kind: 'rejected',
      remaining: 1,
      pathIncludes: '/api/v1/statuses',
    });
    const id = await draft('Half published, then retried', ['twitter', 'mastodon']);
    expect((await request(api.app).post(`/v1/posts/${id}/publish`).set(bearer(apiKey))).status).toBe(200);
    const page = await rig.signedIn();
    const row = rowOf(page, id);
    await rowSays(row, /mastodon: Mastodon rejected the post/, 20_000);
    const twitterUrl = await row.getByRole('link', { name: 'published' }).getAttribute('href');
    await rig.shot(page, 'post-retry');
    await row.getByRole('button', { name: 'Retry failed networks' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Retried the failed networks: mastodon published.' })
      .waitFor({ timeout: 25_000 });
    await expect(row.getByRole('link', { name: 'published' }).count()).resolves.toBe(2);
    // X was not sent again: its copy is the same.
    await expect(row.getByRole('link', { name: 'published' }).first().getAttribute('href')).resolves.toBe(
      twitterUrl,
    );
    await page.close();
  }, 60_000);

  it('approves a post pending approval, and adds a draft to the queue', async () => {
    const pending = await request(api.app)
      .post('/api/posts')
      .set(bearer(apiKey))
      .send({ content: 'Waiting for approval', platforms: ['twitter'], queueStatus: 'pending' });
    expect(pending.status).toBe(201);
    const pendingId = pending.body.post.id as string;
    const draftId = await draft('A draft for the queue', ['twitter', 'mastodon']);
    const page = await rig.signedIn();

    const pendingRow = rowOf(page, pendingId);
    await rowSays(pendingRow, /pending approval/);
    // A pending post is not offered the queue (approve is its way in).
    await expect(pendingRow.getByRole('button', { name: 'Add to queue' }).count()).resolves.toBe(0);
    await pendingRow.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').filter({ hasText: 'Approved: the post joined the queue.' }).waitFor();
    await rowSays(pendingRow, /· queued/);

    const draftRow = rowOf(page, draftId);
    await draftRow.getByRole('button', { name: 'Add to queue' }).click();
    await page.getByRole('status').filter({ hasText: 'Added to the queue.' }).waitFor();
    await rowSays(draftRow, /· queued/);
    await expect(draftRow.getByRole('button', { name: 'Add to queue' }).count()).resolves.toBe(0);

    const queued = await request(api.app).get('/api/posts?status=queued').set(bearer(apiKey));
    expect(queued.body.posts.map((p: { id: string }) => p.id)).toEqual(
      expect.arrayContaining([pendingId, draftId]),
    );
    await page.close();
  });

  it('duplicates a post as a new draft with the same text, networks and thread', async () => {
    const id = await draft('Copy me, replies and all', ['twitter', 'mastodon'], {
      segments: [{ content: 'The reply that comes along' }],
    });
    const page = await rig.signedIn();
    await rowOf(page, id).getByRole('button', { name: 'Duplicate' }).click();
    const notice = page.getByRole('status').filter({ hasText: 'Duplicated as a new draft' });
    await notice.waitFor();
    const copyId = /post ([0-9a-f-]{36})/.exec((await notice.textContent()) ?? '')?.[1] ?? '';
    expect(copyId).not.toBe(id);
    await rowSays(rowOf(page, copyId), /Copy me, replies and all/);
    const copy = (await v1(`/v1/posts/${copyId}`)).body;
    expect(copy).toEqual(
      expect.objectContaining({
        status: 'draft',
        content: 'Copy me, replies and all',
        platforms: ['twitter', 'mastodon'],
        segments: [expect.objectContaining({ content: 'The reply that comes along' })],
      }),
    );
    await page.close();
  });

  it('previews the post per network: where each cuts, numbers and threads it, counted its way', async () => {
    const page = await rig.signedIn();
    const composer = page.getByRole('form', { name: 'Compose a post' });
    for (const name of ['twitter', 'mastodon', 'slack'])
      await composer.getByRole('checkbox', { name }).check();
    await composer.getByLabel('Content').fill(`First part with a link https://example.com/${'a'.repeat(60)}`);
    await composer.getByRole('button', { name: 'Add a thread reply' }).click();
    await composer.getByLabel('Thread reply 1').fill('Second part');
    await composer.getByText('Preview on each network').click();

    const x = composer.getByRole('region', { name: 'Preview on twitter' });
    // X: a reply chain; the link weighs 23 (twitter-text, as the API counts).
    await expect(x.locator('li').nth(1).textContent()).resolves.toMatch(/^Reply to post 1Second part11\/280/);
    await expect(x.locator('li').first().textContent()).resolves.toMatch(/46\/280 characters$/);
    // Slack: no native thread here, so numbered separate messages, the suffix counted.
    const slack = composer.getByRole('region', { name: 'Preview on slack' });
    await expect(slack.textContent()).resolves.toContain('separate numbered messages');
    await expect(slack.locator('.preview-text').nth(1).textContent()).resolves.toBe('Second part (2/2)');
    await rig.shot(page, 'preview');

    // Over X's limit: marked in the preview as in the counts.
    await composer.getByLabel('Thread reply 1').fill('y'.repeat(281));
    await expect(x.locator('li').nth(1).textContent()).resolves.toMatch(/281\/280 characters \(too long\)$/);

    // A saved post's row previews it too.
    const id = await draft('Saved, then previewed', ['mastodon']);
    const row = rowOf(page, id);
    const toggle = row.getByRole('button', { name: 'Preview' });
    await expect(toggle.getAttribute('aria-expanded')).resolves.toBe('false');
    await toggle.click();
    await expect(toggle.getAttribute('aria-expanded')).resolves.toBe('true');
    await expect(row.getByRole('region', { name: 'Preview on mastodon' }).textContent()).resolves.toMatch(
      /Saved, then previewed21\/500/,
    );
    await page.close();
  }, 40_000);

  it('reaches every action with the keyboard alone', async () => {
    const id = await draft('Keyboard only', ['twitter']);
    const page = await rig.signedIn();
    const row = rowOf(page, id);
    await rowSays(row, /draft/);
    // Tab from the top of the page until the row's "Duplicate" button has the focus, collecting what is passed.
    const seen: string[] = [];
    await page.locator('body').focus();
    for (let i = 0; i < 400; i += 1) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        return { text: el?.textContent ?? '', row: el?.closest('tr')?.getAttribute('data-post-id') ?? null };
      });
      if (focused.row === id) seen.push(focused.text);
      if (focused.row === id && focused.text === 'Duplicate') break;
    }
    expect(seen).toEqual(['Edit', 'Publish', 'Add to queue', 'Duplicate']);
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Duplicated as a new draft' }).waitFor();
    // Then Preview, Delete, each opened with the keyboard.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await row.getByRole('region', { name: 'Preview on twitter' }).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await row.getByRole('button', { name: 'Yes, delete' }).waitFor();
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Yes, delete');
    await page.keyboard.press('Enter');
    await row.waitFor({ state: 'detached' });
    expect((await v1(`/v1/posts/${id}`)).status).toBe(404);

    // The publish button of a draft, by keyboard.
    const other = await draft('Published by keyboard', ['twitter']);
    const publish = rowOf(page, other).getByRole('button', { name: 'Publish', exact: true });
    await publish.waitFor();
    await publish.focus();
    await page.keyboard.press('Enter');
    await rowOf(page, other).getByRole('link', { name: 'published' }).waitFor({ timeout: 20_000 });
    await page.close();
  }, 60_000);
});
