import type { TNetworkFailure } from '@sps/networks';
import type { TFreshToken } from './token-refresh.js';

/**
 * The failure a call refused for its token ends on after its one refresh. A refresh that could not run
 * now says nothing about the token: the account's lock still held (by a process killed mid-refresh, whose
 * lock lives on for its `lockMs`), the token endpoint down or slow. The call is then retried like an outage
 * (nothing was sent: the network refused the token); only a refused refresh, or none possible, leaves
 * `auth_expired`, which disconnects the account.
 */
export function failureAfterRenewal(failure: TNetworkFailure, renewed: TFreshToken | null): TNetworkFailure {
  if (failure.kind === 'auth_expired' && renewed && !renewed.ok && renewed.reason === 'transient') {
    return { kind: 'transient', message: `The token could not be refreshed yet (${renewed.message}).` };
  }
  return failure;
}
