import { useQuery } from '@tanstack/react-query';
import { api, type TSocialAccountView } from '../api.js';

function state(a: TSocialAccountView): string {
  if (a.is_active) return 'active';
  return a.needs_reauth ? 'needs reconnection' : 'disconnected';
}

export function AccountsPage() {
  const accounts = useQuery({
    queryKey: ['accounts'],
    queryFn: () => api<{ accounts: TSocialAccountView[] }>('GET', '/v1/accounts'),
  });
  return (
    <>
      <h1>Accounts</h1>
      <table>
        <thead>
          <tr>
            <th scope="col">Network</th>
            <th scope="col">Account</th>
            <th scope="col">State</th>
            <th scope="col">Token expires</th>
          </tr>
        </thead>
        <tbody>
          {(accounts.data?.accounts ?? []).map((a) => (
            <tr key={a.id}>
              <td>{a.platform}</td>
              <td>{a.account_name}</td>
              <td>{state(a)}</td>
              <td>{a.token_expires_at ? new Date(a.token_expires_at).toLocaleString() : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
