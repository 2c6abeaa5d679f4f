import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** A client typed by the API's OpenAPI document (both variants: `/api/...` and `/v1/...`). */
export type TSpsClient = Client<paths>;

export type TPostA = components['schemas']['PostA'];
export type TCreatePostA = components['schemas']['CreatePostA'];
export type TPostB = components['schemas']['PostB'];
export type TCreatePostB = components['schemas']['CreatePostB'];
export type TErrorA = components['schemas']['ErrorA'];
export type TErrorB = components['schemas']['ErrorB'];

/** The calls that take `Idempotency-Key` (the API's "Idempotent requests"), by the end of their path. */
const IDEMPOTENT_PATHS = [
  /\/v1\/posts$/,
  /\/v1\/posts\/[^/]+\/publish$/,
  /\/api\/posts$/,
  /\/api\/posts\/[^/]+\/publish$/,
  /\/v1\/webhooks$/,
  /\/v1\/media$/,
];

export interface TIdempotencyOptions {
  /** Tries of one call in all (the first included), each with the same key. Default 3. */
  attempts?: number;
  /** Wait before the second try, doubled for each further one. Default 500 ms. */
  backoffMs?: number;
}

/** Answers after which the same request with the same key is worth sending again. */
async function worthRetrying(response: Response): Promise<boolean> {
  if ([500, 502, 503, 504].includes(response.status)) return true;
  if (response.status !== 409) return false;
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { code?: string; details?: { code?: string } } | null;
  return (body?.code ?? body?.details?.code) === 'idempotency_key_in_use';
}

/**
 * A `fetch` that gives every create and publish an `Idempotency-Key` (a new UUID, unless the caller set
 * one) and retries it with the same key when the answer is lost (network error) or says to try again
 * (5xx, 409 `idempotency_key_in_use`): a retry then gets the first request's answer, never a second post.
 */
export function idempotentFetch(
  fetchImpl: (request: Request) => Promise<Response> = (r) => globalThis.fetch(r),
  options: TIdempotencyOptions = {},
): (input: Request | string | URL, init?: RequestInit) => Promise<Response> {
  const attempts = Math.max(1, options.attempts ?? 3);
  const backoffMs = options.backoffMs ?? 500;
  return async (input, init) => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    if (request.method !== 'POST' || !IDEMPOTENT_PATHS.some((p) => p.test(path))) return fetchImpl(request);
    if (!request.headers.has('Idempotency-Key')) request.headers.set('Idempotency-Key', crypto.randomUUID());
    for (let attempt = 1; ; attempt += 1) {
      try {
        const response = await fetchImpl(request.clone());
        if (attempt >= attempts || !(await worthRetrying(response))) return response;
        await response.body?.cancel();
      } catch (error) {
        if (attempt >= attempts) throw error;
      }
      await new Promise((r) => setTimeout(r, backoffMs * 2 ** (attempt - 1)));
    }
  };
}

/**
 * `baseUrl` is the service's origin (e.g. http://127.0.0.1:3000); the key goes in `Authorization: Bearer`.
 * Creates and publishes carry an `Idempotency-Key` and are retried with it (see idempotentFetch);
 * `idempotency: false` sends them once, without a key.
 */
export function createSpsClient(
  baseUrl: string,
  apiKey: string,
  options: Omit<ClientOptions, 'baseUrl' | 'headers'> & {
    headers?: Record<string, string>;
    idempotency?: TIdempotencyOptions | false;
  } = {},
): TSpsClient {
  const { idempotency, ...rest } = options;
  const fetchImpl = rest.fetch ?? ((request: Request) => globalThis.fetch(request));
  return createClient<paths>({
    ...rest,
    ...(idempotency === false ? {} : { fetch: idempotentFetch(fetchImpl, idempotency) }),
    baseUrl,
    headers: { ...rest.headers, Authorization: `Bearer ${apiKey}` },
  });
}
