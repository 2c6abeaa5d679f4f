import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, type TConnectOption, type TSocialAccountView } from '../api.js';
import { useFallbackInterval } from '../live-updates.js';
import { asApiError, localTime } from '../ui.js';
import { ConnectPanel, networkName, reconnectExtra, startConnect } from './connect-panel.js';

function state(a: TSocialAccountView): string {
  if (a.is_active) return 'active';
  return a.needs_reauth ? 'needs reconnection' : 'disconnected';
}

/** The callback's `error` codes (apps/api connect service), in words. */
function callbackError(platform: string, code: string): string {
  const name = networkName(platform);
  switch (code) {
    case 'access_denied':
      return `${name} did not grant access (you cancelled or refused on its page). Nothing was connected.`;
    case 'exchange_failed':
      return `${name} refused to finish the connection. Start connecting again.`;
    case 'temporarily_unavailable':
      return `${name} did not answer in time. Try again in a moment.`;
    case 'no_page':
      return 'The Facebook Page you named is not among the Pages you granted. Connect again and grant it.';
    case 'no_organization':
      return 'You are not an administrator of that LinkedIn organization page (or of any, when none was named). Ask an administrator of the page to add you, then connect again.';
    case 'session_mismatch':
      return `This ${name} connection was started in another dashboard session (or you signed out meanwhile), so it was not connected here. Start connecting again from this page.`;
    case 'not_configured':
      return `Connecting ${name} is not configured on this server.`;
    default:
      return `Connecting ${name} failed (${code}). Start connecting again.`;
  }
}

interface TReturn {
  platform: string;
  accountIds: string[];
  error: string | null;
}

/** What the network's page sent back through the API's callback (then removed from the address bar). */
function readReturn(): TReturn | null {
  const params = new URLSearchParams(window.location.search);
  const platform = params.get('connect');
  if (!platform) return null;
  const ids = (params.get('account_ids') ?? params.get('account_id') ?? '').split(',').filter(Boolean);
  return { platform, accountIds: ids, error: params.get('error') };
}

/** What the network granted, and what a reconnect would add (a permission unticked, or asked since). */
function Permissions({ account }: { account: TSocialAccountView }) {
  const missing = account.reconnect_to_grant ?? [];
  return (
    <>
      {account.permissions && (
        <div className="muted permissions">Permissions: {account.permissions.join(', ')}</div>
      )}
      {missing.length > 0 && (
        <div className="error permissions-missing">
          Missing {missing.length === 1 ? 'a permission' : 'permissions'}: reconnect to grant{' '}
          {missing.join(', ')}. Posts that need {missing.length === 1 ? 'it' : 'them'} fail until then.
        </div>
      )}
    </>
  );
}

export function AccountsPage() {
  const client = useQueryClient();
  const accounts = useQuery({
    queryKey: ['accounts'],
    queryFn: () => api<{ accounts: TSocialAccountView[] }>('GET', '/v1/accounts'),
    // A connect finished in another tab arrives on the live stream (account.connected); this is the fallback.
    refetchInterval: useFallbackInterval(),
  });
  const options = useQuery({
    queryKey: ['connect-options'],
    queryFn: () => api<{ networks: TConnectOption[] }>('GET', '/connect-options'),
    staleTime: 60_000,
  });
  const [returned] = useState(readReturn);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [openCredentials, setOpenCredentials] = useState<string | null>(null);

  useEffect(() => {
    if (returned) window.history.replaceState(null, '', `${window.location.pathname}${window.location.hash}`);
  }, [returned]);

  const list = accounts.data?.accounts ?? [];
  const returnedNames = returned?.accountIds
    .map((id) => list.find((a) => a.id === id)?.account_name)
    .filter(Boolean);

  const disconnect = async (account: TSocialAccountView) => {
    setError(null);
    setNotice(null);
    try {
      await api('DELETE', `/v1/accounts/${account.id}`);
      await client.invalidateQueries({ queryKey: ['accounts'] });
      setConfirming(null);
      setNotice(`Disconnected ${account.account_name} on ${networkName(account.platform)}.`);
    } catch (e) {
      setError(asApiError(e).readable);
    }
  };

  const reconnect = async (account: TSocialAccountView) => {
    setError(null);
    const option = options.data?.networks.find((o) => o.platform === account.platform);
    if (option?.method === 'credentials') {
      setOpenCredentials(account.platform);
      document.getElementById('connect-title')?.scrollIntoView();
      return;
    }
    try {
      await startConnect(account.platform, reconnectExtra(account));
    } catch (e) {
      setError(asApiError(e).readable);
    }
  };

  return (
    <>
      <h1>Accounts</h1>
      {returned?.error && (
        <p role="alert" className="error">
          {callbackError(returned.platform, returned.error)}
        </p>
      )}
      {returned && !returned.error && (
        <p role="status">
          Connected {returnedNames && returnedNames.length > 0 ? `${returnedNames.join(', ')} on ` : ''}
          {networkName(returned.platform)}.
        </p>
      )}
      {notice && <p role="status">{notice}</p>}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <table>
        <thead>
          <tr>
            <th scope="col">Network</th>
            <th scope="col">Account</th>
            <th scope="col">State</th>
            <th scope="col">Token expires</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {list.length === 0 && (
            <tr>
              <td colSpan={5}>No accounts connected yet.</td>
            </tr>
          )}
          {list.map((a) => {
            const label = `${a.account_name} on ${networkName(a.platform)}`;
            return (
              <tr key={a.id} data-account-id={a.id}>
                <td>{networkName(a.platform)}</td>
                <td>
                  {a.account_name}
                  {a.instance_url && <span className="muted"> ({a.instance_url})</span>}
                  <Permissions account={a} />
                </td>
                <td className={`state-${state(a).replace(' ', '-')}`}>{state(a)}</td>
                <td>
                  {a.token_expires_at ? localTime(a.token_expires_at) : 'does not expire'}
                  {a.is_active && a.token_expires_at && Date.parse(a.token_expires_at) < Date.now()
                    ? ' (renewed before the next post)'
                    : ''}
                </td>
                <td>
                  <div className="actions">
                    <button type="button" onClick={() => reconnect(a)}>
                      Reconnect {label}
                    </button>
                    {a.is_active && confirming !== a.id && (
                      <button type="button" onClick={() => setConfirming(a.id)}>
                        Disconnect {label}
                      </button>
                    )}
                  </div>
                  {confirming === a.id && (
                    <fieldset className="confirm">
                      <legend>
                        Disconnect {label}? Posts to {networkName(a.platform)} will fail until it is connected
                        again.
                      </legend>
                      <button type="button" className="danger" onClick={() => disconnect(a)}>
                        Yes, disconnect
                      </button>
                      <button type="button" className="secondary" onClick={() => setConfirming(null)}>
                        Cancel
                      </button>
                    </fieldset>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {options.isError && (
        <p role="alert" className="error">
          {asApiError(options.error).readable}
        </p>
      )}
      {options.data && (
        <ConnectPanel
          options={options.data.networks}
          openCredentials={openCredentials}
          setOpenCredentials={setOpenCredentials}
          onConnected={(account) =>
            setNotice(`Connected ${account.account_name} on ${networkName(account.platform)}.`)
          }
        />
      )}
    </>
  );
}
