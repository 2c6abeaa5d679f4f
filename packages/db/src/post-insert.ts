import { idempotencyKeyInUse, presentPostB, type TPostRecord } from '@sps/core';
import { batchLoader } from './batch.js';
import { sqlOf, type TDb } from './client.js';
import type { TIdempotencyWrite } from './idempotency-repository.js';

/**
 * Creates of concurrent requests as one statement (see batchLoader): the posts, and for the scheduled
 * ones their `post.scheduled` event, written together (one statement is one transaction). Each row is
 * the caller's own (its account comes from its key); a row that fails alone fails only its caller.
 */
export function createPostInserts(db: TDb) {
  return batchLoader<
    { post: TPostRecord; countsTwitterAllowance: boolean; idempotency?: TIdempotencyWrite | undefined },
    true
  >(async (items) => {
    const posts = items.map((i) => i.post);
    const keyed = items.filter((i) => i.idempotency);
    const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
    const scheduled = posts.filter((p) => p.status === 'scheduled');
    const { rows } = await sqlOf(db).query<{ id: string }>({
      name: 'post_create_many',
      // A post made under an Idempotency-Key is written only together with its key's record (the post
      // and, for a create, the answer), and only while its request still holds the key (lock_token).
      text: `WITH keyed AS (
             UPDATE idempotency_keys k
             SET resource_id = d.post_id, response_status = d.status, response_body = d.body,
                 lock_token = CASE WHEN d.status IS NULL THEN k.lock_token END
             FROM unnest($17::uuid[], $18::uuid[], $19::text[], $20::uuid[], $21::int[], $22::text[])
                  AS d(post_id, account_id, key, token, status, body)
             WHERE k.account_id = d.account_id AND k.key = d.key AND k.lock_token = d.token
             RETURNING d.post_id
           ), created AS (
             INSERT INTO posts (id, account_id, status, content, platforms, scheduled_for, queue_state, queued_at,
                                media, segments, poll, first_comment, counts_twitter_allowance, created_at, updated_at)
             SELECT i.id, i.account_id, i.status::"PostStatus", i.content,
                    string_to_array(i.platforms, ',')::"Platform"[], i.scheduled_for,
                    i.queue_state::"QueueState", i.queued_at, i.media, i.segments, i.poll, i.first_comment, i.counts,
                    i.created_at, i.created_at
             FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
                         $7::text[], $8::timestamptz[], $9::jsonb[], $10::jsonb[], $11::jsonb[], $12::bool[],
                         $13::timestamptz[], $23::text[])
                  AS i(id, account_id, status, content, platforms, scheduled_for, queue_state, queued_at,
                       media, segments, poll, counts, created_at, first_comment)
             WHERE i.id <> ALL ($17::uuid[]) OR i.id IN (SELECT post_id FROM keyed)
             RETURNING id
           ), events AS (
             INSERT INTO events (id, account_id, type, data)
             SELECT gen_random_uuid(), e.account_id, 'post.scheduled', e.data
             FROM unnest($14::uuid[], $15::uuid[], $16::jsonb[]) AS e(post_id, account_id, data)
             WHERE e.post_id IN (SELECT id FROM created)
           )
           SELECT id FROM created`,
      values: [
        posts.map((p) => p.id),
        posts.map((p) => p.accountId),
        posts.map((p) => p.status),
        posts.map((p) => p.content),
        posts.map((p) => p.platforms.join(',')),
        posts.map((p) => p.scheduledFor),
        posts.map((p) => p.queueState),
        posts.map((p) => p.queuedAt),
        posts.map((p) => json(p.media)),
        posts.map((p) => json(p.segments)),
        posts.map((p) => json(p.poll)),
        items.map((i) => i.countsTwitterAllowance),
        posts.map((p) => p.createdAt),
        scheduled.map((p) => p.id),
        scheduled.map((p) => p.accountId),
        scheduled.map((p) => JSON.stringify({ post: presentPostB(p) })),
        keyed.map((i) => i.post.id),
        keyed.map((i) => i.idempotency?.accountId),
        keyed.map((i) => i.idempotency?.key),
        keyed.map((i) => i.idempotency?.token),
        keyed.map((i) => i.idempotency?.status ?? null),
        keyed.map((i) => i.idempotency?.body ?? null),
        posts.map((p) => p.firstComment),
      ],
    });
    const created = new Set(rows.map((r) => r.id));
    return items.map(({ post, idempotency }) =>
      created.has(post.id)
        ? true
        : idempotency
          ? idempotencyKeyInUse()
          : new Error(`Post ${post.id} was not created`),
    );
  });
}
