import type { Request, Response } from 'express';

// What Meta's Graph APIs (Facebook, Instagram, Threads) answer on errors, shared by their simulators.

/** `{ error: { message, type, code, fbtrace_id, ... } }`; `extra` adds fields or replaces `type`. */
export function graphError(
  res: Response,
  status: number,
  code: number,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  res
    .status(status)
    .json({ error: { message, type: 'OAuthException', code, ...extra, fbtrace_id: 'AsimTrace01' } });
}

/** A bearer header or an `access_token` query parameter; otherwise Graph's 401 (code 2500). */
export function requireGraphToken(req: Request, res: Response): boolean {
  if (req.headers.authorization?.startsWith('Bearer ') || typeof req.query.access_token === 'string')
    return true;
  graphError(
    res,
    401,
    2500,
    'An active access token must be used to query information about the current user.',
  );
  return false;
}
