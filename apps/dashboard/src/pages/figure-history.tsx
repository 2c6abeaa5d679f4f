import { FIGURE_LABELS, FIGURES, figureText, type TFigure, type THistoryPoint } from '../figures.js';
import { localTime } from '../ui.js';

// A post's figures over its collections (`GET /v1/posts/{id}/metrics?history=true`): per network a small
// line of its interactions and the same collections as a table (the line is a picture of the table, never
// the only place a number is).

/** What counts as interactions (as the Analytics page's top posts: reach is not engagement). */
const INTERACTIONS: readonly TFigure[] = ['likes', 'reposts', 'replies', 'quotes', 'bookmarks', 'clicks'];

const interactionsOf = (point: THistoryPoint): number | null => {
  if ('error' in point) return null;
  const known = INTERACTIONS.map((f) => point[f]).filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
};

const W = 240;
const H = 48;
const PAD = 4;

/** The interactions of each read collection as a line (a dot when there is one), scaled to its own range. */
function Sparkline({
  platform,
  points,
  tableId,
}: {
  platform: string;
  points: THistoryPoint[];
  tableId: string;
}) {
  const values = points
    .map((p) => ({ at: Date.parse(p.collected_at), value: interactionsOf(p) }))
    .filter((p): p is { at: number; value: number } => p.value !== null);
  if (values.length === 0) return null;
  const first = values[0]!;
  const last = values.at(-1)!;
  const spanT = Math.max(1, last.at - first.at);
  const max = Math.max(1, ...values.map((v) => v.value));
  const xy = values.map((v) => ({
    x: values.length === 1 ? W / 2 : PAD + ((v.at - first.at) / spanT) * (W - 2 * PAD),
    y: H - PAD - (v.value / max) * (H - 2 * PAD),
  }));
  const titleId = `${tableId}-title`;
  return (
    <svg
      className="sparkline"
      width={W}
      height={H}
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-labelledby={titleId}
      aria-describedby={tableId}
      data-platform={platform}
    >
      <title id={titleId}>
        {`${platform}: interactions from ${first.value.toLocaleString()} to ${last.value.toLocaleString()} over ${values.length} collection${values.length === 1 ? '' : 's'}`}
      </title>
      {xy.length > 1 && (
        <polyline
          fill="none"
          stroke="#0072B2"
          strokeWidth={2}
          points={xy.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ')}
        />
      )}
      {xy.map((p) => (
        <circle key={`${p.x},${p.y}`} cx={p.x} cy={p.y} r={2.5} fill="#0072B2" />
      ))}
    </svg>
  );
}

/** One network's collections: the line, then a row per collection with the figures it reports. */
function NetworkHistory({
  postId,
  platform,
  points,
}: {
  postId: string;
  platform: string;
  points: THistoryPoint[];
}) {
  // Only the figures this network reported at least once (the others are "—" on every row).
  const shown = FIGURES.filter((f) => points.some((p) => !('error' in p) && p[f] !== null));
  const tableId = `history-${postId}-${platform}`;
  return (
    <div className="figure-history-network" data-platform={platform}>
      <Sparkline platform={platform} points={points} tableId={tableId} />
      <div className="table-scroll">
        <table className="figures-table" id={tableId}>
          <caption>{platform}: each collection</caption>
          <thead>
            <tr>
              <th scope="col">Read</th>
              {shown.map((f) => (
                <th scope="col" key={f}>
                  {FIGURE_LABELS[f]}
                </th>
              ))}
              <th scope="col">Interactions</th>
            </tr>
          </thead>
          <tbody>
            {points.map((p) => (
              <tr key={p.collected_at} data-collected={p.collected_at}>
                <th scope="row">{localTime(p.collected_at)}</th>
                {'error' in p ? (
                  <td colSpan={shown.length + 1} className="error">
                    not read: {p.error}
                  </td>
                ) : (
                  <>
                    {shown.map((f) => (
                      <td key={f}>{figureText(p[f])}</td>
                    ))}
                    <td>{figureText(interactionsOf(p))}</td>
                  </>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** "Over time": every network that has collections, closed until opened. */
export function FigureHistory({ postId, history }: { postId: string; history: [string, THistoryPoint[]][] }) {
  const withPoints = history.filter(([, points]) => points.length > 0);
  if (withPoints.length === 0) return null;
  const count = Math.max(...withPoints.map(([, points]) => points.length));
  return (
    <details className="figure-history">
      <summary>Over time ({count === 1 ? 'one collection' : `${count} collections`})</summary>
      {withPoints.map(([platform, points]) => (
        <NetworkHistory key={platform} postId={postId} platform={platform} points={points} />
      ))}
    </details>
  );
}
