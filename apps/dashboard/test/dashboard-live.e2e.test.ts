// Live updates (server-sent events at /dashboard/api/events) and the narrow layout, in Debian's Chromium
// against the real API, publisher and network simulator. Waits are bounded (a few seconds), never measured.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { bearer, type TTestApi } from '../../api/test/harness.js';
import { startDashboardRig, type TDashboardRig } from './browser-harness.js';

describe('dashboard live updates and narrow layout', () => {
  let rig: TDashboardRig;
  let api: TTestApi;
  let apiKey: string;

  beforeAll(async () => {
    rig = await startDashboardRig({ publisher: true });
    api = rig.api;
    apiKey = rig.owner.apiKey;
    await api.connect(rig.owner.accountId, 'twitter', 'live_x');
  }, 60_000);

  afterEach(() => {
    expect(rig.takePageErrors()).toEqual([]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  /**
   * Another tab with the same session cookie: no new sign-in, as a person opening a tab (the sign-in limit
   * allows 10 per e-mail and 15 minutes). Closing the tab closes its browser context.
   */
  async function newTab(page: Page): Promise<Page> {
    const context = await rig.browser.newContext({ storageState: await page.context().storageState() });
    const tab = await context.newPage();
    tab.on('close', () => void context.close());
    await tab.goto(`${rig.base}/dashboard/`);
    await tab.getByRole('navigation', { name: 'Main' }).waitFor();
    return tab;
  }

  /** The page's stream is open (the header says Live), so what follows cannot be a first load. */
  async function live(page: Page) {
    await page.locator('[data-live="live"]').waitFor({ timeout: 5000 });
  }

  it('shows a post created through the API on an open Posts page within 2 s, and its results, without a reload', async () => {
    const page = await rig.signedIn();
    await live(page);
    let reloads = 0;
    page.on('framenavigated', () => {
      reloads += 1;
    });
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({ content: 'Made by an API client while the page is open', platforms: ['twitter'] });
    expect(created.status).toBe(201);
    const row = page.locator(`tr[data-post-id="${created.body.id}"]`);
    await row.waitFor({ timeout: 2000 });
    await expect(row.locator('td').nth(1).textContent()).resolves.toBe('draft');

    // Published through the API: the result arrives from the outbox (post.published), no poll involved.
    expect(
      (await request(api.app).post(`/v1/posts/${created.body.id}/publish`).set(bearer(apiKey))).status,
    ).toBe(200);
    await row.getByRole('link', { name: 'published' }).waitFor({ timeout: 10_000 });
    await expect(row.locator('td').nth(1).textContent()).resolves.toBe('published');
    await rig.shot(page, 'posts-live');

    // Deleted through the API: the row goes.
    expect((await request(api.app).delete(`/v1/posts/${created.body.id}`).set(bearer(apiKey))).status).toBe(
      204,
    );
    await row.waitFor({ state: 'detached', timeout: 2000 });
    expect(reloads).toBe(0);
    await page.close();
  }, 40_000);

  it('updates the Accounts page when a connect finishes in another tab', async () => {
    const watching = await rig.signedIn();
    await watching.getByRole('link', { name: 'Accounts' }).click();
    await live(watching);
    await watching.locator('tr', { hasText: 'live_x' }).waitFor();

    // Another tab connects X through the network's authorization page.
    const other = await newTab(watching);
    await other.getByRole('link', { name: 'Accounts' }).click();
    await other.getByRole('button', { name: 'Connect X' }).click();
    await other.getByLabel('Sign in as').fill('live_other_tab');
    await other.getByRole('button', { name: 'Authorize app' }).click();
    await other
      .getByRole('status')
      .filter({ hasText: 'Connected live_other_tab on X.' })
      .waitFor({ timeout: 15_000 });

    await watching.locator('tr', { hasText: 'live_other_tab' }).waitFor({ timeout: 2000 });
    await other.close();
    await watching.close();
  }, 40_000);

  it('shares one stream among the tabs of one browser, and another tab takes it over when that one closes', async () => {
    const signedIn = await rig.signedIn();
    const context = await rig.browser.newContext({ storageState: await signedIn.context().storageState() });
    await signedIn.close();
    const openTab = async () => {
      const tab = await context.newPage();
      await tab.goto(`${rig.base}/dashboard/`);
      await live(tab);
      return tab;
    };
    const streams = () => api.live.openFor(rig.owner.accountId);
    const settle = async (want: number) => {
      for (let i = 0; i < 100 && streams() !== want; i += 1) await new Promise((r) => setTimeout(r, 50));
      return streams();
    };
    const first = await openTab();
    const second = await openTab();
    const third = await openTab();
    // Three tabs say Live, but the server holds one stream for them (the others hear it from the first).
    await expect(settle(1)).resolves.toBe(1);
    const made = async (content: string) => {
      const res = await request(api.app)
        .post('/v1/posts')
        .set(bearer(apiKey))
        .send({ content, platforms: ['twitter'] });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const one = await made('Seen by every tab');
    for (const tab of [first, second, third])
      await tab.locator(`tr[data-post-id="${one}"]`).waitFor({ timeout: 2000 });

    // The tab holding the stream closes: another takes over, and the rest keep updating.
    await first.close();
    await live(second);
    await expect(settle(1)).resolves.toBe(1);
    const two = await made('Seen after the first tab closed');
    for (const tab of [second, third])
      await tab.locator(`tr[data-post-id="${two}"]`).waitFor({ timeout: 3000 });
    await context.close();
  }, 40_000);

  it('falls back to a slow poll when the stream is refused, and says so', async () => {
    const page = await rig.signedIn();
    await live(page);
    // The server refuses an 11th stream of one account (DASHBOARD_EVENTS_PER_ACCOUNT, 10): that page polls.
    const extra: Page[] = [];
    for (let i = 0; i < 9; i += 1) extra.push(await newTab(page));
    const eleventh = await newTab(page);
    await eleventh.locator('[data-live="offline"]').waitFor({ timeout: 5000 });
    await expect(eleventh.locator('[data-live]').textContent()).resolves.toBe(
      'Offline: refreshing every 30 s',
    );
    for (const p of extra) await p.close();
    await eleventh.close();
    // Chromium reports the refused stream on the console; nothing else may be there.
    expect(rig.takePageErrors().filter((e) => !/EventSource/.test(e))).toEqual([]);
    await page.close();
  }, 120_000);

  it('is usable at 390 px wide: no sideways scrolling, every post action on screen', async () => {
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({
        content: `A long unbroken link https://example.com/${'segment'.repeat(30)} that must wrap on a phone`,
        platforms: ['twitter'],
      });
    expect(created.status).toBe(201);
    const page = await rig.signedIn();
    await page.setViewportSize({ width: 390, height: 844 });
    const row = page.locator(`tr[data-post-id="${created.body.id}"]`);
    await row.waitFor();
    const pages = ['Posts', 'Accounts', 'API keys', 'Webhooks', 'Queue', 'Usage'];
    for (const name of pages) {
      await page.getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect({ page: name, width }).toEqual({ page: name, width: 390 });
    }
    await page.getByRole('link', { name: 'Posts', exact: true }).click();
    for (const action of ['Edit', 'Publish', 'Add to queue', 'Duplicate', 'Preview', 'Delete']) {
      const box = await row.getByRole('button', { name: action, exact: true }).boundingBox();
      expect(box).not.toBeNull();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    }
    await row.getByRole('button', { name: 'Preview', exact: true }).click();
    await row.getByRole('region', { name: 'Preview on twitter' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    await rig.shot(page, 'posts-narrow');
    await page.close();
  }, 40_000);
});
