import { audienceOf, missingFor, neededFor, type TPermissionCall, type TPlatform } from '@sps/core';
import type {
  TConnectorAccount,
  TNetworkConnector,
  TNetworkFailure,
  TPublishInput,
  TRemoteRef,
} from '../connector.js';

const NAMES: Partial<Record<TPlatform, string>> = {
  twitter: 'X',
  youtube: 'YouTube',
  linkedin: 'LinkedIn',
  tiktok: 'TikTok',
  threads: 'Threads',
  instagram: 'Instagram',
  facebook: 'Facebook',
  mastodon: 'Mastodon',
  slack: 'Slack',
  discord: 'Discord',
};

/**
 * How each network says a token lacks a permission (the body of its refusal), from its documentation:
 * TikTok `scope_not_authorized` (401), Google `insufficientPermissions` / `ACCESS_TOKEN_SCOPE_INSUFFICIENT`
 * (403), Meta Graph code 10 or 200-299 (permission errors), X's 403 problem types, LinkedIn 403
 * `ACCESS_DENIED`, Mastodon 403 "outside the authorized scopes", Slack `missing_scope`, Discord 50013.
 */
const REFUSAL: Partial<Record<TPlatform, (status: number | undefined, body: string) => boolean>> = {
  tiktok: (_s, b) => b.includes('scope_not_authorized'),
  youtube: (_s, b) => b.includes('insufficientPermissions') || b.includes('ACCESS_TOKEN_SCOPE_INSUFFICIENT'),
  threads: (_s, b) => /"code":\s*(10|2\d\d)\b/.test(b),
  instagram: (_s, b) => /"code":\s*(10|2\d\d)\b/.test(b),
  facebook: (_s, b) => /"code":\s*(10|2\d\d)\b/.test(b),
  twitter: (s, b) =>
    s === 403 &&
    (b.includes('problems/client-forbidden') || b.includes('problems/unsupported-authentication')),
  linkedin: (s, b) => s === 403 && b.includes('ACCESS_DENIED') && /permission/i.test(b),
  mastodon: (s, b) => s === 403 && b.includes('outside the authorized scopes'),
  slack: (_s, b) => b.includes('missing_scope'),
  discord: (_s, b) => /"code":\s*50013\b/.test(b),
};

/** Where a missing permission is granted: the network's consent page, or the bot's settings. */
function howToGrant(platform: TPlatform, network: string, missing: string): string {
  if (platform === 'discord')
    return `give the bot ${missing} in the channel (server settings), then reconnect the account or retry.`;
  if (platform === 'slack')
    return `add ${missing} to the Slack app's bot token scopes, reinstall the app, then reconnect the account with its new token.`;
  return `reconnect the ${network} account to grant ${missing}.`;
}

function list(scopes: readonly string[]): string {
  return scopes.join(', ');
}

/** The failure of a call the account has no permission for: `rejected`, never retried as transient. */
export function permissionFailure(
  platform: TPlatform,
  missing: readonly string[],
  refusedBy?: TNetworkFailure,
  purpose = 'this',
): TNetworkFailure {
  const network = NAMES[platform] ?? platform;
  const plural = missing.length === 1 ? 'permission' : 'permissions';
  return {
    kind: 'rejected',
    message:
      `${network} needs the ${list(missing)} ${plural} for ${purpose}, which the account was not granted` +
      `${refusedBy ? ` (${network} refused the call)` : ''}: ${howToGrant(platform, network, list(missing))}`,
    ...(refusedBy?.status !== undefined ? { status: refusedBy.status } : {}),
    ...(refusedBy?.body !== undefined ? { body: refusedBy.body } : {}),
  };
}

const READ_FIGURES = "reading the post's figures";

function callsOfPublish(input: TPublishInput): TPermissionCall[] {
  const calls: TPermissionCall[] = [input.replyTo ? 'reply' : 'post'];
  if (input.media && (input.media.images.length > 0 || input.media.video)) calls.push('media');
  return calls;
}

/**
 * What the account lacks for these calls: from its stored grant when known (checked before sending);
 * null when the grant is unknown (an account connected with a token from outside), where the network
 * decides and its refusal is recognised afterwards.
 */
function lacking(account: TConnectorAccount, calls: TPermissionCall[]): string[] | null {
  if (!account.permissions) return null;
  const granted = new Set(account.permissions);
  return missingFor(account.platform, audienceOf(account.platform, account.externalId), calls, granted);
}

