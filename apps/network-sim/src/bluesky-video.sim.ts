import { createHash } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import type { TSimBlob } from './bluesky-record.sim.js';

/**
 * Bluesky's video service (video.bsky.app) as the simulator holds it, under `/bluesky/video`: it takes a
 * service token the user's PDS signed (`com.atproto.server.getServiceAuth`), checks the account's upload
 * limits, processes the upload as a job and writes the resulting MP4 blob to the PDS.
 * https://docs.bsky.app/docs/tutorials/video
 */

export interface TServiceToken {
  iss: string;
  aud: string;
  lxm: string;
  exp: number;
}

/** Service tokens are JWTs signed with the account's key; here a readable stand-in with the same claims. */
export const issueServiceToken = (claims: TServiceToken) =>
  `sim-service.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;

function readServiceToken(req: Request): TServiceToken | null {
  const raw = req.headers.authorization?.replace(/^Bearer /, '') ?? '';
  if (!raw.startsWith('sim-service.')) return null;
  try {
    return JSON.parse(Buffer.from(raw.slice('sim-service.'.length), 'base64url').toString()) as TServiceToken;
  } catch {
    return null;
  }
}

/** `did:web` of the host a request reached (both the PDS and the video service live on the simulator's). */
export const didWebOfRequest = (req: Request) => `did:web:${(req.get('host') ?? '').replace(':', '%3A')}`;

const VIDEO_TYPES = ['video/mp4', 'video/quicktime', 'video/webm'];
const MAX_VIDEO_BYTES = 100_000_000;
/** Bytes that make the simulated processing fail, as the service fails an undecodable file. */
export const BLUESKY_FAIL_PROCESSING_MARKER = 'fail-processing';

interface TJob {
  jobId: string;
  did: string;
  /** The states the next checks report, in order; the last one stays. */
  states: string[];
  /** The blob handed back: at once for an already processed video, else with JOB_STATE_COMPLETED. */
  blob: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  error?: string;
  message?: string;
  /** When the upload arrived: the job completes no sooner than `PUT /__sim/processing/bluesky` says. */
  createdAt: number;
}

export interface TVideoServiceOptions {
  blobs: Map<string, TSimBlob>;
  cidOf: (seed: string) => string;
  nextId: () => string;
  /** Each video received: its size and sha256 (SimState.recordUpload). */
  received?: (name: string, bytes: Buffer) => void;
  /** Whether a job made at `createdAt` has had its processing time (SimState.processed). */
  processed?: (createdAt: number) => boolean;
  /** What is left of the day's allowance (SimState.videoQuota), spent by each accepted upload; none: not counted. */
  quota?: () => { videos: number; bytes: number } | undefined;
}

/**
 * The launch allowance ("25 videos or 10 GB of video per day", https://bsky.social/about/blog/09-11-2024-video),
 * reported while no quota is set.
 */
const DAILY_VIDEOS = 25;
const DAILY_BYTES = 10_000_000_000;
/**
 * The service's reasons once the day's allowance is spent, as Bluesky's app matches them: getUploadLimits
 * gives one as `message` with canUpload false, uploadVideo as `error` in an answer without a job.
 * https://github.com/bluesky-social/social-app/blob/main/src/lib/media/video/upload.shared.ts
 * https://github.com/bluesky-social/social-app/blob/main/src/state/queries/video/video.ts
 */
export const BLUESKY_DAILY_VIDEOS_REASON = 'User has exceeded daily upload videos limit';
export const BLUESKY_DAILY_BYTES_REASON = 'User has exceeded daily upload bytes limit';

/** Why the allowance refuses a video of `size` bytes (the bytes check adds the video's size), or null. */
function quotaReason(left: { videos: number; bytes: number } | undefined, size: number): string | null {
  if (!left) return null;
  if (left.videos <= 0) return BLUESKY_DAILY_VIDEOS_REASON;
  if (left.bytes <= 0 || left.bytes < size) return BLUESKY_DAILY_BYTES_REASON;
  return null;
}

export function registerBlueskyVideoService(router: Router, opts: TVideoServiceOptions): void {
  const jobs = new Map<string, TJob>();
  /** Processed uploads by their content hash: the same video again is `already_exists`. */
  const processed = new Map<string, Record<string, unknown>>();

  function requireToken(req: Request, res: Response, lxm: string): TServiceToken | null {
    const token = readServiceToken(req);
    const problem = !token
      ? 'Authentication Required'
      : token.lxm !== lxm
        ? `Token is not valid for ${lxm}`
        : token.aud !== didWebOfRequest(req)
          ? 'Token audience does not match the service'
          : token.exp * 1000 < Date.now()
            ? 'Token has expired'
            : null;
    if (!problem) return token;
    res.status(401).json({ error: 'AuthenticationRequired', message: problem });
    return null;
  }

  router.get('/video/xrpc/app.bsky.video.getUploadLimits', (req, res) => {
    if (!requireToken(req, res, 'app.bsky.video.getUploadLimits')) return;
    const left = opts.quota?.();
    const reason = quotaReason(left, 0);
    res.json({
      canUpload: reason === null,
      remainingDailyVideos: left?.videos ?? DAILY_VIDEOS,
      remainingDailyBytes: left?.bytes ?? DAILY_BYTES,
      ...(reason ? { message: reason } : {}),
    });
  });

  router.post('/video/xrpc/app.bsky.video.uploadVideo', (req, res) => {
    // The token is one the PDS signed for its own uploadBlob: the service writes the blob there.
    const token = requireToken(req, res, 'com.atproto.repo.uploadBlob');
    if (!token) return;
    if (req.query.did !== token.iss) {
      res.status(400).json({ error: 'InvalidRequest', message: 'did does not match the token issuer' });
      return;
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (!VIDEO_TYPES.includes(type) || bytes.length === 0) {
      res.status(400).json({ error: 'InvalidRequest', message: `Unsupported video type: ${type || 'none'}` });
      return;
    }
    if (bytes.length > MAX_VIDEO_BYTES) {
      res.status(400).json({ error: 'InvalidRequest', message: 'Video is too large' });
      return;
    }
    // Modelled status: the app reads the answer's `error` whatever the status
    // (https://github.com/bluesky-social/social-app/blob/main/src/lib/media/video/upload.web.ts).
    const left = opts.quota?.();
    const reason = quotaReason(left, bytes.length);
    if (reason) {
      res.status(400).json({ error: reason, message: reason });
      return;
    }
    if (left) {
      left.videos -= 1;
      left.bytes -= bytes.length;
    }
    const hash = createHash('sha256').update(bytes).digest('hex');
    opts.received?.(String(req.query.name ?? 'video'), bytes);
    const jobId = `job-${opts.nextId()}`;
    const base = { jobId, did: token.iss, blob: null, result: null, createdAt: Date.now() };
    const earlier = processed.get(hash);
    let job: TJob;
    if (earlier) {
      job = {
        ...base,
        states: ['JOB_STATE_FAILED'],
        blob: earlier,
        error: 'already_exists',
        message: 'Video already processed',
      };
    } else if (bytes.includes(BLUESKY_FAIL_PROCESSING_MARKER)) {
      job = {
        ...base,
        states: ['JOB_STATE_ENCODING', 'JOB_STATE_FAILED'],
        error: 'invalid_video',
        message: 'Video could not be decoded',
      };
    } else {
      // The processed MP4 the service writes to the PDS (as the account) once the job completes.
      const cid = opts.cidOf(hash);
      const result = { $type: 'blob', ref: { $link: cid }, mimeType: 'video/mp4', size: bytes.length };
      processed.set(hash, result);
      opts.blobs.set(cid, { mimeType: 'video/mp4', size: bytes.length });
      job = { ...base, states: ['JOB_STATE_ENCODING', 'JOB_STATE_COMPLETED'], result };
    }
    jobs.set(jobId, job);
    res.json({ jobId, did: token.iss, state: 'JOB_STATE_CREATED' });
  });

  // Each check moves the job one state on; the blob appears with JOB_STATE_COMPLETED. A job is held in its
  // last in-process state while the processing time set through `PUT /__sim/processing/bluesky` runs.
  router.get('/video/xrpc/app.bsky.video.getJobStatus', (req, res) => {
    const job = jobs.get(String(req.query.jobId ?? ''));
    if (!job) {
      res.status(400).json({ error: 'InvalidRequest', message: 'Job not found' });
      return;
    }
    const held = job.states.length === 2 && opts.processed?.(job.createdAt) === false;
    const state = job.states.length > 1 && !held ? (job.states.shift() as string) : (job.states[0] as string);
    if (state === 'JOB_STATE_COMPLETED' && job.result) job.blob = job.result;
    res.json({
      jobStatus: {
        jobId: job.jobId,
        did: job.did,
        state,
        ...(job.blob ? { blob: job.blob } : {}),
        ...(state === 'JOB_STATE_FAILED' && job.error ? { error: job.error, message: job.message } : {}),
      },
    });
  });
}
