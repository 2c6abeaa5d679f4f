import { presentPostB, type TPostRecord } from '@sps/core';
import { POST_COLUMNS, targetsFrom } from './post-sql.js';

// The end of a publish attempt in SQL, for publish-batches: a network's success with the attempt's end in
// one statement, the finalize of posts whose networks all finished, and their outbox rows.

/**
 * The `post.published` / `post.failed` outbox rows of posts just finalized (in their transaction). One
 * JSON document for all rows: the statement rides inlined with the COMMIT (see inShortTransaction), and
 * one JSON.stringify and one literal cost less than three arrays written out element by element.
 */
export function outcomeEvents(posts: TPostRecord[]) {
  if (posts.length === 0) return null;
  const rows = posts.map((p) => ({
    account_id: p.accountId,
    type: p.status === 'published' ? 'post.published' : 'post.failed',
    data: { post: presentPostB(p) },
  }));
  return {
    name: 'finalize_events_many',
    text: `INSERT INTO events (id, account_id, type, data)
           SELECT gen_random_uuid(), e.account_id, e.type, e.data
           FROM jsonb_to_recordset($1::jsonb) AS e(account_id uuid, type text, data jsonb)`,
    values: [JSON.stringify(rows)],
  };
}

/**
 * The end of attempts, for the posts of `u(post_id, attempt)` with an attempt: each post locked in id order,
 * only if still `publishing` at a caller's attempt and not deleted; its outcome worked out from `targets`
 * (its targets as the statement leaves them) as `resolvePostOutcome` does (any pending or publishing
 * target keeps it publishing, any success publishes it, else it failed); `fin` holds the posts ended, with
 * those targets. `between` adds CTEs that may read `locked`.
 *
 * The posts are found by their ids alone (the status compared as text, which no index serves): with a
 * plain `status = 'publishing'` the planner also read the status index, whose entries for every post that
 * was publishing since the last vacuum stay there (a status change is never a HOT update), so each call of
 * a 1,000-post burst read thousands of them.
 */
const ENDING_CTES = (targets: string, now: string, between = '') => `locked AS (
    SELECT p.id FROM posts p
    WHERE p.id = ANY (ARRAY(SELECT u.post_id FROM u WHERE u.attempt IS NOT NULL))
      AND p.deleted_at IS NULL AND p.status::text = 'publishing'
      AND EXISTS (SELECT 1 FROM u WHERE u.post_id = p.id AND u.attempt = p.publish_attempt)
    ORDER BY p.id
    FOR UPDATE OF p
  ),
  ${between}
  outcome AS (
    SELECT l.id,
      CASE WHEN bool_or(t.status IN ('pending', 'publishing')) THEN NULL
           WHEN bool_or(t.status = 'succeeded') THEN 'published'
           ELSE 'failed' END AS status,
      min(t.published_at) AS first
    FROM locked l LEFT JOIN ${targets} t ON t.post_id = l.id
    GROUP BY l.id
  ),
  fin AS (
    UPDATE posts p SET status = o.status::"PostStatus",
      published_at = CASE WHEN o.status = 'published' THEN COALESCE(p.published_at, o.first, ${now})
                          ELSE p.published_at END,
      updated_at = ${now}
    FROM outcome o
    WHERE p.id = o.id AND o.status IS NOT NULL
    RETURNING ${POST_COLUMNS}, ${targetsFrom(targets)} AS targets
  )`;

/** Hands each ended post to the first caller that asked for it at its attempt; the others get null. */
export function handOut<K>(
  keys: readonly K[],
  posts: TPostRecord[],
  ask: (k: K) => { postId: string; attempt: number | null },
) {
  const left = new Map(posts.map((p) => [p.id, p]));
  return keys.map((k) => {
    const { postId, attempt } = ask(k);
    const post = left.get(postId);
    if (!post || post.publishAttempt !== attempt) return null;
    left.delete(postId);
    return post;
  });
}

export const FINALIZE_SQL = `WITH u AS (SELECT * FROM unnest($1::uuid[], $2::int[]) AS u(post_id, attempt)),
  ${ENDING_CTES('post_targets', '$3')}
  SELECT * FROM fin`;

/**
 * A network's success in one statement: the last segment's sent mark, the network's result (only if that
 * mark hit its row), and for callers that ask, the attempt's end (ENDING_CTES) seeing that result. The
 * ended posts come back as rows; `seg_keys` / `tgt_keys` (`post_id/platform`, space-separated, on the first
 * row only: on every row they made parsing the answer grow with the square of the batch) say which marks
 * and results were written.
 */
export const NETWORK_DONE_SQL = `WITH u AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[], $6::jsonb[], $7::text[],
                         $8::text[], $9::text[], $10::int[])
      AS u(post_id, platform, segment_index, remote_id, remote_url, meta, target_remote_id, target_remote_url,
           error_kind, attempt)
  ),
  seg AS (
    UPDATE segment_deliveries s SET status = 'sent', remote_id = u.remote_id, remote_url = u.remote_url,
      remote_meta = u.meta, sent_at = $11, updated_at = $11
    FROM u
    WHERE u.segment_index IS NOT NULL AND s.post_id = u.post_id AND s.platform = u.platform::"Platform"
      AND s.segment_index = u.segment_index
    RETURNING s.post_id, s.platform
  ),
  tgt AS (
    UPDATE post_targets t SET status = 'succeeded', remote_post_id = u.target_remote_id,
      remote_url = u.target_remote_url, error = u.meta->>'note', error_kind = u.error_kind, published_at = $11,
      attempts = t.attempts + 1, updated_at = $11
    FROM u
    WHERE t.post_id = u.post_id AND t.platform = u.platform::"Platform"
      AND (u.segment_index IS NULL
           OR EXISTS (SELECT 1 FROM seg WHERE seg.post_id = u.post_id AND seg.platform = t.platform))
    RETURNING t.*
  ),
  ${ENDING_CTES(
    'after',
    '$11',
    `after AS (
    SELECT t.* FROM tgt t WHERE t.post_id IN (SELECT id FROM locked)
    UNION ALL
    SELECT t.* FROM post_targets t
    WHERE t.post_id IN (SELECT id FROM locked) AND NOT EXISTS (SELECT 1 FROM tgt x WHERE x.id = t.id)
  ),`,
  )}
  SELECT f.*, CASE WHEN row_number() OVER () = 1 THEN k.seg_keys END AS seg_keys,
         CASE WHEN row_number() OVER () = 1 THEN k.tgt_keys END AS tgt_keys
  FROM (SELECT (SELECT string_agg(post_id::text || '/' || platform::text, ' ') FROM seg) AS seg_keys,
               (SELECT string_agg(post_id::text || '/' || platform::text, ' ') FROM tgt) AS tgt_keys) k
  LEFT JOIN fin f ON true`;
