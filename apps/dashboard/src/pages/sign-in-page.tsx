import { type FormEvent, useState } from 'react';
import { ApiError, api, type TSessionView } from '../api.js';

export function SignInPage({ onSignedIn }: { onSignedIn: (session: TSessionView) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await api<TSessionView>('POST', '/session', { email, password }));
    } catch (e) {
      setError(e instanceof ApiError ? e.readable : 'The service could not be reached.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <h1>Sign in</h1>
      <form onSubmit={submit}>
        <label htmlFor="email">E-mail</label>
        <input
          id="email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <label htmlFor="password">Password</label>
        <input
          id="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
