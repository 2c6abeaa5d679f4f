import type { TPlatform } from '@sps/core';
import type { Request, Response } from 'express';
import { graphError } from '../graph-sim.js';
import type { TRule } from './scope-rules.sim.js';

/** Each network's refusal of a token without the scope a call needs. */
export function refuseMissingScopes(
  platform: TPlatform,
  req: Request,
  res: Response,
  rule: TRule,
  missing: string[],
  granted: Set<string>,
): void {
  switch (platform) {
    case 'twitter':
      res.status(403).json({
        title: 'Client Forbidden',
        detail: `This request requires the OAuth 2.0 scope(s) ${missing.join(', ')}, which the token was not granted.`,
        type: 'https://api.twitter.com/2/problems/client-forbidden',
        status: 403,
      });
      return;
    case 'youtube':
      // https://developers.google.com/youtube/v3/docs/errors (403 insufficientPermissions)
      res.status(403).json({
        error: {
          code: 403,
          message: 'Request had insufficient authentication scopes.',
          errors: [
            { message: 'Insufficient Permission', domain: 'global', reason: 'insufficientPermissions' },
          ],
          status: 'PERMISSION_DENIED',
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
              domain: 'googleapis.com',
              metadata: { service: 'youtube.googleapis.com' },
            },
          ],
        },
      });
      return;
    case 'linkedin': {
      const version = String(req.headers['linkedin-version'] ?? '');
      res.status(403).json({
        status: 403,
        serviceErrorCode: 100,
        code: 'ACCESS_DENIED',
        message: `Not enough permissions to access: ${rule.resource ?? 'resource'}.${version ? `${version}01` : '20240101'}`,
      });
      return;
    }
    case 'tiktok':
      // https://developers.tiktok.com/doc/tiktok-api-v2-error-handling
      res.status(401).json({
        error: {
          code: 'scope_not_authorized',
          message: 'The user did not authorize the scope required for completing this request.',
          log_id: 'SIMLOG0401',
        },
      });
      return;
    case 'facebook':
      if (req.method === 'GET') {
        // A read without the permission: code 10, naming it (as Graph answers a Page post's fields).
        graphError(
          res,
          403,
          10,
          `(#10) This endpoint requires the '${missing.join("', '")}' permission or the 'Page Public Content Access' feature.`,
        );
        return;
      }
      // Graph permission errors are codes 200-299 (https://developers.facebook.com/docs/graph-api/guides/error-handling).
      graphError(
        res,
        403,
        200,
        `(#200) This action requires the ${missing.join(' and ')} permission${missing.length > 1 ? 's' : ''}`,
      );
      return;
    case 'threads':
    case 'instagram':
      graphError(res, 400, 10, '(#10) Application does not have permission for this action');
      return;
    case 'mastodon':
      res.status(403).json({ error: 'This action is outside the authorized scopes' });
      return;
    case 'slack':
      // Slack answers 200 with ok: false (https://docs.slack.dev/apis/web-api/#responses).
      res.json({
        ok: false,
        error: 'missing_scope',
        needed: missing.join(','),
        provided: [...granted].join(','),
      });
      return;
    default:
      res.status(403).json({ error: 'insufficient_scope' });
  }
}
