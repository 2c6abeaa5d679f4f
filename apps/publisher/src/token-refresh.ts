import { openCredentials, sealCredentials, type TSocialCredentials } from '@sps/core';
import type { TSocialAccountRepository, TStoredToken, TTokenRepository } from '@sps/db';
import { OAuthError, oauthProviderOf, refreshDueAtOf, type TTokenSet } from '@sps/networks';
import { enqueueTokenRefresh, JOBS, type TQueues, type TRedis } from '@sps/queue';
import type { Logger } from 'pino';
import { createAccountLock } from './account-lock.js';
import type { TTokenRefreshConfig } from './token-refresh-config.js';
import { createRenewers } from './token-renewers.js';

export type { TTokenRefreshConfig } from './token-refresh-config.js';

/** Why a token could not be made usable: the account is disconnected, or try again later. */
export type TFreshToken =
  | { ok: true; token: string }
  | { ok: false; reason: 'refused'; message: string }
  | { ok: false; reason: 'transient'; message: string };

/** A token that expires within this much is refreshed before a publish uses it. */
const PUBLISH_SKEW_MS = 60_000;

/**
 * Keeps connected accounts' tokens alive (DESIGN invariant 7). Refreshes of one account are serialized
 * by a Redis lock, the credentials are re-read once it is held (another process may have refreshed
 * meanwhile), and the result is stored only over the version that was read (a fencing check in
 * PostgreSQL), so a single-use refresh token is never spent twice. Only a definitive refusal disconnects.
 */
