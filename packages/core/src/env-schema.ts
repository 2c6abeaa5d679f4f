import { isIP } from 'node:net';
import { z } from 'zod';
import { parseDuration } from './duration.js';
import { PLATFORMS, type TPlatform } from './platforms.js';
import { developmentKey, parseEncryptionKey } from './secret-box.js';
import { parseTwitterAllowance } from './twitter-allowance.js';

// Shared pieces of each app's environment schema. Apps parse process.env once (loadEnv) and pass
// values down; packages only receive values.

export const ZDuration = z.string().transform((value, ctx) => {
  try {
    return parseDuration(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not a duration like 30s, 5m, 2h` });
    return z.NEVER;
  }
});

export const ZBooleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .default('false')
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** `true`/`false` (1/0, yes/no); unset or empty stays `undefined` so the app can pick its own default. */
export const ZOptionalBooleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v === 'true' || v === '1' || v === 'yes'));

/** A TCP port for a worker's metrics and health server; `0` turns the server off. */
export function zMetricsPort(defaultPort: number) {
  return z.coerce.number().int().min(0).max(65535).default(defaultPort);
}

/**
 * The address a worker's metrics and health server listens on: loopback unless an operator opens it
 * (`0.0.0.0` for a Prometheus in another container), as /metrics has no authentication of its own.
 */
export const ZMetricsHost = z.string().min(1).default('127.0.0.1');

/**
 * Human-readable logs (pino-pretty) instead of JSON lines: `LOG_PRETTY` when set, else in development
 * when stdout is a terminal (a pipe or a log collector always gets JSON).
 */
export function wantsPrettyLogs(
  env: { NODE_ENV: string; LOG_PRETTY?: boolean | undefined },
  stdoutIsTty: boolean,
): boolean {
  return env.LOG_PRETTY ?? (env.NODE_ENV === 'development' && stdoutIsTty);
}

/** `TWITTER_MONTHLY_ALLOWANCE`: `plan=count,...`; unlisted plans keep the defaults. */
export const ZTwitterAllowance = z
  .string()
  .default('')
  .transform((value, ctx) => {
    try {
      return parseTwitterAllowance(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });

/**
 * `REDIS_CLUSTER_NODES`: `host:port` entries separated by commas (IPv6 as `[::1]:7000`); unset or empty
 * is undefined (one Redis at REDIS_URL). Apps pass the nodes to `createRedisFactory` of @sps/queue.
 */
export const ZRedisClusterNodes = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined || value.trim() === '') return undefined;
    const nodes: { host: string; port: number }[] = [];
    for (const raw of value.split(',')) {
      const entry = raw.trim();
      if (entry === '') continue;
      const match = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):(\d{1,5})$/.exec(entry);
      const port = match ? Number(match[2]) : 0;
      if (!match || port < 1 || port > 65535) {
        ctx.addIssue({
          code: 'custom',
          message: `"${entry}" is not host:port (e.g. 10.0.0.5:6379,10.0.0.6:6379)`,
        });
        return z.NEVER;
      }
      nodes.push({ host: (match[1] as string).replace(/^\[(.*)\]$/, '$1'), port });
    }
    return nodes.length > 0 ? nodes : undefined;
  });

export const ZCommonEnv = z.object({
  NODE_ENV: z.string().default('development'),
  DATABASE_URL: z.string().default('postgresql://postgres@127.0.0.1:5432/social_posts'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /** Redis Cluster nodes, `host:port,...`: when set, every process uses the cluster instead of REDIS_URL. */
  REDIS_CLUSTER_NODES: ZRedisClusterNodes,
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_{}-]+$/, 'letters, digits, _ - { } only')
    .default('sps'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `true`: pretty logs (pino-pretty); `false`: JSON lines; unset: pretty only in development on a terminal. */
  LOG_PRETTY: ZOptionalBooleanFlag,
  /** 32 bytes (hex or base64) sealing social tokens and webhook secrets. Required in production. */
  ENCRYPTION_KEY: z.string().optional(),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
});

/** `NETWORK_<NAME>_BASE_URL` for every network that has one set. */
export function networkBaseUrls(env: Record<string, string | undefined>): Partial<Record<TPlatform, string>> {
  const out: Partial<Record<TPlatform, string>> = {};
  for (const platform of PLATFORMS) {
    const value = env[`NETWORK_${platform.toUpperCase()}_BASE_URL`];
    if (value) out[platform] = value;
  }
  return out;
}

/** Whether a URL's host is this machine only: localhost (and *.localhost), 127.0.0.0/8 or ::1. */
export function isLoopbackUrl(value: string): boolean {
  let host: string;
  try {
    host = new URL(value).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith('[')) host = host.slice(1, -1);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return isIP(host) === 6 && /^(0*:)*:?0*1$/.test(host);
}

/** What every process says at start while it seals secrets with the development key (see parseAppEnv). */
export const DEVELOPMENT_KEY_WARNING =
  'ENCRYPTION_KEY is not set: social tokens and webhook secrets are sealed with a development key derived from a string in the source code, which anyone can rebuild. Set ENCRYPTION_KEY (openssl rand -hex 32) before storing real credentials; secrets sealed with the development key cannot be opened with a new one.';

/**
 * Parses an app's environment with its schema (ZCommonEnv extended): one `Invalid environment: …` error
 * naming every bad variable, ENCRYPTION_KEY required in production, and the key decoded once. Outside
 * production a missing key falls back to a fixed development key (`usesDevelopmentKey`, which the app
 * must warn about), but only while PUBLIC_URL is a loopback address: a service reachable from elsewhere
 * would otherwise store real credentials under a key that is in the source.
 */
export function parseAppEnv<T extends { NODE_ENV: string; ENCRYPTION_KEY?: string | undefined }>(
  schema: z.ZodType<T>,
  source: Record<string, string | undefined>,
): T & { encryptionKey: Buffer; usesDevelopmentKey: boolean } {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid environment: ${problems}`);
  }
  const env = parsed.data;
  if (!env.ENCRYPTION_KEY && env.NODE_ENV === 'production') {
    throw new Error('Invalid environment: ENCRYPTION_KEY is required in production');
  }
  const publicUrl = source.PUBLIC_URL;
  if (!env.ENCRYPTION_KEY && publicUrl && !isLoopbackUrl(publicUrl)) {
    throw new Error(
      `Invalid environment: ENCRYPTION_KEY is required when PUBLIC_URL (${publicUrl}) is not a loopback address: the development key is derived from a string in the source code, so anyone could open the tokens and secrets stored with it. Set ENCRYPTION_KEY (openssl rand -hex 32).`,
    );
  }
  // A process listening beyond this machine (the API's HOST) is reachable from elsewhere too.
  const host = source.HOST;
  if (!env.ENCRYPTION_KEY && host && !isLoopbackUrl(`http://${host.includes(':') ? `[${host}]` : host}`)) {
    throw new Error(
      `Invalid environment: ENCRYPTION_KEY is required when HOST (${host}) is not a loopback address: the development key is derived from a string in the source code, so anyone could open the tokens and secrets stored with it. Set ENCRYPTION_KEY (openssl rand -hex 32), or leave HOST unset (loopback).`,
    );
  }
  return {
    ...env,
    encryptionKey: env.ENCRYPTION_KEY ? parseEncryptionKey(env.ENCRYPTION_KEY) : developmentKey('local'),
    usesDevelopmentKey: !env.ENCRYPTION_KEY,
  };
}

/** Runs the parser of one variable, naming it in the error the way parseAppEnv does. */
export function parseEnvValue<T>(name: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new Error(`Invalid environment: ${name}: ${(error as Error).message}`);
  }
}
