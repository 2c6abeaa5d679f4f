import { createHash, randomUUID } from 'node:crypto';
import type { TPlatform } from '@sps/core';
import type { NextFunction, Request, Response } from 'express';
import { refusesToken } from './oauth/oauth-store.js';

/** One request as the simulated network received it. */
export interface TSimRequest {
  seq: number;
  platform: TPlatform;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  at: string;
}

/** A post (or message, comment, video) the simulated network holds. */
export interface TSimPost {
  platform: TPlatform;
  remoteId: string;
  text: string;
  /** Remote id of the post this one replies to or comments on. */
  replyTo: string | null;
  media: unknown;
  idempotencyKey: string | null;
  /** Who wrote it, in the network's id form (the read-back endpoints list a user's or channel's posts). */
  author?: string;
  deleted: boolean;
  at: string;
}

export type TFaultKind =
  /** 503 (or the network's 5xx shape). */
  | 'server_error'
  /** 401 / invalid token in the network's shape. */
  | 'auth_expired'
  /** 429 with Retry-After. */
  | 'rate_limited'
  /** 400 / permanent rejection. */
  | 'rejected'
  /** Wait `delayMs`, then answer normally. */
  | 'slow'
  /** Create the post, then never answer (the caller times out: outcome unknown). */
  | 'hang_after_create'
  /** Take the request and never answer nor store it (the caller times out; nothing landed). */
  | 'hang';

export interface TFault {
  platform: TPlatform | '*';
  kind: TFaultKind;
  /** How many matching requests it applies to; -1 for all until cleared. */
  remaining: number;
  retryAfterSeconds?: number;
  delayMs?: number;
  /** Only requests whose path contains this string. */
  pathIncludes?: string;
}

/**
 * How long a network remembers an idempotency key: Mastodon keeps the Idempotency-Key an hour
 * (PostStatusService, `redis.setex(…, 3_600, …)`), Discord checks `enforce_nonce` "in the past few
 * minutes" (two here, modeled). Tests shorten them to play a resend after expiry.
 */
export const DEFAULT_KEY_LIFETIMES_MS: Partial<Record<TPlatform, number>> = {
  mastodon: 60 * 60_000,
  discord: 2 * 60_000,
};

export class SimState {
  readonly requests: TSimRequest[] = [];
  readonly posts = new Map<string, TSimPost>();
  /**
   * Each author's posts per network in the order they were made: a timeline (X's duplicate rule on every
   * tweet, the read-back endpoints) reads one account's posts, not every post the simulator holds, so a
   * burst of 10,000 posts does not cost the simulator time quadratic in the posts it already has.
   */
  private readonly byAuthor = new Map<string, TSimPost[]>();
  /** Per network, how long `findByIdempotencyKey` remembers a key (no entry: for ever). */
  readonly keyLifetimesMs: Partial<Record<TPlatform, number>> = { ...DEFAULT_KEY_LIFETIMES_MS };
  /**
   * Per network, how long a video container stays IN_PROGRESS after it is made (Instagram, Threads), on top
   * of the one status read that models processing; set through `PUT /__sim/processing/:platform` (the
   * neighbours bench keeps containers busy for minutes).
   */
  readonly processingMs: Partial<Record<TPlatform, number>> = {};
  /**
   * Per network, what is left of an account's daily video allowance (Bluesky's video service: videos and
   * bytes a day); set through `PUT /__sim/video-quota/:platform`, each accepted upload spends from it. No
   * entry: not counted (a long bench run uploads more than a day's allowance).
   */
  readonly videoQuota: Partial<Record<TPlatform, { videos: number; bytes: number }>> = {};
  /**
   * Whether Instagram and Threads fetch a container's `image_url` / `video_url` as the real networks do
   * (see media-pull.sim.ts). Off by default: most tests name media on hosts such as cdn.example.com that
   * nothing serves, and the simulator cannot reach the internet in CI, so fetching them would fail every
   * such container; tests that serve their media (the media library under PUBLIC_URL) turn it on.
   */
  fetchPulledMedia = false;
  /**
   * URL prefixes verified for the simulated TikTok app besides its fixed ones (a deployment verifies the
   * domain of its PUBLIC_URL in TikTok's developer portal); tests that serve their media add theirs.
   */
  readonly tiktokVerifiedPrefixes: string[] = [];
  /** Bounds of one such fetch: the whole download's time, and its size (Instagram's image limit is 8 MiB). */
  pullLimits = { timeoutMs: 10_000, imageMaxBytes: 8 * 1024 * 1024, videoMaxBytes: 300 * 1024 * 1024 };
  /** Bodies (and JSON string fields) larger than this are logged by size only; bench:media lowers it. */
  recordBodyLimit = Number.POSITIVE_INFINITY;
  private faults: TFault[] = [];
  private seq = 0;
  private counter = 1000;

