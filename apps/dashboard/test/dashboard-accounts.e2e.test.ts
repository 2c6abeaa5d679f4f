// Accounts (OAuth connect through the simulator's authorization page, credential networks, disconnect), the
// usage page and editing/deleting posts, in a real browser against the real API, PostgreSQL, Redis and the
// network simulator.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { generateApiKey } from '@sps/core';
import { createAccountRepository } from '@sps/db';
import request from 'supertest';
import { bearer, type TTestApi } from '../../api/test/harness.js';
import { startDashboardRig, type TDashboardRig } from './browser-harness.js';

const BOT = '123456:ABCdefGHIjklMNOpqrSTUvwxYZ';

interface TAccount {
  id: string;
  platform: string;
  account_name: string;
  is_active: boolean;
  token_expires_at: string | null;
}

describe('dashboard accounts, usage and post editing in a browser', () => {
  let rig: TDashboardRig;
  let api: TTestApi;
  let key: string;

  const accounts = async (): Promise<TAccount[]> =>
    (await request(api.app).get('/v1/accounts').set(bearer(key))).body.accounts;

  beforeAll(async () => {
    rig = await startDashboardRig({
      sim: true,
      // No TikTok app on this server: its card must say so. Variant A publishes answer after 50 ms here
      // (no publisher runs); the X allowance is taken when a publish starts.
      env: { OAUTH_TIKTOK_CLIENT_ID: '', OAUTH_TIKTOK_CLIENT_SECRET: '', PUBLISH_WAIT: '50ms' },
    });
    api = rig.api;
    key = rig.owner.apiKey;
  }, 60_000);
  afterEach(() => {
    expect(rig.takePageErrors()).toEqual([]);
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("connects X through the network's authorization page and back, and shows a refusal in words", async () => {
    const page = await rig.signedIn();
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('button', { name: 'Connect X' }).click();
    // The simulator's consent page (another origin), then its redirect to the API callback and back here.
    await page.getByRole('button', { name: 'Authorize app' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/twitter/i/oauth2/authorize');
    await page.getByLabel('Sign in as').fill('dash_alice');
    await page.getByRole('button', { name: 'Authorize app' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Connected dash_alice on X.' })
      .waitFor({ timeout: 15_000 })
      .catch(async (e) => {
        throw new Error(`${e}\n${page.url()}\n${await page.locator('body').textContent()}`);
      });
    // The outcome is read once: the address bar no longer carries it.
    expect(new URL(page.url()).search).toBe('');
    const row = page.locator('tr', { hasText: 'dash_alice' });
    await expect(row.locator('td').nth(2).textContent()).resolves.toBe('active');
    // X access tokens live two hours: the expiry is shown in the viewer's time zone, not "does not expire".
    await expect(row.locator('td').nth(3).textContent()).resolves.not.toMatch(/does not expire/);
    const x = (await accounts()).find((a) => a.account_name === 'dash_alice');
    expect(x).toMatchObject({ platform: 'twitter', is_active: true });
    expect(Date.parse(x?.token_expires_at ?? '')).toBeGreaterThan(Date.now());

    // Refusing on the network's page: nothing is connected, and the page says why.
    await page.getByRole('button', { name: 'Connect X' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByRole('alert').first().textContent()).resolves.toMatch(
      /X did not grant access .*Nothing was connected/,
    );
    expect((await accounts()).filter((a) => a.platform === 'twitter')).toHaveLength(1);

    // Reconnecting the same X user revives the same account.
    await page.getByRole('button', { name: 'Reconnect dash_alice on X' }).click();
    await page.getByLabel('Sign in as').fill('dash_alice');
    await page.getByRole('button', { name: 'Authorize app' }).click();
    await page.getByRole('status').filter({ hasText: 'Connected dash_alice on X.' }).waitFor();
    expect((await accounts()).filter((a) => a.platform === 'twitter').map((a) => a.id)).toEqual([x?.id]);
  }, 60_000);

  it('shows what an account was granted and says to reconnect to grant what it lacks', async () => {
    const id = await api.connect(rig.owner.accountId, 'youtube', 'dash_tube');
    // Connected with the scopes asked before youtube.force-ssl (delete) was needed.
    await api.db.socialAccount.update({
      where: { id },
      data: {
        grantedScopes:
          'https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly',
      },
    });
    const page = await rig.signedIn();
    await page.getByRole('link', { name: 'Accounts' }).click();
    const row = page.locator('tr', { hasText: 'dash_tube' });
    await row.locator('.permissions-missing').waitFor();
    await expect(row.locator('.permissions-missing').textContent()).resolves.toMatch(
      /reconnect to grant https:\/\/www\.googleapis\.com\/auth\/youtube\.force-ssl\./,
    );
    await expect(row.locator('.permissions').textContent()).resolves.toContain('youtube.upload');
  });

  it('connects a LinkedIn organization page chosen on the Accounts page, and reconnects the same one', async () => {
    const page = await rig.signedIn();
    await page.getByRole('link', { name: 'Accounts' }).click();
    const form = page.getByRole('form', { name: 'Connect LinkedIn' });
    await form.getByLabel('Post as').selectOption('organization');
    await form.getByRole('button', { name: 'Connect LinkedIn' }).click();
    await page.getByRole('button', { name: 'Authorize app' }).waitFor();
    // The organization scopes are asked for only when organizations were chosen.
    expect(new URL(page.url()).searchParams.get('scope')).toContain('w_organization_social');
    await page.getByLabel('Sign in as').fill('dash_org');
    await page.getByRole('button', { name: 'Authorize app' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Connected dash_org Company on LinkedIn.' })
      .waitFor({ timeout: 15_000 })
      .catch(async (e) => {
        throw new Error(`${e}\n${page.url()}\n${await page.locator('body').textContent()}`);
      });
    const org = (await accounts()).find((a) => a.account_name === 'dash_org Company');
    expect(org).toMatchObject({ platform: 'linkedin', is_active: true });
    expect(org?.external_id).toMatch(/^urn:li:organization:\d+$/);
    await page.getByRole('button', { name: 'Reconnect dash_org Company on LinkedIn' }).click();
    await page.getByRole('button', { name: 'Authorize app' }).waitFor();
    expect(new URL(page.url()).searchParams.get('scope')).toContain('r_organization_admin');
    await page.getByLabel('Sign in as').fill('dash_org');
    await page.getByRole('button', { name: 'Authorize app' }).click();
    await page.getByRole('status').filter({ hasText: 'Connected dash_org Company on LinkedIn.' }).waitFor();
    expect((await accounts()).filter((a) => a.platform === 'linkedin').map((a) => a.id)).toEqual([org?.id]);
  }, 60_000);

  it('says why a network cannot be connected here, and asks Mastodon for its server', async () => {
    const page = await rig.signedIn();
    await page.getByRole('link', { name: 'Accounts' }).click();
    const tiktok = page.locator('li.network', { hasText: 'TikTok' });
    await expect(tiktok.textContent()).resolves.toMatch(
      /not configured on this server: OAUTH_TIKTOK_CLIENT_ID and OAUTH_TIKTOK_CLIENT_SECRET are not set/,
    );
    await expect(tiktok.getByRole('button').count()).resolves.toBe(0);
    // Mastodon without a server: the API's refusal, next to the server field.
    await page.getByRole('button', { name: 'Connect Mastodon' }).click();
    await page.locator('#connect-mastodon-instance-error').waitFor();
    await expect(page.locator('#connect-mastodon-instance-error').textContent()).resolves.toMatch(
      /is required for mastodon/,
    );
  });

  it('connects Telegram with a credential: a refused bot token is shown next to its field, then a good one', async () => {
    const page = await rig.signedIn();
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByRole('button', { name: 'Connect Telegram' }).click();
    await page.getByLabel('Telegram bot token').fill('123456:revokedTokenABCDEFGHIJKLMN');
    await page.getByLabel('Telegram chat id or @channel').fill('-1001234567890');
    await page.getByRole('button', { name: 'Connect Telegram account' }).click();
    const tokenError = page.locator('#cred-telegram-bot_token-error');
    await tokenError.waitFor();
    await expect(tokenError.textContent()).resolves.toMatch(/Telegram refused this bot token/);
    await expect(page.getByLabel('Telegram bot token').getAttribute('aria-describedby')).resolves.toBe(
      'cred-telegram-bot_token-error',
    );
    expect((await accounts()).filter((a) => a.platform === 'telegram')).toHaveLength(0);

    await page.getByLabel('Telegram bot token').fill(BOT);
    await page.getByRole('button', { name: 'Connect Telegram account' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Connected .* on Telegram\.$/ })
      .waitFor();
    const telegram = (await accounts()).filter((a) => a.platform === 'telegram');
    expect(telegram).toHaveLength(1);
    expect(telegram[0]?.is_active).toBe(true);
    await rig.shot(page, 'accounts');

    // Disconnecting asks first; cancelling keeps the account.
    const name = telegram[0]?.account_name ?? '';
    await page.getByRole('button', { name: `Disconnect ${name} on Telegram` }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await accounts()).find((a) => a.platform === 'telegram')?.is_active).toBe(true);
    await page.getByRole('button', { name: `Disconnect ${name} on Telegram` }).click();
    await page.getByRole('button', { name: 'Yes, disconnect' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Disconnected ${name} on Telegram.` })
      .waitFor();
    const row = page.locator(`tr[data-account-id="${telegram[0]?.id}"]`);
    await row.locator('td').nth(2).getByText('disconnected', { exact: true }).waitFor();
    expect((await accounts()).find((a) => a.platform === 'telegram')?.is_active).toBe(false);
  }, 60_000);

  it('shows the usage figures moving after requests with a key and a Variant A publish to X', async () => {
    if (!(await accounts()).some((a) => a.platform === 'twitter' && a.is_active))
      await api.connect(rig.owner.accountId, 'twitter', 'usage_x');
    // A key of its own: its minute window starts with this test's first request.
    const fresh = generateApiKey();
    await createAccountRepository(api.db).createApiKey(rig.owner.accountId, fresh);
    const page = await rig.signedIn();
    await page.getByRole('link', { name: 'Usage' }).click();
    const keyRow = page.locator('tr', { hasText: fresh.prefix });
    await expect(keyRow.locator('td.minute').textContent()).resolves.toBe(
      '1000 of 1000 left (nothing used yet)',
    );
    await expect(page.getByTestId('tier').textContent()).resolves.toMatch(/^pro: 1000 requests a minute/);
    const allowanceBefore = await page.getByTestId('x-allowance').textContent();
    const xBefore = Number(/^(\d+) of 10000/.exec(allowanceBefore ?? '')?.[1]);

    await request(api.app).get('/v1/posts').set(bearer(fresh.key)).expect(200);
    const post = await request(api.app)
      .post('/v1/posts')
      .set(bearer(fresh.key))
      .send({ content: 'usage from the browser test', platforms: ['twitter'] })
      .expect(201);
    await request(api.app).post(`/v1/posts/${post.body.id}/publish`).set(bearer(fresh.key)).expect(200);
    await request(api.app)
      .post('/api/posts')
      .set(bearer(fresh.key))
      .send({ content: 'usage through Variant A', platforms: ['twitter'], published: true })
      .expect(201);

    // The page follows the counters by itself (it polls; reading them consumes nothing). The Variant A
    // publish was the last request: once the allowance moved, the same answer holds the key's windows.
    await page
      .getByTestId('x-allowance')
      .getByText(`${xBefore + 1} of 10000 X publishes used this month, ${10000 - xBefore - 1} left`)
      .waitFor({ timeout: 15_000 });
    await expect(keyRow.locator('td.minute').textContent()).resolves.toMatch(/^998 of 1000 left \(resets /);
    await expect(keyRow.locator('td.hour').textContent()).resolves.toMatch(/^299 of 300 left \(resets /);
    await rig.shot(page, 'usage');
  }, 60_000);

  it('edits a scheduled post (a refusal next to the field), and deletes a post after confirming', async () => {
    if (!(await accounts()).some((a) => a.platform === 'twitter' && a.is_active))
      await api.connect(rig.owner.accountId, 'twitter', 'edit_x');
    const inAWeek = new Date(Date.now() + 7 * 24 * 3600_000).toISOString();
    const scheduled = await request(api.app)
      .post('/v1/posts')
      .set(bearer(key))
      .send({ content: 'Edit me later', platforms: ['twitter'], scheduled_for: inAWeek })
      .expect(201);
    const draft = await request(api.app)
      .post('/v1/posts')
      .set(bearer(key))
      .send({ content: 'Delete me', platforms: ['twitter'] })
      .expect(201);
    const page = await rig.signedIn();
    const row = page.locator(`tr[data-post-id="${scheduled.body.id}"]`);
    await row.getByRole('button', { name: 'Edit' }).click();
    const editor = page.getByRole('form', { name: 'Edit the post' });
    await expect(editor.getByLabel('Content').inputValue()).resolves.toBe('Edit me later');
    // A time in the past: the API refuses it, and the page says so next to the schedule field.
    const past = new Date(Date.now() - 2 * 3600_000);
    const local = new Date(past.getTime() - past.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await editor.getByLabel(/Schedule for/).fill(local);
    await editor.getByLabel('Content').fill('Edited in the browser');
    await editor.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('#scheduled-error').waitFor();
    await expect(page.locator('#scheduled-error').textContent()).resolves.toMatch(/future/);
    const unchanged = await request(api.app).get(`/v1/posts/${scheduled.body.id}`).set(bearer(key));
    expect(unchanged.body.content).toBe('Edit me later');
    // Clearing the time keeps the text change and makes the post a draft again (scheduled_for: null).
    await editor.getByLabel(/Schedule for/).fill('');
    await editor.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved; the post is now a draft.' }).waitFor();
    await expect(row.locator('td').first().textContent()).resolves.toBe('Edited in the browser');
    const edited = await request(api.app).get(`/v1/posts/${scheduled.body.id}`).set(bearer(key));
    expect(edited.body).toMatchObject({
      content: 'Edited in the browser',
      status: 'draft',
      scheduled_for: null,
    });

    const draftRow = page.locator(`tr[data-post-id="${draft.body.id}"]`);
    await draftRow.getByRole('button', { name: 'Delete' }).click();
    await draftRow.getByRole('button', { name: 'Keep it' }).click();
    expect((await request(api.app).get(`/v1/posts/${draft.body.id}`).set(bearer(key))).status).toBe(200);
    await draftRow.getByRole('button', { name: 'Delete' }).click();
    await draftRow.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted.' }).waitFor();
    await draftRow.waitFor({ state: 'detached' });
    expect((await request(api.app).get(`/v1/posts/${draft.body.id}`).set(bearer(key))).status).toBe(404);
  }, 60_000);
});
