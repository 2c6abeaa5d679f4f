// Floor for bench:publish, worker side: per job one POST to the simulated network (got, as the
// connectors) and one status UPDATE, concurrency 50 like the publisher. No write-ahead, no per-network
// results, no outbox event: what the hardware allows, not what the service promises.
import { bullPrefix } from '@sps/queue';
import { Worker } from 'bullmq';
import got from 'got';
import { Redis } from 'ioredis';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const connection = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: null });
const twitter = got.extend({
  prefixUrl: process.env.NETWORK_TWITTER_BASE_URL,
  headers: { authorization: 'Bearer bench-token' },
  responseType: 'json',
  retry: { limit: 0 },
});
const worker = new Worker(
  'bare-publish',
  async (job) => {
    const { body } = await twitter.post('2/tweets', { json: { text: `bare ${job.data.postId}` } });
    await pool.query({
      name: 'bare_done',
      text: `UPDATE posts SET status = 'published', published_at = now(), updated_at = now() WHERE id = $1`,
      values: [job.data.postId],
    });
    return body.data.id;
  },
  { connection, prefix: bullPrefix(process.env.QUEUE_PREFIX), concurrency: 50 },
);
worker.on('error', () => undefined);
await worker.waitUntilReady();
process.send({ port: 0 });
process.on('SIGTERM', async () => {
  await worker.close();
  await connection.quit();
  await pool.end();
  process.exit(0);
});
