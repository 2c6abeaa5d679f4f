// What each admin command takes and prints, as data: the help text is made from it, the parser takes its
// option names from it, and `load` imports only the module that runs the command (a simple command must not
// pay for the Prisma client, BullMQ or twitter-text). Nothing here imports more than types.
import type { THandler } from './context.js';

export interface TOptionSpec {
  name: string;
  /** The value's placeholder in help (`ID`, `URL`); every option takes a value. */
  value: string;
  required?: boolean;
  help: string;
}

export interface TCommandSpec {
  name: string;
  summary: string;
  options: TOptionSpec[];
  prints: string;
  notes?: string;
  /** Tells the API processes to drop cached keys (loads the Redis client). */
  evicts?: true;
  load: () => Promise<Record<string, THandler>>;
}

const fast = () => import('./sql-commands.js').then((m) => m.SQL_COMMANDS);
const full = () => import('./prisma-commands.js').then((m) => m.PRISMA_COMMANDS);

const ACCOUNT: TOptionSpec = {
  name: 'account',
  value: 'ID',
  required: true,
  help: 'the account (its id, as `account create` printed it)',
};
const PLAN: TOptionSpec = {
  name: 'plan',
  value: 'PLAN',
  required: true,
  help: 'none | free | starter | pro (none: no active plan; the others are the Variant B tiers)',
};
const PASSWORD_HELP = "the owner's dashboard password, at least 10 characters";

export const COMMAND_SPECS: TCommandSpec[] = [
  {
    name: 'account create',
    summary: 'Create an account and its first API key',
    options: [
      { name: 'name', value: 'NAME', required: true, help: 'the account name' },
      {
        name: 'email',
        value: 'EMAIL',
        required: true,
        help: "the owner's e-mail (dashboard sign-in, webhook and reconnect notices)",
      },
      PLAN,
      { name: 'password', value: 'PW', help: `${PASSWORD_HELP} (optional)` },
    ],
    prints: '{"accountId": "...", "apiKey": "..."}',
    notes: 'The API key is shown only here; it is stored as a hash.',
    load: fast,
  },
  {
    name: 'account set-plan',
    summary: "Change an account's plan",
    options: [ACCOUNT, PLAN],
    prints: '{"accountId": "...", "plan": "..."}',
    notes: "Every API process drops the account's cached keys at once (through Redis when it answers).",
    evicts: true,
    load: fast,
  },
  {
    name: 'account set-password',
    summary: "Set the owner's dashboard password",
    options: [ACCOUNT, { name: 'password', value: 'PW', required: true, help: PASSWORD_HELP }],
    prints: '{"accountId": "..."}',
    notes: "The owner signs in to /dashboard with the account's e-mail and this password.",
    load: fast,
  },
  {
    name: 'key create',
    summary: 'Create a further API key for an account',
    options: [ACCOUNT],
    prints: '{"apiKeyId": "...", "apiKey": "..."}',
    notes: 'The key is shown only here.',
    load: fast,
  },
  {
    name: 'key revoke',
    summary: 'Revoke an API key',
    options: [{ name: 'key-id', value: 'ID', required: true, help: 'the key (its apiKeyId)' }],
    prints: '{"apiKeyId": "...", "revoked": true}',
    notes:
      'Every API process refuses it at once (through Redis when it answers, else after API_KEY_CACHE_TTL).',
    evicts: true,
    load: fast,
  },
  {
    name: 'social connect',
    summary: 'Connect a social account with a token you already have',
    options: [
      ACCOUNT,
      {
        name: 'platform',
        value: 'P',
        required: true,
        help: 'twitter | threads | bluesky | linkedin | mastodon | instagram | facebook | tiktok | youtube | discord | slack | telegram',
      },
      { name: 'name', value: 'HANDLE', required: true, help: 'the account name shown to people' },
      { name: 'token', value: 'TOKEN', required: true, help: 'the access or bot token (sealed at rest)' },
      { name: 'refresh-token', value: 'TOKEN', help: 'the OAuth refresh token, sealed with the token' },
      {
        name: 'expires-at',
        value: 'TIME',
        help: 'when the access token expires, ISO 8601 with an offset (e.g. 2026-01-01T12:00:00Z)',
      },
      { name: 'instance', value: 'URL', help: 'the server base URL (Mastodon instance, Bluesky PDS)' },
      {
        name: 'external-id',
        value: 'ID',
        help: 'the network-side id posted as (page, channel, chat, person URN, user id); -100… works',
      },
    ],
    prints: '{"socialAccountId": "..."}',
    notes:
      'Emits account.connected. People connect through the dashboard or POST /v1/accounts/connect instead.',
    load: fast,
  },
  {
    name: 'social disconnect',
    summary: 'Disconnect a social account',
    options: [
      ACCOUNT,
      {
        name: 'social-account',
        value: 'SID',
        required: true,
        help: 'the connected account (socialAccountId)',
      },
    ],
    prints: '{"socialAccountId": "...", "isActive": false}',
    notes: 'Emits account.disconnected.',
    load: full,
  },
  {
    name: 'webhook deliveries',
    summary: "A webhook's delivery history, newest first",
    options: [
      ACCOUNT,
      { name: 'webhook', value: 'ID', required: true, help: 'the webhook' },
      { name: 'limit', value: 'N', help: '1..100 (default 20)' },
      { name: 'offset', value: 'N', help: '0 or more (default 0)' },
    ],
    prints: '{"webhookId": "...", "total": N, "deliveries": [...]}',
    load: full,
  },
  {
    name: 'webhook retry',
    summary: 'Start a failed delivery over with the full retry schedule',
    options: [ACCOUNT, { name: 'delivery', value: 'ID', required: true, help: 'the failed delivery' }],
    prints: '{"deliveryId": "...", "status": "pending", "enqueued": true}',
    notes:
      'enqueued is false when Redis did not answer; the webhooks worker picks it up from PostgreSQL then.',
    load: full,
  },
];

/** Every option any command takes (the parser is strict: anything else is a usage error). */
export const OPTION_NAMES = [...new Set(COMMAND_SPECS.flatMap((c) => c.options.map((o) => o.name)))];

export function specOf(command: string): TCommandSpec | undefined {
  return COMMAND_SPECS.find((c) => c.name === command);
}
