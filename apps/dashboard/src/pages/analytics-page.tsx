import { PLATFORMS } from '@sps/core/browser';
import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.js';
import { FIGURE_LABELS, FIGURES, figureText, type TAnalyticsView } from '../figures.js';
import { asApiError, localTime } from '../ui.js';
import { AnalyticsCharts, DaysTable } from './analytics-charts.js';

// The account's figures over a range (GET /v1/analytics through the session): totals, per network, per day
// as charts and a table, and the period's top posts by engagement.

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface TRange {
  from: string;
  to: string;
  platform: string;
}

function defaultRange(): TRange {
  const today = Date.now();
  return { from: utcDay(today - 29 * DAY_MS), to: utcDay(today), platform: '' };
}

function RangeForm({ range, onApply }: { range: TRange; onApply: (r: TRange) => void }) {
  const [draft, setDraft] = useState(range);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onApply(draft);
  };
  return (
    <form className="range" aria-label="Range" onSubmit={submit}>
      <div className="range-fields">
        <label>
          From (UTC day)
          <input
            type="date"
            value={draft.from}
            onChange={(e) => setDraft({ ...draft, from: e.target.value })}
          />
        </label>
        <label>
          To (UTC day)
          <input type="date" value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
        </label>
        <label>
          Network
          <select value={draft.platform} onChange={(e) => setDraft({ ...draft, platform: e.target.value })}>
            <option value="">All networks</option>
            {PLATFORMS.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Show</button>
      </div>
    </form>
  );
}

function Totals({ data }: { data: TAnalyticsView }) {
  return (
    <section aria-labelledby="totals-title">
      <h2 id="totals-title">
        Totals, {data.from} to {data.to}
        {data.platform ? ` on ${data.platform}` : ''}
      </h2>
      <dl className="totals">
        <div>
          <dt>Posts</dt>
          <dd data-total="posts">{data.totals.posts}</dd>
        </div>
        {FIGURES.map((f) => (
          <div key={f}>
            <dt>{FIGURE_LABELS[f]}</dt>
            <dd data-total={f}>{figureText(data.totals[f])}</dd>
          </div>
        ))}
      </dl>
      {Object.keys(data.platforms).length > 0 && (
        <div className="table-scroll">
          <table>
            <caption>Per network</caption>
            <thead>
              <tr>
                <th scope="col">Network</th>
                <th scope="col">Posts</th>
                {FIGURES.map((f) => (
                  <th scope="col" key={f}>
                    {FIGURE_LABELS[f]}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {Object.entries(data.platforms).map(([platform, row]) => (
                <tr key={platform}>
                  <th scope="row">{platform}</th>
                  <td>{row.posts}</td>
                  {FIGURES.map((f) => (
                    <td key={f}>{figureText(row[f])}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function TopPosts({ data }: { data: TAnalyticsView }) {
  return (
    <section aria-labelledby="top-title">
      <h2 id="top-title">Top posts of the period</h2>
      <p className="hint">
        By engagement: likes, reposts, replies, quotes, bookmarks and clicks of each network's latest figures.
      </p>
      {data.top_posts.length === 0 ? (
        <p>No post published in this range has figures yet.</p>
      ) : (
        <ol className="top-posts">
          {data.top_posts.map((p) => (
            <li key={p.post_id} data-post-id={p.post_id}>
              <span className="top-text">{p.text.length > 120 ? `${p.text.slice(0, 120)}…` : p.text}</span>
              <span className="top-meta">
                {p.engagement.toLocaleString()} interactions · {p.platforms.join(', ')} · published{' '}
                {localTime(p.published_at)}
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

export function AnalyticsPage() {
  const [range, setRange] = useState(defaultRange);
  const query = new URLSearchParams({ from: range.from, to: range.to });
  if (range.platform) query.set('platform', range.platform);
  const analytics = useQuery({
    queryKey: ['analytics', range],
    queryFn: () => api<TAnalyticsView>('GET', `/v1/analytics?${query}`),
  });
  return (
    <>
      <h1>Analytics</h1>
      <p className="hint">
        Posts count on the day (UTC) they were published; their figures are the latest collected for each
        network.
      </p>
      <RangeForm range={range} onApply={setRange} />
      {analytics.isError && (
        <p role="alert" className="error">
          {asApiError(analytics.error).readable}
        </p>
      )}
      {analytics.isPending && <p>Loading…</p>}
      {analytics.data && (
        <>
          <Totals data={analytics.data} />
          <section aria-labelledby="days-title">
            <h2 id="days-title">Over time</h2>
            <AnalyticsCharts days={analytics.data.days} />
            <DaysTable days={analytics.data.days} />
          </section>
          <TopPosts data={analytics.data} />
        </>
      )}
    </>
  );
}

export default AnalyticsPage;
