import { expect } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import request from 'supertest';
import { bearer, type TTestApi } from './harness.js';

export interface TConnectFlow {
  /** The answer of POST /v1/accounts/connect. */
  started: { url: string; state: string; expires_at: string };
  /** Where the simulated network sent the browser (the API's callback with code or error). */
  callbackUrl: URL;
  /** The API callback's answer. */
  callback: request.Response;
}

/** A POST /v1/accounts/connect body. */
export interface TConnectBody {
  platform: TPlatform;
  redirect_uri?: string;
  instance?: string;
  page_id?: string;
  target?: 'member' | 'organization';
  organization_id?: string;
}

/** Starts a connect through the API. */
export async function startConnect(api: TTestApi, key: string, body: TConnectBody) {
  return request(api.app).post('/v1/accounts/connect').set(bearer(key)).send(body);
}

/** The person's answer on the simulated authorization page (a real HTTP POST to the simulator). */
export async function consent(
  url: string,
  user: string,
  decision: 'allow' | 'deny' = 'allow',
  /** Permissions the person unticks on the consent page (granular consent). */
  withhold: readonly string[] = [],
): Promise<URL> {
  const page = await fetch(url);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<form method="post">');
  const answer = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      decision,
      sim_user: user,
      ...(withhold.length > 0 ? { sim_withhold: withhold.join(' ') } : {}),
    }).toString(),
  });
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get('location') ?? '');
}

/** The whole connect: API start, consent on the simulator, the API callback. */
export async function connectFlow(
  api: TTestApi,
  key: string,
  body: TConnectBody,
  user = 'alice',
  decision: 'allow' | 'deny' = 'allow',
  withhold: readonly string[] = [],
): Promise<TConnectFlow> {
  const res = await startConnect(api, key, body);
  expect(res.status).toBe(200);
  const started = res.body as TConnectFlow['started'];
  const callbackUrl = await consent(started.url, user, decision, withhold);
  expect(callbackUrl.pathname).toBe(`/oauth/callback/${body.platform}`);
  const callback = await request(api.app).get(`${callbackUrl.pathname}${callbackUrl.search}`);
  return { started, callbackUrl, callback };
}

/** The connected account id from a callback that redirected to the caller's redirect URI. */
export function accountIdOf(flow: TConnectFlow): string {
  expect(flow.callback.status).toBe(302);
  const location = new URL(flow.callback.headers.location ?? '');
  const id = location.searchParams.get('account_id');
  expect(id).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
  return id ?? '';
}

export async function simControl(api: TTestApi, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${api.sim?.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBeLessThan(300);
}

export interface TSimTokenView {
  value: string;
  kind: 'access' | 'refresh';
  status: 'valid' | 'expired' | 'revoked' | 'foreign';
  family: string;
  user: string;
}

export async function simTokens(api: TTestApi, platform: TPlatform): Promise<TSimTokenView[]> {
  const res = await fetch(`${api.sim?.url}/__sim/oauth/tokens?platform=${platform}`);
  return ((await res.json()) as { tokens: TSimTokenView[] }).tokens;
}
