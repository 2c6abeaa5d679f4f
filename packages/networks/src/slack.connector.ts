import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TFindOutcome,
  TNetworkConnector,
  TNetworkFailure,
  TPublishedProbe,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient, truncateBody } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';
import { pendingOutcome } from './processing-step.js';
import {
  firstUnclaimed,
  MAX_READ_PAGES,
  sameText,
  tooMany,
  unwrapSlackLinks,
  windowEnd,
  windowStart,
} from './readback-match.js';
import { createSlackFiles } from './slack-files.js';
import { createSlackShareHistory } from './slack-share-history.js';
import { createSlackShareStep } from './slack-share-step.js';

interface THistoryMessage {
  ts?: string;
  text?: string;
  user?: string;
  bot_id?: string;
  files?: { id?: string }[];
}
interface THistory extends TSlackAnswer {
  messages?: THistoryMessage[];
  has_more?: boolean;
  response_metadata?: { next_cursor?: string };
}
/** A Slack time bound: epoch seconds with microseconds, as `ts` values are written. */
const slackTs = (d: Date) => (d.getTime() / 1000).toFixed(6);

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
  });
  const findShare = createSlackShareHistory({ http, headers, classify });
  const sharedMessage = createSlackShareStep(files, findShare, options.processingWait);

  /** Who the bot token posts as (`auth.test`, Tier 4), asked once per token. */
  const identities = new Map<string, { botId?: string; userId?: string }>();
  async function whoAmI(
    account: TConnectorAccount,
  ): Promise<TSlackAnswer & { bot_id?: string; user_id?: string }> {
    const known = identities.get(account.token);
    if (known) return { ok: true, bot_id: known.botId, user_id: known.userId };
    const body = await http
      .post('auth.test', { headers: headers(account), json: {} })
      .json<TSlackAnswer & { bot_id?: string; user_id?: string }>();
    if (body.ok) identities.set(account.token, { botId: body.bot_id, userId: body.user_id });
    return body;
  }

  /** An `{ ok: false }` answer to a read: rate limits and tokens are asked again, the rest cannot tell. */
  function readRefusal(body: TSlackAnswer): TFindOutcome {
    const failure = answerFailure(body, false);
    if (failure.kind === 'rejected') {
      return {
        kind: 'cannot_tell',
        reason: `${NETWORK} refused to read the channel (${body.error ?? 'unknown_error'}; the bot needs channels:history or groups:history and to be in the channel).`,
      };
    }
    return { kind: 'failed', failure };
  }

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
      const hasMedia = Boolean(media && (media.images.length > 0 || media.video));
      if (input.progress?.saved?.sharedFile || hasMedia) {
        const shared = await sharedMessage({
          account,
          media,
          text,
          channel,
          threadTs,
          progress: input.progress,
        });
        if (shared.kind === 'failed') return { ok: false, failure: shared.failure };
        // The message is posted, its share not shown yet: the file id is saved, the publisher calls again later.
        if (shared.kind === 'pending') return pendingOutcome(NETWORK, shared);
        const { ts, fileIds } = shared.value;
        return {
          ok: true,
          remoteId: ts,
          url: await permalink(account, channel, ts),
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

    /**
     * The channel's messages since the write-ahead (`conversations.history`, or `conversations.replies` for
     * a reply in a thread) with `oldest`/`latest`, 100 a page, at most three pages, matched on the bot that
     * posted (`auth.test`), the text and the files attached. Needs channels:history (groups:history for a
     * private channel); Tier 3, and for apps distributed outside the Marketplace one request a minute of 15
     * messages, so a full window may need the next attempt.
     * https://docs.slack.dev/reference/methods/conversations.history
     */
    async findPublished(probe: TPublishedProbe): Promise<TFindOutcome> {
      const { account } = probe;
      const channel = account.externalId;
      if (!channel) return { kind: 'cannot_tell', reason: `the ${NETWORK} account has no channel id.` };
      const threadTs = (probe.root ?? probe.replyTo)?.remoteId;
      try {
        const me = await whoAmI(account);
        if (!me.ok) return readRefusal(me);
        let cursor: string | undefined;
        let read = 0;
        for (let page = 0; page < MAX_READ_PAGES; page += 1) {
          const body = await http
            .get(threadTs ? 'conversations.replies' : 'conversations.history', {
              headers: { authorization: `Bearer ${account.token}` },
              searchParams: {
                channel,
                ...(threadTs ? { ts: threadTs } : {}),
                oldest: slackTs(windowStart(probe)),
                latest: slackTs(windowEnd(probe)),
                inclusive: 'true',
                limit: 100,
                ...(cursor ? { cursor } : {}),
              },
            })
            .json<THistory>();
          if (!body.ok) return readRefusal(body);
          const messages = body.messages ?? [];
          read += messages.length;
          // Links are compared as typed (Slack stores them as `<url>` / `<url|label>`).
          const hit = await firstUnclaimed(
            probe,
            messages.filter(
              (m) =>
                (m.bot_id ? m.bot_id === me.bot_id : m.user === me.user_id) &&
                m.ts !== threadTs &&
                sameText(probe.text, unwrapSlackLinks(m.text)) &&
                (m.files?.length ?? 0) === probe.mediaCount,
            ),
            (m) => m.ts,
          );
          if (hit?.ts) {
            const fileIds = (hit.files ?? [])
              .map((f) => f.id ?? '')
              .filter(Boolean)
              .join(',');
            return {
              kind: 'found',
              remoteId: hit.ts,
              url: await permalink(account, channel, hit.ts),
              meta: { channel, ...(fileIds ? { fileIds } : {}) },
            };
          }
          cursor = body.response_metadata?.next_cursor;
          if (!body.has_more || !cursor) return { kind: 'absent' };
        }
        return tooMany(NETWORK, read);
      } catch (error) {
        const failure = classify(error);
        if (failure.kind === 'rejected') {
          return {
            kind: 'cannot_tell',
            reason: `${NETWORK} refused to read the channel (HTTP ${failure.status}).`,
          };
        }
        const { outcomeUnknown: _lost, ...rest } = failure;
        return { kind: 'failed', failure: rest };
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
