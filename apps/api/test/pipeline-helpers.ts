import { expect } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import type { TSimPost } from '@sps/network-sim';
import request from 'supertest';
import { bearer, type TTestApi } from './harness.js';

// Shared by the pipeline-*.test.ts files: response shapes and bounded polling.

export type TPlatformResultB =
  | { success: true; post_id: string; post_url: string }
  | { success: false; error: string };

export interface TPostB {
  id: string;
  content: string;
  platforms: string[];
  status: 'draft' | 'scheduled' | 'publishing' | 'published' | 'failed';
  scheduled_for: string | null;
  media: { images: { url: string; alt_text?: string }[]; video: { url: string } | null } | null;
  segments: { content: string; media_urls: string[] }[] | null;
  platform_results: Record<string, TPlatformResultB> | null;
  created_at: string;
  updated_at: string;
  published_at: string | null;
}

export interface TErrorB {
  error: string;
  code: string;
  details: Record<string, unknown>;
}

export interface TPostA {
  id: string;
  content: string;
  platforms: string[];
  scheduledFor: string | null;
  published: boolean;
  queueStatus: 'queued' | 'pending' | null;
  platformPostIds: Record<string, { id: string; url: string } | { error: string }> | null;
  createdAt: string;
}

export interface TPublishResultA {
  platform: string;
  success: boolean;
  postUrl?: string;
  error?: string;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `read` until `done` holds or the bound passes; returns the last value read. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 8000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await sleep(everyMs);
    value = await read();
  }
  return value;
}

export async function getB(api: TTestApi, key: string, id: string): Promise<TPostB> {
  const res = await request(api.app).get(`/v1/posts/${id}`).set(bearer(key));
  expect(res.status).toBe(200);
  return res.body as TPostB;
}

/** Waits until a Variant B post leaves `publishing` (and `scheduled` when `fromScheduled`). */
export function settleB(
  api: TTestApi,
  key: string,
  id: string,
  timeoutMs = 8000,
  fromScheduled = false,
): Promise<TPostB> {
  return pollUntil(
    () => getB(api, key, id),
    (p) => p.status !== 'publishing' && !(fromScheduled && p.status === 'scheduled'),
    timeoutMs,
  );
}

export async function getA(api: TTestApi, key: string, id: string): Promise<TPostA> {
  const res = await request(api.app).get(`/api/posts/${id}`).set('x-api-key', key);
  expect(res.status).toBe(200);
  return (res.body as { post: TPostA }).post;
}

export async function createB(api: TTestApi, key: string, body: object): Promise<TPostB> {
  const res = await request(api.app).post('/v1/posts').set(bearer(key)).send(body);
  expect(res.status).toBe(201);
  return res.body as TPostB;
}

export async function createA(api: TTestApi, key: string, body: object): Promise<TPostA> {
  const res = await request(api.app).post('/api/posts').set('x-api-key', key).send(body);
  expect(res.status).toBe(201);
  return (res.body as { post: TPostA }).post;
}

/** Simulator posts of a platform whose text starts with a marker unique to one test. */
export function simPosts(api: TTestApi, platform: TPlatform, marker: string): TSimPost[] {
  return (api.sim?.sim.postsOf(platform) ?? []).filter((p) => p.text.includes(marker));
}

/** Simulator requests of a platform whose path contains `pathIncludes` and whose body mentions `marker`. */
export function simRequests(api: TTestApi, platform: TPlatform, pathIncludes: string, marker: string) {
  return (api.sim?.sim.requests ?? []).filter(
    (r) =>
      r.platform === platform &&
      r.path.includes(pathIncludes) &&
      JSON.stringify(r.body ?? '').includes(marker),
  );
}

export function uniqueMarker(label: string): string {
  return `${label}-${Math.random().toString(36).slice(2, 8)}`;
}