  record(platform: TPlatform, req: Request): TSimRequest {
    const entry: TSimRequest = {
      seq: ++this.seq,
      platform,
      method: req.method,
      path: req.originalUrl,
      headers: req.headers,
      body: recordedBody(req.body, this.recordBodyLimit),
      at: new Date().toISOString(),
    };
    this.requests.push(entry);
    return entry;
  }

  /** Numeric-looking ids where networks use them (X, Mastodon, Telegram), uuid-ish elsewhere. */
  nextNumericId(): string {
    this.counter += 1;
    return `${Date.now()}${this.counter}`;
  }

  nextUuid(): string {
    return randomUUID();
  }

  addPost(post: Omit<TSimPost, 'deleted' | 'at'>): TSimPost {
    const full: TSimPost = { ...post, deleted: false, at: new Date().toISOString() };
    const key = `${post.platform}:${post.remoteId}`;
    const replaced = this.posts.get(key);
    this.posts.set(key, full);
    const timeline = this.authorTimeline(replaced ?? full);
    // A post made again under the same id keeps its place, as in `posts` (a Map keeps the first insertion).
    const at = replaced ? timeline.indexOf(replaced) : -1;
    if (at >= 0) timeline.splice(at, 1);
    if (replaced && replaced.author === full.author && at >= 0) timeline.splice(at, 0, full);
    else this.authorTimeline(full).push(full);
    return full;
  }

  getPost(platform: TPlatform, remoteId: string): TSimPost | undefined {
    return this.posts.get(`${platform}:${remoteId}`);
  }

  /** The post created with this key, while the network still remembers the key. */
  findByIdempotencyKey(platform: TPlatform, key: string): TSimPost | undefined {
    const lifetime = this.keyLifetimesMs[platform] ?? Number.POSITIVE_INFINITY;
    for (const post of this.posts.values()) {
      if (
        post.platform === platform &&
        post.idempotencyKey === key &&
        Date.now() - Date.parse(post.at) < lifetime
      )
        return post;
    }
    return undefined;
  }

  postsOf(platform?: TPlatform): TSimPost[] {
    return [...this.posts.values()].filter((p) => !platform || p.platform === platform);
  }

  /** A user's (or channel's) posts on a network that are not deleted, newest first (read-back endpoints). */
  timelineOf(platform: TPlatform, author: string, since?: number): TSimPost[] {
    return (this.byAuthor.get(`${platform}:${author}`) ?? [])
      .filter((p) => !p.deleted && (since === undefined || Date.parse(p.at) >= since))
      .reverse();
  }

  private authorTimeline(post: TSimPost): TSimPost[] {
    const key = `${post.platform}:${post.author}`;
    let timeline = this.byAuthor.get(key);
    if (!timeline) {
      timeline = [];
      this.byAuthor.set(key, timeline);
    }
    return timeline;
  }

  addFault(fault: TFault): void {
    this.faults.push(fault);
  }

  clearFaults(): void {
    this.faults = [];
  }

  /**
   * Files a network received whole in one request (Mastodon media, Discord attachments): size and sha256,
   * so tests compare them with the uploaded file. Chunked uploads record theirs on the post instead.
   */
  readonly uploads: { platform: TPlatform; name: string; bytes: number; sha256: string }[] = [];

