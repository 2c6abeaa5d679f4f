import type { TOAuthAppEnv, TPlatform } from '@sps/core';

export interface TTokenRefreshConfig {
  /** `OAUTH_<NAME>_*` and `NETWORK_<NAME>_TOKEN_URL` per network. */
  apps: Partial<Record<TPlatform, TOAuthAppEnv>>;
  baseUrls: Partial<Record<TPlatform, string>>;
  apiVersions?: Partial<Record<TPlatform, string>>;
  timeoutMs: number;
  /** Redis key prefix of the per-account locks. */
  prefix: string;
  /**
   * How long a lock is held at most (a refresher that dies frees it then). Never less than twice the
   * refresh's own bound (`timeoutMs`) and ten seconds: the lock must outlive the work it serializes.
   */
  lockMs?: number;
  /** How long a publish waits for another process's refresh of the same account. */
  lockWaitMs?: number;
}
