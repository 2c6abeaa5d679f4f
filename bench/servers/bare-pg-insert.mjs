// Baseline: a bare Express 5 handler doing one plain `pg` INSERT … RETURNING of the same row as
// POST /v1/posts (no auth, no validation, no limits, no presenter). What the create path is measured against.
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_MAX ?? 10),
});
const accountId = process.env.BENCH_ACCOUNT_ID;
const app = express();
app.use(express.json());
app.post('/posts', async (req, res) => {
  const { rows } = await pool.query({
    name: 'bare_insert',
    text: `INSERT INTO posts (id, account_id, content, platforms, status, updated_at)
           VALUES (gen_random_uuid(), $1, $2, $3::"Platform"[], 'draft', now()) RETURNING *`,
    values: [accountId, req.body.content, req.body.platforms],
  });
  res.status(201).json(rows[0]);
});
const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
