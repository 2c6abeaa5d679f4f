import { PERMISSIONS_META_AND_OTHERS } from './network-permission-rows-meta-and-others.js';
import { PERMISSIONS_X_YOUTUBE_LINKEDIN_TIKTOK } from './network-permission-rows-x-youtube-linkedin-tiktok.js';
import type { TPermissionRow } from './network-permission-types.js';
import type { TPlatform } from './platforms.js';

/**
 * What each call the service makes needs from the account's grant, per network, from each network's own
 * documentation (cited per row). The OAuth providers ask for exactly `requestedScopes` (the union of the
 * first choice of every row), the publisher refuses a call whose permission the account was not granted
 * before sending it (permission-guard.ts), and apps/network-sim refuses it too, as the network does.
 *
 * The rows live in network-permission-rows-*.ts (split by network so that no file grows past ~300 lines),
 * the types in network-permission-types.ts and the checks reading them in network-permission-check.ts.
 */
export const NETWORK_PERMISSIONS: Partial<Record<TPlatform, readonly TPermissionRow[]>> = {
  ...PERMISSIONS_X_YOUTUBE_LINKEDIN_TIKTOK,
  ...PERMISSIONS_META_AND_OTHERS,
};
