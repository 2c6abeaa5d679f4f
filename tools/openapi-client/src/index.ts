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

/** `baseUrl` is the service's origin (e.g. http://127.0.0.1:3000); the key goes in `Authorization: Bearer`. */
export function createSpsClient(
  baseUrl: string,
  apiKey: string,
  options: Omit<ClientOptions, 'baseUrl' | 'headers'> & { headers?: Record<string, string> } = {},
): TSpsClient {
  return createClient<paths>({
    ...options,
    baseUrl,
    headers: { ...options.headers, Authorization: `Bearer ${apiKey}` },
  });
}
