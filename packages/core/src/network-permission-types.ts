/** Types of the permission table (network-permissions.ts) and of its checks (network-permission-check.ts). */

/** The calls a connector or an OAuth provider makes; `metrics` is the engagement read (`<network>-metrics.ts`). */
export type TPermissionCall =
  | 'identity'
  | 'post'
  | 'media'
  | 'reply'
  | 'delete'
  | 'read_back'
  /** Reading back a reply (Threads reads replies with threads_read_replies). */
  | 'read_back_reply'
  | 'refresh'
  | 'metrics';

/** Who the account posts as, where a network's scopes differ by it (LinkedIn members and organizations). */
export type TAudience = 'member' | 'organization';

export interface TPermissionRow {
  call: TPermissionCall;
  /** The endpoint(s) this row covers. */
  endpoint: string;
  /**
   * Every element is needed; an element that is a list is satisfied by any one of its scopes (the first
   * is the one the service asks for). Empty: no scope beyond a valid token.
   */
  needs: readonly (string | readonly string[])[];
  /** The network's page stating the requirement. */
  doc: string;
  /** Only for this audience (LinkedIn). */
  audience?: TAudience;
  /** A scope the service does not ask for (the network grants it to approved partners only). */
  notRequested?: true;
}
