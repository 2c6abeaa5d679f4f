import { type Logger, pino } from 'pino';

/** Secrets and post content never reach the logs: auth headers are redacted and bodies are not logged. */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers.cookie',
        '*.token',
        '*.secret',
        '*.apiKey',
      ],
      censor: '[redacted]',
    },
  });
}
