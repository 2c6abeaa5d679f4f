import type { ReactElement } from 'react';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { FIGURE_LABELS, FIGURES, figureText, type TAnalyticsView, type TFigure } from '../figures.js';

// Per-day charts (recharts: SVG with its keyboard and screen-reader layer, a <title> and <desc>) and the same
// rows as a <table>, the fallback for anyone the picture does not serve.

const INTERACTIONS: TFigure[] = ['likes', 'reposts', 'replies', 'quotes', 'bookmarks', 'clicks'];
const REACH: TFigure[] = ['impressions', 'views'];
/** Distinguishable for the common colour-vision deficiencies (Okabe–Ito palette). */
const COLOURS: Record<TFigure, string> = {
  likes: '#0072B2',
  reposts: '#E69F00',
  replies: '#009E73',
  quotes: '#CC79A7',
  bookmarks: '#56B4E9',
  clicks: '#D55E00',
  impressions: '#0072B2',
  views: '#D55E00',
};

type TDay = TAnalyticsView['days'][number];

const shortDay = (date: string) =>
  new Date(`${date}T00:00:00Z`).toLocaleDateString(undefined, {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });

function ChartFigure({
  id,
  title,
  desc,
  children,
}: {
  id: string;
  title: string;
  desc: string;
  children: ReactElement;
}) {
  return (
    <figure className="chart" aria-labelledby={`${id}-caption`} data-chart={id}>
      <figcaption id={`${id}-caption`}>{title}</figcaption>
      <p className="hint">{desc}</p>
      <div className="chart-box">
        <ResponsiveContainer width="100%" height={260}>
          {children}
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

export function AnalyticsCharts({ days }: { days: TDay[] }) {
  const data = days.map((d) => ({ ...d, label: shortDay(d.date) }));
  const interactionsDesc =
    'Likes, reposts, replies, quotes, bookmarks and clicks of the posts published each day (UTC), stacked.';
  const reachDesc =
    'Impressions and views of the posts published each day (UTC), where the networks report them.';
  return (
    <>
      <ChartFigure id="interactions" title="Interactions per day" desc={interactionsDesc}>
        <BarChart data={data} title="Interactions per day" desc={interactionsDesc} accessibilityLayer>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="label" />
          <YAxis allowDecimals={false} />
          <Tooltip />
          <Legend />
          {INTERACTIONS.map((f) => (
            <Bar key={f} dataKey={f} name={FIGURE_LABELS[f]} stackId="interactions" fill={COLOURS[f]} />
          ))}
        </BarChart>
      </ChartFigure>
      <ChartFigure id="reach" title="Reach per day" desc={reachDesc}>
        <LineChart data={data} title="Reach per day" desc={reachDesc} accessibilityLayer>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="label" />
          <YAxis allowDecimals={false} />
          <Tooltip />
          <Legend />
          {REACH.map((f) => (
            <Line
              key={f}
              type="monotone"
              dataKey={f}
              name={FIGURE_LABELS[f]}
              stroke={COLOURS[f]}
              strokeDasharray={f === 'views' ? '6 3' : undefined}
              connectNulls
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      </ChartFigure>
    </>
  );
}

/** The charts' rows as a table (opened on demand: a range can hold a year of days). */
export function DaysTable({ days }: { days: TDay[] }) {
  return (
    <details className="days-table">
      <summary>Show the per-day figures as a table</summary>
      <div className="table-scroll">
        <table>
          <caption>Figures per day (UTC) of the posts published that day</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Posts</th>
              {FIGURES.map((f) => (
                <th scope="col" key={f}>
                  {FIGURE_LABELS[f]}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {days.map((d) => (
              <tr key={d.date} data-day={d.date}>
                <th scope="row">{d.date}</th>
                <td>{d.posts}</td>
                {FIGURES.map((f) => (
                  <td key={f}>{figureText(d[f])}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
