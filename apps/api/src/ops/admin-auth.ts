import { safeEqual } from '@sps/core';
import type { RequestHandler } from 'express';

/**
 * Operator routes: `Authorization: Bearer <ADMIN_TOKEN>`, or Basic auth with the token as password (so a
 * browser can open Bull Board). Compared in constant time.
 */
export function adminAuth(token: string): RequestHandler {
  return (req, res, next) => {
    const header = req.get('authorization') ?? '';
    let presented = '';
    const bearer = /^Bearer\s+(\S+)$/i.exec(header);
    const basic = /^Basic\s+(\S+)$/i.exec(header);
    if (bearer?.[1]) presented = bearer[1];
    else if (basic?.[1])
      presented = Buffer.from(basic[1], 'base64').toString('utf8').split(':').slice(1).join(':');
    if (presented && safeEqual(presented, token)) {
      next();
      return;
    }
    res
      .set('WWW-Authenticate', 'Basic realm="operators", charset="UTF-8"')
      .status(401)
      .json({ error: 'Operator token required' });
  };
}
