import type { TCreatePostA, TCreatePostB, TErrorB, TPostA, TPostB, TSpsClient } from './index.js';

// Typed usage of the generated client, compiled by `npx tsc -b`: a change to the API's document that breaks
// these calls fails the build. apps/api/test/typed-client.test.ts runs them against the real API.

export interface TPostLifecycleB {
  created: TPostB;
  read: TPostB;
  listed: { posts: TPostB[]; total: number };
  deleteStatus: number;
  /** The error body of a GET after the delete. */
  afterDelete: TErrorB | undefined;
}

function dataOf<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.data === undefined) {
    throw new Error(`${what}: HTTP ${result.response.status} ${JSON.stringify(result.error)}`);
  }
  return result.data;
}

/** Variant B: create, read, list and delete a post. */
export async function postLifecycleB(client: TSpsClient, body: TCreatePostB): Promise<TPostLifecycleB> {
  const created = dataOf(await client.POST('/v1/posts', { body }), 'POST /v1/posts');
  const path = { id: created.id };
  const read = dataOf(await client.GET('/v1/posts/{id}', { params: { path } }), 'GET /v1/posts/{id}');
  const listed = dataOf(
    await client.GET('/v1/posts', { params: { query: { limit: 100, offset: 0 } } }),
    'GET /v1/posts',
  );
  const deleted = await client.DELETE('/v1/posts/{id}', { params: { path } });
  const after = await client.GET('/v1/posts/{id}', { params: { path } });
  return { created, read, listed, deleteStatus: deleted.response.status, afterDelete: after.error };
}

/** Variant A: create a post and read it back. */
export async function createAndReadPostA(
  client: TSpsClient,
  body: TCreatePostA,
): Promise<{ created: TPostA; read: TPostA }> {
  const created = dataOf(await client.POST('/api/posts', { body }), 'POST /api/posts');
  const read = dataOf(
    await client.GET('/api/posts/{id}', { params: { path: { id: created.post.id } } }),
    'GET /api/posts/{id}',
  );
  return { created: created.post, read: read.post };
}
