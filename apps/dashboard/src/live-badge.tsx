import { useLiveState } from './live-updates.js';

const WORDS = {
  live: 'Live',
  connecting: 'Connecting…',
  offline: 'Offline: refreshing every 30 s',
} as const;

/** Whether lists update as things happen (the live stream) or by the fallback poll. */
export function LiveBadge() {
  const state = useLiveState();
  return (
    <span className={`live live-${state}`} data-live={state} title="Updates to posts and accounts">
      {WORDS[state]}
    </span>
  );
}
