import { useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useState } from 'react';
import { ApiError, api, setCsrfToken, type TSessionView } from './api.js';
import { LiveBadge } from './live-badge.js';
import { useLiveUpdates } from './live-updates.js';
import { AccountsPage } from './pages/accounts-page.js';
import { KeysPage } from './pages/keys-page.js';
import { MediaPage } from './pages/media-page.js';
import { PostsPage } from './pages/posts-page.js';
import { QueuePage } from './pages/queue-page.js';
import { SignInPage } from './pages/sign-in-page.js';
import { UsagePage } from './pages/usage-page.js';
import { WebhooksPage } from './pages/webhooks-page.js';

// Loaded when opened: the chart library is most of its weight.
const AnalyticsPage = lazy(() => import('./pages/analytics-page.js'));

const PAGES = [
  { hash: '#/posts', label: 'Posts' },
  { hash: '#/media', label: 'Media' },
  { hash: '#/accounts', label: 'Accounts' },
  { hash: '#/keys', label: 'API keys' },
  { hash: '#/webhooks', label: 'Webhooks' },
  { hash: '#/queue', label: 'Queue' },
  { hash: '#/usage', label: 'Usage' },
  { hash: '#/analytics', label: 'Analytics' },
] as const;

function useHash(): string {
  const [hash, setHash] = useState(window.location.hash || '#/posts');
  useEffect(() => {
    const onChange = () => setHash(window.location.hash || '#/posts');
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return hash;
}

export function App() {
  const client = useQueryClient();
  const hash = useHash();
  const session = useQuery({
    queryKey: ['session'],
    queryFn: async () => {
      try {
        const s = await api<TSessionView>('GET', '/session');
        setCsrfToken(s.csrf_token);
        return s;
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return null;
        throw error;
      }
    },
  });

  useLiveUpdates(client, Boolean(session.data));

  if (session.isPending) return <p className="loading">Loading…</p>;
  if (session.isError)
    return <p role="alert">The dashboard cannot reach the service: {session.error.message}</p>;
  if (!session.data) {
    return (
      <SignInPage
        onSignedIn={(s) => {
          setCsrfToken(s.csrf_token);
          client.setQueryData(['session'], s);
        }}
      />
    );
  }

  // A fresh page after sign-out: no cached data of the account survives in memory.
  const signOut = async () => {
    await api('DELETE', '/session').catch(() => undefined);
    window.location.reload();
  };
  // Ends every session of the account (other browsers and devices too), this one included.
  const signOutEverywhere = async () => {
    await api('DELETE', '/sessions').catch(() => undefined);
    window.location.reload();
  };

  const page = PAGES.find((p) => hash.startsWith(p.hash)) ?? PAGES[0];
  return (
    <div className="shell">
      <header>
        <strong>Social Post Service</strong>
        <nav aria-label="Main">
          {PAGES.map((p) => (
            <a key={p.hash} href={p.hash} aria-current={p === page ? 'page' : undefined}>
              {p.label}
            </a>
          ))}
        </nav>
        <LiveBadge />
        <span className="who">
          {session.data.account.name} ({session.data.account.plan})
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
        {/* Not named "Sign out …": the plain Sign out button must stay the only one that name finds. */}
        <button
          type="button"
          onClick={signOutEverywhere}
          title="Sign out everywhere: ends every session of this account, on every browser and device"
        >
          End all sessions
        </button>
      </header>
      <main>
        {page.hash === '#/posts' && <PostsPage />}
        {page.hash === '#/media' && <MediaPage />}
        {page.hash === '#/accounts' && <AccountsPage />}
        {page.hash === '#/keys' && <KeysPage />}
        {page.hash === '#/webhooks' && <WebhooksPage />}
        {page.hash === '#/queue' && <QueuePage />}
        {page.hash === '#/usage' && <UsagePage />}
        {page.hash === '#/analytics' && (
          <Suspense fallback={<p className="loading">Loading…</p>}>
            <AnalyticsPage />
          </Suspense>
        )}
      </main>
    </div>
  );
}
