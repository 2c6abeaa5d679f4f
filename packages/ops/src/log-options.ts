import type { LoggerOptions } from 'pino';

/** Fields that may hold a secret anywhere in a log line; their values are replaced. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  '*.token',
  '*.secret',
  '*.apiKey',
  '*.password',
  '*.credentials',
];

/** Longest error message kept: enough to say what happened, bounded whatever an exception carries. */
const MESSAGE_MAX = 500;

/**
 * A message without the paths and queries of the URLs in it (got's messages end with the request's method
 * and URL, and a Telegram URL carries the bot token in its path): each URL is cut to its origin.
 */
function scrubbed(message: string): string {
  return message
    .slice(0, MESSAGE_MAX * 2)
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/[^/\s?#]+)[^\s]*/gi, '$1/…')
    .slice(0, MESSAGE_MAX);
}

/**
 * Errors are logged as their message and code, nothing else. pino's standard serializer copies every
 * enumerable property, and an HTTP client's error carries its request: a `got` error escaping a connector
 * would log `options` (the bearer token, a Telegram URL with the bot token in its path, form secrets) and
 * the response. Redaction by path cannot catch those (they sit at arbitrary depths), so nothing but the
 * two fields is written.
 */
export function safeError(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value !== 'object') return scrubbed(String(value));
  const { message, code } = value as { message?: unknown; code?: unknown };
  return {
    message: typeof message === 'string' ? scrubbed(message) : '[no message]',
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
  };
}

/** Every app's pino options: its name and level, redaction, and errors reduced to message and code. */
export function logOptions(name: string, level: string): LoggerOptions {
  return {
    name,
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: { err: safeError, error: safeError },
  };
}
