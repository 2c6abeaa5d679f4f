// The dashboard in a real browser (Debian's Chromium driven by playwright-core) against the real API, publisher
// and webhooks worker, PostgreSQL and Redis, with every network pointed at the simulator.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { bearer, type TTestApi } from '../../api/test/harness.js';
import { PASSWORD, startDashboardRig, type TDashboardRig } from './browser-harness.js';

describe('dashboard in a browser', () => {
  let rig: TDashboardRig;
  let api: TTestApi;
  let base: string;
  let browser: Browser;
  let email: string;
  let apiKey: string;

  beforeAll(async () => {
    rig = await startDashboardRig({
      publisher: true,
      webhooks: { retryDelaysMs: [50, 50, 50, 50, 50] },
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
    });
    ({ api, base, browser } = rig);
    ({ email, apiKey } = rig.owner);
    await api.connect(rig.owner.accountId, 'twitter', 'acme_x');
    await api.connect(rig.owner.accountId, 'mastodon', 'acme_masto');
  }, 60_000);

  afterEach(() => {
    expect(rig.takePageErrors()).toEqual([]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  const signedIn = (): Promise<Page> => rig.signedIn();
  const shot = (page: Page, name: string) => rig.shot(page, name);

  it('refuses a wrong password with a readable message, then signs in and out', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/dashboard/`);
    await shot(page, 'sign-in');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('not my password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/Wrong e-mail or password/);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.waitFor({ timeout: 5000 }).catch(async () => {
      throw new Error(`not signed in: ${await page.locator('body').textContent()}`);
    });
    for (const name of ['Posts', 'Accounts', 'API keys', 'Webhooks', 'Queue', 'Usage']) {
      await expect(nav.getByRole('link', { name }).count()).resolves.toBe(1);
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page
      .getByRole('button', { name: 'Sign in' })
      .waitFor({ timeout: 5000 })
      .catch(async () => {
        throw new Error(`not signed out: ${await page.locator('body').textContent()}`);
      });
    // The cookie is gone server-side too: a reload does not sign back in.
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.close();
  });

  it('ends every session of the account with End all sessions, other browsers included', async () => {
    const mine = await signedIn();
    const other = await signedIn();
    await mine.getByRole('button', { name: 'End all sessions' }).click();
    await mine.getByRole('button', { name: 'Sign in' }).waitFor({ timeout: 5000 });
    // The other browser's session ended too: its next request is refused and it shows the sign-in form.
    const status = await other.evaluate(async () => (await fetch('/dashboard/api/session')).status);
    expect(status).toBe(401);
    await other.reload();
    await other.getByRole('button', { name: 'Sign in' }).waitFor({ timeout: 5000 });
    await mine.close();
    await other.close();
  });

  it('refuses a state-changing request without the CSRF token', async () => {
    const page = await signedIn();
    const status = await page.evaluate(async () => {
      const res = await fetch('/dashboard/api/keys', { method: 'POST' });
      return res.status;
    });
    expect(status).toBe(403);
    await page.close();
  });

  it('creates an API key shown once, revokes it, and the API refuses it afterwards', async () => {
    const page = await signedIn();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('button', { name: 'Create an API key' }).click();
    const key = await page.getByLabel('New API key').inputValue();
    expect(key).toMatch(/^sps_live_/);
    await shot(page, 'api-keys');
    expect((await request(api.app).get('/v1/posts').set(bearer(key))).status).toBe(200);
    // Shown once: after a reload only prefixes are listed.
    await page.reload();
    await page.getByRole('button', { name: 'Create an API key' }).waitFor();
    expect(await page.content()).not.toContain(key);
    await page.getByRole('button', { name: `Revoke ${key.slice(0, 13)}…` }).click();
    await page.getByText('revoked').first().waitFor();
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i += 1) {
      status = (await request(api.app).get('/v1/posts').set(bearer(key))).status;
    }
    expect(status).toBe(401);
    await page.close();
  });

  it('refuses text over a network limit before sending, as the API counts it', async () => {
    const page = await signedIn();
    await page.getByRole('checkbox', { name: 'twitter' }).check();
    await page.getByLabel('Content').fill('x'.repeat(281));
    await expect(page.getByText('Too long for twitter: 281 of 280 characters.').count()).resolves.toBe(1);
    await expect(page.getByRole('button', { name: 'Publish now' }).isDisabled()).resolves.toBe(true);
    // A URL weighs 23 on X, as twitter-text (and the API) count it.
    await page.getByLabel('Content').fill(`${'x'.repeat(250)} https://example.com/${'a'.repeat(100)}`);
    await expect(page.getByText('twitter: 274/280').count()).resolves.toBe(1);
    await page.close();
  });

  it('composes, schedules and lists a post; publishes one now and shows the results without a reload', async () => {
    const page = await signedIn();
    await page.getByRole('checkbox', { name: 'twitter' }).check();
    await page.getByLabel('Content').fill('Scheduled from the browser');
    const when = new Date(Date.now() + 3 * 24 * 3600_000);
    const local = new Date(when.getTime() - when.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel(/Schedule for/).fill(local);
    await page.getByRole('button', { name: 'Schedule' }).click();
    await page.getByRole('status').filter({ hasText: 'Scheduled.' }).waitFor();
    const scheduledRow = page.locator('tr', { hasText: 'Scheduled from the browser' });
    await expect(scheduledRow.locator('td').nth(1).textContent()).resolves.toBe('scheduled');

    await page.getByRole('checkbox', { name: 'mastodon' }).check();
    await page.getByLabel('Content').fill('Published from the browser');
    await page.getByRole('button', { name: 'Publish now' }).click();
    const row = page.locator('tr', { hasText: 'Published from the browser' });
    await row.getByRole('link', { name: 'published' }).nth(1).waitFor({ timeout: 20_000 });
    await expect(row.locator('td').nth(1).textContent()).resolves.toBe('published');
    await shot(page, 'posts');
    const list = await request(api.app).get('/v1/posts').set(bearer(apiKey));
    expect(list.body.posts.map((p: { content: string; status: string }) => [p.content, p.status])).toEqual(
      expect.arrayContaining([
        ['Scheduled from the browser', 'scheduled'],
        ['Published from the browser', 'published'],
      ]),
    );
    await page.close();
  }, 40_000);

  it('saves queue settings, and shows the refusal of an hour out of range next to the field', async () => {
    const page = await signedIn();
    await page.getByRole('link', { name: 'Queue' }).click();
    await page.getByLabel('From hour (0–23)').fill('25');
    await page.getByRole('button', { name: 'Save queue settings' }).click();
    await expect(page.locator('#startHour-error').textContent()).resolves.toMatch(/startHour/);
    await page.getByLabel('From hour (0–23)').fill('8');
    await page.getByLabel('Every how many hours (1–24)').fill('2');
    await page.getByRole('button', { name: 'Save queue settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await shot(page, 'queue');
    const saved = await request(api.app).get('/api/queue-settings').set(bearer(apiKey));
    expect(saved.body).toEqual(expect.objectContaining({ startHour: 8, intervalHours: 2 }));
    await page.close();
  });

  it("retries a webhook's failed delivery from the delivery history", async () => {
    const page = await signedIn();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    // Nothing listens on port 9: every attempt fails, and with 50 ms retries the delivery fails for good quickly.
    await page.getByLabel('Endpoint URL (https)').fill('https://127.0.0.1:9/hook');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await expect(page.getByLabel('Signing secret').inputValue()).resolves.toMatch(/^whsec_/);
    const post = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({ content: 'event for the webhook', platforms: ['twitter'] });
    await request(api.app).post(`/v1/posts/${post.body.id}/publish`).set(bearer(apiKey));
    await page.getByRole('button', { name: 'Show deliveries' }).click();
    const retry = page.getByRole('button', { name: 'Retry delivery' }).first();
    await retry.waitFor({ timeout: 20_000 });
    await shot(page, 'webhooks');
    const failedRow = page.locator('tr', { has: retry });
    const id = await failedRow.getAttribute('data-delivery-id');
    const answered = page.waitForResponse((r) => r.url().endsWith(`/deliveries/${id}/retry`));
    await retry.click();
    // The API queued it again (202) with the full retry schedule.
    const response = await answered;
    expect(response.status()).toBe(202);
    expect(((await response.json()) as { id: string }).id).toBe(id);
    await page.close();
  }, 40_000);
});
