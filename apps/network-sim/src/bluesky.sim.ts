import { createHash } from 'node:crypto';
import { isValidDid, isValidTid } from '@atproto/syntax';
import type { Router } from 'express';
import { blueskyAuthOf, didOf, registerBlueskyAuth, requireSession } from './bluesky-auth.sim.js';
import { postRecordProblem, type TSimBlob } from './bluesky-record.sim.js';
import { issueServiceToken, registerBlueskyVideoService } from './bluesky-video.sim.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

const POST_COLLECTION = 'app.bsky.feed.post';

/**
 * XRPC errors are `{ error, message }`. A PDS answers an expired access token with 400 ExpiredToken,
 * and bad credentials at createSession with 401; rate limits carry `ratelimit-reset` (epoch seconds).
 * Sessions themselves (createSession, refreshSession, JWT checks) are in bluesky-auth.sim.ts.
 */
const renderBlueskyError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      if (res.req.originalUrl.includes('createSession')) {
        res.status(401).json({ error: 'AuthenticationRequired', message: 'Invalid identifier or password' });
      } else {
        res.status(400).json({ error: 'ExpiredToken', message: 'Token has expired' });
      }
      return;
    case 'rate_limited': {
      const reset = Math.floor(Date.now() / 1000) + (fault.retryAfterSeconds ?? 1);
      res
        .status(429)
        .set({ 'ratelimit-limit': '5000', 'ratelimit-remaining': '0', 'ratelimit-reset': String(reset) })
        .json({ error: 'RateLimitExceeded', message: 'Rate Limit Exceeded' });
      return;
    }
    case 'rejected':
      res.status(400).json({
        error: 'InvalidRequest',
        message: 'Invalid app.bsky.feed.post record: Record/text is too long',
      });
      return;
    default:
      res.status(502).json({ error: 'UpstreamFailure', message: 'Upstream Failure' });
  }
};

function fakeCid(seed: string): string {
  return `bafyrei${createHash('sha256').update(seed).digest('hex').slice(0, 52)}`;
}

/** Record keys are TIDs: 13 base32-sortable characters. */
function fakeTid(): string {
  const alphabet = '234567abcdefghijklmnopqrstuvwxyz';
  let n = BigInt(Date.now()) * 1000n + BigInt(Math.floor(Math.random() * 1000));
  let out = '';
  for (let i = 0; i < 13; i++) {
    out = alphabet[Number(n % 32n)] + out;
    n /= 32n;
  }
  return out;
}

interface TSimRecord {
  cid: string;
  value: unknown;
}

