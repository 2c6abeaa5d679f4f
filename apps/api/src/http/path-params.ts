import { AppError } from '@sps/core';
import type { ErrorRequestHandler } from 'express';

/**
 * A path parameter that is not valid percent-encoding (`/v1/posts/%E0%A4%A`) makes Express's router throw
 * a URIError; such an id cannot name anything of this account, so it is a 404 like any other non-UUID id.
 * `what` and `fix` word the 404 for the variant.
 */
export function undecodableParam(what: string, fix: string): ErrorRequestHandler {
  return (err, req, _res, next) => {
    if (err instanceof URIError) {
      next(new AppError('not_found', `No ${what} at ${req.originalUrl.split('?')[0]}`, { fix }));
      return;
    }
    next(err);
  };
}
