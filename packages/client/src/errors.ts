import type { components } from './generated/openapi.js';

export type TVariant = 'A' | 'B';
/** Variant A's error body: `{error, fix?, details?}`. */
export type TErrorBodyA = components['schemas']['ErrorA'];
/** Variant B's error body: `{error, code, details}` (a 429 carries `limit`, `remaining`, `reset_at`, `retry_after`). */
export type TErrorBodyB = components['schemas']['ErrorB'] | components['schemas']['RateLimitedErrorB'];

interface TApiErrorInit {
  operationId: string;
  method: string;
  url: string;
  status: number;
  headers: Record<string, string>;
  attempts: number;
}

/** The API answered with a status outside 2xx; `body` is the variant's error body. */
export abstract class SpsApiError extends Error {
  abstract readonly variant: TVariant;
  abstract readonly body: TErrorBodyA | TErrorBodyB;
  readonly operationId: string;
  readonly method: string;
  readonly url: string;
  readonly status: number;
  /** Response headers, lower-case names. */
  readonly headers: Record<string, string>;
  /** How many requests were sent, retries included. */
  readonly attempts: number;

  protected constructor(message: string, init: TApiErrorInit) {
    super(message);
    this.operationId = init.operationId;
    this.method = init.method;
    this.url = init.url;
    this.status = init.status;
    this.headers = init.headers;
    this.attempts = init.attempts;
  }

  /** The field the API named (`details.field`), when it named one. */
  get field(): string | undefined {
    const details: Record<string, unknown> | undefined = this.body.details;
    const field = details?.['field'];
    return typeof field === 'string' ? field : undefined;
  }
}

/** An error answer of Variant A (`/api`): `body` is `{error, fix?, details?}`. */
export class SpsApiErrorA extends SpsApiError {
  readonly variant = 'A' as const;
  readonly body: TErrorBodyA;

  constructor(body: TErrorBodyA, init: TApiErrorInit) {
    super(`${init.method} ${init.url}: ${init.status} ${body.error}`, init);
    this.name = 'SpsApiErrorA';
    this.body = body;
  }

  /** What the API says to do about it, when it says. */
  get fix(): string | undefined {
    return this.body.fix;
  }
}

/** An error answer of Variant B (`/v1`): `body` is `{error, code, details}`. */
export class SpsApiErrorB extends SpsApiError {
  readonly variant = 'B' as const;
  readonly body: TErrorBodyB;

  constructor(body: TErrorBodyB, init: TApiErrorInit) {
    super(`${init.method} ${init.url}: ${init.status} ${body.code}: ${body.error}`, init);
    this.name = 'SpsApiErrorB';
    this.body = body;
  }

  /** The machine-readable code, e.g. `validation_error`, `post_not_publishable`, `rate_limited`. */
  get code(): TErrorBodyB['code'] {
    return this.body.code;
  }
}

/** No answer: the connection failed or timed out on every attempt. `cause` is the last failure. */
export class SpsTransportError extends Error {
  readonly operationId: string;
  readonly method: string;
  readonly url: string;
  readonly attempts: number;

  constructor(message: string, init: Omit<TApiErrorInit, 'status' | 'headers'>, cause: unknown) {
    super(`${init.method} ${init.url}: ${message}`, { cause });
    this.name = 'SpsTransportError';
    this.operationId = init.operationId;
    this.method = init.method;
    this.url = init.url;
    this.attempts = init.attempts;
  }
}

/** The code given to a Variant B error answer whose body is not `{error, code, details}`. */
const FALLBACK_CODES: Record<number, components['schemas']['ErrorB']['code']> = {
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  413: 'payload_too_large',
  429: 'rate_limited',
  503: 'service_unavailable',
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The typed error for an error answer. A body that is not the variant's shape (a proxy's HTML page, an empty
 * 502) is wrapped in it, so callers can always read `body.error`.
 */
export function apiError(variant: TVariant, text: string, init: TApiErrorInit): SpsApiError {
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const fallback = text.slice(0, 200) || `HTTP ${init.status}`;
  if (variant === 'A') {
    const body: TErrorBodyA =
      isRecord(parsed) && typeof parsed['error'] === 'string' ? (parsed as TErrorBodyA) : { error: fallback };
    return new SpsApiErrorA(body, init);
  }
  const body: TErrorBodyB =
    isRecord(parsed) && typeof parsed['error'] === 'string' && typeof parsed['code'] === 'string'
      ? (parsed as TErrorBodyB)
      : { error: fallback, code: FALLBACK_CODES[init.status] ?? 'internal_error', details: {} };
  return new SpsApiErrorB(body, init);
}
