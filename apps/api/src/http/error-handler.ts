import { AppError } from '@sps/core';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { STATUS_A, STATUS_B, toAppError } from './error-mapping.js';

export type TVariant = 'A' | 'B';

/** The first issue's field and the issues reported; with the count of all when only the first were kept. */
function fieldDetails(error: AppError, countKey: 'issueCount' | 'issue_count') {
  if (error.issues.length === 0) return {};
  const truncated = error.issueCount > error.issues.length ? { [countKey]: error.issueCount } : {};
  return { field: error.issues[0]?.field, issues: error.issues, ...truncated };
}

/** Variant A: `{error, fix?, details?}`. */
export function bodyA(error: AppError) {
  const details = { ...fieldDetails(error, 'issueCount'), ...error.details };
  return {
    error: error.message,
    ...(error.fix ? { fix: error.fix } : {}),
    ...(Object.keys(details).length > 0 ? { details } : {}),
  };
}

/** Variant B: `{error, code, details}` (details always an object). */
export function bodyB(error: AppError) {
  return {
    error: error.message,
    code: error.code,
    details: {
      ...fieldDetails(error, 'issue_count'),
      ...error.details,
      ...(error.fix ? { fix: error.fix } : {}),
    },
  };
}

export function errorHandler(variant: TVariant, logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const error = toAppError(err);
    const status = (variant === 'A' ? STATUS_A : STATUS_B)[error.code];
    if (status >= 500) {
      // The original error (not the request body) is logged with the request id; content stays out.
      logger.error({ err, reqId: req.id, path: req.path }, 'request failed');
    }
    if (error.retryAfter !== undefined) res.setHeader('Retry-After', String(error.retryAfter));
    if (res.headersSent) return;
    res.status(status).json(variant === 'A' ? bodyA(error) : bodyB(error));
  };
}

/** Unknown route under a variant's prefix: 404 in that variant's shape. */
export const notFoundRoute: RequestHandler = (req) => {
  throw new AppError('not_found', `No route ${req.method} ${req.originalUrl.split('?')[0]}`);
};
