import { type Logger, pino } from 'pino';
import pretty from 'pino-pretty';

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

export interface TLoggerOptions {
  /** pino-pretty on stdout (development) instead of JSON lines (production). */
  pretty?: boolean;
}

/** Secrets and post content never reach the logs: auth headers are redacted and bodies are not logged. */
export function createLogger(level: string, name: string, options: TLoggerOptions = {}): Logger {
  const config = { name, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  // Lines are written asynchronously: a line logged while a write is in flight joins the next write,
  // instead of one blocking write per line (one per request at `info`). pino flushes what is pending
  // when the process exits (https://github.com/pinojs/pino/blob/master/docs/asynchronous.md).
  if (!options.pretty) return pino(config, pino.destination({ sync: false }));
  // Synchronous, in this thread: development only, and nothing is lost when the process exits.
  return pino(config, pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}
