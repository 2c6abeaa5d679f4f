import type { TRedis } from './connection.js';

// The dashboard's change notices on Redis: every API process publishes one when a post changes in a way the
// outbox does not record, and the publisher when a collection of figures lands; every API process relays
// them to the account's open live streams (apps/api/src/dashboard/live-events.ts).

/** The channel, per deployment (QUEUE_PREFIX). */
export const dashboardChannel = (queuePrefix: string) => `${queuePrefix}:dash:changes`;

/** `a`: the account; `p`: the post (null: some post); `k`: `metrics` when the post's figures were collected. */
export interface TDashboardNotice {
  a: string;
  p: string | null;
  k?: 'metrics';
}

/** Best effort: a notice that is not published only delays the page until its next load or poll. */
export async function publishDashboardNotice(
  redis: TRedis,
  queuePrefix: string,
  notice: TDashboardNotice,
): Promise<boolean> {
  try {
    await redis.publish(dashboardChannel(queuePrefix), JSON.stringify(notice));
    return true;
  } catch {
    return false;
  }
}
