import { HTTPError } from 'got';
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

const NETWORK = 'Discord';

interface TMessage {
  id: string;
  reactions?: { count?: number }[];
}

/**
 * Discord: the bot reads its message back, `GET /channels/{channel.id}/messages/{message.id}`
 * (https://discord.com/developers/docs/resources/message#get-channel-message; `READ_MESSAGE_HISTORY` in
 * the channel), one message per call; every reaction's `count` is summed as likes. Discord reports no
 * views or shares. Unknown Message (10008) is a message deleted since.
 */
export function createDiscordMetrics(options: TConnectorOptions): TMetricsReader {
  const http = createHttpClient(
    options.baseUrl ?? 'https://discord.com/api/v10',
    options.timeoutMs ?? 15_000,
  );
  return {
    metricsBatchSize: 1,
    async readMetrics(account: TConnectorAccount, refs: TMetricsRef[]) {
      const results = new Map<string, TMetricsRead>();
      for (const ref of refs.slice(0, 1)) {
        const channel = ref.meta?.channel ?? account.externalId ?? '';
        try {
          const message = await http
            .get(`channels/${encodeURIComponent(channel)}/messages/${encodeURIComponent(ref.remoteId)}`, {
              headers: { authorization: `Bot ${account.token}` },
            })
            .json<TMessage>();
          const likes = (message.reactions ?? []).reduce((n, r) => n + (r.count ?? 0), 0);
          results.set(ref.remoteId, { figures: figures({ likes }) });
        } catch (error) {
          if (error instanceof HTTPError && error.response.statusCode === 404) {
            results.set(ref.remoteId, { error: GONE(NETWORK) });
            continue;
          }
          return { ok: false, failure: readFailureOf(error, { network: NETWORK }, 'Read Message History') };
        }
      }
      return { ok: true, results };
    },
  };
}