export function registerBlueskySim(router: Router, sim: SimState): void {
  /** Handles that exist: every account that signed in, and any *.bsky.social handle. */
  const handles = blueskyAuthOf(sim).handles;
  const blobs = new Map<string, TSimBlob>();
  const records = new Map<string, TSimRecord>();
  router.use(networkMiddleware(sim, 'bluesky', renderBlueskyError));
  registerBlueskyVideoService(router, {
    blobs,
    cidOf: fakeCid,
    nextId: () => sim.nextUuid(),
    received: (name, bytes) => sim.recordUpload('bluesky', name, bytes),
    processed: (createdAt) => sim.processed('bluesky', createdAt),
    quota: () => sim.videoQuota.bluesky,
  });

  registerBlueskyAuth(router, sim);

  // https://docs.bsky.app/docs/api/com-atproto-identity-resolve-handle
  router.get('/xrpc/com.atproto.identity.resolveHandle', (req, res) => {
    const handle = String(req.query.handle ?? '').toLowerCase();
    if (!handles.has(handle) && !handle.endsWith('.bsky.social')) {
      res.status(400).json({ error: 'HandleNotFound', message: 'Unable to resolve handle' });
      return;
    }
    res.json({ did: didOf(handle) });
  });

  // A token the PDS signs for another service, e.g. the video service's uploadBlob on this PDS.
  router.get('/xrpc/com.atproto.server.getServiceAuth', async (req, res) => {
    const session = await requireSession(sim, req, res);
    if (!session) return;
    const aud = String(req.query.aud ?? '');
    const lxm = String(req.query.lxm ?? '');
    const exp = Number(req.query.exp ?? Math.floor(Date.now() / 1000) + 60);
    if (!isValidDid(aud)) {
      res.status(400).json({ error: 'InvalidRequest', message: 'Input/aud must be a valid did' });
      return;
    }
    // Tokens bound to a method may live up to an hour.
    if (!Number.isFinite(exp) || exp * 1000 <= Date.now() || exp * 1000 > Date.now() + 60 * 60_000) {
      res.status(400).json({ error: 'BadExpiration', message: 'expiration is outside the allowed range' });
      return;
    }
    res.json({ token: issueServiceToken({ iss: session.did, aud, lxm, exp }) });
  });

  router.post('/xrpc/com.atproto.repo.uploadBlob', async (req, res) => {
    if (!(await requireSession(sim, req, res))) return;
    const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const mimeType = req.headers['content-type'] ?? 'application/octet-stream';
    const cid = fakeCid(bytes.toString('base64') + sim.nextUuid());
    blobs.set(cid, { mimeType, size: bytes.length });
    sim.recordUpload('bluesky', cid, bytes);
    res.json({ blob: { $type: 'blob', ref: { $link: cid }, mimeType, size: bytes.length } });
  });

  router.post('/xrpc/com.atproto.repo.createRecord', async (req, res) => {
    const session = await requireSession(sim, req, res);
    if (!session) return;
    const body = (req.body ?? {}) as {
      repo?: string;
      collection?: string;
      rkey?: unknown;
      record?: {
        text?: string;
        reply?: { root?: { uri?: string }; parent?: { uri?: string } };
        embed?: unknown;
      };
    };
    if (body.collection !== POST_COLLECTION || !body.record || body.repo !== session.did) {
      res
        .status(400)
        .json({ error: 'InvalidRequest', message: 'Input/record is required for this collection' });
      return;
    }
    // app.bsky.feed.post declares `key: "tid"` (modelled: the reference PDS checks record-key syntax only).
    if (body.rkey !== undefined && !isValidTid(body.rkey)) {
      res.status(400).json({ error: 'InvalidRequest', message: 'Input/rkey must be a valid TID' });
      return;
    }
    const problem = postRecordProblem(body.record, blobs);
    if (problem) {
      res.status(problem.status).json({ error: problem.error, message: problem.message });
      return;
    }
    const parent = body.record.reply?.parent?.uri ?? null;
    for (const ref of [parent, body.record.reply?.root?.uri]) {
      if (ref && !records.has(ref)) {
        res.status(400).json({ error: 'InvalidRequest', message: `Could not locate record: ${ref}` });
        return;
      }
    }
    const uri = `at://${session.did}/${POST_COLLECTION}/${(body.rkey as string | undefined) ?? fakeTid()}`;
    if (records.has(uri)) {
      // The repository's tree already holds the key; the PDS fails the write without a specific error.
      res.status(500).json({ error: 'InternalServerError', message: 'Internal Server Error' });
      return;
    }
    const cid = fakeCid(`${uri}#${JSON.stringify(body.record)}`);
    records.set(uri, { cid, value: body.record });
    sim.addPost({
      platform: 'bluesky',
      remoteId: uri,
      text: body.record.text ?? '',
      replyTo: parent,
      media: body.record.embed ?? null,
      idempotencyKey: null,
    });
    answerOrHang(res, () =>
      res.json({ uri, cid, commit: { cid: fakeCid(`${uri}#commit`), rev: fakeTid() } }),
    );
  });

  router.get('/xrpc/com.atproto.repo.getRecord', (req, res) => {
    const uri = `at://${String(req.query.repo)}/${String(req.query.collection)}/${String(req.query.rkey)}`;
    const record = records.get(uri);
    if (!record) {
      res.status(400).json({ error: 'RecordNotFound', message: `Could not locate record: ${uri}` });
      return;
    }
    res.json({ uri, cid: record.cid, value: record.value });
  });

  router.post('/xrpc/com.atproto.repo.deleteRecord', async (req, res) => {
    if (!(await requireSession(sim, req, res))) return;
    const body = (req.body ?? {}) as { repo?: string; collection?: string; rkey?: string };
    const uri = `at://${body.repo}/${body.collection}/${body.rkey}`;
    const post = sim.getPost('bluesky', uri);
    // deleteRecord succeeds whether or not the record still exists.
    if (post) post.deleted = true;
    records.delete(uri);
    res.json({ commit: { cid: fakeCid(`${body.rkey}#delete`), rev: fakeTid() } });
  });
}
