// A small integrator's program using the packed @social-posts/client, as CI runs it (scripts/client-example.mjs):
// compiled with strict tsc against the tarball's types, then run against a real API with the network simulator.
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, SpsApiErrorA, SpsApiErrorB, type TPostB } from '@social-posts/client';

const baseUrl = process.env['SPS_BASE_URL'] ?? 'http://127.0.0.1:3000';
const apiKey = process.env['SPS_API_KEY'];
if (!apiKey) throw new Error('set SPS_API_KEY');

const client = createClient({
  baseUrl,
  apiKey,
  onRetry: (e) => console.error(`retrying ${e.method} ${e.url} (HTTP ${e.status ?? '-'}) in ${e.delayMs} ms`),
});

async function waitWhilePublishing(id: string): Promise<TPostB> {
  for (let i = 0; i < 150; i += 1) {
    const post = await client.v1.posts.get(id);
    if (post.status !== 'publishing') return post;
    await sleep(100);
  }
  throw new Error(`post ${id} still publishing after 15 s`);
}

// Variant B: create a thread, publish it (an Idempotency-Key goes with both calls), read the result.
const draft = await client.v1.posts.create({
  content: 'Hello from the packed client',
  platforms: ['twitter', 'mastodon'],
  segments: [{ content: 'and a reply' }],
});
if (draft.status !== 'draft') throw new Error(`expected a draft, got ${draft.status}`);
const publishing = await client.v1.posts.publish(draft.id, { idempotencyKey: `example-publish-${draft.id}` });
const published = await waitWhilePublishing(publishing.id);
if (published.status !== 'published') throw new Error(`publish ended ${JSON.stringify(published)}`);
const networks = Object.entries(published.platform_results ?? {}).map(([network, r]) =>
  r.success ? `${network}: ${r.post_url}` : `${network}: ${r.error}`,
);

// Every post, through the pagination iterator (two a page, to make it turn pages).
const created = await client.v1.posts.create({ content: 'A second draft', platforms: ['mastodon'] });
const listed: string[] = [];
for await (const post of client.v1.posts.iterate({ pageSize: 1 })) listed.push(post.id);
if (!listed.includes(draft.id) || !listed.includes(created.id)) throw new Error('iterate missed a post');

// A refusal arrives as a typed error carrying Variant B's body.
try {
  await client.v1.posts.publish(draft.id);
  throw new Error('publishing twice should be refused');
} catch (error) {
  if (!(error instanceof SpsApiErrorB) || error.status !== 409) throw error;
  console.log(`refused as expected: ${error.code} (${error.body.error})`);
}

// Variant A: create a draft, publish it now, and see a validation error name its field.
const { post } = await client.api.posts.create({ content: 'Hello from Variant A', platforms: ['twitter'] });
const outcome = await client.api.posts.publish(post.id);
if (!outcome.success) throw new Error(`Variant A publish failed: ${JSON.stringify(outcome.publishResults)}`);
try {
  await client.api.posts.create({ content: '', platforms: ['twitter'] });
  throw new Error('empty content should be refused');
} catch (error) {
  if (!(error instanceof SpsApiErrorA) || error.field !== 'content') throw error;
}

console.log(
  JSON.stringify({ ok: true, published: published.id, networks, listed: listed.length, variantA: post.id }),
);
