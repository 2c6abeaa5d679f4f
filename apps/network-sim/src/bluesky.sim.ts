import { createHash } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

const POST_COLLECTION = 'app.bsky.feed.post';

/**
 * XRPC errors are `{ error, message }`. A PDS answers an expired access token with 400 ExpiredToken,
 * and bad credentials at createSession with 401; rate limits carry `ratelimit-reset` (epoch seconds).
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

interface TSimSession {
  did: string;
  handle: string;
}

export function registerBlueskySim(router: Router, sim: SimState): void {
  const sessions = new Map<string, TSimSession>();
  router.use(networkMiddleware(sim, 'bluesky', renderBlueskyError));

  function requireSession(req: Request, res: Response): TSimSession | null {
    const token = req.headers.authorization?.replace(/^Bearer /, '') ?? '';
    const session = sessions.get(token);
    if (session) return session;
    res.status(401).json({ error: 'AuthMissing', message: 'Authentication Required' });
    return null;
  }

  router.post('/xrpc/com.atproto.server.createSession', (req, res) => {
    const body = (req.body ?? {}) as { identifier?: string; password?: string };
    if (!body.identifier || !body.password) {
      res.status(401).json({ error: 'AuthenticationRequired', message: 'Invalid identifier or password' });
      return;
    }
    const did = `did:plc:${createHash('sha256').update(body.identifier).digest('hex').slice(0, 24)}`;
    const handle = body.identifier.includes('.') ? body.identifier : `${body.identifier}.bsky.social`;
    const accessJwt = `sim-access-${sim.nextUuid()}`;
    sessions.set(accessJwt, { did, handle });
    res.json({ accessJwt, refreshJwt: `sim-refresh-${sim.nextUuid()}`, did, handle, active: true });
  });

  router.post('/xrpc/com.atproto.repo.uploadBlob', (req, res) => {
    if (!requireSession(req, res)) return;
    const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    res.json({
      blob: {
        $type: 'blob',
        ref: { $link: fakeCid(bytes.toString('base64') + sim.nextUuid()) },
        mimeType: req.headers['content-type'] ?? 'application/octet-stream',
        size: bytes.length,
      },
    });
  });

  router.post('/xrpc/com.atproto.repo.createRecord', (req, res) => {
    const session = requireSession(req, res);
    if (!session) return;
    const body = (req.body ?? {}) as {
      repo?: string;
      collection?: string;
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
    const parent = body.record.reply?.parent?.uri ?? null;
    for (const ref of [parent, body.record.reply?.root?.uri]) {
      if (ref && !sim.getPost('bluesky', ref)) {
        res.status(400).json({ error: 'InvalidRequest', message: `Could not locate record: ${ref}` });
        return;
      }
    }
    const uri = `at://${session.did}/${POST_COLLECTION}/${fakeTid()}`;
    const cid = fakeCid(uri);
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

  router.post('/xrpc/com.atproto.repo.deleteRecord', (req, res) => {
    if (!requireSession(req, res)) return;
    const body = (req.body ?? {}) as { repo?: string; collection?: string; rkey?: string };
    const post = sim.getPost('bluesky', `at://${body.repo}/${body.collection}/${body.rkey}`);
    // deleteRecord succeeds whether or not the record still exists.
    if (post) post.deleted = true;
    res.json({ commit: { cid: fakeCid(`${body.rkey}#delete`), rev: fakeTid() } });
  });
}
