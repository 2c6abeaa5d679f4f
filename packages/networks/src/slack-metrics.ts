import type { TConnectorAccount, TConnectorOptions } from './connector.js';
import { createHttpClient } from './http-client.js';
import {
  figures,
  GONE,
  readFailureOf,
  type TMetricsRead,
  type TMetricsReader,
  type TMetricsRef,
} from './metrics-reader.js';

const NETWORK = 'Slack';

interface TReactionsGet {
  ok: boolean;
  error?: string;
  needed?: string;
  message?: { reactions?: { count?: number }[]; reply_count?: number };
}

/**
 * Slack: `reactions.get?channel=…&timestamp=…` (https://docs.slack.dev/reference/methods/reactions.get,
 * scope `reactions:read`), one message per call: its reactions' counts summed as likes, `reply_count` as
 * replies. Slack answers failures with 200 and `ok: false`: `missing_scope` names the scope to add,
 * `message_not_found` is a message deleted since.
 */
export function createSlackMetrics(options: TConnectorOptions): TMetricsReader {
  const http = createHttpClient(options.baseUrl ?? 'https://slack.com/api', options.timeoutMs ?? 15_000);
  return {
    metricsBatchSize: 1,
    async readMetrics(account: TConnectorAccount, refs: TMetricsRef[]) {
      const results = new Map<string, TMetricsRead>();
      for (const ref of refs.slice(0, 1)) {
        const channel = ref.meta?.channel ?? account.externalId ?? '';
        let body: TReactionsGet;
        try {
          body = await http
            .get('reactions.get', {
              headers: { authorization: `Bearer ${account.token}` },
              searchParams: { channel, timestamp: ref.remoteId, full: 'true' },
            })
            .json<TReactionsGet>();
        } catch (error) {
          return { ok: false, failure: readFailureOf(error, { network: NETWORK }, 'reactions:read') };
        }
        if (!body.ok) {
          if (body.error === 'message_not_found' || body.error === 'channel_not_found') {
            results.set(ref.remoteId, { error: GONE(NETWORK) });
            continue;
          }
          const auth = ['invalid_auth', 'token_revoked', 'account_inactive', 'not_authed'].includes(
            body.error ?? '',
          );
          return {
            ok: false,
            failure: {
              kind: auth ? 'auth_expired' : 'rejected',
              message:
                body.error === 'missing_scope'
                  ? `Slack refused to read the message's reactions: the connection lacks the "${body.needed ?? 'reactions:read'}" permission. Reconnect the Slack account to grant it.`
                  : `Slack refused to read the message's reactions (${body.error ?? 'unknown error'}).`,
            },
          };
        }
        const likes = (body.message?.reactions ?? []).reduce((n, r) => n + (r.count ?? 0), 0);
        results.set(ref.remoteId, { figures: figures({ likes, replies: body.message?.reply_count ?? 0 }) });
      }
      return { ok: true, results };
    },
  };
}
