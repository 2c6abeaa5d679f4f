import {
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_TTL_MS,
  IDEMPOTENT_REPLAYED_HEADER,
  idempotencyKeyInUse,
  idempotencyKeyReused,
  isRememberedStatus,
  parseIdempotencyKey,
  requestFingerprint,
  secretBox,
} from '@sps/core';
import type { TIdempotencyRepository, TIdempotencyWrite } from '@sps/db';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { authOf } from './auth.js';

export interface TIdempotencyDeps {
  keys: TIdempotencyRepository;
  /** Stored answers are sealed: a webhook's secret is in its create answer, a post's content in its. */
  encryptionKey: Buffer;
  /** How long a request holds its key before a retry may take over (longer than any request runs). */
  leaseMs: number;
  logger: Logger;
}

/** What a route running under an `Idempotency-Key` hands to the repository that writes its resource. */
export interface TIdempotencyHandle {
  /**
   * Set when an earlier request with this key crashed after making its resource (and before answering):
   * the route continues from that resource instead of making another.
   */
  readonly resume: { resourceId: string; attempt: number | null } | null;
  /** The key's record with the answer, for the statement that writes the resource (a create). */
  withAnswer(status: number, body: unknown): TIdempotencyWrite;
  /** The key's record without answer (written with the resource; the answer is stored when it is sent). */
  effectOnly(): TIdempotencyWrite;
}

export interface TIdempotentOptions {
  /**
   * What counts as the body for "the same request" when the body is not parsed JSON (a multipart upload):
   * by default the parsed body, or the Content-Length when there is none.
   */
  fingerprintBody?: (req: Request) => unknown;
}

const handles = new WeakMap<Request, TIdempotencyHandle>();

/** The route's key handle, or null when the request has no `Idempotency-Key`. */
export function idempotencyOf(req: Request): TIdempotencyHandle | null {
  return handles.get(req) ?? null;
}

function defaultBody(req: Request): unknown {
  if (req.body !== undefined) return req.body;
  return { contentLength: req.headers['content-length'] ?? null };
}

/**
 * Stripe-style idempotent requests. `idempotent(operation)` in front of a route (after authentication and
 * body parsing): without the header it does nothing; with it, the first request runs and its answer is
 * stored before it is sent, a retry with the same body gets that answer again (`Idempotent-Replayed:
 * true`), another body is 422, and a retry while the first still runs is 409. A route that makes a
 * resource passes `idempotencyOf(req)` down so the key's record is written in the same statement as the
 * resource; one that does not still gets replays (the answer is stored before it is sent).
 */
