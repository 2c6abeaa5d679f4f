import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

declare global {
  namespace Express {
    interface Request {
      /** The request id (`X-Request-Id`, given or made), on every log line of the request. */
      id?: string;
    }
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * The request id and one log line per request: method, path and status only (no headers: keys; no
 * bodies: post content). It replaces pino-http, which builds a child logger and copies the request's
 * serialized fields through its redaction on every request even when nothing is logged: a tenth of the
 * API's CPU on a create (profile in README's Performance). The line is written only when its level is on.
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('x-request-id', id);
    if (!logger.isLevelEnabled('error')) {
      next();
      return;
    }
    const started = performance.now();
    const done = (aborted: boolean) => {
      res.removeListener('finish', finished);
      res.removeListener('close', closed);
      const level = aborted || res.statusCode >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          req: { id, method: req.method, path: req.originalUrl.split('?')[0] },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - started),
        },
        aborted ? 'request aborted' : 'request completed',
      );
    };
    const finished = () => done(false);
    const closed = () => done(!res.writableFinished);
    res.once('finish', finished);
    res.once('close', closed);
    next();
  };
}