  recordUpload(platform: TPlatform, name: string, bytes: Buffer): void {
    this.uploads.push({
      platform,
      name,
      bytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
  }

  reset(): void {
    this.requests.length = 0;
    this.uploads.length = 0;
    this.posts.clear();
    this.byAuthor.clear();
    this.faults = [];
    for (const key of Object.keys(this.keyLifetimesMs) as TPlatform[]) delete this.keyLifetimesMs[key];
    Object.assign(this.keyLifetimesMs, DEFAULT_KEY_LIFETIMES_MS);
    for (const key of Object.keys(this.processingMs) as TPlatform[]) delete this.processingMs[key];
    for (const key of Object.keys(this.videoQuota) as TPlatform[]) delete this.videoQuota[key];
    this.fetchPulledMedia = false;
    this.tiktokVerifiedPrefixes.length = 0;
  }

  /** Whether a video made at `createdAt` has had its configured processing time on `platform`. */
  processed(platform: TPlatform, createdAt: number): boolean {
    return Date.now() - createdAt >= (this.processingMs[platform] ?? 0);
  }

  /** Takes the first fault that matches this request, consuming one use of it. */
  takeFault(platform: TPlatform, path: string): TFault | undefined {
    const index = this.faults.findIndex(
      (f) =>
        (f.platform === '*' || f.platform === platform) &&
        f.remaining !== 0 &&
        (!f.pathIncludes || path.includes(f.pathIncludes)),
    );
    const fault = this.faults[index];
    if (!fault) return undefined;
    if (fault.remaining > 0) fault.remaining -= 1;
    return fault;
  }
}

/** How a network renders an injected error in its own shape. */
export type TErrorRenderer = (res: Response, fault: TFault) => void;

export const defaultErrorRenderer: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      res.status(401).json({ error: 'invalid_token', message: 'The access token expired' });
      return;
    case 'rate_limited':
      res
        .status(429)
        .set('Retry-After', String(fault.retryAfterSeconds ?? 1))
        .json({ error: 'rate_limited', message: 'Too many requests' });
      return;
    case 'rejected':
      res.status(400).json({ error: 'invalid_request', message: 'The request was rejected' });
      return;
    default:
      res.status(503).json({ error: 'unavailable', message: 'Service temporarily unavailable' });
  }
};

/**
 * Records every request of a network and applies injected faults before its handlers run.
 * `hang_after_create` is left to the handlers: they create the post and then call `hang(res)`.
 */
export function networkMiddleware(
  sim: SimState,
  platform: TPlatform,
  render: TErrorRenderer = defaultErrorRenderer,
) {
  return async (req: Request, res: Response, next: NextFunction) => {
    sim.record(platform, req);
    // An access token this simulator issued that has expired or was revoked: the network's own 401.
    if (refusesToken(sim, platform, req))
      return render(res, { platform, kind: 'auth_expired', remaining: 0 });
    const fault = sim.takeFault(platform, req.originalUrl);
    if (!fault) return next();
    if (fault.kind === 'slow') {
      await new Promise((r) => setTimeout(r, fault.delayMs ?? 1000));
      return next();
    }
    if (fault.kind === 'hang_after_create') {
      res.locals.hangAfterCreate = true;
      return next();
    }
    if (fault.kind === 'hang') {
      setTimeout(() => res.socket?.destroy(), 30_000).unref();
      return;
    }
    render(res, fault);
  };
}

/** Ends a handler that created its post without answering, so the caller's request times out. */
export function answerOrHang(res: Response, send: () => void): void {
  if (res.locals.hangAfterCreate) {
    // Keep the socket open; the client's timeout fires. Destroy it later so the server can close.
    setTimeout(() => res.socket?.destroy(), 30_000).unref();
    return;
  }
  send();
}

/**
 * Over `limit` a body (or a JSON field, e.g. X's base64 segment) is recorded by its size alone: media uploads
 * of hundreds of megabytes (bench:media) must not pile up in the simulator's request log.
 */
function recordedBody(body: unknown, limit: number): unknown {
  if (body === undefined || limit === Number.POSITIVE_INFINITY) return body;
  if (Buffer.isBuffer(body)) return body.length > limit ? { omittedBytes: body.length } : body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const entries = Object.entries(body as Record<string, unknown>);
    if (!entries.some(([, v]) => typeof v === 'string' && v.length > limit)) return body;
    return Object.fromEntries(
      entries.map(([k, v]) => [
        k,
        typeof v === 'string' && v.length > limit ? `<${v.length} characters>` : v,
      ]),
    );
  }
  return body;
}
