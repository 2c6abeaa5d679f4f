import type { TSocialCredentials } from '@sps/core';
import { assertDeliverableUrl, ForbiddenAddressError, guardedLookup } from '@sps/safe-fetch';
import got, { HTTPError, RequestError } from 'got';
import { decodeJwt } from 'jose';
import { z } from 'zod';
import { answerBound } from '../http-client.js';
import { parseAnswer, unusableAnswer, ZNetworkName, ZNetworkToken } from './answers.js';
import { beforeExpiry } from './grants.js';
import { OAuthError, type TTokenSet } from './oauth-types.js';

/**
 * Bluesky sessions (app-password sign-in). `com.atproto.server.createSession` gives an access JWT (the
 * reference PDS: 120 minutes) and a refresh JWT (90 days); `com.atproto.server.refreshSession`, with the
 * refresh JWT as bearer, gives a new pair and retires the refresh JWT it was given (a replay is refused
 * once the PDS's two-hour grace has passed: "Token has been revoked", ExpiredToken). createSession is rate
 * limited per account, 30 per 5 minutes and 300 per day (https://docs.bsky.app/docs/advanced-guides/rate-limits),
 * so a publish uses the stored access JWT, an expired one is refreshed, and the app password signs in
 * again only when the refresh JWT itself is expired or revoked.
 * https://docs.bsky.app/docs/api/com-atproto-server-create-session
 * https://docs.bsky.app/docs/api/com-atproto-server-refresh-session
 * https://github.com/bluesky-social/atproto/blob/main/packages/pds/src/api/com/atproto/server/refreshSession.ts
 */

/** What a refresh needs besides the stored credentials: where the account signs in, and as whom. */
export interface TBlueskySessionCall {
  /** The account's service (its PDS or the bsky.social entryway). */
  serviceUrl: string;
  /** A DID or handle. */
  identifier: string;
  timeoutMs: number;
  /** The service was named by an API user: public HTTPS addresses only. */
  userChosenHost?: boolean;
  /** Ends the request and its connection when aborted (the refresher's lock is running out). */
  signal?: AbortSignal | undefined;
}

/**
 * createSession and refreshSession answers (https://docs.bsky.app/docs/api/com-atproto-server-create-session):
 * a server an API user named may answer anything, so the fields used are checked for type and length.
 */
