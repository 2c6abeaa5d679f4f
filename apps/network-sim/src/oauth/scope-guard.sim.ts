import type { TPlatform } from '@sps/core';
import type { Express, NextFunction, Request, Response } from 'express';
import type { SimState } from '../sim-state.js';
import { bearerOf, oauthStoreOf } from './oauth-store.js';
import { refuseMissingScopes } from './scope-refusal.sim.js';
import { SCOPE_RULES, type TNeeds, type TRule } from './scope-rules.sim.js';

/**
 * Every simulated endpoint checks the scopes of the token that calls it, as each network does (DESIGN
 * invariant 12): a token the simulator issued without a scope the endpoint needs (scope-rules.sim.ts) is
 * refused with that network's own status and body (scope-refusal.sim.ts). Tokens from outside (the admin
 * CLI's `--token`) and expired or revoked tokens pass through: the endpoint answers those itself.
 */

function needsOf(rule: TRule, req: Request): TNeeds {
  return typeof rule.needs === 'function' ? rule.needs(req) : rule.needs;
}

function lacking(needs: TNeeds, granted: Set<string>): string[] {
  return needs
    .filter((n) => !(typeof n === 'string' ? granted.has(n) : n.some((s) => granted.has(s))))
    .map((n) => (typeof n === 'string' ? n : n.join(' or ')));
}

/** Mounts the scope checks ahead of every network's routes. */
export function registerScopeGuards(app: Express, sim: SimState): void {
  for (const [platform, rules] of Object.entries(SCOPE_RULES) as [TPlatform, TRule[]][]) {
    app.use(`/${platform}`, (req: Request, res: Response, next: NextFunction) => {
      const rule = rules.find((r) => (r.method === '*' || r.method === req.method) && r.path.test(req.path));
      if (!rule) return next();
      const token = bearerOf(req);
      const store = oauthStoreOf.peek(sim);
      const found = token && store ? store.tokens.get(token) : undefined;
      // Tokens from outside, and tokens the endpoint refuses anyway (expired, revoked), go on.
      if (
        !found ||
        found.platform !== platform ||
        store?.statusOf(token ?? '', platform, 'access') !== 'valid'
      ) {
        return next();
      }
      const granted = new Set(found.scopes.split(/[ ,]+/).filter(Boolean));
      const missing = lacking(needsOf(rule, req), granted);
      if (missing.length === 0) return next();
      sim.record(platform, req);
      refuseMissingScopes(platform, req, res, rule, missing, granted);
    });
  }
}
