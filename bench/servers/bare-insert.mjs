// Baseline: a bare Express handler doing one Prisma insert of the same row as POST /v1/posts.
import { createDb } from '@sps/db';
import express from 'express';

const db = createDb(process.env.DATABASE_URL, { poolMax: Number(process.env.DB_POOL_MAX ?? 10) });
const accountId = process.env.BENCH_ACCOUNT_ID;
const app = express();
app.use(express.json());
app.post('/posts', async (req, res) => {
  const row = await db.post.create({
    data: { accountId, content: req.body.content, platforms: req.body.platforms, status: 'draft' },
  });
  res.status(201).json(row);
});
const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('SIGTERM', () => server.close(() => db.$disconnect().then(() => process.exit(0))));
