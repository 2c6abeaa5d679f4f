import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api.js';
import { FIGURE_LABELS, FIGURES, figureText, type TFigures, type TPostMetrics } from '../figures.js';
import { asApiError, localTime } from '../ui.js';
import { FigureHistory } from './figure-history.js';

type TReadFigures = TFigures & { collected_at: string | null };

/** How long after "Refresh figures" the panel polls for the new collection (the job runs in the publisher). */
const REFRESH_WATCH_MS = 60_000;

/** One post's latest figures per network, read when the panel is opened, with "Refresh figures". */
function FiguresPanel({ postId }: { postId: string }) {
  // After "Refresh figures": when it was asked and the latest read time then, to poll until a newer one shows.
  const [watch, setWatch] = useState<{ since: number; before: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const metrics = useQuery({
    queryKey: ['post-metrics', postId],
    // With every collection (`history`): the panel shows the latest and, under "Over time", how they went.
    queryFn: () => api<TPostMetrics>('GET', `/v1/posts/${postId}/metrics?history=true`),
    refetchInterval: () =>
      watch && !updatedSince(watch.before) && Date.now() - watch.since < REFRESH_WATCH_MS ? 1500 : false,
  });
  const entries = Object.entries(metrics.data?.platforms ?? {});
  // Figures in a table (a row per figure, a column per network: it fits a narrow column); a network that
  // could not be read says why and what to do, under it.
  const read: [string, TReadFigures][] = [];
  const unread: [string, string][] = [];
  for (const [platform, value] of entries) {
    if ('error' in value) unread.push([platform, value.error]);
    else read.push([platform, value]);
  }
  // ISO 8601 times in UTC compare as strings.
  const latest = read.reduce(
    (max, [, v]) => (v.collected_at && v.collected_at > max ? v.collected_at : max),
    '',
  );
  function updatedSince(before: string) {
    return latest > before;
  }
  const refresh = async () => {
    setError(null);
    try {
      await api('POST', `/v1/posts/${postId}/metrics/refresh`);
      setWatch({ since: Date.now(), before: latest });
    } catch (e) {
      setError(asApiError(e).readable);
    }
  };
  const status = !watch
    ? null
    : updatedSince(watch.before)
      ? 'Figures read just now.'
      : 'Collecting the figures now: they update here.';
  return (
    <div className="figures">
      {metrics.isError && (
        <p role="alert" className="error">
          {asApiError(metrics.error).readable}
        </p>
      )}
      {metrics.isPending && <p>Loading figures…</p>}
      {metrics.data && entries.length === 0 && <p>Not published on any network yet.</p>}
      {read.length > 0 && (
        <div className="table-scroll">
          <table className="figures-table">
            <caption className="visually-hidden">Latest figures per network</caption>
            <thead>
              <tr>
                <td />
                {read.map(([platform]) => (
                  <th scope="col" key={platform}>
                    {platform}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {FIGURES.map((f) => (
                <tr key={f} data-figure={f}>
                  <th scope="row">{FIGURE_LABELS[f]}</th>
                  {read.map(([platform, value]) => (
                    <td key={platform} data-platform={platform}>
                      {figureText(value[f])}
                    </td>
                  ))}
                </tr>
              ))}
              <tr data-figure="collected_at">
                <th scope="row">Read</th>
                {read.map(([platform, value]) => (
                  <td key={platform} data-platform={platform}>
                    {value.collected_at ? localTime(value.collected_at) : 'not collected yet'}
                  </td>
                ))}
              </tr>
            </tbody>
          </table>
        </div>
      )}
      <FigureHistory
        postId={postId}
        history={entries.map(([platform, value]) => [platform, value.history ?? []])}
      />
      {unread.length > 0 && (
        <ul className="figure-errors">
          {unread.map(([platform, message]) => (
            <li key={platform} data-platform={platform} className="error">
              {platform}: {message}
            </li>
          ))}
        </ul>
      )}
      <button type="button" className="secondary" onClick={refresh}>
        Refresh figures
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {!error && status && <p role="status">{status}</p>}
    </div>
  );
}

/** "Figures" under a post's results: closed until asked for, so a long list reads no metrics it does not show. */
export function PostFigures({ postId }: { postId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <details className="post-figures" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Figures</summary>
      {open && <FiguresPanel postId={postId} />}
    </details>
  );
}
