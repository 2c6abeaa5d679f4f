// Live updates: one EventSource on /dashboard/api/events (the session cookie authenticates it; it is a GET, so
// no CSRF header is needed). Each message says what changed; the lists showing it are refetched through the
// usual routes. While the stream is down, pages fall back to a slow poll (`fallbackInterval`).
import type { QueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';

export type TLiveState = 'connecting' | 'live' | 'offline';

const POST_EVENTS = ['post.changed', 'post.published', 'post.failed', 'post.scheduled'];
const ACCOUNT_EVENTS = ['account.connected', 'account.disconnected'];
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

/** Opens the stream while signed in and turns its messages into refetches of the affected lists. */
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
    const pending = { posts: false, accounts: false };

    const refetch = () => {
      flush = null;
      if (pending.posts) {
        void client.invalidateQueries({ queryKey: ['posts'] });
        void client.invalidateQueries({ queryKey: ['queue-schedule'] });
      }
      if (pending.accounts) void client.invalidateQueries({ queryKey: ['accounts'] });
      pending.posts = false;
      pending.accounts = false;
    };
    const mark = (what: 'posts' | 'accounts') => {
      pending[what] = true;
      flush ??= setTimeout(refetch, COALESCE_MS);
    };

    const open = () => {
      reopen = null;
      if (stopped) return;
      setState('connecting');
      const es = new EventSource('/dashboard/api/events');
      source = es;
      es.addEventListener('ready', () => {
        setState('live');
        // After a drop, what changed meanwhile is caught up once.
        if (wasLive) {
          mark('posts');
          mark('accounts');
        }
        wasLive = true;
      });
      for (const type of POST_EVENTS) es.addEventListener(type, () => mark('posts'));
      for (const type of ACCOUNT_EVENTS) es.addEventListener(type, () => mark('accounts'));
      es.onerror = () => {
        // CONNECTING: the browser reconnects by itself (after the server's `retry`). CLOSED: it gave up (a 401
        // or 429 answer), so the pages poll and the stream is tried again later.
        if (es.readyState === EventSource.CLOSED) {
          setState('offline');
          reopen ??= setTimeout(open, REOPEN_MS);
        } else {
          setState('connecting');
        }
      };
    };
    open();
    return () => {
      stopped = true;
      source?.close();
      if (reopen) clearTimeout(reopen);
      if (flush) clearTimeout(flush);
      setState('offline');
    };
  }, [client, signedIn]);
}
