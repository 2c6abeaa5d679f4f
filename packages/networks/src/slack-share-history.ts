import { audienceOf, missingFor, permissionRows } from '@sps/core';
import type { Got } from 'got';
import type { TConnectorAccount, TNetworkFailure } from './connector.js';
import { CLOCK_SKEW_MS, MAX_READ_PAGES } from './readback-match.js';

// Where a shared file's message is found when files.info never shows its share, read 2026-11-27:
// https://docs.slack.dev/reference/methods/conversations.history (a channel's top-level messages, newest
//   first; `oldest`/`latest`/`inclusive`, `limit` (100 by default) and `cursor` paging; bot token scopes
//   channels:history, groups:history, im:history, mpim:history; Tier 3, but for apps distributed outside the
//   Marketplace 1 request a minute and at most 15 messages a page)
// https://docs.slack.dev/reference/methods/conversations.replies (a thread's messages, by its parent `ts`)
// https://docs.slack.dev/reference/events/message/file_share (the message that shares files carries them in
//   `files`, each with its `id`)
// A token without the scope is answered `{ ok: false, error: "missing_scope", needed, provided }`.

const NETWORK = 'Slack';

interface THistoryPage {
  ok?: boolean;
  error?: string;
  messages?: { ts?: string; files?: { id?: string }[] }[];
  has_more?: boolean;
  response_metadata?: { next_cursor?: string };
}

export type TShareInHistory = { state: 'found'; ts: string } | { state: 'not_found'; note: string };

export interface TShareHistoryDeps {
  http: Got;
  headers: (account: TConnectorAccount) => Record<string, string>;
  classify: (error: unknown) => TNetworkFailure;
}

/** The read-back row's scopes (the permission table), named as the connect asks for them. */
function historyScopes(): string {
  const row = permissionRows('slack').find((r) => r.call === 'read_back');
  return (row?.needs ?? []).flatMap((need) => (typeof need === 'string' ? [need] : [...need])).join(' or ');
}

const NO_SCOPE = (why: string) =>
  ` The channel's history could not be searched for the message instead: ${why}; the bot token needs ${historyScopes()} for that (add it to the Slack app's bot token scopes and reinstall the app).`;

/**
 * Looks for the message that shares `fileId` in the channel (in the thread under `threadTs` for a reply),
 * from `sharedAt` less the clock skew on, at most MAX_READ_PAGES pages. Any answer but a hit leaves the
 * caller's failure as it was, with a note saying why the message was not found.
 */
export function createSlackShareHistory(deps: TShareHistoryDeps) {
  const { http, headers } = deps;

  return async function findShare(
    account: TConnectorAccount,
    share: { fileId: string; channel: string; threadTs: string | undefined; sharedAt: number | undefined },
  ): Promise<TShareInHistory> {
    const { fileId, channel, threadTs, sharedAt } = share;
    // The stored grant is checked first (the read-back row of the permission table): no call it would refuse.
    if (account.permissions) {
      const audience = audienceOf('slack', account.externalId);
      const lacking = missingFor('slack', audience, ['read_back'], new Set(account.permissions));
      if (lacking.length > 0) return { state: 'not_found', note: NO_SCOPE('the account was not granted it') };
    }
    // Progress saved before the completion time was kept has no lower bound: the page bound holds alone.
    const oldest = sharedAt ? ((sharedAt - CLOCK_SKEW_MS) / 1000).toFixed(6) : undefined;
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_READ_PAGES; page += 1) {
        const body = await http
          .get(threadTs ? 'conversations.replies' : 'conversations.history', {
            headers: { authorization: headers(account).authorization ?? '' },
            searchParams: {
              channel,
              ...(threadTs ? { ts: threadTs } : {}),
              ...(oldest ? { oldest, inclusive: 'true' } : {}),
              limit: 100,
              ...(cursor ? { cursor } : {}),
            },
          })
          .json<THistoryPage>();
        if (!body.ok) {
          const code = body.error ?? 'unknown_error';
          if (code === 'missing_scope') {
            return { state: 'not_found', note: NO_SCOPE(`${NETWORK} refused to read it (missing_scope)`) };
          }
          return {
            state: 'not_found',
            note: ` Reading the channel's history to find the message failed (${code}).`,
          };
        }
        // A file shared again later is in a later message: the earliest one is the post's.
        const hits = (body.messages ?? [])
          .filter((m) => m.ts && m.files?.some((f) => f.id === fileId))
          .map((m) => m.ts as string)
          .sort((a, b) => Number(a) - Number(b));
        if (hits[0]) return { state: 'found', ts: hits[0] };
        cursor = body.response_metadata?.next_cursor;
        if (!body.has_more || !cursor) {
          return { state: 'not_found', note: " The message was not found in the channel's history either." };
        }
      }
      return {
        state: 'not_found',
        note: ` The message was not among the channel's last ${MAX_READ_PAGES} pages of history read.`,
      };
    } catch (error) {
      const failure = deps.classify(error);
      return {
        state: 'not_found',
        note: ` Reading the channel's history to find the message failed (${failure.status ? `HTTP ${failure.status}` : failure.kind}).`,
      };
    }
  };
}
