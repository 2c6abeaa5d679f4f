import { useQuery } from '@tanstack/react-query';
import { api } from '../api.js';
import { asApiError, localTime } from '../ui.js';

interface TWindow {
  limit: number;
  used: number;
  remaining: number;
  resets_at: string | null;
}
interface TWindows {
  minute: TWindow;
  publish_hour: TWindow;
}
interface TUsage {
  plan: string;
  rate_limits: {
    enabled: boolean;
    tier: string;
    per_minute: number;
    publishes_per_hour: number;
    keys: ({ id: string; prefix: string; last_used_at: string | null } & Partial<TWindows>)[];
    dashboard_session: TWindows | null;
  };
  twitter_allowance: { allowance: number; used: number; remaining: number; resets_at: string };
}

const clock = (iso: string) =>
  new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

function Window({ window: w }: { window: TWindow | undefined }) {
  if (!w) return <>—</>;
  return (
    <>
      {w.remaining} of {w.limit} left
      <span className="muted">{w.resets_at ? ` (resets ${clock(w.resets_at)})` : ' (nothing used yet)'}</span>
    </>
  );
}

export function UsagePage() {
  const usage = useQuery({
    queryKey: ['usage'],
    queryFn: () => api<TUsage>('GET', '/usage'),
    // Reading the figures consumes nothing, so they can follow the counters.
    refetchInterval: 5000,
  });
  if (usage.isError)
    return (
      <p role="alert" className="error">
        {asApiError(usage.error).readable}
      </p>
    );
  if (!usage.data) return <p>Loading…</p>;
  const { plan, rate_limits: limits, twitter_allowance: x } = usage.data;
  return (
    <>
      <h1>Usage</h1>
      <section aria-labelledby="plan-title" className="card">
        <h2 id="plan-title">Plan</h2>
        <dl className="facts">
          <dt>Plan</dt>
          <dd data-testid="plan">{plan}</dd>
          <dt>Rate-limit tier (API v1, MCP)</dt>
          <dd data-testid="tier">
            {limits.tier}: {limits.per_minute} requests a minute and {limits.publishes_per_hour} publishes an
            hour, per API key
            {plan === 'none' ? ' (an account without a plan is limited like free)' : ''}
          </dd>
        </dl>
      </section>

      <section aria-labelledby="limits-title">
        <h2 id="limits-title">What is left this minute and this hour</h2>
        {!limits.enabled && <p>Request rate limits are turned off on this server (RATE_LIMITS=off).</p>}
        {limits.enabled && (
          <table>
            <thead>
              <tr>
                <th scope="col">API key</th>
                <th scope="col">Last used</th>
                <th scope="col">Requests this minute</th>
                <th scope="col">Publishes this hour</th>
              </tr>
            </thead>
            <tbody>
              {limits.keys.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.last_used_at ? localTime(k.last_used_at) : 'never'}</td>
                  <td className="minute">
                    <Window window={k.minute} />
                  </td>
                  <td className="hour">
                    <Window window={k.publish_hour} />
                  </td>
                </tr>
              ))}
              {limits.dashboard_session && (
                <tr data-key-id="dashboard">
                  <td>This dashboard session</td>
                  <td>now</td>
                  <td className="minute">
                    <Window window={limits.dashboard_session.minute} />
                  </td>
                  <td className="hour">
                    <Window window={limits.dashboard_session.publish_hour} />
                  </td>
                </tr>
              )}
            </tbody>
          </table>
        )}
      </section>

      <section aria-labelledby="x-title" className="card">
        <h2 id="x-title">Monthly X allowance</h2>
        <p data-testid="x-allowance">
          {x.used} of {x.allowance} X publishes used this month, {x.remaining} left; it starts over{' '}
          {localTime(x.resets_at)}.
        </p>
        <p className="muted">
          Counted for publishing through API /api and MCP (and their scheduled and queued posts); API v1 posts
          do not count.
        </p>
      </section>
    </>
  );
}