export function createIdempotency(deps: TIdempotencyDeps) {
  const { keys, encryptionKey, leaseMs, logger } = deps;
  // Sealed for the key's row (account and key), so a stored answer cannot be moved to another key.
  const context = (accountId: string, key: string) =>
    secretBox.sealContext('idempotency_keys', `${accountId} ${key}`);

  /**
   * Claims the key: a replay (the stored answer, as JSON text), or the handle the work runs with and
   * `settle`, which stores the work's answer (or frees the key when the answer is not remembered).
   * Throws 422 `idempotency_key_reused` and 409 `idempotency_key_in_use`.
   */
  async function begin(input: {
    accountId: string;
    key: string;
    fingerprint: string;
    ttlMs?: number;
  }): Promise<TBegun> {
    const { accountId, key, fingerprint } = input;
    const seal = (body: unknown) =>
      secretBox.seal(JSON.stringify(body ?? null), encryptionKey, context(accountId, key));
    const claim = await keys.claim({
      accountId,
      key,
      fingerprint,
      leaseMs,
      ttlMs: input.ttlMs ?? IDEMPOTENCY_TTL_MS,
    });
    if (claim.kind === 'reused') throw idempotencyKeyReused();
    if (claim.kind === 'in_use') throw idempotencyKeyInUse();
    if (claim.kind === 'replay') {
      return {
        kind: 'replay',
        status: claim.status,
        body: secretBox.open(claim.body, encryptionKey, context(accountId, key)),
      };
    }
    const { token } = claim;
    let answered = false;
    const record = (status: number | null, body: string | null): TIdempotencyWrite => ({
      accountId,
      key,
      token,
      status,
      body,
    });
    return {
      kind: 'run',
      handle: {
        resume: claim.resourceId ? { resourceId: claim.resourceId, attempt: claim.resourceAttempt } : null,
        withAnswer(status, body) {
          answered = true;
          return record(status, seal(body));
        },
        effectOnly: () => record(null, null),
      },
      async settle(status, body) {
        // A success whose answer went into the resource's own statement is stored already.
        if (answered && status >= 200 && status < 300) return;
        if (isRememberedStatus(status)) {
          if (!(await keys.complete({ ...record(status, null), status, body: seal(body) })))
            logger.warn({ status }, 'idempotency key lost before its answer was stored');
        } else {
          await keys.release(accountId, key, token);
        }
      },
      release: () => keys.release(accountId, key, token),
    };
  }

  // Generic in the route's parameters, so the route handler after it keeps its typed `req.params`.
  function idempotent<P = Record<string, string>>(
    operation: string,
    options: TIdempotentOptions = {},
  ): RequestHandler<P> {
    return async (req, res, next) => {
      const key = parseIdempotencyKey(req.headersDistinct[IDEMPOTENCY_HEADER.toLowerCase()]);
      if (key === null) return next();
      const fingerprint = requestFingerprint(
        operation,
        { ...(req.params as Record<string, unknown>) },
        (options.fingerprintBody ?? defaultBody)(req as unknown as Request),
      );
      const begun = await begin({ accountId: authOf(req).accountId, key, fingerprint });
      if (begun.kind === 'replay') {
        res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
        res.status(begun.status).type('application/json').send(begun.body);
        return;
      }
      handles.set(req as unknown as Request, begun.handle);
      holdAnswerUntilStored(res, logger, begun.settle);
      // An answer sent without res.json (none of the wrapped routes does) frees the key.
      res.on('close', () => {
        if (!res.locals.idempotencySettled) void begun.release().catch(() => undefined);
      });
      next();
    };
  }

  return Object.assign(idempotent, { begin });
}

export type TBegun =
  | { kind: 'replay'; status: number; body: string }
  | {
      kind: 'run';
      handle: TIdempotencyHandle;
      settle(status: number, body: unknown): Promise<void>;
      release(): Promise<void>;
    };

/**
 * Delays `res.json` until `store` has run: a client that retries the moment it has the answer must find the
 * answer stored (not 409). A failure to store is logged and the answer still goes out.
 */
function holdAnswerUntilStored(
  res: Response,
  logger: Logger,
  store: (status: number, body: unknown) => Promise<void>,
) {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    if (res.locals.idempotencySettled) return json(body);
    res.locals.idempotencySettled = true;
    store(res.statusCode, body)
      .catch((err: unknown) => {
        logger.warn({ err: (err as Error).message, reqId: res.req.id }, 'idempotency answer not stored');
      })
      .finally(() => {
        if (!res.destroyed) json(body);
      });
    return res;
  };
}

export type TIdempotent = ReturnType<typeof createIdempotency>;

/** Expired keys removed per statement, and statements per sweep: a sweep's work is bounded. */
const SWEEP_BATCH = 1_000;
const SWEEP_STATEMENTS = 10;

/**
 * Removes keys past their 24 hours every `everyMs` (timer unref'd). Every API process sweeps; the deletes
 * are harmless together. Correctness does not depend on it: an expired key is treated as new anyway.
 */
export function sweepExpiredKeys(keys: TIdempotencyRepository, logger: Logger, everyMs = 15 * 60_000) {
  const sweep = async () => {
    try {
      for (let i = 0; i < SWEEP_STATEMENTS; i += 1) {
        if ((await keys.deleteExpired(SWEEP_BATCH)) < SWEEP_BATCH) break;
      }
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'expired idempotency keys not swept');
    }
  };
  const timer = setInterval(() => void sweep(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
