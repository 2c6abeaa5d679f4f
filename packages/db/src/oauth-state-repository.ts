import type { TPlatform } from '@sps/core';
import { sqlOf, type TDb } from './client.js';

export interface TOAuthStateInput {
  stateHash: string;
  accountId: string;
  platform: TPlatform;
  verifierEncrypted: string | null;
  redirectUri: string | null;
  instanceUrl: string | null;
  selection: string | null;
  /** The dashboard session that started the flow (SHA-256 hex of its id); null for API and MCP flows. */
  sessionHash: string | null;
  expiresAt: Date;
}

export type TOAuthState = TOAuthStateInput;

/** Connects in progress, kept in PostgreSQL so any API process can finish a flow another started. */
export function createOAuthStateRepository(db: TDb) {
  const sql = () => sqlOf(db);
  return {
    async create(input: TOAuthStateInput): Promise<void> {
      await sql().query({
        name: 'oauth_state_create',
        text: `INSERT INTO oauth_states (state_hash, account_id, platform, verifier_encrypted, redirect_uri,
                 instance_url, selection, session_hash, expires_at)
               VALUES ($1, $2, $3::"Platform", $4, $5, $6, $7, $8, $9)`,
        values: [
          input.stateHash,
          input.accountId,
          input.platform,
          input.verifierEncrypted,
          input.redirectUri,
          input.instanceUrl,
          input.selection,
          input.sessionHash,
          input.expiresAt,
        ],
      });
      // Abandoned flows would pile up otherwise; a few rows per connect call is cheap to sweep here.
      await sql().query({
        name: 'oauth_state_sweep',
        text: `DELETE FROM oauth_states WHERE state_hash IN (
                 SELECT state_hash FROM oauth_states WHERE expires_at < now() - interval '1 hour' LIMIT 100)`,
      });
    },

    /** Takes a state once: a second use, another platform's callback or an expired one finds nothing. */
    async consume(stateHash: string, platform: TPlatform): Promise<TOAuthState | null> {
      const { rows } = await sql().query<TOAuthState & { expiresAt: Date }>({
        name: 'oauth_state_consume',
        text: `DELETE FROM oauth_states WHERE state_hash = $1 AND platform = $2::"Platform"
               RETURNING state_hash AS "stateHash", account_id AS "accountId", platform::text AS platform,
                 verifier_encrypted AS "verifierEncrypted", redirect_uri AS "redirectUri",
                 instance_url AS "instanceUrl", selection, session_hash AS "sessionHash",
                 expires_at AS "expiresAt"`,
        values: [stateHash, platform],
      });
      const row = rows[0];
      if (!row || row.expiresAt.getTime() < Date.now()) return null;
      return row;
    },

    /** Peeks at a state without using it (the callback needs its redirect URI to report a refusal). */
    async peek(stateHash: string): Promise<TOAuthState | null> {
      const { rows } = await sql().query<TOAuthState>({
        name: 'oauth_state_peek',
        text: `SELECT state_hash AS "stateHash", account_id AS "accountId", platform::text AS platform,
                 verifier_encrypted AS "verifierEncrypted", redirect_uri AS "redirectUri",
                 instance_url AS "instanceUrl", selection, session_hash AS "sessionHash",
                 expires_at AS "expiresAt"
               FROM oauth_states WHERE state_hash = $1 AND expires_at > now()`,
        values: [stateHash],
      });
      return rows[0] ?? null;
    },
  };
}

export type TOAuthStateRepository = ReturnType<typeof createOAuthStateRepository>;

export interface TMastodonApp {
  instanceUrl: string;
  clientId: string;
  clientSecretEncrypted: string;
  redirectUri: string;
  scopes: string;
}

/**
 * The service's OAuth app on each Mastodon instance, registered once per redirect URI and reused. Keyed on
 * both: after PUBLIC_URL changes, the app registered with the old redirect URI cannot be used with the new
 * one (the instance refuses it), so a new app is registered and kept beside it.
 */
export function createMastodonAppRepository(db: TDb) {
  const find = (instanceUrl: string, redirectUri: string): Promise<TMastodonApp | null> =>
    db.mastodonApp.findUnique({ where: { instanceUrl_redirectUri: { instanceUrl, redirectUri } } });
  return {
    find,
    /**
     * Keeps the first app registered when two connects race (the other registration is unused); an app
     * registered again for the same redirect URI because the service now asks for other scopes replaces it.
     */
    async save(app: TMastodonApp): Promise<TMastodonApp> {
      await db.mastodonApp.createMany({ data: [app], skipDuplicates: true });
      await db.mastodonApp.updateMany({
        where: { instanceUrl: app.instanceUrl, redirectUri: app.redirectUri, scopes: { not: app.scopes } },
        data: app,
      });
      return (await find(app.instanceUrl, app.redirectUri)) ?? app;
    },
  };
}

export type TMastodonAppRepository = ReturnType<typeof createMastodonAppRepository>;
