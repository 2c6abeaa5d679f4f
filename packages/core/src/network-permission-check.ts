import type { TAudience, TPermissionCall, TPermissionRow } from './network-permission-types.js';
import { NETWORK_PERMISSIONS } from './network-permissions.js';
import type { TPlatform } from './platforms.js';

/** Reading the permission table (network-permissions.ts): what to ask at connect, what a grant lacks. */

function flat(need: string | readonly string[]): readonly string[] {
  return typeof need === 'string' ? [need] : need;
}

/** The audience of an account: LinkedIn organizations post as `urn:li:organization:…`. */
export function audienceOf(platform: TPlatform, externalId: string | null): TAudience {
  return platform === 'linkedin' && externalId?.startsWith('urn:li:organization:')
    ? 'organization'
    : 'member';
}

/** The rows that apply to an account of this audience. */
export function permissionRows(platform: TPlatform, audience: TAudience = 'member'): TPermissionRow[] {
  return (NETWORK_PERMISSIONS[platform] ?? []).filter((r) => !r.audience || r.audience === audience);
}

/** What the connect asks for: the first choice of every needed scope of every call made today. */
export function requestedScopes(platform: TPlatform, audience: TAudience = 'member'): string[] {
  const out = new Set<string>();
  for (const row of permissionRows(platform, audience)) {
    if (row.notRequested) continue;
    for (const need of row.needs) out.add(flat(need)[0] as string);
  }
  return [...out];
}

/**
 * The permissions a call needs that `granted` lacks (each named by the scope the service asks for);
 * empty when granted covers it. Scope comparison is exact, as the networks grant them.
 */
export function missingFor(
  platform: TPlatform,
  audience: TAudience,
  calls: readonly TPermissionCall[],
  granted: ReadonlySet<string>,
): string[] {
  const missing = new Set<string>();
  for (const row of permissionRows(platform, audience)) {
    if (!calls.includes(row.call)) continue;
    for (const need of row.needs) {
      const options = flat(need);
      if (!options.some((scope) => granted.has(scope))) missing.add(options[0] as string);
    }
  }
  return [...missing];
}

/** Every permission a call needs, named by the scope the service asks for (for an account whose grant is unknown). */
export function neededFor(
  platform: TPlatform,
  audience: TAudience,
  calls: readonly TPermissionCall[],
): string[] {
  return missingFor(platform, audience, calls, new Set());
}

/** Scopes a reconnect would add to what an account holds (what the service asks minus what was granted). */
export function reconnectWouldAdd(
  platform: TPlatform,
  audience: TAudience,
  granted: readonly string[],
): string[] {
  const have = new Set(granted);
  return missingFor(
    platform,
    audience,
    permissionRows(platform, audience)
      .filter((r) => !r.notRequested)
      .map((r) => r.call),
    have,
  );
}

/** Parses a token answer's `scope` (space- or comma-separated, as each network writes it). */
export function parseScopes(value: unknown): string[] | null {
  if (Array.isArray(value)) {
    const list = value.filter((s): s is string => typeof s === 'string' && s.length > 0 && s.length <= 200);
    return list.length > 0 ? [...new Set(list)].slice(0, 100) : null;
  }
  if (typeof value !== 'string' || !value.trim()) return null;
  return [...new Set(value.split(/[\s,]+/).filter((s) => s.length > 0 && s.length <= 200))].slice(0, 100);
}
