// The Media page's usage counts at scale (`node bench/media-usage.bench.mjs`, after `npm run build`): one account
// with BENCH_MEDIA_POSTS (10,000) posts, each naming two of BENCH_MEDIA_ITEMS (200) library items in its media
// (and every tenth also in a thread reply), then `usageCounts` for one page of 50 items (what
// `GET /dashboard/api/media` runs), timed over 20 runs. Prints the median and p95, and checks the counts.
import { createDb, createMediaRepository } from '@sps/db';
import pg from 'pg';
import { benchAccount, freshDatabase, percentile } from './lib.mjs';

const POSTS = Number(process.env.BENCH_MEDIA_POSTS ?? 10_000);
const ITEMS = Number(process.env.BENCH_MEDIA_ITEMS ?? 200);
const PAGE = 50;
const RUNS = 20;

const url = await freshDatabase('sps_bench_media_usage');
const db = createDb(url, { poolMax: 2 });
const sql = new pg.Client({ connectionString: url });
await sql.connect();
const { account } = await benchAccount(db);

const { rows: items } = await sql.query(
  `INSERT INTO media (id, account_id, storage_key, type, mime_type, size_bytes, etag)
   SELECT gen_random_uuid(), $1, 'media/x/' || n, 'image', 'image/jpeg', 1000, 'e' FROM generate_series(1, $2) n
   RETURNING id::text`,
  [account.id, ITEMS],
);
const ids = items.map((r) => r.id);
const base = 'https://sps.example.com/media/';
// Post n names items n % ITEMS and (n + 1) % ITEMS; every tenth post also in a reply's media_urls.
await sql.query(
  `INSERT INTO posts (id, account_id, content, platforms, status, media, segments, updated_at)
   SELECT gen_random_uuid(), $1, 'post ' || n, ARRAY['twitter']::"Platform"[],
          (CASE WHEN n % 2 = 0 THEN 'draft' ELSE 'published' END)::"PostStatus",
          jsonb_build_object('images', jsonb_build_array(
            jsonb_build_object('url', $2 || ($3::text[])[1 + n % $4] || '.jpg'),
            jsonb_build_object('url', $2 || ($3::text[])[1 + (n + 1) % $4] || '.jpg'))),
          CASE WHEN n % 10 = 0 THEN jsonb_build_array(jsonb_build_object('content', 'r',
            'media_urls', jsonb_build_array($2 || ($3::text[])[1 + (n + 2) % $4] || '.jpg'))) END,
          now()
   FROM generate_series(0, $5 - 1) n`,
  [account.id, base, ids, ITEMS, POSTS],
);
await sql.query('ANALYZE posts');

const repo = createMediaRepository(db);
const page = ids.slice(0, PAGE);
const times = [];
let counts;
for (let i = 0; i < RUNS; i += 1) {
  const started = process.hrtime.bigint();
  counts = await repo.usageCounts(account.id, page);
  times.push(Number(process.hrtime.bigint() - started) / 1e6);
}
times.sort((a, b) => a - b);
const expected = Math.round((POSTS / ITEMS) * 2);
const first = counts.get(page[0]);
console.log(`media usage counts: ${POSTS} posts, ${ITEMS} items, one page of ${PAGE} items, ${RUNS} runs`);
console.log(`  median ${percentile(times, 0.5).toFixed(1)} ms, p95 ${percentile(times, 0.95).toFixed(1)} ms`);
console.log(
  `  item 1: used by ${first.posts} posts (${first.pending} pending); about ${expected} expected plus replies`,
);
await sql.end();
await db.$disconnect();