const ZSessionAnswer = z
  .object({
    accessJwt: ZNetworkToken.optional(),
    refreshJwt: ZNetworkToken.optional(),
    did: z
      .string()
      .max(2048)
      .regex(/^did:[a-z]+:\S+$/, 'must be a DID')
      .optional(),
    handle: ZNetworkName.optional(),
    didDoc: z
      .object({
        service: z
          .array(z.object({ id: z.string().max(2048).optional(), serviceEndpoint: z.unknown() }).loose())
          .max(64)
          .optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
type TSessionAnswer = z.output<typeof ZSessionAnswer>;

/** The most of a session answer that is read (a DID document included: a few kilobytes). */
const SESSION_ANSWER_MAX_BYTES = 256 * 1024;
const bounded = got.extend({ handlers: [answerBound(SESSION_ANSWER_MAX_BYTES)] });

/** Why a PDS refused: its XRPC error name (`ExpiredToken`, `AuthenticationRequired`, …) and status. */
function xrpcRefusal(error: unknown): { status: number; name: string; message: string } | null {
  if (!(error instanceof HTTPError)) return null;
  let body: unknown = error.response.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      body = null;
    }
  }
  const b = (body ?? {}) as { error?: unknown; message?: unknown };
  return {
    status: error.response.statusCode,
    name: typeof b.error === 'string' ? b.error.slice(0, 64) : '',
    message: typeof b.message === 'string' ? b.message.slice(0, 200) : '',
  };
}

/** Seconds-since-epoch claims of a JWT we were handed, read without verifying (the PDS verifies). */
function claimsOf(jwt: string | undefined): { exp?: number; sub?: string } | null {
  if (!jwt) return null;
  try {
    const claims = decodeJwt(jwt);
    return {
      ...(typeof claims.exp === 'number' ? { exp: claims.exp } : {}),
      ...(claims.sub ? { sub: claims.sub } : {}),
    };
  } catch {
    return null;
  }
}

/** True for a JWT (a session token); an app password (`xxxx-xxxx-xxxx-xxxx`) is not one. */
export function isSessionJwt(token: string): boolean {
  return claimsOf(token) !== null;
}

/** When a session JWT stops working (its `exp`), or null when it carries none. */
export function jwtExpiresAt(jwt: string | undefined): Date | null {
  const exp = claimsOf(jwt)?.exp;
  return exp ? new Date(exp * 1000) : null;
}

/** The DID a session JWT speaks for (`sub`). */
export function jwtSubject(jwt: string): string | null {
  const sub = claimsOf(jwt)?.sub;
  return sub?.startsWith('did:') ? sub : null;
}

/** The PDS that holds the repo, from the session's DID document (bsky.social is only the entryway). */
export function pdsOfDidDoc(didDoc: TSessionAnswer['didDoc'], fallback: string): string {
  const endpoint = didDoc?.service?.find((s) => s.id?.endsWith('#atproto_pds'))?.serviceEndpoint;
  if (typeof endpoint === 'string') {
    try {
      const url = new URL(endpoint);
      if (url.protocol === 'https:' || url.protocol === 'http:') return url.toString().replace(/\/+$/, '');
    } catch {
      // A malformed document: the server we talk to is the best guess.
    }
  }
  return fallback;
}

async function xrpcPost(
  call: TBlueskySessionCall,
  method: string,
  options: { bearer?: string; json?: unknown },
): Promise<TSessionAnswer> {
  const url = `${call.serviceUrl.replace(/\/+$/, '')}/xrpc/${method}`;
  if (call.userChosenHost) assertDeliverableUrl(new URL(url), false);
  const body = await bounded
    .post(url, {
      ...(call.userChosenHost ? { dnsLookup: guardedLookup(false) as never } : {}),
      ...(options.bearer ? { headers: { authorization: `Bearer ${options.bearer}` } } : {}),
      ...(options.json !== undefined ? { json: options.json } : {}),
      ...(call.signal ? { signal: call.signal } : {}),
      timeout: { request: call.timeoutMs },
      retry: { limit: 0 },
      followRedirect: false,
    })
    .json<unknown>();
  return parseAnswer(ZSessionAnswer, body, unusableAnswer('Bluesky', 'session answer'));
}

/** A 429, a 5xx or no answer: try again later, disconnect nothing. */
function transient(error: unknown, what: string): OAuthError {
  // Already judged (an answer that could not be used): kept as it is.
  if (error instanceof OAuthError) return error;
  const refusal = xrpcRefusal(error);
  if (refusal)
    return new OAuthError(
      'transient',
      `Bluesky ${what} is unavailable (HTTP ${refusal.status} ${refusal.name})`,
      refusal.name,
      refusal.status,
    );
  if (error instanceof RequestError)
    return new OAuthError('transient', `Bluesky could not be reached (${error.code ?? 'error'})`);
  return new OAuthError('transient', `Bluesky ${what} failed (${(error as Error).message})`);
}

function tokensOf(
  answer: TSessionAnswer,
  call: TBlueskySessionCall,
  extra: Record<string, string>,
): TTokenSet {
  if (!answer.accessJwt || !answer.refreshJwt)
    throw new OAuthError('invalid', 'Bluesky answered without a session');
  return {
    accessToken: answer.accessJwt,
    refreshToken: answer.refreshJwt,
    expiresAt: jwtExpiresAt(answer.accessJwt),
    refreshExpiresAt: jwtExpiresAt(answer.refreshJwt),
    extra: { ...extra, pds: pdsOfDidDoc(answer.didDoc, call.serviceUrl.replace(/\/+$/, '')) },
  };
}

/** Signs in with the app password; a refused one (401 AuthenticationRequired, AccountTakedown) is definitive. */
export async function createBlueskySession(
  call: TBlueskySessionCall,
  appPassword: string,
  extra: Record<string, string> = {},
): Promise<TTokenSet & { did?: string; handle?: string }> {
  let answer: TSessionAnswer;
  try {
    answer = await xrpcPost(call, 'com.atproto.server.createSession', {
      json: { identifier: call.identifier, password: appPassword },
    });
  } catch (error) {
    const refusal = xrpcRefusal(error);
    if (refusal && (refusal.status === 401 || refusal.status === 400))
      throw new OAuthError(
        'refused',
        `Bluesky refused the app password (${refusal.name || `HTTP ${refusal.status}`}${refusal.message ? `: ${refusal.message}` : ''})`,
        refusal.name,
        refusal.status,
      );
    if (error instanceof ForbiddenAddressError || (error as { code?: string }).code === 'EFORBIDDENADDRESS')
      throw new OAuthError(
        'invalid',
        'The Bluesky server is not a public HTTPS address',
        'forbidden_address',
      );
    throw transient(error, 'sign-in');
  }
  return {
    ...tokensOf(answer, call, { ...extra, appPassword }),
    ...(answer.did ? { did: answer.did } : {}),
    ...(answer.handle ? { handle: answer.handle } : {}),
  };
}

/**
 * New session from the stored one: refreshSession while the refresh JWT is alive, else (expired or
 * revoked: `ExpiredToken`/`InvalidToken`) a sign-in with the app password. The refresh JWT is spent by
 * the call, so the caller serializes it under the account's lock and stores the answer before using it.
 */
export async function refreshBlueskySession(
  call: TBlueskySessionCall,
  credentials: TSocialCredentials,
): Promise<TTokenSet> {
  // Rows from before sessions were kept hold the app password as the token.
  const appPassword =
    credentials.extra?.appPassword ?? (isSessionJwt(credentials.token) ? undefined : credentials.token);
  const { accessJwt: _stale, ...kept } = credentials.extra ?? {};
  const refreshJwt = credentials.refreshToken;
  const refreshExp = jwtExpiresAt(refreshJwt);
  if (refreshJwt && (!refreshExp || refreshExp.getTime() > Date.now())) {
    try {
      const answer = await xrpcPost(call, 'com.atproto.server.refreshSession', { bearer: refreshJwt });
      return tokensOf(answer, call, { ...kept, ...(appPassword ? { appPassword } : {}) });
    } catch (error) {
      const refusal = xrpcRefusal(error);
      if (refusal?.name === 'AccountTakedown')
        throw new OAuthError('refused', 'Bluesky has taken this account down', refusal.name, refusal.status);
      // Anything but a refusal of the refresh JWT (a 429, a 5xx, no answer) is not a reason to sign in.
      if (!refusal || (refusal.status !== 400 && refusal.status !== 401))
        throw transient(error, 'session refresh');
    }
  }
  if (!appPassword)
    throw new OAuthError(
      'refused',
      'The Bluesky session has ended and no app password is stored; reconnect the account',
    );
  return createBlueskySession(call, appPassword, kept);
}

/** Refreshed ten minutes before the access JWT's `exp` (or at half its life when shorter). */
export const blueskyRefreshDueAt = beforeExpiry(10 * 60_000);
