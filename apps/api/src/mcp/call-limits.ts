import { AppError } from '@sps/core';
import type { Request, RequestHandler, Response } from 'express';
import { toolError } from './tool-result.js';

/**
 * Tools that send a post to the networks. They count against the key's hourly publish limit, the
 * counter of `POST /v1/posts/{id}/publish` (retry publishes again, so it counts too, as in Variant A).
 */
export const PUBLISHING_TOOLS: ReadonlySet<string> = new Set(['publish_post', 'retry_post']);

// Variant B's per-key limiter chooses its window from the request's method and path, so every message is
// shown to it as the REST request it stands for: the publish window for a publishing tool call, the
// per-minute window (any other path) for everything else.
const AS_PUBLISH = { method: 'POST', path: '/posts/mcp/publish' };
const AS_REQUEST = { method: 'POST', path: '/' };

interface TMessage {
  id?: unknown;
  method?: unknown;
  params?: { name?: unknown };
}

function asMessage(value: unknown): TMessage {
  return typeof value === 'object' && value !== null ? (value as TMessage) : {};
}

function isPublishingCall(message: TMessage): boolean {
  return message.method === 'tools/call' && PUBLISHING_TOOLS.has(String(message.params?.name));
}

/** Runs one limiter middleware against a stand-in request; resolves when it passes, rejects with its 429. */
function consume(limit: RequestHandler, req: Request, as: typeof AS_REQUEST, res: Response): Promise<void> {
  // A prototype-linked copy: `path` is a getter on Express's request, so it is shadowed, not assigned.
  const standIn = Object.create(req, {
    method: { value: as.method },
    path: { value: as.path },
  }) as Request;
  return new Promise<void>((resolve, reject) => {
    const next = (error?: unknown) => (error ? reject(error) : resolve());
    Promise.resolve(limit(standIn, res, next)).catch(reject);
  });
}

/** The Variant B 429 has no `fix` (its body shape is fixed); an agent gets one. */
function withFix(error: AppError, publishing: boolean): AppError {
  const wait = error.retryAfter ?? 1;
  const fix = publishing
    ? `Wait ${wait} second${wait === 1 ? '' : 's'} (details.retry_after) before publishing again; the hourly publish limit is shared with POST /v1/posts/{id}/publish and grows with the plan (free 10, starter 60, pro 300 per hour by default). The post was not changed.`
    : `Wait ${wait} second${wait === 1 ? '' : 's'} (details.retry_after) before calling again, and spread calls out; the per-minute limit grows with the plan.`;
  return new AppError(error.code, error.message, {
    fix,
    issues: error.issues,
    details: error.details,
    ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
  });
}

/**
 * Counts every JSON-RPC message of the request (a batch counts each of its messages, so batching cannot
 * dodge a limit) before MCP handles any of them: like a REST request, a refused call has no side effect
 * and a publish counts even when it then fails. It needs the parsed body, so it runs after `jsonBody`.
 *
 * A single tool call over its limit is answered as a tool error (isError, message and fix) so an agent
 * reads it like any other mistake; anything else over the limit (initialize, tools/list, a batch) is the
 * HTTP 429 of Variant B, a transport refusal like the 401.
 */
export function limitPerMessage(limits: readonly RequestHandler[]): RequestHandler {
  return async (req, res, next) => {
    const body: unknown = req.body;
    const messages = (Array.isArray(body) ? body : [body]).map(asMessage);
    // An empty batch still costs a request.
    if (messages.length === 0) messages.push({});
    let current: TMessage = {};
    try {
      for (const message of messages) {
        current = message;
        const as = isPublishingCall(message) ? AS_PUBLISH : AS_REQUEST;
        for (const limit of limits) await consume(limit, req, as, res);
      }
    } catch (error) {
      const single = !Array.isArray(body) && current.method === 'tools/call' && current.id !== undefined;
      if (!(error instanceof AppError) || error.code !== 'rate_limited' || !single) throw error;
      if (error.retryAfter !== undefined) res.setHeader('Retry-After', String(error.retryAfter));
      res.status(200).json({
        jsonrpc: '2.0',
        id: current.id,
        result: toolError(withFix(error, isPublishingCall(current))),
      });
      return;
    }
    next();
  };
}

/**
 * Wraps the body parser: a body that cannot be parsed (malformed JSON, too large) still costs the key one
 * request of its per-minute limit, so a key cannot send them without limit; then the parser's 400/413.
 */
export function countUnreadableBodies(
  parser: RequestHandler,
  limits: readonly RequestHandler[],
): RequestHandler {
  return (req, res, next) => {
    parser(req, res, (parseError?: unknown) => {
      if (!parseError) return next();
      void (async () => {
        for (const limit of limits) await consume(limit, req, AS_REQUEST, res);
      })().then(
        () => next(parseError),
        (limitError: unknown) => next(limitError),
      );
    });
  };
}
