import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { type ApiError, api, type TConnectOption, type TSocialAccountView } from '../api.js';
import { asApiError, FieldError } from '../ui.js';

export const NETWORK_NAMES: Record<string, string> = {
  twitter: 'X',
  threads: 'Threads',
  bluesky: 'Bluesky',
  linkedin: 'LinkedIn',
  mastodon: 'Mastodon',
  instagram: 'Instagram',
  facebook: 'Facebook',
  tiktok: 'TikTok',
  youtube: 'YouTube',
  discord: 'Discord',
  slack: 'Slack',
  telegram: 'Telegram',
};

export const networkName = (platform: string) => NETWORK_NAMES[platform] ?? platform;

/** Labels of the credential fields the API names (`CREDENTIAL_SCHEMAS` on the server). */
const FIELD_LABELS: Record<string, string> = {
  identifier: 'Handle or e-mail',
  app_password: 'App password',
  service: 'PDS address (optional, e.g. https://bsky.social)',
  bot_token: 'Bot token',
  chat_id: 'Chat id or @channel',
  channel_id: 'Channel id',
};
const SECRET_FIELDS = new Set(['app_password', 'bot_token']);

/** Where the network's authorization page sends the person back: this page, which reads the outcome. */
function returnUrl(platform: string): string {
  return `${window.location.origin}/dashboard/?connect=${encodeURIComponent(platform)}#/accounts`;
}

/**
 * Starts an OAuth connect through the API (the connect service makes the state and PKCE verifier) and
 * leaves for the network's page; errors (a missing instance, an unconfigured network) are thrown back.
 */
type TConnectExtra = {
  instance?: string;
  page_id?: string;
  target?: 'member' | 'organization';
  organization_id?: string;
};

export async function startConnect(platform: string, extra: TConnectExtra = {}): Promise<void> {
  const started = await api<{ url: string }>('POST', '/v1/accounts/connect', {
    platform,
    redirect_uri: returnUrl(platform),
    ...extra,
  });
  window.location.assign(started.url);
}

/** Reconnect starts the same flow again: the API revives the same account for the same network user. */
export function reconnectExtra(account: TSocialAccountView): TConnectExtra {
  if (account.platform === 'mastodon' && account.instance_url) return { instance: account.instance_url };
  const organization = /^urn:li:organization:(\d+)$/.exec(account.external_id ?? '')?.[1];
  if (account.platform === 'linkedin' && organization) return { organization_id: organization };
  if (account.platform === 'facebook' && account.external_id && /^\d+$/.test(account.external_id))
    return { page_id: account.external_id };
  return {};
}

function OAuthNetwork({ option }: { option: Extract<TConnectOption, { method: 'authorization_page' }> }) {
  const [value, setValue] = useState('');
  const [target, setTarget] = useState<'member' | 'organization'>('member');
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const name = networkName(option.platform);
  const inputId = `connect-${option.platform}-${option.needs}`;

  if (option.missing.length > 0) {
    return (
      <li className="network unavailable">
        <strong>{name}</strong>
        <p>
          {option.error}. The operator sets {option.missing.length > 1 ? 'them' : 'it'} (README, "Connecting
          accounts").
        </p>
      </li>
    );
  }

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const extra: TConnectExtra =
        option.needs === 'instance' && value.trim()
          ? { instance: value.trim() }
          : option.needs === 'page_id' && value.trim()
            ? { page_id: value.trim() }
            : option.needs === 'organization' && target === 'organization'
              ? { target, ...(value.trim() ? { organization_id: value.trim() } : {}) }
              : {};
      await startConnect(option.platform, extra);
    } catch (e) {
      setError(asApiError(e));
      setBusy(false);
    }
  };
  const field = option.needs === 'organization' ? 'organization_id' : (option.needs ?? 'platform');
  const fieldMessage = error?.forField(field);
  // The one free-text answer a network's connect flow asks for (server, Page id or organization id).
  const textInput = (label: string, kind: { type: 'url' } | { inputMode: 'numeric' }) => (
    <>
      <label htmlFor={inputId}>{label}</label>
      <input
        id={inputId}
        {...kind}
        value={value}
        onChange={(e) => setValue(e.target.value)}
        aria-describedby={fieldMessage ? `${inputId}-error` : undefined}
      />
    </>
  );
  return (
    <li className="network">
      <form onSubmit={submit} aria-label={`Connect ${name}`}>
        <strong>{name}</strong>
        {option.needs === 'instance' &&
          textInput('Mastodon server (e.g. https://mastodon.social)', { type: 'url' })}
        {option.needs === 'page_id' &&
          textInput('Facebook Page id (optional: empty connects every Page you grant)', {
            inputMode: 'numeric',
          })}
        {option.needs === 'organization' && (
          <>
            <label htmlFor={`${inputId}-target`}>Post as</label>
            <select
              id={`${inputId}-target`}
              value={target}
              onChange={(e) => setTarget(e.target.value === 'organization' ? 'organization' : 'member')}
            >
              <option value="member">yourself (your LinkedIn member profile)</option>
              <option value="organization">organization pages you administer</option>
            </select>
            {target === 'organization' &&
              textInput('Organization id (optional: empty connects every page you administer)', {
                inputMode: 'numeric',
              })}
          </>
        )}
        <FieldError id={`${inputId}-error`} message={fieldMessage ?? error?.readable} />
        <button type="submit" disabled={busy}>
          Connect {name}
        </button>
      </form>
    </li>
  );
}

