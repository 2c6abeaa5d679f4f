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

export const ZCommonEnv = z.object({
  NODE_ENV: z.string().default('development'),
  DATABASE_URL: z.string().default('postgresql://postgres@127.0.0.1:5432/social_posts'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
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

/**
 * Parses an app's environment with its schema (ZCommonEnv extended): one `Invalid environment: …` error
 * naming every bad variable, ENCRYPTION_KEY required in production, and the key decoded once (outside
 * production without one, a fixed development key).
 */
export function parseAppEnv<T extends { NODE_ENV: string; ENCRYPTION_KEY?: string | undefined }>(
  schema: z.ZodType<T>,
  source: Record<string, string | undefined>,
): T & { encryptionKey: Buffer } {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid environment: ${problems}`);
  }
  const env = parsed.data;
  if (!env.ENCRYPTION_KEY && env.NODE_ENV === 'production') {
    throw new Error('Invalid environment: ENCRYPTION_KEY is required in production');
  }
  return {
    ...env,
    encryptionKey: env.ENCRYPTION_KEY ? parseEncryptionKey(env.ENCRYPTION_KEY) : developmentKey('local'),
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
