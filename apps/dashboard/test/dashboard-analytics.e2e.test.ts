// Engagement in the dashboard, in Debian's Chromium against the real API, publisher, PostgreSQL, Redis and
// the network simulator: a post published through the simulator, its figures set there, collected on
// "Refresh figures", then shown on the post and on the Analytics page (charts, their table, the top post);
// a post's figures over its collections ("Over time"), and a collection followed without a reload.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, type TTestApi } from '../../api/test/harness.js';
import { createB, settleB } from '../../api/test/pipeline-helpers.js';
import { sidewaysOverflow, startDashboardRig, type TDashboardRig } from './browser-harness.js';

describe('dashboard engagement figures in a browser', () => {
  let rig: TDashboardRig;
  let api: TTestApi;
  let apiKey: string;

  beforeAll(async () => {
    rig = await startDashboardRig({ publisher: true });
    api = rig.api;
    apiKey = rig.owner.apiKey;
    await api.connect(rig.owner.accountId, 'twitter', 'figures_x');
    await api.connect(rig.owner.accountId, 'mastodon', 'figures_masto');
    await api.connect(rig.owner.accountId, 'telegram', 'figures_tg');
  }, 60_000);

  afterEach(() => {
    expect(rig.takePageErrors()).toEqual([]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  /** Sets a post's figures as its network will report them (the simulator's test control). */
  async function setSimFigures(platform: string, remoteId: string, figures: Record<string, number>) {
    const url = `${api.sim!.url}/__sim/metrics/${platform}/${encodeURIComponent(remoteId)}`;
    const res = await fetch(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(figures),
    });
    expect(res.status).toBe(204);
  }

  it('collects a published post’s figures on Refresh figures and shows them on the post and in Analytics', async () => {
    const post = await createB(api, apiKey, {
      content: 'The launch post everyone liked',
      platforms: ['twitter', 'mastodon', 'telegram'],
    });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey))).status).toBe(
      200,
    );
    const settled = await settleB(api, apiKey, post.id);
    expect(settled.status).toBe('published');
    const remote = (p: string) => settled.platform_results?.[p]?.post_id as string;
    await setSimFigures('twitter', remote('twitter'), {
      likes: 42,
      reposts: 7,
      replies: 3,
      impressions: 1200,
    });
    await setSimFigures('mastodon', remote('mastodon'), { likes: 8, reposts: 2, replies: 1, quotes: 0 });

    const page = await rig.signedIn();
    const row = page.locator(`tr[data-post-id="${post.id}"]`);
    await row.getByText('Figures', { exact: true }).click();
    const figures = row.locator('table.figures-table');
    // Not collected yet (the first collection is an hour after publishing); Telegram says why it has none.
    await figures
      .locator('tr[data-figure="collected_at"] td[data-platform="twitter"]')
      .filter({ hasText: 'not collected yet' })
      .waitFor();
    await row
      .locator('li[data-platform="telegram"]')
      .filter({ hasText: /nothing to collect/ })
      .waitFor();

    await row.getByRole('button', { name: 'Refresh figures' }).click();
    await row.getByRole('status').filter({ hasText: 'Collecting the figures now' }).waitFor();
    const twitterLikes = figures.locator('tr[data-figure="likes"] td[data-platform="twitter"]');
    await twitterLikes.filter({ hasText: '42' }).waitFor({ timeout: 20_000 });
    await row.getByRole('status').filter({ hasText: 'Figures read just now.' }).waitFor();
    expect(
      await figures.locator('tr[data-figure="impressions"] td[data-platform="twitter"]').textContent(),
    ).toMatch(/1,?200/);
    await figures
      .locator('tr[data-figure="likes"] td[data-platform="mastodon"]')
      .filter({ hasText: '8' })
      .waitFor();
    // Figures a network does not report are "—", never a made-up 0.
    expect(
      await figures.locator('tr[data-figure="impressions"] td[data-platform="mastodon"]').textContent(),
    ).toBe('—');
    await rig.shot(page, 'post-figures');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
    await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
    await page.locator('dd[data-total="likes"]').filter({ hasText: '50' }).waitFor({ timeout: 10_000 });
    // The charts are SVG drawn by recharts, with their title; the bars of the day are there.
    const chart = page.getByRole('figure', { name: 'Interactions per day' });
    await chart.locator('svg title', { hasText: 'Interactions per day' }).waitFor({ state: 'attached' });
    expect(await chart.locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    await page.getByRole('figure', { name: 'Reach per day' }).locator('svg').first().waitFor();

    // The same rows as a table: 30 days by default, today's with the post and its summed figures.
    await page.getByText('Show the per-day figures as a table').click();
    const table = page.getByRole('table', { name: /Figures per day/ });
    await table.waitFor();
    expect(await table.locator('tbody tr').count()).toBe(30);
    const today = new Date().toISOString().slice(0, 10);
    const todayRow = table.locator(`tr[data-day="${today}"]`);
    expect((await todayRow.locator('td').allTextContents()).slice(0, 4)).toEqual(['1', '1,200', '—', '50']);

    const top = page.getByRole('region', { name: 'Top posts of the period' });
    const first = top.getByRole('listitem').first();
    expect(await first.getAttribute('data-post-id')).toBe(post.id);
    expect(await first.textContent()).toMatch(/The launch post everyone liked.*63 interactions/);
    await rig.shot(page, 'analytics');

    // Another post published meanwhile: the page follows the live stream (no reload).
    // It has a first comment, listed with the post on the phone check below.
    const second = await createB(api, apiKey, {
      content: 'A second post',
      platforms: ['mastodon'],
      first_comment: 'More at https://example.com/a/long/path/that/does/not/break/by/itself/0123456789',
    });
    expect((await request(api.app).post(`/v1/posts/${second.id}/publish`).set(bearer(apiKey))).status).toBe(
      200,
    );
    await page.locator('dd[data-total="posts"]').filter({ hasText: /^2$/ }).waitFor({ timeout: 20_000 });

    // A network filter: Mastodon alone.
    await page.getByLabel('Network').selectOption('mastodon');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('heading', { name: /on mastodon/ }).waitFor();
    await page.locator('dd[data-total="likes"]').filter({ hasText: /^8$/ }).waitFor();
    await page.locator('dd[data-total="posts"]').filter({ hasText: /^2$/ }).waitFor();

    // On a phone: no sideways scrolling of the page (wide tables scroll inside their box), with nothing
    // clipped at the page's level to hide it.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByText('Show the per-day figures as a table').click();
    await table.waitFor();
    expect(await sidewaysOverflow(page)).toEqual({ fits: true, culprits: [] });
    await rig.shot(page, 'analytics-narrow');
    await page.getByRole('link', { name: 'Posts', exact: true }).click();
    await row.getByText('Figures', { exact: true }).click();
    await figures
      .locator('tr[data-figure="likes"] td[data-platform="twitter"]')
      .filter({ hasText: '42' })
      .waitFor();
    expect(await sidewaysOverflow(page)).toEqual({ fits: true, culprits: [] });
    await rig.shot(page, 'post-figures-narrow');

    // A range the API refuses: its words, naming the field.
    await page.getByRole('link', { name: 'Analytics', exact: true }).click();
    await page.getByLabel('From (UTC day)').fill('2099-01-01');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('alert').filter({ hasText: 'from: must not be after to' }).waitFor();
    await page.close();
  }, 90_000);

  it('shows a post’s figures over time and follows a new collection without a reload', async () => {
    const post = await createB(api, apiKey, { content: 'A post watched over time', platforms: ['mastodon'] });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey))).status).toBe(
      200,
    );
    const settled = await settleB(api, apiKey, post.id);
    const remoteId = settled.platform_results?.mastodon?.post_id as string;
    const collect = async (likes: number, collections: number) => {
      await setSimFigures('mastodon', remoteId, { likes, reposts: 1, replies: 0, quotes: 0 });
      const asked = await request(api.app).post(`/v1/posts/${post.id}/metrics/refresh`).set(bearer(apiKey));
      expect(asked.status).toBe(202);
      // Collected (read through the API, as the page does not poll for a refresh it did not ask for).
      for (let i = 0; i < 100; i += 1) {
        const res = await request(api.app)
          .get(`/v1/posts/${post.id}/metrics?history=true`)
          .set(bearer(apiKey));
        if ((res.body.platforms.mastodon.history ?? []).length >= collections) return;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`collection ${collections} did not land`);
    };
    await collect(5, 1);

    const page = await rig.signedIn();
    const row = page.locator(`tr[data-post-id="${post.id}"]`);
    await row.getByText('Figures', { exact: true }).click();
    const likes = row.locator('tr[data-figure="likes"] td[data-platform="mastodon"]');
    await likes.filter({ hasText: /^5$/ }).waitFor();
    await row.getByText('Over time (one collection)').click();
    const history = row.getByRole('table', { name: 'mastodon: each collection' });
    await history.waitFor();
    expect(await history.locator('tbody tr').count()).toBe(1);
    // Only the figures Mastodon reports are columns (no impressions, views, bookmarks, clicks).
    expect(await history.locator('thead th').allTextContents()).toEqual([
      'Read',
      'Likes',
      'Reposts',
      'Replies',
      'Quotes',
      'Interactions',
    ]);

    // A collection the page did not ask for (a scheduled one, here a refresh through the API) lands: the
    // publisher's notice reaches the open panel through the live stream, no reload, no poll.
    await collect(9, 2);
    await likes.filter({ hasText: /^9$/ }).waitFor({ timeout: 10_000 });
    await row.getByText('Over time (2 collections)').waitFor();
    expect(await history.locator('tbody tr td:last-child').allTextContents()).toEqual(['6', '10']);
    const line = row.getByRole('img', { name: /mastodon: interactions from 6 to 10 over 2 collections/ });
    await line.waitFor();
    expect(await line.locator('polyline').count()).toBe(1);
    await rig.shot(page, 'post-figures-history');
    await page.close();
  }, 60_000);
});
