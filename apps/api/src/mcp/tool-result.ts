import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError, type TErrorCode } from '@sps/core';
import { toAppError } from '../http/error-mapping.js';

/** A tool's success: the JSON result as text (and structured), like the REST body. */
export function ok(result: unknown): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(result) }],
    structuredContent: (typeof result === 'object' && result !== null && !Array.isArray(result)
      ? result
      : { result }) as Record<string, unknown>,
  };
}

/**
 * Services give a fix where they know the way out; for the rest an agent still gets a next step, since
 * Variant B's REST errors (whose body has no `fix`) share those services.
 */
const DEFAULT_FIX: Partial<Record<TErrorCode, string>> = {
  validation_error:
    'Correct the fields named in details.issues (the tool input schema lists the rules) and call again.',
  not_found:
    "Check the id: the list tools (list_posts, list_webhooks, ...) show this account's ids; other accounts' data is never visible.",
  conflict:
    'Read the current state with the matching get or list tool, then call again with a change that fits it.',
  rate_limited: 'Wait details.retry_after seconds before calling again.',
  internal_error: 'Try again in a moment; if it keeps failing, contact the operator.',
  service_unavailable: 'Try again in a moment.',
};

/**
 * User mistakes are tool errors (isError) carrying the message, the code and the fix, never protocol
 * failures, so an agent can read them and correct its call.
 */
export function toolError(error: unknown): CallToolResult {
  const e = error instanceof AppError ? error : toAppError(error);
  const fix = e.fix ?? DEFAULT_FIX[e.code];
  const body = {
    error: e.message,
    code: e.code,
    ...(fix ? { fix } : {}),
    details: {
      ...(e.issues.length > 0 ? { issues: e.issues } : {}),
      ...(e.issueCount > e.issues.length ? { issue_count: e.issueCount } : {}),
      ...e.details,
    },
  };
  return {
    isError: true,
    content: [{ type: 'text', text: `${e.message}${fix ? `\nFix: ${fix}` : ''}` }],
    structuredContent: body,
  };
}

/** Runs a tool body, turning thrown errors into tool errors. */
export async function run(body: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return ok(await body());
  } catch (error) {
    return toolError(error);
  }
}

/** Tool arguments arrive parsed (dates as Date); the REST parsers take JSON values. */
export function asJson(args: unknown): unknown {
  return JSON.parse(JSON.stringify(args ?? {}));
}
