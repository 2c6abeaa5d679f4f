import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, requestFingerprint } from '@sps/core';
import { z } from 'zod';
import { STATUS_B, toAppError } from '../http/error-mapping.js';
import type { TIdempotencyHandle, TIdempotent } from '../http/idempotency.js';
import { ok, toolError } from './tool-result.js';

/**
 * How long a key derived from the arguments holds: long enough for an agent's retries of a call whose
 * answer it lost, short enough that the same post made on purpose later is made again.
 */
export const DERIVED_KEY_TTL_MS = 10 * 60_000;

export const ZIdempotencyKeyArg = z
  .string()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY_LENGTH)
  .regex(/^[\x20-\x7e]+$/, 'printable ASCII characters only')
  .optional()
  .describe(
    'Makes a retry of this call safe: the same key with the same arguments within 24 hours answers the first result again instead of doing it twice. Without it, the key is derived from the tool and its arguments and holds for 10 minutes.',
  );

/**
 * Runs a create or publish tool under an idempotency key (the `idempotency_key` argument, or one derived
 * from the tool and its arguments), as `Idempotency-Key` runs the REST routes: a repeated call gets the
 * first result back (`_meta.idempotent_replayed`), other arguments with the same key are refused, a call
 * while the first runs is refused as in use. `work` gets the handle to write with the resource it makes.
 */
export async function idempotentTool(
  idempotent: TIdempotent,
  accountId: string,
  tool: string,
  args: Record<string, unknown>,
  work: (handle: TIdempotencyHandle) => Promise<unknown>,
): Promise<CallToolResult> {
  const { idempotency_key: given, ...rest } = args;
  const fingerprint = requestFingerprint(`mcp.${tool}`, {}, rest);
  let begun: Awaited<ReturnType<TIdempotent['begin']>>;
  try {
    begun = await idempotent.begin({
      accountId,
      fingerprint,
      ...(typeof given === 'string'
        ? { key: given }
        : { key: `mcp:${tool}:${fingerprint}`, ttlMs: DERIVED_KEY_TTL_MS }),
    });
  } catch (error) {
    return toolError(error);
  }
  if (begun.kind === 'replay') {
    const first = JSON.parse(begun.body) as CallToolResult;
    return { ...first, _meta: { ...first._meta, idempotent_replayed: true } };
  }
  let result: CallToolResult;
  let status: number;
  try {
    result = ok(await work(begun.handle));
    status = 200;
  } catch (error) {
    result = toolError(error);
    status = STATUS_B[toAppError(error).code];
  }
  // The result goes out even when it could not be stored (the key then frees itself after its lease).
  await begun.settle(status, result).catch(() => undefined);
  return result;
}
