import type { operations } from './generated/openapi.js';
import type { OPERATIONS } from './generated/operations.js';
import type { TRetryOptions } from './retry.js';

// Types of each operation's input and output, read from the generated OpenAPI types by operationId.

/** Every operation of both variants, by the operationId of GET /openapi.json (e.g. `createPostB`). */
export type TOperationId = keyof typeof OPERATIONS;

type TOperation<Id extends TOperationId> = operations[Id];

type TParametersOf<Id extends TOperationId> = TOperation<Id>['parameters'];

/** The path parameters (`{id}` …), or never when the path has none. */
export type TPathOf<Id extends TOperationId> =
  TParametersOf<Id> extends { path: infer P } ? (P extends Record<string, string> ? P : never) : never;

/** The query parameters, or never when the operation takes none. */
export type TQueryOf<Id extends TOperationId> =
  TParametersOf<Id> extends { query?: infer Q }
    ? [NonNullable<Q>] extends [never]
      ? never
      : NonNullable<Q>
    : never;

type TJsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON request body, or never when the operation takes none. */
export type TBodyOf<Id extends TOperationId> =
  TOperation<Id> extends { requestBody?: infer R } ? TJsonBody<NonNullable<R>> : never;

/** True when the body may be left out (e.g. PUT /v1/webhooks/{id}). */
type TBodyOptional<Id extends TOperationId> = TOperation<Id> extends { requestBody: unknown } ? false : true;

type TSuccessStatus = 200 | 201 | 202;

/** The parsed JSON of the success answer; `undefined` for a 204. */
export type TResultOf<Id extends TOperationId> =
  TOperation<Id> extends { responses: infer R }
    ?
        | { [S in keyof R & TSuccessStatus]: TJsonBody<R[S]> }[keyof R & TSuccessStatus]
        | (204 extends keyof R ? undefined : never)
    : never;

/** Options of one call (each also settable on the client for every call). */
export interface TCallOptions {
  /**
   * The `Idempotency-Key` of a create or publish: by default a random UUID per call, the same on each of its
   * retries. A string of your own (1 to 255 printable characters) lets a retry after a crash be recognised
   * too; `false` sends none (and then the call is not retried).
   */
  idempotencyKey?: string | false;
  /** Aborts the call, retries and waits included. */
  signal?: AbortSignal;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
  /** Retry settings for this call; `false` sends it once. */
  retry?: Partial<TRetryOptions> | false;
}

type TPathInput<Id extends TOperationId> = [TPathOf<Id>] extends [never]
  ? { path?: never }
  : { path: TPathOf<Id> };
type TQueryInput<Id extends TOperationId> = [TQueryOf<Id>] extends [never]
  ? { query?: never }
  : { query?: TQueryOf<Id> };
type TBodyInput<Id extends TOperationId> = [TBodyOf<Id>] extends [never]
  ? { body?: never }
  : TBodyOptional<Id> extends true
    ? { body?: TBodyOf<Id> }
    : { body: TBodyOf<Id> };

/** What `client.call(operationId, input)` takes: path and query parameters, the body and call options. */
export type TCallInput<Id extends TOperationId> = TPathInput<Id> &
  TQueryInput<Id> &
  TBodyInput<Id> &
  TCallOptions;

/** Operations whose input has nothing required, so `input` may be left out. */
export type TInputOptional<Id extends TOperationId> =
  Record<string, never> extends TCallInput<Id> ? true : false;
