import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '@sps/core';
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
 * User mistakes are tool errors (isError) carrying the message, the code and the fix, never protocol
 * failures, so an agent can read them and correct its call.
 */
export function toolError(error: unknown): CallToolResult {
  const e = error instanceof AppError ? error : toAppError(error);
  const body = {
    error: e.message,
    code: e.code,
    ...(e.fix ? { fix: e.fix } : {}),
    details: { ...(e.issues.length > 0 ? { issues: e.issues } : {}), ...e.details },
  };
  return {
    isError: true,
    content: [{ type: 'text', text: `${e.message}${e.fix ? `\nFix: ${e.fix}` : ''}` }],
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
