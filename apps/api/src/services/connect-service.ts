import { createHash } from 'node:crypto';
import {
  AppError,
  CREDENTIAL_SCHEMAS,
  openCredentials,
  PLATFORMS,
  sealCredentials,
  secretBox,
  type TCredentialPlatform,
  type TPlatform,
  type TSocialAccountRecord,
  type TSocialCredentials,
  UUID_PATTERN,
} from '@sps/core';
import type { TMastodonAppRepository, TOAuthStateRepository, TSocialAccountRepository } from '@sps/db';
import {
  CREDENTIAL_CHECKS,
  CredentialRefusedError,
  checkedIdentities,
  newAuthorizationSecrets,
  OAuthError,
  oauthProviderOf,
  refreshDueAtOf,
  type TConnectedIdentity,
  type TOAuthCall,
} from '@sps/networks';
import { enqueueTokenRefresh, type TQueues } from '@sps/queue';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { createOAuthCalls, notConfigured, type TConnectConfig } from './oauth-calls.js';
import { redirectAllowlist, withQuery } from './redirect-allowlist.js';

/** How long the user has to finish on the network's page. */
const STATE_TTL_MS = 10 * 60_000;

/** One network in the dashboard's connect choices (`options()`). */
export type TConnectOption =
  | { platform: TPlatform; method: 'credentials'; fields: { name: string; required: boolean }[] }
  | {
      platform: TPlatform;
      method: 'authorization_page';
      /** What the person gives besides consent: the Mastodon server, or (optionally) the Facebook Page. */
      needs: 'instance' | 'page_id' | 'organization' | null;
      /** Variables the operator has not set; the connect answers 4xx naming them. */
      missing: string[];
      error?: string;
    };

export interface TCallbackOutcome {
  /** Where to send the browser (the caller's `redirect_uri` with `account_id` or `error`); null: show a page. */
  redirect: string | null;
  accountIds: string[];
  error: string | null;
  message: string;
}