function CredentialForm({
  option,
  onDone,
}: {
  option: Extract<TConnectOption, { method: 'credentials' }>;
  onDone: (account: TSocialAccountView) => void;
}) {
  const client = useQueryClient();
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const name = networkName(option.platform);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const credentials = Object.fromEntries(
        Object.entries(values)
          .map(([k, v]) => [k, v.trim()])
          .filter(([, v]) => v !== ''),
      );
      // The network checks the credential before it is stored: a refusal is a 422 naming the field.
      const account = await api<TSocialAccountView>('POST', '/v1/accounts', {
        platform: option.platform,
        credentials,
      });
      setValues({});
      await client.invalidateQueries({ queryKey: ['accounts'] });
      onDone(account);
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(false);
    }
  };
  const named = option.fields.some((f) => error?.forField(`credentials.${f.name}`));
  return (
    <form onSubmit={submit} aria-label={`${name} credentials`} noValidate>
      {option.fields.map((f) => {
        const id = `cred-${option.platform}-${f.name}`;
        const message = error?.forField(`credentials.${f.name}`);
        return (
          <div key={f.name} className="field">
            <label htmlFor={id}>
              {name} {FIELD_LABELS[f.name]?.toLowerCase() ?? f.name}
            </label>
            <input
              id={id}
              type={SECRET_FIELDS.has(f.name) ? 'password' : 'text'}
              autoComplete="off"
              required={f.required}
              value={values[f.name] ?? ''}
              onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))}
              aria-invalid={message ? true : undefined}
              aria-describedby={message ? `${id}-error` : undefined}
            />
            <FieldError id={`${id}-error`} message={message} />
          </div>
        );
      })}
      {error && !named && <FieldError id={`cred-${option.platform}-error`} message={error.readable} />}
      <button type="submit" disabled={busy}>
        {busy ? `Checking with ${name}…` : `Connect ${name} account`}
      </button>
    </form>
  );
}

/** Every network, the way this server connects it. */
export function ConnectPanel({
  options,
  openCredentials,
  setOpenCredentials,
  onConnected,
}: {
  options: TConnectOption[];
  openCredentials: string | null;
  setOpenCredentials: (platform: string | null) => void;
  onConnected: (account: TSocialAccountView) => void;
}) {
  return (
    <section aria-labelledby="connect-title">
      <h2 id="connect-title">Connect an account</h2>
      <p>
        X, Threads, LinkedIn, Instagram, Facebook, TikTok, YouTube and Mastodon open the network's own page to
        grant access, then come back here. Bluesky, Telegram, Discord and Slack take a credential, checked
        with the network before it is stored.
      </p>
      <ul className="networks">
        {options.map((option) =>
          option.method === 'authorization_page' ? (
            <OAuthNetwork key={option.platform} option={option} />
          ) : (
            <li key={option.platform} className="network">
              <strong>{networkName(option.platform)}</strong>
              <button
                type="button"
                aria-expanded={openCredentials === option.platform}
                onClick={() =>
                  setOpenCredentials(openCredentials === option.platform ? null : option.platform)
                }
              >
                Connect {networkName(option.platform)}
              </button>
              {openCredentials === option.platform && (
                <CredentialForm
                  option={option}
                  onDone={(account) => {
                    setOpenCredentials(null);
                    onConnected(account);
                  }}
                />
              )}
            </li>
          ),
        )}
      </ul>
    </section>
  );
}
