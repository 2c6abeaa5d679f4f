import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { ApiError, api } from '../api.js';

interface TSettings {
  enabled: boolean;
  intervalHours: number;
  startHour: number;
  endHour: number;
  timezone: string;
}

const ZONES: string[] = (
  Intl as unknown as { supportedValuesOf?: (k: string) => string[] }
).supportedValuesOf?.('timeZone') ?? ['UTC'];

export function QueuePage() {
  const client = useQueryClient();
  const settings = useQuery({
    queryKey: ['queue-settings'],
    queryFn: () => api<TSettings>('GET', '/a/queue-settings'),
  });
  const schedule = useQuery({
    queryKey: ['queue-schedule'],
    queryFn: () => api<{ next_free_slots: string[] }>('GET', '/queue-schedule'),
  });
  const [form, setForm] = useState<TSettings | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (settings.data && !form) setForm(settings.data);
  }, [settings.data, form]);
  if (!form) return <p>Loading…</p>;

  const number = (field: keyof TSettings) => (e: { target: { value: string } }) =>
    setForm({ ...form, [field]: e.target.value === '' ? Number.NaN : Number(e.target.value) });
  // The API's rule decides (one copy of it): the form only passes the values on and shows the answer.
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setSaved(false);
    try {
      setForm(await api<TSettings>('PUT', '/a/queue-settings', form));
      setSaved(true);
      await client.invalidateQueries({ queryKey: ['queue-schedule'] });
    } catch (e) {
      setError(e instanceof ApiError ? e : null);
    }
  };
  const fieldError = (field: string) => {
    const message = error?.message.startsWith(field) ? error.readable : error?.forField(field);
    return message ? (
      <p id={`${field}-error`} role="alert" className="error">
        {message}
      </p>
    ) : null;
  };

  return (
    <>
      <h1>Queue</h1>
      <form onSubmit={save} noValidate aria-label="Queue settings">
        <label className="check">
          <input
            type="checkbox"
            checked={form.enabled}
            onChange={(e) => setForm({ ...form, enabled: e.target.checked })}
          />
          Queue enabled
        </label>
        <label htmlFor="interval">Every how many hours (1–24)</label>
        <input
          id="interval"
          type="number"
          value={Number.isNaN(form.intervalHours) ? '' : form.intervalHours}
          onChange={number('intervalHours')}
        />
        {fieldError('intervalHours')}
        <label htmlFor="start-hour">From hour (0–23)</label>
        <input
          id="start-hour"
          type="number"
          value={Number.isNaN(form.startHour) ? '' : form.startHour}
          onChange={number('startHour')}
        />
        {fieldError('startHour')}
        <label htmlFor="end-hour">To hour (0–23)</label>
        <input
          id="end-hour"
          type="number"
          value={Number.isNaN(form.endHour) ? '' : form.endHour}
          onChange={number('endHour')}
        />
        {fieldError('endHour')}
        <label htmlFor="timezone">Time zone</label>
        <select
          id="timezone"
          value={form.timezone}
          onChange={(e) => setForm({ ...form, timezone: e.target.value })}
        >
          {[...new Set([form.timezone, ...ZONES])].map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
        {fieldError('timezone')}
        {error &&
          !['intervalHours', 'startHour', 'endHour', 'timezone'].some(
            (f) => error.message.startsWith(f) || error.forField(f),
          ) && (
            <p role="alert" className="error">
              {error.readable}
            </p>
          )}
        {saved && <p role="status">Saved.</p>}
        <button type="submit">Save queue settings</button>
      </form>
      <section aria-labelledby="slots-title">
        <h2 id="slots-title">Next free slots</h2>
        <ul>
          {(schedule.data?.next_free_slots ?? []).map((s) => (
            <li key={s}>{new Date(s).toLocaleString()}</li>
          ))}
        </ul>
      </section>
    </>
  );
}
