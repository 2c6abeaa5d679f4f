import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TNetworkConnector,
  TNetworkFailure,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient, truncateBody } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';
import { createSlackFiles } from './slack-files.js';

const DEFAULT_BASE_URL = 'https://slack.com/api';
const NETWORK = 'Slack';
/**
 * Slack truncates message text beyond 40,000 characters
 * (https://api.slack.com/changelog/2018-04-truncating-really-long-messages, chat.postMessage's `text`);
 * a post is refused rather than cut silently.
 */
const TEXT_MAX = 40_000;
const AUTH_ERRORS = new Set([
  'invalid_auth',
  'token_expired',
  'token_revoked',
  'not_authed',
  'account_inactive',
]);
const RATE_ERRORS = new Set(['ratelimited', 'rate_limited']);
/** Slack's own failures; for these "it's possible some aspect of the operation succeeded". */
const SERVER_ERRORS = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

interface TSlackAnswer {
  ok?: boolean;
  error?: string;
}

/** Slack answers HTTP 200 with `{ ok: false, error }` for most failures; `classifyHttpError` never sees them. */
function answerFailure(body: TSlackAnswer, mayHavePosted: boolean): TNetworkFailure {
  const code = body.error ?? 'unknown_error';
  const common = { status: 200, body: truncateBody(body) };
  if (AUTH_ERRORS.has(code)) {
    return {
      kind: 'auth_expired',
      ...common,
      message: `${NETWORK} rejected the account's token (${code}). Reconnect the ${NETWORK} account and retry.`,
    };
  }
  if (RATE_ERRORS.has(code)) {
    return {
      kind: 'rate_limited',
      ...common,
      message: `${NETWORK} rate limit reached. The post will be retried later.`,
    };
  }
  if (SERVER_ERRORS.has(code)) {
    return {
      kind: 'transient',
      ...common,
      ...(mayHavePosted ? { outcomeUnknown: true } : {}),
      message: `${NETWORK} had a server error (${code}). It will be retried automatically.`,
    };
  }
  return {
    kind: 'rejected',
    ...common,
    message: `${NETWORK} rejected the post (${code}). Fix the content or the account's channel and retry.`,
  };
}

function classify(error: unknown): TNetworkFailure {
  return classifyHttpError(error, {
    network: NETWORK,
    isAuthError: (_status, body) =>
      typeof body === 'object' && body !== null && AUTH_ERRORS.has((body as TSlackAnswer).error ?? ''),
  });
}

export function createSlackConnector(options: TConnectorOptions = {}): TNetworkConnector {
  const http = createHttpClient(options.baseUrl ?? DEFAULT_BASE_URL, options.timeoutMs);
  const headers = (account: TConnectorAccount) => ({
    authorization: `Bearer ${account.token}`,
    'content-type': 'application/json; charset=utf-8',
  });
  const files = createSlackFiles({
    http,
    fetchMedia: options.fetchMedia ?? createMediaFetcher(),
    timeoutMs: options.timeoutMs ?? 15_000,
    headers,
    answerFailure,
    classify,
    wait: options.processingWait,
  });

  async function permalink(account: TConnectorAccount, channel: string, ts: string): Promise<string> {
    try {
      const body = await http
        .get('chat.getPermalink', {
          searchParams: { channel, message_ts: ts },
          headers: { authorization: `Bearer ${account.token}` },
        })
        .json<TSlackAnswer & { permalink?: string }>();
      if (body.ok && body.permalink) return body.permalink;
    } catch {
      // The message is already posted: a missing link must not fail (and repost) it.
    }
    // Slack redirects this workspace-less form to the message for signed-in members.
    return `https://slack.com/archives/${channel}/p${ts.replace('.', '')}`;
  }

  return {
    platform: 'slack',
    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account, text, media } = input;
      const channel = account.externalId;
      if (!channel) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `The ${NETWORK} account has no channel id. Reconnect it with the target channel and retry.`,
          },
        };
      }
      const length = Array.from(text).length;
      if (length > TEXT_MAX) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${NETWORK} messages hold at most ${TEXT_MAX} characters; this one has ${length}. Shorten it and retry.`,
          },
        };
      }
      // Replies go under the thread's first message ("never use a reply's ts").
      const threadTs = (input.root ?? input.replyTo)?.remoteId;
      const saved = input.progress?.saved;
      const hasMedia = Boolean(media && (media.images.length > 0 || media.video));
      if (saved?.sharedFile || (media && hasMedia)) {
        let fileId = saved?.sharedFile ?? '';
        let fileIds = saved?.fileIds ?? '';
        if (!fileId && media) {
          const uploaded = await files.upload(account, media);
          if (!uploaded.ok) return uploaded;
          const shared = await files.complete(account, uploaded.value, channel, text, threadTs);
          if (!shared.ok) return shared;
          fileId = uploaded.value[0]?.id ?? '';
          fileIds = uploaded.value.map((f) => f.id).join(',');
          // The message exists now: a retry only looks for its ts, it never shares again.
          await input.progress?.save({ sharedFile: fileId, fileIds });
        }
        const ts = await files.sharedTs(account, fileId, channel);
        if (!ts.ok) return ts;
        return {
          ok: true,
          remoteId: ts.value,
          url: await permalink(account, channel, ts.value),
          meta: { channel, fileIds },
        };
      }
      try {
        const body = await http
          .post('chat.postMessage', {
            json: { channel, text, ...(threadTs ? { thread_ts: threadTs } : {}) },
            headers: headers(account),
          })
          .json<TSlackAnswer & { channel?: string; ts?: string }>();
        if (!body.ok) return { ok: false, failure: answerFailure(body, true) };
        if (!body.ts) {
          return {
            ok: false,
            failure: {
              kind: 'transient',
              outcomeUnknown: true,
              message: `${NETWORK} answered without a message timestamp; check the channel before retrying.`,
            },
          };
        }
        const posted = body.channel ?? channel;
        return {
          ok: true,
          remoteId: body.ts,
          url: await permalink(account, posted, body.ts),
          meta: { channel: posted },
        };
      } catch (error) {
        return { ok: false, failure: classify(error) };
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      const channel = remote.meta?.channel ?? account.externalId;
      if (!channel) {
        return {
          ok: false,
          failure: { kind: 'rejected', message: `No ${NETWORK} channel is known for this message.` },
        };
      }
      try {
        const body = await http
          .post('chat.delete', { json: { channel, ts: remote.remoteId }, headers: headers(account) })
          .json<TSlackAnswer>();
        if (!body.ok && body.error !== 'message_not_found')
          return { ok: false, failure: answerFailure(body, false) };
        // The files shared with the message stay in the workspace unless deleted too.
        for (const file of (remote.meta?.fileIds ?? '').split(',').filter(Boolean)) {
          const gone = await http
            .post('files.delete', { json: { file }, headers: headers(account) })
            .json<TSlackAnswer>();
          if (!gone.ok && gone.error !== 'file_not_found' && gone.error !== 'file_deleted') {
            return { ok: false, failure: answerFailure(gone, false) };
          }
        }
        return { ok: true };
      } catch (error) {
        const failure = classify(error);
        if (failure.status === 404) return { ok: true };
        return { ok: false, failure };
      }
    },
  };
}
