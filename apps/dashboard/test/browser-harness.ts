// The dashboard's end-to-end set-up: the real API (optionally with the publisher, webhooks worker and the
// network simulator) on a real port, an owner with a password, and Debian's Chromium driven by playwright-core.
import { existsSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { resolve } from 'node:path';
import { hashPassword } from '@sps/core';
import { createOwnerRepository, type TPlan } from '@sps/db';
import { type Browser, chromium, type Page } from 'playwright-core';
import sharp from 'sharp';
import { freePort } from '../../../test/processes.js';
import { startTestApi, type TTestApi, type TTestApiOptions } from '../../api/test/harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const PASSWORD = 'dashboard password 1';
// `DASHBOARD_SCREENSHOTS=1` refreshes the README's pictures; otherwise none are taken.
const SHOTS =
  process.env.DASHBOARD_SCREENSHOTS === '1'
    ? resolve(import.meta.dirname, '../../../docs/screenshots')
    : null;

export interface TDashboardRig {
  api: TTestApi;
  base: string;
  browser: Browser;
  owner: { accountId: string; apiKey: string; email: string };
  signedIn(): Promise<Page>;
  shot(page: Page, name: string): Promise<void>;
  /** Uncaught exceptions of the dashboard's pages since the last call (a test fails on any). */
  takePageErrors(): string[];
  close(): Promise<void>;
}

export async function startDashboardRig(
  options: TTestApiOptions & { plan?: TPlan } = {},
): Promise<TDashboardRig> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `No Chromium at ${CHROMIUM}: install Debian's chromium (npm test and .ci/run do when run as root)`,
    );
  }
  if (!existsSync(resolve(import.meta.dirname, '../dist/index.html'))) {
    throw new Error('The dashboard is not built: run npm run build');
  }
  // The port is chosen first: PUBLIC_URL (where the networks send the browser back) must be this server.
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const api = await startTestApi({ ...options, env: { PUBLIC_URL: base, ...options.env } });
  const server: Server = await new Promise((done, fail) => {
    const s = api.app.listen(port, '127.0.0.1', () => done(s));
    s.once('error', fail);
  });
  const account = await api.account(options.plan ?? 'pro');
  const email = (await api.db.account.findUniqueOrThrow({ where: { id: account.accountId } })).ownerEmail;
  await createOwnerRepository(api.db).setPasswordHash(account.accountId, await hashPassword(PASSWORD));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
  if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  let pageErrors: string[] = [];

  return {
    api,
    base,
    browser,
    owner: { accountId: account.accountId, apiKey: account.apiKey, email },
    async signedIn() {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      page.on('pageerror', (error) => pageErrors.push(error.message));
      // React reports errors its error boundary caught on the console; failed requests (a 401 before
      // sign-in, a 4xx a test provokes) are expected there too and are not page errors.
      page.on('console', (m) => {
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource'))
          pageErrors.push(m.text());
      });
      await page.goto(`${base}/dashboard/`);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      return page;
    },
    async shot(page, name) {
      if (!SHOTS) return;
      // Small files for the README: a 256-colour palette is plenty for flat UI pictures (sharp, already the
      // publisher's image encoder).
      const png = await page.screenshot({ fullPage: true });
      await sharp(png).png({ palette: true, compressionLevel: 9, effort: 10 }).toFile(`${SHOTS}/${name}.png`);
    },
    takePageErrors() {
      const taken = pageErrors;
      pageErrors = [];
      return taken;
    },
    async close() {
      await browser.close();
      await new Promise((r) => server.close(r));
      await api.close();
    },
  };
}

/**
 * Whether the page scrolls sideways: the document's scrollWidth against the viewport, and the elements past
 * the viewport's right edge that no box of their own scrolls or clips (named `tag#id.class`, so a failure
 * names the culprit). The page's own boxes (body, the shell, main) do not count as holding them: clipping
 * the whole page would hide the overflow, not fix it.
 */
export async function sidewaysOverflow(page: Page): Promise<{ fits: boolean; culprits: string[] }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const pageBoxes = new Set<Element>([document.body, ...document.querySelectorAll('.shell, main')]);
    const culprits: string[] = [];
    for (const el of document.body.querySelectorAll('*')) {
      if (el.getBoundingClientRect().right <= width + 0.5) continue;
      let held = false;
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        if (!pageBoxes.has(a) && getComputedStyle(a).overflowX !== 'visible') {
          held = true;
          break;
        }
      }
      if (held) continue;
      const classes =
        typeof el.className === 'string' && el.className ? `.${el.className.split(' ').join('.')}` : '';
      culprits.push(`${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${classes}`);
    }
    return { fits: document.documentElement.scrollWidth <= width && culprits.length === 0, culprits };
  });
}
