// Floor for bench:publish: the least an HTTP publish endpoint must do (no auth, no validation, no
// presenter): one status UPDATE in PostgreSQL and one BullMQ add, with the same libraries (express, pg,
// bullmq) as the service. Measures what the hardware allows, not the service.
import { bullPrefix } from '@sps/queue';
import { Queue } from 'bullmq';
import express from 'express';
import { Redis } from 'ioredis';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1 });
const queue = new Queue('bare-publish', { connection: redis, prefix: bullPrefix(process.env.QUEUE_PREFIX) });
const app = express();
app.post('/publish/:id', async (req, res) => {
  const { rows } = await pool.query({
    name: 'bare_start',
    text: `UPDATE posts SET status = 'publishing', updated_at = now() WHERE id = $1 AND status = 'draft'
           RETURNING id, status::text AS status`,
    values: [req.params.id],
  });
  if (!rows[0]) return res.status(409).json({ error: 'not a draft' });
  await queue.add(
    'publish',
    { postId: req.params.id },
    { jobId: `bare-${req.params.id}`, removeOnComplete: true },
  );
  res.json(rows[0]);
});
const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('SIGTERM', () =>
  server.close(async () => {
    await queue.close();
    await redis.quit();
    await pool.end();
    process.exit(0);
  }),
);
