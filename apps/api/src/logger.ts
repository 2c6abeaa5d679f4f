import { logOptions } from '@sps/ops';
import { type Logger, pino } from 'pino';
import pretty from 'pino-pretty';

export interface TLoggerOptions {
  /** pino-pretty on stdout (development) instead of JSON lines (production). */
  pretty?: boolean;
}

/**
 * Secrets and post content never reach the logs: auth headers are redacted, errors keep message and code,
 * and bodies are not logged.
 */
export function createLogger(level: string, name: string, options: TLoggerOptions = {}): Logger {
  // Errors are logged as message and code only (see logOptions): never a failed request's options.
  const config = logOptions(name, level);
  // Lines are written asynchronously: a line logged while a write is in flight joins the next write,
  // instead of one blocking write per line (one per request at `info`). pino flushes what is pending
  // when the process exits (https://github.com/pinojs/pino/blob/master/docs/asynchronous.md).
  if (!options.pretty) return pino(config, pino.destination({ sync: false }));
  // Synchronous, in this thread: development only, and nothing is lost when the process exits.
  return pino(config, pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}
