import { safeEqual } from '@sps/core';
import type { RequestHandler } from 'express';
import ipaddr from 'ipaddr.js';

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

/** Headers a reverse proxy adds: a request carrying one came through a proxy, wherever its socket is. */
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const;

function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  try {
    // IPv4-mapped IPv6 (::ffff:127.0.0.1) counts as its IPv4 address.
    return ipaddr.process(address).range() === 'loopback';
  } catch {
    return false;
  }
}

/**
 * Operator routes without ADMIN_TOKEN: answered only to a process on this machine that reached the socket
 * itself, by the socket's address (never `req.ip`, which TRUST_PROXY may take from a header) and only without
 * a proxy's forwarding header, so a reverse proxy on the same host does not publish them. Anything else gets
 * the 404 of an unknown route.
 */
export function localOnly(): RequestHandler {
  return (req, res, next) => {
    const proxied = PROXY_HEADERS.some((name) => req.headers[name] !== undefined);
    if (!proxied && isLoopbackAddress(req.socket.remoteAddress)) {
      next();
      return;
    }
    res.status(404).json({ error: `No route ${req.method} ${req.path}` });
  };
}

/** An operator route that is off here: the 404 of an unknown route. */
export function notFound(): RequestHandler {
  return (req, res) => {
    res.status(404).json({ error: `No route ${req.method} ${req.path}` });
  };
}
