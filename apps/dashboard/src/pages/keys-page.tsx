import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError, api } from '../api.js';

interface TKey {
  id: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export function KeysPage() {
  const client = useQueryClient();
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => api<{ keys: TKey[] }>('GET', '/keys') });
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);

  const create = async () => {
    setError(null);
    setCopied(false);
    try {
      const res = await api<{ key: string }>('POST', '/keys');
      setCreated(res.key);
      await client.invalidateQueries({ queryKey: ['keys'] });
    } catch (e) {
      setError(e instanceof ApiError ? e.readable : 'The service could not be reached.');
    }
  };
  const revoke = async (id: string) => {
    setError(null);
    try {
      await api('DELETE', `/keys/${id}`);
      await client.invalidateQueries({ queryKey: ['keys'] });
    } catch (e) {
      setError(e instanceof ApiError ? e.readable : 'The service could not be reached.');
    }
  };

  return (
    <>
      <h1>API keys</h1>
      <button type="button" onClick={create}>
        Create an API key
      </button>
      {created && (
        <div className="once" role="status">
          <p>Your new key. It is shown only this once: copy it now.</p>
          <label htmlFor="new-key">New API key</label>
          <input id="new-key" readOnly value={created} />
          <button
            type="button"
            onClick={async () => {
              await navigator.clipboard?.writeText(created).catch(() => undefined);
              setCopied(true);
            }}
          >
            {copied ? 'Copied' : 'Copy'}
          </button>
        </div>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <table>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {(keys.data?.keys ?? []).map((k) => (
            <tr key={k.id}>
              <td>
                <code>{k.prefix}…</code>
              </td>
              <td>{new Date(k.created_at).toLocaleString()}</td>
              <td>{k.last_used_at ? new Date(k.last_used_at).toLocaleString() : 'never'}</td>
              <td>{k.revoked_at ? 'revoked' : 'active'}</td>
              <td>
                {!k.revoked_at && (
                  <button type="button" onClick={() => revoke(k.id)}>
                    Revoke {k.prefix}…
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
