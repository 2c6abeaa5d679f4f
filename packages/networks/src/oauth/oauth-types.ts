import type { TPlatform, TSocialCredentials } from '@sps/core';

/** The operator's app on one network, with the endpoints resolved (configured or the network's real ones). */
export interface TOAuthApp {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
}

/** Everything one OAuth call needs; built by the app from its environment, never from a request alone. */
export interface TOAuthCall {
  platform: TPlatform;
  app: TOAuthApp;
  /** `${PUBLIC_URL}/oauth/callback/<platform>`: sent with the authorization and again with the code. */
  redirectUri: string;
  /** The network's API base (`NETWORK_<NAME>_BASE_URL` or the real host), for the identity look-ups. */
  apiBaseUrl: string | undefined;
  /** Graph / Threads API version where the network is versioned. */
  apiVersion?: string | undefined;
  timeoutMs: number;
  /** The hosts came from the API user (a Mastodon instance): public HTTPS addresses only. */
  userChosenHost?: boolean;
  /** Aborts every request of the call (and drops its connection): the refresher's lock is running out. */
  signal?: AbortSignal | undefined;
}

export interface TTokenSet {
  accessToken: string;
  refreshToken?: string | undefined;
  expiresAt: Date | null;
  refreshExpiresAt?: Date | null | undefined;
  /** Replaces the stored `extra` (Bluesky: the app password kept, the PDS from the session's DID document). */
  extra?: Record<string, string> | undefined;
  /** The scopes the token answer says were granted (`scope`); absent when the network does not say. */
  scopes?: string[] | undefined;
}

/** One network identity a completed flow connects (Facebook may give several pages). */
export interface TConnectedIdentity {
  externalId: string;
  accountName: string;
  credentials: TSocialCredentials;
  tokenExpiresAt: Date | null;
  /** The scopes the network granted (the person may have unticked some); null when it does not say. */
  permissions: string[] | null;
}

/**
 * Why a token request failed. `refused` is the network saying no for good (`invalid_grant`, X's
 * `invalid_request` for a spent refresh token, a 401 from the token endpoint): the user must connect again.
 * `transient` (5xx, timeout, connection error, 429) is retried and changes nothing. `invalid` is a
 * request the network refused that a retry cannot fix (bad configuration, a wrong code at connect).
 */
export type TOAuthFailureKind = 'refused' | 'transient' | 'invalid';

export class OAuthError extends Error {
  constructor(
    readonly kind: TOAuthFailureKind,
    message: string,
    /** The network's error code (`invalid_grant`, …), never a token. */
    readonly code?: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'OAuthError';
  }
}

export interface TOAuthProvider {
  readonly platform: TPlatform;
  /** Scopes requested at authorization: the union of network-permissions.ts for the calls the service makes. */
  readonly scopes: readonly string[];
  readonly pkce: boolean;
  /** Single-use refresh tokens: a refresh must be serialized, and a replay revokes the token family (X). */
  readonly rotatingRefresh: boolean;
  /** The authorization page URL the user is sent to; `selection` as in `complete` (LinkedIn asks more scopes for organizations). */
  authorizeUrl(
    call: TOAuthCall,
    state: string,
    codeVerifier: string | null,
    selection?: string | null,
  ): string;
  /**
   * Code → tokens → the network user(s); `selection` is a choice made at connect time (a Facebook Page id;
   * LinkedIn `organization` or `organization:<id>`).
   */
  complete(
    call: TOAuthCall,
    code: string,
    codeVerifier: string | null,
    selection: string | null,
  ): Promise<TConnectedIdentity[]>;
  /** New credentials from the stored ones; absent where the network's tokens do not expire or cannot be refreshed. */
  refresh?(call: TOAuthCall, credentials: TSocialCredentials): Promise<TTokenSet>;
  /**
   * When to refresh a token that expires at `expiresAt` and was issued at `issuedAt`; null: never. Meta
   * refuses refreshing a long-lived token younger than a day, so it is never due before then.
   */
  refreshDueAt(expiresAt: Date | null, issuedAt: Date | null, credentials: TSocialCredentials): Date | null;
}

export function expiresIn(seconds: unknown, now = Date.now()): Date | null {
  const n = typeof seconds === 'string' ? Number(seconds) : seconds;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? new Date(now + n * 1000) : null;
}