function hashState(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

/** A PKCE verifier opens only with its own state's row. */
function verifierContext(stateHash: string): string {
  return secretBox.sealContext('oauth_states', stateHash);
}

/** Keeps a refresh token (and extras) the network did not send again on reconnect. */
function mergeCredentials(next: TSocialCredentials, previous: TSocialCredentials | null): TSocialCredentials {
  if (!previous) return next;
  return {
    ...next,
    ...(next.refreshToken || !previous.refreshToken ? {} : { refreshToken: previous.refreshToken }),
    ...(next.extra || !previous.extra ? {} : { extra: previous.extra }),
  };
}

/**
 * Connecting social accounts: the OAuth flows (start, callback) and the credential networks. The API
 * calls the networks' authorization servers here (and only here): the code exchange must happen while
 * the user's browser waits on the callback.
 */
export function createConnectService(deps: {
  socialAccounts: TSocialAccountRepository;
  states: TOAuthStateRepository;
  mastodonApps: TMastodonAppRepository;
  queues: TQueues;
  logger: Logger;
  config: TConnectConfig;
}) {
  const { config } = deps;
  const { redirectUriOf, mastodonCall, missingOf, appCall } = createOAuthCalls(config, deps.mastodonApps);
  const redirects = redirectAllowlist(config.redirectOrigins);

  async function scheduleRefresh(
    platform: TPlatform,
    record: TSocialAccountRecord,
    credentials: TSocialCredentials,
  ) {
    const due = refreshDueAtOf(platform, record.tokenExpiresAt, new Date(), credentials);
    if (!due) return;
    // Best effort: the publisher's reconciler enqueues it from PostgreSQL if Redis is unreachable now.
    await enqueueTokenRefresh(deps.queues, record.id, due).catch((err: Error) =>
      deps.logger.warn({ err: err.message, socialAccountId: record.id }, 'could not enqueue a token refresh'),
    );
  }

  async function store(
    accountId: string,
    platform: TPlatform,
    instanceUrl: string | null,
    identity: TConnectedIdentity,
  ): Promise<TSocialAccountRecord> {
    const record = await deps.socialAccounts.connectOrRevive({
      accountId,
      platform,
      accountName: identity.accountName.slice(0, 200),
      externalId: identity.externalId,
      instanceUrl,
      tokenExpiresAt: identity.tokenExpiresAt,
      tokenIssuedAt: new Date(),
      grantedScopes: identity.permissions ? identity.permissions.join(' ') : null,
      // Sealed for the row it is stored in (a revived account's own id, or the new row's).
      seal: (previous, socialAccountId) =>
        sealCredentials(
          mergeCredentials(
            identity.credentials,
            previous ? openCredentials(previous, config.encryptionKey, socialAccountId) : null,
          ),
          config.encryptionKey,
          socialAccountId,
        ),
    });
    await scheduleRefresh(platform, record, identity.credentials);
    return record;
  }

  return {
    redirectUriOf,

    /**
     * How each network is connected here: through its authorization page (with what the operator has not
     * configured yet, in the words of the 4xx the start would answer) or with a credential (its fields).
     */
    options(): TConnectOption[] {
      return PLATFORMS.map((platform): TConnectOption => {
        const schema = CREDENTIAL_SCHEMAS[platform as TCredentialPlatform];
        if (schema) {
          return {
            platform,
            method: 'credentials',
            fields: Object.entries(schema.shape).map(([name, field]) => ({
              name,
              required: !(field as z.ZodType).safeParse(undefined).success,
            })),
          };
        }
        const missing = oauthProviderOf(platform) ? missingOf(platform) : [];
        return {
          platform,
          method: 'authorization_page',
          needs:
            platform === 'mastodon'
              ? 'instance'
              : platform === 'facebook'
                ? 'page_id'
                : platform === 'linkedin'
                  ? 'organization'
                  : null,
          missing,
          ...(missing.length > 0
            ? {
                error: notConfigured(platform, missing),
              }
            : {}),
        };
      });
    },

    /** Starts a connect: a single-use state (hashed at rest) with its PKCE verifier, and the network's page. */
    async start(
      accountId: string,
      input: {
        platform: TPlatform;
        redirectUri?: string | undefined;
        instance?: string | undefined;
        /** The person's choice for the provider (`connectSelectionOf`): a Facebook Page, LinkedIn organizations. */
        selection?: string | null | undefined;
        /** The dashboard session starting it (`SessionStore.hashOf`): the callback checks the browser's. */
        sessionHash?: string | null | undefined;
      },
    ): Promise<{ url: string; state: string; expiresAt: Date }> {
      if (input.redirectUri !== undefined) redirects.check(input.redirectUri);
      const provider = oauthProviderOf(input.platform);
      if (!provider) {
        throw new AppError(
          'validation_error',
          `${input.platform} is connected with a credential, not an authorization page`,
          {
            issues: [
              { field: 'platform', message: 'is connected with POST /v1/accounts {platform, credentials}' },
            ],
          },
        );
      }
      let instanceUrl: string | null = null;
      let call: TOAuthCall;
      if (input.platform === 'mastodon') {
        if (!input.instance)
          throw new AppError('validation_error', 'instance is required for mastodon', {
            issues: [
              {
                field: 'instance',
                message: 'is required for mastodon (the server, e.g. https://mastodon.social)',
              },
            ],
          });
        const instance = new URL(input.instance);
        instance.search = '';
        instance.hash = '';
        instanceUrl = instance.toString().replace(/\/+$/, '');
        try {
          call = await mastodonCall(instanceUrl);
        } catch (error) {
          const e =
            error instanceof OAuthError ? error : new OAuthError('transient', (error as Error).message);
          if (e.kind === 'transient')
            throw new AppError('service_unavailable', `The instance did not answer: ${e.message}`, {
              retryAfter: 5,
            });
          throw new AppError('validation_error', `The instance refused to register the app: ${e.message}`, {
            issues: [{ field: 'instance', message: e.message }],
          });
        }
      } else {
        call = appCall(input.platform);
      }
      const { state, verifier } = newAuthorizationSecrets(provider.pkce);
      const expiresAt = new Date(Date.now() + STATE_TTL_MS);
      const stateHash = hashState(state);
      await deps.states.create({
        stateHash,
        accountId,
        platform: input.platform,
        verifierEncrypted: verifier
          ? secretBox.seal(verifier, config.encryptionKey, verifierContext(stateHash))
          : null,
        redirectUri: input.redirectUri ?? null,
        instanceUrl,
        selection: input.selection ?? null,
        sessionHash: input.sessionHash ?? null,
        expiresAt,
      });
      return { url: provider.authorizeUrl(call, state, verifier, input.selection ?? null), state, expiresAt };
    },

    /**
     * The network sent the user back. The state is used up whatever happens next (a replay finds
     * nothing); a refusal or failure goes back to the caller's redirect URI as `error`.
     */
    async callback(
      platform: TPlatform,
      query: Record<string, unknown>,
      /** Whether this browser holds the dashboard session (by its hash) that started a dashboard flow. */
      holdsSession: (sessionHash: string) => Promise<boolean>,
    ): Promise<TCallbackOutcome> {
      const state = typeof query.state === 'string' && query.state.length <= 512 ? query.state : null;
      const stored = state ? await deps.states.consume(hashState(state), platform) : null;
      if (!stored) {
        return {
          redirect: null,
          accountIds: [],
          error: 'invalid_state',
          message: 'This connection link is unknown, expired or already used. Start connecting again.',
        };
      }
      const back = (error: string | null, message: string, accountIds: string[] = []): TCallbackOutcome => {
        const params: Record<string, string> = error
          ? { error }
          : {
              account_id: accountIds[0] ?? '',
              ...(accountIds.length > 1 ? { account_ids: accountIds.join(',') } : {}),
            };
        // Checked again: a state stored before the allowlist (or before it was narrowed) redirects nowhere.
        const redirect =
          stored.redirectUri && redirects.allowed(stored.redirectUri) ? stored.redirectUri : null;
        return {
          redirect: redirect ? withQuery(redirect, params) : null,
          accountIds,
          error,
          message,
        };
      };
      // A flow started from the dashboard finishes only in the browser signed in to that session: a link
      // someone else started (and sent) never lands the consenting person's account in their tenant.
      if (stored.sessionHash && !(await holdsSession(stored.sessionHash))) {
        deps.logger.warn(
          { platform, accountId: stored.accountId },
          'connect refused: not the session that started it',
        );
        return back(
          'session_mismatch',
          'This connection was started in another dashboard session. Sign in to the dashboard and start connecting there.',
        );
      }
      if (typeof query.error === 'string') {
        const error = /^[a-z_]{1,64}$/.test(query.error) ? query.error : 'access_denied';
        return back(error, `${platform} did not grant access (${error}).`);
      }
      const code = typeof query.code === 'string' && query.code.length <= 2048 ? query.code : null;
      if (!code) return back('invalid_request', `${platform} sent no authorization code.`);
      try {
        const call =
          platform === 'mastodon' && stored.instanceUrl
            ? await mastodonCall(stored.instanceUrl)
            : appCall(platform);
        const provider = oauthProviderOf(platform);
        if (!provider) return back('unsupported_platform', `${platform} is not connected this way.`);
        const verifier = stored.verifierEncrypted
          ? secretBox.open(stored.verifierEncrypted, config.encryptionKey, verifierContext(stored.stateHash))
          : null;
        // Whatever the provider read from the network, nothing but bounded strings reaches the store.
        const identities = checkedIdentities(
          platform,
          await provider.complete(call, code, verifier, stored.selection),
        );
        const ids: string[] = [];
        for (const identity of identities.slice(0, 50)) {
          ids.push((await store(stored.accountId, platform, stored.instanceUrl, identity)).id);
        }
        return back(
          null,
          `Connected ${identities.map((i) => i.accountName).join(', ')} on ${platform}.`,
          ids,
        );
      } catch (error) {
        if (error instanceof OAuthError) {
          deps.logger.warn(
            { platform, kind: error.kind, code: error.code, status: error.status },
            'connect failed',
          );
          const code =
            error.code === 'no_page' || error.code === 'no_organization'
              ? error.code
              : error.kind === 'transient'
                ? 'temporarily_unavailable'
                : 'exchange_failed';
          return back(code, `Connecting ${platform} failed: ${error.message}`);
        }
        if (error instanceof AppError) return back('not_configured', error.message);
        throw error;
      }
    },

    /** A credential network: checked with the network, then stored (reviving the same channel or user). */
    async connectWithCredentials(
      accountId: string,
      platform: TCredentialPlatform,
      credentials: Record<string, string>,
    ): Promise<TSocialAccountRecord> {
      const check = CREDENTIAL_CHECKS[platform];
      if (!check) throw new AppError('validation_error', `${platform} is not connected with a credential`);
      let identity: TConnectedIdentity;
      try {
        const checked = await check(credentials, {
          baseUrl: config.networkBaseUrls[platform],
          timeoutMs: config.timeoutMs,
        });
        [identity] = checkedIdentities(
          platform,
          [checked],
          (problem) =>
            new CredentialRefusedError('credentials', `${platform}'s answer cannot be used (${problem})`),
        ) as [TConnectedIdentity];
      } catch (error) {
        if (error instanceof CredentialRefusedError)
          throw new AppError('credential_refused', `${error.field}: ${error.message}`, {
            issues: [{ field: error.field, message: error.message }],
          });
        if (error instanceof OAuthError)
          throw new AppError('service_unavailable', `${platform} could not check the credential right now`, {
            retryAfter: 5,
          });
        throw error;
      }
      const instanceUrl = platform === 'bluesky' ? (identity.credentials.extra?.service ?? null) : null;
      return store(accountId, platform, instanceUrl, identity);
    },

    /** Disconnects on purpose (204; `account.disconnected`); another tenant's id is 404. */
    async disconnect(accountId: string, socialAccountId: string): Promise<void> {
      if (!UUID_PATTERN.test(socialAccountId)) throw new AppError('not_found', 'No such connected account');
      const done = await deps.socialAccounts.disconnect(accountId, socialAccountId, 'manual');
      if (!done) throw new AppError('not_found', 'No such connected account');
    },
  };
}

export type TConnectService = ReturnType<typeof createConnectService>;
