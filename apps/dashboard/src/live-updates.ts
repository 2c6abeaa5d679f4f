// Live updates: one EventSource on /dashboard/api/events (the session cookie authenticates it; it is a GET, so
// no CSRF header is needed). Each message says what changed; the lists showing it are refetched through the
// usual routes. While the stream is down, pages fall back to a slow poll (`fallbackInterval`).
import type { QueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';

export type TLiveState = 'connecting' | 'live' | 'offline';

const POST_EVENTS = ['post.changed', 'post.published', 'post.failed', 'post.scheduled'];
const ACCOUNT_EVENTS = ['account.connected', 'account.disconnected'];
/** A collection of a post's figures landed (the publisher's notice): open Figures panels and Analytics read again. */
const METRICS_EVENTS = ['post.metrics'];
/** Messages arriving together (a burst of publishes) cause one refetch. */
const COALESCE_MS = 100;
/** A stream the server refused (too many tabs) or that stays closed is tried again this much later. */
const REOPEN_MS = 30_000;
/** The poll of pages while the stream is down: slow, it is only a fallback. */
const FALLBACK_POLL_MS = 30_000;

let state: TLiveState = 'connecting';
const listeners = new Set<() => void>();

function setState(next: TLiveState): void {
  if (next === state) return;
  state = next;
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useLiveState(): TLiveState {
  return useSyncExternalStore(subscribe, () => state);
}

/** A page's `refetchInterval`: nothing while the stream is live, a slow poll otherwise. */
export function useFallbackInterval(): number | false {
  return useLiveState() === 'live' ? false : FALLBACK_POLL_MS;
}

type TTabMessage =
  | { kind: 'hello' }
  | { kind: 'state'; state: TLiveState }
  | { kind: 'changed'; what: TChange };

type TChange = 'posts' | 'accounts' | 'metrics';

/** Tabs of one browser share one stream: browsers open at most 6 HTTP/1.1 connections to a server. */
const TAB_CHANNEL = 'sps-dashboard-live';
const TAB_LOCK = 'sps-dashboard-live';

/**
 * Opens the stream while signed in and turns its messages into refetches of the affected lists. With the Web
 * Locks and BroadcastChannel APIs (secure contexts: HTTPS or localhost), one tab holds the stream and relays what
 * it hears to the others; when it closes, the next tab takes over. Elsewhere each tab opens its own.
 */
export function useLiveUpdates(client: QueryClient, signedIn: boolean): void {
  useEffect(() => {
    if (!signedIn || typeof EventSource === 'undefined') {
      setState('offline');
      return;
    }
    let source: EventSource | null = null;
    let reopen: ReturnType<typeof setTimeout> | null = null;
    let flush: ReturnType<typeof setTimeout> | null = null;
    let stopped = false;
    let wasLive = false;
    let leading = false;
    let releaseLock: (() => void) | null = null;
    const pending = { posts: false, accounts: false, metrics: false };
    const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
    const channel =
      locks && typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel(TAB_CHANNEL) : null;
    const tell = (message: TTabMessage) => {
      if (leading) channel?.postMessage(message);
    };
    const changeState = (next: TLiveState) => {
      setState(next);
      tell({ kind: 'state', state: next });
    };

    const refetch = () => {
      flush = null;
      if (pending.posts) {
        void client.invalidateQueries({ queryKey: ['posts'] });
        void client.invalidateQueries({ queryKey: ['queue-schedule'] });
        // A post published or deleted changes the Analytics page's counts (read again only while it is shown).
        void client.invalidateQueries({ queryKey: ['analytics'] });
      }
      if (pending.accounts) void client.invalidateQueries({ queryKey: ['accounts'] });
      if (pending.metrics) {
        // Only what is shown is read again (an open Figures panel, the Analytics page).
        void client.invalidateQueries({ queryKey: ['post-metrics'] });
        void client.invalidateQueries({ queryKey: ['analytics'] });
      }
      pending.posts = false;
      pending.accounts = false;
      pending.metrics = false;
    };
    const mark = (what: TChange) => {
      tell({ kind: 'changed', what });
      pending[what] = true;
      flush ??= setTimeout(refetch, COALESCE_MS);
    };

    const open = () => {
      reopen = null;
      if (stopped) return;
      changeState('connecting');
      const es = new EventSource('/dashboard/api/events');
      source = es;
      es.addEventListener('ready', () => {
        changeState('live');
        // After a drop (or taking over from a closed tab), what changed meanwhile is caught up once.
        if (wasLive) {
          mark('posts');
          mark('accounts');
          mark('metrics');
        }
        wasLive = true;
      });
      for (const type of POST_EVENTS) es.addEventListener(type, () => mark('posts'));
      for (const type of ACCOUNT_EVENTS) es.addEventListener(type, () => mark('accounts'));
      for (const type of METRICS_EVENTS) es.addEventListener(type, () => mark('metrics'));
      es.onerror = () => {
        // CONNECTING: the browser reconnects by itself (after the server's `retry`). CLOSED: it gave up (a 401
        // or 429 answer), so the pages poll and the stream is tried again later.
        if (es.readyState === EventSource.CLOSED) {
          changeState('offline');
          reopen ??= setTimeout(open, REOPEN_MS);
        } else {
          changeState('connecting');
        }
      };
    };

    const abort = new AbortController();
    if (locks && channel) {
      setState('connecting');
      channel.onmessage = (e: MessageEvent<TTabMessage>) => {
        const message = e.data;
        if (leading) {
          // A new tab asks how things are.
          if (message.kind === 'hello') tell({ kind: 'state', state });
          return;
        }
        if (message.kind === 'state') {
          setState(message.state);
          if (message.state === 'live') wasLive = true;
        } else if (message.kind === 'changed') {
          pending[message.what] = true;
          flush ??= setTimeout(refetch, COALESCE_MS);
        }
      };
      channel.postMessage({ kind: 'hello' } satisfies TTabMessage);
      locks
        .request(TAB_LOCK, { signal: abort.signal }, () => {
          if (stopped) return undefined;
          leading = true;
          open();
          // Held until this tab stops (closes, signs out): then the next tab's request is granted.
          return new Promise<void>((resolve) => {
            releaseLock = resolve;
          });
        })
        .catch(() => undefined); // aborted while waiting: this tab stopped first
    } else {
      open();
    }
    return () => {
      stopped = true;
      abort.abort();
      source?.close();
      releaseLock?.();
      channel?.close();
      if (reopen) clearTimeout(reopen);
      if (flush) clearTimeout(flush);
      setState('offline');
    };
  }, [client, signedIn]);
}
