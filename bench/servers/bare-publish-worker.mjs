// Floor for bench:publish, worker side: per job one POST to the simulated network (plain `node:http`
// with a keep-alive agent: the leanest client) and one status UPDATE, concurrency 50 like the publisher.
// No write-ahead, no per-network results, no outbox event: what the hardware allows, not what the
// service promises.
import http from 'node:http';
import { bullPrefix } from '@sps/queue';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const connection = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: null });
const agent = new http.Agent({ keepAlive: true });
const tweets = new URL(`${process.env.NETWORK_TWITTER_BASE_URL.replace(/\/+$/, '')}/2/tweets`);

function postTweet(text, retried = false) {
  const payload = JSON.stringify({ text });
  return new Promise((resolve, reject) => {
    const req = http.request(
      tweets,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: 'Bearer bench-token',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString());
          if (res.statusCode >= 300) reject(new Error(`twitter ${res.statusCode}`));
          else resolve(body);
        });
        res.on('error', reject);
      },
    );
    // A kept-alive socket the server closed as the request went out: nothing reached it, so send once
    // more on a fresh socket (the pattern Node's http docs give for `reusedSocket`).
    req.on('error', (error) => {
      if (!retried && req.reusedSocket && error.code === 'ECONNRESET') resolve(postTweet(text, true));
      else reject(error);
    });
    req.end(payload);
  });
}

const worker = new Worker(
  'bare-publish',
  async (job) => {
    const body = await postTweet(`bare ${job.data.postId}`);
    await pool.query({
      name: 'bare_done',
      text: `UPDATE posts SET status = 'published', published_at = now(), updated_at = now() WHERE id = $1`,
      values: [job.data.postId],
    });
    return body.data.id;
  },
  // 50 like the publisher's default; BENCH_FLOOR_CONCURRENCY to compare at another PUBLISH_CONCURRENCY.
  {
    connection,
    prefix: bullPrefix(process.env.QUEUE_PREFIX),
    concurrency: Number(process.env.BENCH_FLOOR_CONCURRENCY ?? 50),
  },
);
worker.on('error', () => undefined);
await worker.waitUntilReady();
process.send({ port: 0 });
process.on('SIGTERM', async () => {
  await worker.close();
  await connection.quit();
  await pool.end();
  agent.destroy();
  process.exit(0);
});
