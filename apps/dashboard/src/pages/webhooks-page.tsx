import { WEBHOOK_EVENT_TYPES } from '@sps/core/browser';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { ApiError, api } from '../api.js';

interface TWebhook {
  id: string;
  url: string;
  events: string[];
  is_active: boolean;
}
interface TDelivery {
  id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

function Deliveries({ webhook }: { webhook: TWebhook }) {
  const client = useQueryClient();
  const key = ['deliveries', webhook.id];
  const deliveries = useQuery({
    queryKey: key,
    queryFn: () =>
      api<{ deliveries: TDelivery[]; total: number }>(
        'GET',
        `/v1/webhooks/${webhook.id}/deliveries?limit=50`,
      ),
    refetchInterval: 3000,
  });
  const [error, setError] = useState<string | null>(null);
  const retry = async (id: string) => {
    setError(null);
    try {
      await api('POST', `/v1/webhooks/${webhook.id}/deliveries/${id}/retry`);
      await client.invalidateQueries({ queryKey: key });
    } catch (e) {
      setError(e instanceof ApiError ? e.readable : 'The service could not be reached.');
    }
  };
  return (
    <section aria-label={`Deliveries of ${webhook.url}`}>
      <h3>Deliveries ({deliveries.data?.total ?? 0})</h3>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <table>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last status code</th>
            <th scope="col">Last error</th>
            <th scope="col">Next attempt</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {(deliveries.data?.deliveries ?? []).map((d) => (
            <tr key={d.id} data-delivery-id={d.id}>
              <td>{d.event_type}</td>
              <td className={`status-${d.status}`}>{d.status}</td>
              <td>{d.attempts}</td>
              <td>{d.last_status_code ?? '—'}</td>
              <td>{d.last_error ?? '—'}</td>
              <td>{d.next_attempt_at ? new Date(d.next_attempt_at).toLocaleString() : '—'}</td>
              <td>
                {d.status === 'failed' && (
                  <button type="button" onClick={() => retry(d.id)}>
                    Retry delivery
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function EventBoxes({
  prefix,
  value,
  onChange,
}: {
  prefix: string;
  value: string[];
  onChange: (v: string[]) => void;
}) {
  return (
    <fieldset>
      <legend>Events</legend>
      {WEBHOOK_EVENT_TYPES.map((event) => (
        <label key={event} className="check">
          <input
            type="checkbox"
            name={`${prefix}-${event}`}
            checked={value.includes(event)}
            onChange={() =>
              onChange(value.includes(event) ? value.filter((e) => e !== event) : [...value, event])
            }
          />
          {event}
        </label>
      ))}
    </fieldset>
  );
}

function WebhookRow({ webhook }: { webhook: TWebhook }) {
  const client = useQueryClient();
  const [events, setEvents] = useState(webhook.events);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const change = async (method: 'PUT' | 'DELETE', body?: unknown) => {
    setError(null);
    try {
      await api(method, `/v1/webhooks/${webhook.id}`, body);
      await client.invalidateQueries({ queryKey: ['webhooks'] });
    } catch (e) {
      setError(
        e instanceof ApiError ? (e.forField('events') ?? e.readable) : 'The service could not be reached.',
      );
    }
  };
  return (
    <li className="webhook">
      <p>
        <code>{webhook.url}</code> — {webhook.is_active ? 'active' : 'paused'}
      </p>
      <EventBoxes prefix={webhook.id} value={events} onChange={setEvents} />
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="button" onClick={() => change('PUT', { events })}>
          Save events
        </button>
        <button type="button" onClick={() => change('PUT', { is_active: !webhook.is_active })}>
          {webhook.is_active ? 'Pause' : 'Resume'}
        </button>
        <button type="button" onClick={() => change('DELETE')}>
          Delete
        </button>
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide deliveries' : 'Show deliveries'}
        </button>
      </div>
      {open && <Deliveries webhook={webhook} />}
    </li>
  );
}

export function WebhooksPage() {
  const client = useQueryClient();
  const webhooks = useQuery({
    queryKey: ['webhooks'],
    queryFn: () => api<{ webhooks: TWebhook[] }>('GET', '/v1/webhooks'),
  });
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['post.published', 'post.failed']);
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setSecret(null);
    try {
      const created = await api<{ secret: string }>('POST', '/v1/webhooks', { url, events });
      setSecret(created.secret);
      setUrl('');
      await client.invalidateQueries({ queryKey: ['webhooks'] });
    } catch (e) {
      setError(e instanceof ApiError ? e : null);
    }
  };

  return (
    <>
      <h1>Webhooks</h1>
      <form onSubmit={create} aria-label="Create a webhook">
        <label htmlFor="webhook-url">Endpoint URL (https)</label>
        <input id="webhook-url" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />
        {error?.forField('url') && (
          <p role="alert" className="error">
            {error.forField('url')}
          </p>
        )}
        <EventBoxes prefix="new" value={events} onChange={setEvents} />
        {error && !error.forField('url') && (
          <p role="alert" className="error">
            {error.forField('events') ?? error.readable}
          </p>
        )}
        <button type="submit">Create webhook</button>
      </form>
      {secret && (
        <div className="once" role="status">
          <p>The signing secret, shown only this once:</p>
          <label htmlFor="webhook-secret">Signing secret</label>
          <input id="webhook-secret" readOnly value={secret} />
        </div>
      )}
      <ul className="webhooks">
        {(webhooks.data?.webhooks ?? []).map((w) => (
          <WebhookRow key={`${w.id}-${w.is_active}-${w.events.join()}`} webhook={w} />
        ))}
      </ul>
    </>
  );
}