/** A network's own refusal for a missing permission, named: the stored grant's gaps, else what the call needs. */
function afterRefusal(
  account: TConnectorAccount,
  calls: TPermissionCall[],
  failure: TNetworkFailure,
  purpose?: string,
): TNetworkFailure | null {
  const recognise = REFUSAL[account.platform];
  if (!recognise?.(failure.status, failure.body ?? '')) return null;
  const missing = lacking(account, calls);
  const audience = audienceOf(account.platform, account.externalId);
  // Grant unknown: what the call needs, less what the connect's identity call already proved granted.
  const proven = new Set(neededFor(account.platform, audience, ['identity']));
  const needed = neededFor(account.platform, audience, calls);
  const unproven = needed.filter((scope) => !proven.has(scope));
  const named = missing && missing.length > 0 ? missing : unproven.length > 0 ? unproven : needed;
  return permissionFailure(account.platform, named.length > 0 ? named : ['(unnamed)'], failure, purpose);
}

/**
 * Wraps a connector so that every call checks the account's permissions first (DESIGN invariant 12):
 * a publish, delete, read-back or metrics read the account was not granted fails before it is sent, naming the
 * permission and saying to reconnect; a refusal the network sends for a permission is reported the same.
 */
export function guardPermissions(connector: TNetworkConnector): TNetworkConnector {
  const guarded: TNetworkConnector = {
    platform: connector.platform,
    async publish(input) {
      const calls = callsOfPublish(input);
      const missing = lacking(input.account, calls);
      if (missing && missing.length > 0) {
        return { ok: false, failure: permissionFailure(input.account.platform, missing) };
      }
      const outcome = await connector.publish(input);
      if (outcome.ok) return outcome;
      const named = afterRefusal(input.account, calls, outcome.failure);
      return named ? { ok: false, failure: named } : outcome;
    },
  };
  const find = connector.findPublished?.bind(connector);
  if (find) {
    guarded.findPublished = async (probe) => {
      const calls: TPermissionCall[] =
        probe.replyTo || probe.root ? ['read_back', 'read_back_reply'] : ['read_back'];
      const missing = lacking(probe.account, calls);
      if (missing && missing.length > 0) {
        const network = NAMES[probe.account.platform] ?? probe.account.platform;
        return {
          kind: 'cannot_tell',
          reason: `the account may not read its posts back: ${network} needs the ${list(missing)} permission, which it was not granted (reconnect the account to grant it where ${network} offers it)`,
        };
      }
      const outcome = await find(probe);
      if (outcome.kind === 'cannot_tell') {
        // A refused read is reported as "cannot tell" with the network's answer (readback-match.ts):
        // when that answer is a permission refusal, the reason names the permission.
        const status = Number(/HTTP (\d{3})/.exec(outcome.reason)?.[1]) || undefined;
        const named = afterRefusal(probe.account, calls, {
          kind: 'rejected',
          message: outcome.reason,
          ...(status ? { status } : {}),
          body: outcome.reason,
        });
        return named ? { kind: 'cannot_tell', reason: `${named.message} (${outcome.reason})` } : outcome;
      }
      if (outcome.kind !== 'failed') return outcome;
      const named = afterRefusal(probe.account, calls, outcome.failure);
      return named ? { kind: 'failed', failure: named } : outcome;
    };
  }
  const remove = connector.delete?.bind(connector);
  if (remove) {
    guarded.delete = async (account: TConnectorAccount, remote: TRemoteRef) => {
      const missing = lacking(account, ['delete']);
      if (missing && missing.length > 0) {
        return { ok: false, failure: permissionFailure(account.platform, missing) };
      }
      const outcome = await remove(account, remote);
      if (outcome.ok) return outcome;
      const named = afterRefusal(account, ['delete'], outcome.failure);
      return named ? { ok: false, failure: named } : outcome;
    };
  }
  const read = connector.readMetrics?.bind(connector);
  if (read && connector.metricsBatchSize) {
    // A read of figures the account was not granted fails before it is sent (`rejected`, never retried),
    // naming the permission; a network's own refusal for one is named the same way.
    guarded.metricsBatchSize = connector.metricsBatchSize;
    guarded.readMetrics = async (account, refs) => {
      const missing = lacking(account, ['metrics']);
      if (missing && missing.length > 0) {
        return { ok: false, failure: permissionFailure(account.platform, missing, undefined, READ_FIGURES) };
      }
      const outcome = await read(account, refs);
      if (outcome.ok) return outcome;
      const named = afterRefusal(account, ['metrics'], outcome.failure, READ_FIGURES);
      return named ? { ok: false, failure: named } : outcome;
    };
  }
  return guarded;
}
