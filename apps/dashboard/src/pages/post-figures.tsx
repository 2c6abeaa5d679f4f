import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api.js';
import { FIGURE_LABELS, FIGURES, figureText, type TPostMetrics } from '../figures.js';
import { asApiError, localTime } from '../ui.js';

/** How long after "Refresh figures" the panel polls for the new collection (the job runs in the publisher). */
const REFRESH_WATCH_MS = 60_000;

/** One post's latest figures per network, read when the panel is opened, with "Refresh figures". */
function FiguresPanel({ postId }: { postId: string }) {
  const [refreshedAt, setRefreshedAt] = useState<number | null>(null);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const watching = refreshedAt !== null && Date.now() - refreshedAt < REFRESH_WATCH_MS;
  const metrics = useQuery({
    queryKey: ['post-metrics', postId],
    queryFn: () => api<TPostMetrics>('GET', `/v1/posts/${postId}/metrics`),
    refetchInterval: watching ? 1500 : false,
  });
  const refresh = async () => {
    setMessage(null);
    try {
      await api('POST', `/v1/posts/${postId}/metrics/refresh`);
      setRefreshedAt(Date.now());
      setMessage({ text: 'Collecting the figures now: they update here.', error: false });
    } catch (e) {
      setMessage({ text: asApiError(e).readable, error: true });
    }
  };
  const entries = Object.entries(metrics.data?.platforms ?? {});
  return (
    <div className="figures">
      {metrics.isError && (
        <p role="alert" className="error">
          {asApiError(metrics.error).readable}
        </p>
      )}
      {metrics.isPending && <p>Loading figures…</p>}
      {metrics.data && entries.length === 0 && <p>Not published on any network yet.</p>}
      {entries.length > 0 && (
        <table className="figures-table">
          <caption className="visually-hidden">Latest figures per network</caption>
          <thead>
            <tr>
              <th scope="col">Network</th>
              {FIGURES.map((f) => (
                <th scope="col" key={f}>
                  {FIGURE_LABELS[f]}
                </th>
              ))}
              <th scope="col">Read</th>
            </tr>
          </thead>
          <tbody>
            {entries.map(([platform, value]) => (
              <tr key={platform} data-platform={platform}>
                <th scope="row">{platform}</th>
                {'error' in value ? (
                  <td colSpan={FIGURES.length + 1} className="error">
                    {value.error}
                  </td>
                ) : (
                  <>
                    {FIGURES.map((f) => (
                      <td key={f} data-figure={f}>
                        {figureText(value[f])}
                      </td>
                    ))}
                    <td>{value.collected_at ? localTime(value.collected_at) : 'not collected yet'}</td>
                  </>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <button type="button" className="secondary" onClick={refresh}>
        Refresh figures
      </button>
      {message && (
        <p role={message.error ? 'alert' : 'status'} className={message.error ? 'error' : undefined}>
          {message.text}
        </p>
      )}
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