export function createTokenRefresher(deps: {
  redis: TRedis;
  tokens: TTokenRepository;
  socialAccounts: TSocialAccountRepository;
  queues: TQueues;
  encryptionKey: Buffer;
  logger: Logger;
  config: TTokenRefreshConfig;
}) {
  const { config } = deps;
  /**
   * The refresh's own bound: the token requests are aborted (their connections dropped) this long after
   * the lock was taken, however long the read before them took.
   */
  const workMs = config.timeoutMs;
  // A lock that lapsed while its refresh still ran would let a second refresher spend the same
  // single-use refresh token (X then revokes the whole family): it outlives the work by a wide margin.
  const lockMs = Math.max(config.lockMs ?? 30_000, 2 * workMs + 10_000);
  const lockWaitMs = config.lockWaitMs ?? 20_000;
  const withLock = createAccountLock(deps.redis, { prefix: config.prefix, lockMs, lockWaitMs, workMs });
  const { renewerOf } = createRenewers(config);

  function dueAt(stored: TStoredToken, credentials: TSocialCredentials): Date | null {
    return refreshDueAtOf(stored.platform, stored.tokenExpiresAt, stored.tokenIssuedAt, credentials);
  }

  async function scheduleNext(socialAccountId: string, due: Date | null) {
    if (!due) return;
    await enqueueTokenRefresh(deps.queues, socialAccountId, due).catch((err: Error) =>
      deps.logger.warn({ err: err.message, socialAccountId }, 'could not enqueue the next token refresh'),
    );
  }

  /**
   * Refreshes under the lock when `needed(stored)` still holds after re-reading. Returns the usable
   * token, or why there is none.
   */
  async function refreshIf(
    socialAccountId: string,
    needed: (stored: TStoredToken, credentials: TSocialCredentials) => boolean,
  ): Promise<TFreshToken> {
    const outcome = await withLock(socialAccountId, async (signal): Promise<TFreshToken> => {
      const stored = await deps.tokens.read(socialAccountId);
      if (!stored?.isActive)
        return { ok: false, reason: 'refused', message: 'The account is no longer connected.' };
      const credentials = openCredentials(stored.credentialsEncrypted, deps.encryptionKey, stored.id);
      if (!needed(stored, credentials)) return { ok: true, token: credentials.token };
      const renew = renewerOf(stored, credentials);
      if (!renew) {
        return {
          ok: false,
          reason: 'refused',
          message: `The ${stored.platform} token cannot be refreshed; reconnect the account.`,
        };
      }
      if ('unconfigured' in renew) {
        // The account is fine; this process is not: retried like an outage, never disconnected.
        deps.logger.warn(
          { socialAccountId, platform: stored.platform, missing: renew.unconfigured },
          `token refresh impossible here: ${renew.unconfigured.join(' and ')} not set in this publisher's environment`,
        );
        return {
          ok: false,
          reason: 'transient',
          message: `The ${stored.platform} token cannot be refreshed until the operator sets ${renew.unconfigured.join(' and ')} for the publisher; it will be retried.`,
        };
      }
      let tokens: TTokenSet;
      try {
        tokens = await renew(credentials, signal);
      } catch (error) {
        const e = error instanceof OAuthError ? error : new OAuthError('transient', (error as Error).message);
        deps.logger.warn(
          { socialAccountId, platform: stored.platform, kind: e.kind, code: e.code, status: e.status },
          'token refresh failed',
        );
        if (e.kind === 'refused') {
          await deps.socialAccounts.disconnect(stored.accountId, stored.id, 'expired');
          return {
            ok: false,
            reason: 'refused',
            message: `${stored.platform} refused the token: ${e.message}. Reconnect the account.`,
          };
        }
        // A configuration problem is not the user's fault and may be fixed: retried like an outage.
        return { ok: false, reason: 'transient', message: e.message };
      }
      const next: TSocialCredentials = {
        ...credentials,
        token: tokens.accessToken,
        ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
        ...(tokens.refreshExpiresAt ? { refreshExpiresAt: tokens.refreshExpiresAt.toISOString() } : {}),
        ...(tokens.extra ? { extra: tokens.extra } : {}),
      };
      const issuedAt = new Date();
      const stored2 = await deps.tokens.storeRefreshed(stored.id, stored.credentialsVersion, {
        credentialsEncrypted: sealCredentials(next, deps.encryptionKey, stored.id),
        tokenExpiresAt: tokens.expiresAt,
        tokenIssuedAt: issuedAt,
        grantedScopes: tokens.scopes ? tokens.scopes.join(' ') : null,
      });
      if (!stored2) {
        // Someone wrote newer credentials (a reconnect, or a refresher whose lock had lapsed): use theirs.
        const latest = await deps.tokens.read(socialAccountId);
        if (!latest?.isActive)
          return { ok: false, reason: 'refused', message: 'The account is no longer connected.' };
        return {
          ok: true,
          token: openCredentials(latest.credentialsEncrypted, deps.encryptionKey, latest.id).token,
        };
      }
      deps.logger.info({ socialAccountId, platform: stored.platform }, 'token refreshed');
      await scheduleNext(
        stored.id,
        dueAt({ ...stored, tokenExpiresAt: tokens.expiresAt, tokenIssuedAt: issuedAt }, next),
      );
      return { ok: true, token: tokens.accessToken };
    });
    return (
      outcome ?? {
        ok: false,
        reason: 'transient',
        message: 'Another refresh of this account is still running.',
      }
    );
  }

  return {
    /**
     * The token to publish with: the stored one, refreshed first when it expires within a minute. Reads
     * the credentials again (a refresh elsewhere may have replaced what the publish job loaded).
     */
    async forPublish(socialAccountId: string, loadedExpiresAt: string | null): Promise<TFreshToken | null> {
      if (!loadedExpiresAt) return null;
      const soon = (stored: TStoredToken) =>
        stored.tokenExpiresAt !== null && stored.tokenExpiresAt.getTime() - Date.now() < PUBLISH_SKEW_MS;
      const stored = await deps.tokens.read(socialAccountId);
      if (!stored?.isActive)
        return { ok: false, reason: 'refused', message: 'The account is no longer connected.' };
      if (!soon(stored))
        return {
          ok: true,
          token: openCredentials(stored.credentialsEncrypted, deps.encryptionKey, stored.id).token,
        };
      return refreshIf(socialAccountId, soon);
    },

    /**
     * The network answered 401 to `staleToken`: one refresh (unless another process already replaced
     * that token), for one retry of the call. Null when the account has nothing to refresh with.
     */
    async afterUnauthorized(socialAccountId: string, staleToken: string): Promise<TFreshToken | null> {
      const stored = await deps.tokens.read(socialAccountId);
      if (!stored?.isActive) return null;
      const credentials = openCredentials(stored.credentialsEncrypted, deps.encryptionKey, stored.id);
      const provider = oauthProviderOf(stored.platform);
      // Meta's long-lived tokens refresh with themselves: once refused, nothing can renew them. Bluesky
      // can always try: its refresh JWT, or a sign-in with the app password.
      if (stored.platform !== 'bluesky' && (!provider?.refresh || !credentials.refreshToken))
        return credentials.token !== staleToken ? { ok: true, token: credentials.token } : null;
      return refreshIf(socialAccountId, (_s, current) => current.token === staleToken);
    },

    /** The refresh job: refreshes when the stored token is due (a job for an older token finds nothing to do). */
    async refreshJob(socialAccountId: string): Promise<TFreshToken | { ok: true; skipped: true }> {
      const stored = await deps.tokens.read(socialAccountId);
      if (!stored?.isActive) return { ok: true, skipped: true };
      const credentials = openCredentials(stored.credentialsEncrypted, deps.encryptionKey, stored.id);
      const due = dueAt(stored, credentials);
      if (!due) return { ok: true, skipped: true };
      if (due.getTime() > Date.now() + 1000) {
        await scheduleNext(socialAccountId, due);
        return { ok: true, skipped: true };
      }
      return refreshIf(socialAccountId, (s, c) => {
        const d = dueAt(s, c);
        return d !== null && d.getTime() <= Date.now() + 1000;
      });
    },

    /**
     * Reconciler: refresh jobs for every token due within the horizon, rebuilt from PostgreSQL. An
     * overdue one whose job already finished (failed after its retries, or ran early) is enqueued again.
     */
    async reconcile(horizonMs: number): Promise<number> {
      let enqueued = 0;
      // Meta's 60-day tokens are due ten days ahead: look that far for due times inside the horizon.
      for (const stored of await deps.tokens.expiringBefore(new Date(Date.now() + 15 * 86_400_000), 1000)) {
        const due = dueAt(
          stored,
          openCredentials(stored.credentialsEncrypted, deps.encryptionKey, stored.id),
        );
        if (!due || due.getTime() >= Date.now() + horizonMs) continue;
        if (due.getTime() < Date.now() - 60_000) {
          const job = await deps.queues.schedule.getJob(
            JOBS.tokenRefresh.jobId({ socialAccountId: stored.id, dueAt: due.getTime() }),
          );
          const state = job ? await job.getState() : null;
          if (job && (state === 'completed' || state === 'failed')) await job.remove().catch(() => undefined);
        }
        await scheduleNext(stored.id, due);
        enqueued += 1;
      }
      return enqueued;
    },
  };
}

export type TTokenRefresher = ReturnType<typeof createTokenRefresher>;
