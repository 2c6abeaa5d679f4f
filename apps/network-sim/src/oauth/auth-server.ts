import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { TPlatform } from '@sps/core';
import type { Request, Response, Router } from 'express';
import type { SimState } from '../sim-state.js';
import { type OAuthSimStore, oauthStoreOf } from './oauth-store.js';

/** How one network's authorization server behaves (each from its documentation, cited where configured). */
export interface TAuthServerConfig {
  platform: TPlatform;
  authorizePath: string;
  tokenPath: string;
  /** `client_key` at TikTok. */
  clientIdParam: 'client_id' | 'client_key';
  /** `basic`: confidential clients must send HTTP Basic (X); `body`: id and secret in the form; `either`. */
  clientAuth: 'basic' | 'body' | 'either';
  pkce: 'required' | 'optional' | 'none';
  /** `rotating`: a refresh spends the refresh token and a replay revokes the family; `none`: no refresh token. */
  refresh: 'rotating' | 'reusable' | 'none';
  /** The refresh answer repeats the refresh token (TikTok, X) or leaves it out (Google). */
  codeTtlSeconds: number;
  scopeSeparator: ' ' | ',';
  /** Short-lived code exchange at Meta: its own lifetime, then a long-lived exchange elsewhere. */
  codeGrantAccessSeconds?: number;
  /** Registered apps only (Mastodon's `POST /api/v1/apps`), whose redirect URIs must match. */
  registeredRedirects?: boolean;
  /** Facebook's token endpoint is a GET without `grant_type` for the code exchange. */
  tokenMethod?: 'GET' | 'POST';
  /** The network's token endpoint refusals. */
  refuse(
    res: Response,
    kind: 'invalid_client' | 'invalid_grant' | 'invalid_request',
    description: string,
  ): void;
  /**
   * Where the code answer says what was granted: `scope` (RFC 6749 §5.1), Instagram's `permissions`, or
   * nowhere (Threads, Facebook: the grant is read with GET /me/permissions where the network offers it).
   */
  grantField?: 'scope' | 'permissions' | 'none';
  /** Extra fields of a successful token answer (TikTok `open_id`, Meta `user_id`). */
  extra?(user: string): Record<string, unknown>;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function errorPage(res: Response, message: string): void {
  res
    .status(400)
    .type('html')
    .send(`<!doctype html><title>Error</title><h1>Error</h1><p>${escapeHtml(message)}</p>`);
}

function params(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  const body = req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body) ? req.body : {};
  for (const source of [req.query, body] as Record<string, unknown>[]) {
    for (const [k, v] of Object.entries(source)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Client authentication as the network demands it; null when refused (the answer is sent). */
function authenticateClient(
  cfg: TAuthServerConfig,
  store: OAuthSimStore,
  req: Request,
  p: Record<string, string>,
  res: Response,
): string | null {
  const header = req.headers.authorization;
  let id: string | undefined;
  let secret: string | undefined;
  if (header?.startsWith('Basic ')) {
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    id = decodeURIComponent(decoded.slice(0, colon));
    secret = decodeURIComponent(decoded.slice(colon + 1));
    if (cfg.clientAuth === 'body') id = undefined;
  } else if (cfg.clientAuth !== 'basic') {
    id = p[cfg.clientIdParam];
    secret = p.client_secret;
  }
  const expected = id ? store.clientSecretOf(cfg.platform, id) : null;
  if (!id || !secret || !expected || !safeEqual(secret, expected)) {
    cfg.refuse(
      res,
      'invalid_client',
      cfg.clientAuth === 'basic' ? 'Missing valid authorization header' : 'Client authentication failed',
    );
    return null;
  }
  return id;
}

/**
 * What the person granted: the scopes asked, less those unticked on the page (`granted_scope` boxes sent
 * with `scope_choice`) or listed in `sim_withhold` (tests). Never more than was asked.
 */
function grantedOf(req: Request, p: Record<string, string>, separator: string): string {
  const asked = (p.scope ?? '').split(separator).filter(Boolean);
  const body = (req.body ?? {}) as Record<string, unknown>;
  let granted = asked;
  if (p.scope_choice === '1') {
    const ticked = body.granted_scope;
    const list = Array.isArray(ticked) ? ticked : typeof ticked === 'string' ? [ticked] : [];
    granted = asked.filter((s) => list.includes(s));
  }
  const withheld = (p.sim_withhold ?? '').split(/[ ,]+/).filter(Boolean);
  return granted.filter((s) => !withheld.includes(s)).join(separator);
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/** The authorization page (GET shows it, POST is the person's answer) and the token endpoint. */
/** The RFC 6749 token answer's common fields (section 5.1), for the code and the refresh grant alike. */
function tokenAnswer(issued: ReturnType<OAuthSimStore['issue']>): Record<string, unknown> {
  return {
    access_token: issued.accessToken,
    token_type: 'bearer',
    ...(issued.expiresIn !== null ? { expires_in: issued.expiresIn } : {}),
    ...(issued.refreshToken ? { refresh_token: issued.refreshToken } : {}),
    ...(issued.refreshToken && issued.refreshExpiresIn !== null
      ? { refresh_expires_in: issued.refreshExpiresIn }
      : {}),
  };
}

export function registerAuthServer(router: Router, sim: SimState, cfg: TAuthServerConfig): void {
  const store = oauthStoreOf(sim);

  function checkAuthorizeRequest(p: Record<string, string>): string | null {
    if (p.response_type !== 'code') return 'response_type must be code';
    const clientId = p[cfg.clientIdParam];
    if (!clientId || !store.clientSecretOf(cfg.platform, clientId)) return `Unknown ${cfg.clientIdParam}`;
    if (!p.redirect_uri) return 'redirect_uri is required';
    if (cfg.registeredRedirects && !store.apps.get(clientId)?.redirectUris.includes(p.redirect_uri))
      return 'The redirect URI included is not valid.';
    if (!p.state) return 'state is required';
    if (cfg.pkce === 'required' && (!p.code_challenge || p.code_challenge_method !== 'S256'))
      return 'code_challenge with code_challenge_method=S256 is required';
    return null;
  }

  router.get(cfg.authorizePath, (req, res) => {
    sim.record(cfg.platform, req);
    const p = params(req);
    const problem = checkAuthorizeRequest(p);
    if (problem) return errorPage(res, problem);
    const hidden = Object.entries(p)
      .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
      .join('');
    const scopes = (p.scope ?? '').split(cfg.scopeSeparator).filter(Boolean);
    // Each permission can be unticked, as on Meta's and Google's consent screens (granular consent).
    const boxes = scopes
      .map(
        (s) =>
          `<label><input type="checkbox" name="granted_scope" value="${escapeHtml(s)}" checked> ${escapeHtml(s)}</label><br>`,
      )
      .join('');
    res
      .type('html')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorize (simulated ${cfg.platform})</title></head><body>` +
          `<h1>Simulated ${escapeHtml(cfg.platform)}</h1><p>An app asks to: ${scopes.map(escapeHtml).join(', ') || '(no scopes)'}</p>` +
          `<form method="post">${hidden}<input type="hidden" name="scope_choice" value="1">${boxes}<label>Sign in as <input name="sim_user" value="sim_user"></label> ` +
          `<button name="decision" value="allow">Authorize app</button> <button name="decision" value="deny">Cancel</button></form></body></html>`,
      );
  });

  router.post(cfg.authorizePath, (req, res) => {
    sim.record(cfg.platform, req);
    const p = params(req);
    const problem = checkAuthorizeRequest(p);
    if (problem) return errorPage(res, problem);
    const back = new URL(p.redirect_uri ?? '');
    back.searchParams.set('state', p.state ?? '');
    if (p.decision !== 'allow') {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The user denied the request');
      return res.redirect(302, back.toString());
    }
    const code = store.newCode(
      {
        platform: cfg.platform,
        clientId: p[cfg.clientIdParam] ?? '',
        redirectUri: p.redirect_uri ?? '',
        challenge: p.code_challenge ?? null,
        challengeMethod: p.code_challenge_method ?? null,
        user: (p.sim_user || 'sim_user').slice(0, 64),
        scopes: grantedOf(req, p, cfg.scopeSeparator),
      },
      cfg.codeTtlSeconds,
    );
    back.searchParams.set('code', code);
    res.redirect(302, back.toString());
  });

  const token = (req: Request, res: Response) => {
    sim.record(cfg.platform, req);
    const fault = sim.takeFault(cfg.platform, req.originalUrl);
    if (fault && (fault.kind === 'server_error' || fault.kind === 'rate_limited')) {
      res.status(fault.kind === 'server_error' ? 503 : 429).json({ error: 'temporarily_unavailable' });
      return;
    }
    const p = params(req);
    const clientId = authenticateClient(cfg, store, req, p, res);
    if (!clientId) return;
    const grant = p.grant_type ?? (cfg.tokenMethod === 'GET' && p.code ? 'authorization_code' : undefined);
    if (grant === 'authorization_code') {
      const code = store.codes.get(p.code ?? '');
      if (!code || code.platform !== cfg.platform || code.clientId !== clientId) {
        return cfg.refuse(res, 'invalid_grant', 'Invalid authorization code');
      }
      if (code.used) {
        // A code used twice revokes what it gave (RFC 6749 §4.1.2).
        if (code.family) store.revokeFamily(code.family);
        return cfg.refuse(res, 'invalid_grant', 'Authorization code was already used');
      }
      code.used = true;
      if (code.expiresAt <= store.now())
        return cfg.refuse(res, 'invalid_grant', 'Authorization code expired');
      if (code.redirectUri !== p.redirect_uri)
        return cfg.refuse(res, 'invalid_grant', 'redirect_uri does not match');
      if (code.challenge) {
        if (!p.code_verifier || s256(p.code_verifier) !== code.challenge)
          return cfg.refuse(res, 'invalid_grant', 'code_verifier does not match the code_challenge');
      }
      const family = randomBytes(8).toString('hex');
      code.family = family;
      const issued = store.issue(cfg.platform, code.user, family, {
        refresh: cfg.refresh !== 'none',
        scopes: code.scopes,
        ...(cfg.codeGrantAccessSeconds !== undefined ? { accessSeconds: cfg.codeGrantAccessSeconds } : {}),
      });
      const field = cfg.grantField ?? 'scope';
      return res.json({
        ...tokenAnswer(issued),
        ...(field === 'none' ? {} : { [field]: code.scopes }),
        ...(cfg.extra?.(code.user) ?? {}),
      });
    }
    if (grant === 'refresh_token' && cfg.refresh !== 'none') {
      const presented = p.refresh_token ?? '';
      const found = store.tokens.get(presented);
      const status = store.statusOf(presented, cfg.platform, 'refresh');
      if (!found || status !== 'valid') {
        // Replaying a spent single-use refresh token revokes the whole family (X, TikTok rotation).
        if (found?.spent && cfg.refresh === 'rotating') store.revokeFamily(found.family);
        return cfg.refuse(res, 'invalid_grant', 'Value passed for the token was invalid.');
      }
      if (cfg.refresh === 'rotating') found.spent = true;
      const issued = store.issue(cfg.platform, found.user, found.family, {
        refresh: cfg.refresh === 'rotating',
        scopes: found.scopes,
      });
      return res.json({
        ...tokenAnswer(issued),
        // The refresh answer restates the grant where the code answer does (RFC 6749 §5.1).
        ...((cfg.grantField ?? 'scope') === 'scope' ? { scope: found.scopes } : {}),
        ...(cfg.extra?.(found.user) ?? {}),
      });
    }
    return cfg.refuse(res, 'invalid_request', `Unsupported grant_type ${p.grant_type ?? '(none)'}`);
  };
  if (cfg.tokenMethod === 'GET') router.get(cfg.tokenPath, token);
  else router.post(cfg.tokenPath, token);
}
