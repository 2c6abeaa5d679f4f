import { credentialsContext, secretBox, type TPlatform } from '@sps/core';
import type { TConnectorAccount } from '@sps/networks';

/** Opens an account's sealed credentials only for the call that needs them; never logged. */
export function connectorAccount(
  row: {
    id: string;
    platform: string;
    accountName: string;
    externalId: string | null;
    instanceUrl: string | null;
    credentialsEncrypted: string;
    /** Space-separated scopes the network granted; null: unknown (the network decides). */
    grantedScopes?: string | null;
  },
  key: Buffer,
): TConnectorAccount {
  const credentials = JSON.parse(
    secretBox.open(row.credentialsEncrypted, key, credentialsContext(row.id)),
  ) as {
    token?: string;
    extra?: Record<string, string>;
  };
  // The app password (Bluesky) stays with the token refresher: a connector never signs in by itself.
  const { appPassword: _secret, accessJwt: _old, ...extra } = credentials.extra ?? {};
  return {
    id: row.id,
    platform: row.platform as TPlatform,
    accountName: row.accountName,
    externalId: row.externalId,
    instanceUrl: row.instanceUrl,
    token: credentials.token ?? '',
    permissions: row.grantedScopes?.trim() ? row.grantedScopes.trim().split(/\s+/) : null,
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}
