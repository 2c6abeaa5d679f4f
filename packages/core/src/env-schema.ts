import { z } from 'zod';
import { parseDuration } from './duration.js';
import { PLATFORMS, type TPlatform } from './platforms.js';

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

export const ZCommonEnv = z.object({
  NODE_ENV: z.string().default('development'),
  DATABASE_URL: z.string().default('postgresql://postgres@127.0.0.1:5432/social_posts'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_{}-]+$/, 'letters, digits, _ - { } only')
    .default('sps'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
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
