import { describe, expect, it } from '@jest/globals';
import express from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { requestLog } from '../src/http/request-log.js';

// One line per request with the request id, method, path and status; never headers (keys) or bodies.
function appWith(level: string) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const app = express();
  app.use(requestLog(logger));
  app.post('/v1/posts', express.json(), (req, res) => {
    res.status(201).json({ id: req.id });
  });
  app.get('/boom', (_req, res) => {
    res.status(503).json({ error: 'down' });
  });
  return { app, lines };
}

describe('request log', () => {
  it('answers with the caller’s request id or a new one, and logs method, path and status only', async () => {
    const { app, lines } = appWith('info');
    const given = await request(app)
      .post('/v1/posts?secret=query')
      .set('authorization', 'Bearer sps_live_secretkey')
      .set('x-request-id', 'abc-123')
      .send({ content: 'private post content' });
    expect(given.status).toBe(201);
    expect(given.headers['x-request-id']).toBe('abc-123');
    expect(given.body).toEqual({ id: 'abc-123' });
    const made = await request(app).post('/v1/posts').set('x-request-id', 'bad id with spaces').send({});
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { id: 'abc-123', method: 'POST', path: '/v1/posts' },
      res: { statusCode: 201 },
    });
    expect(typeof lines[0]?.responseTime).toBe('number');
    const text = JSON.stringify(lines);
    expect(text).not.toContain('sps_live_secretkey');
    expect(text).not.toContain('private post content');
    expect(text).not.toContain('secret=query');
  });

  it('logs a 5xx as an error, and nothing below the configured level', async () => {
    const errors = appWith('error');
    await request(errors.app).post('/v1/posts').send({});
    await request(errors.app).get('/boom');
    expect(errors.lines.map((l) => [l.level, (l.res as { statusCode: number }).statusCode])).toEqual([
      [50, 503],
    ]);

    const silent = appWith('silent');
    const res = await request(silent.app).get('/boom');
    expect(res.headers['x-request-id']).toBeDefined();
    expect(silent.lines).toHaveLength(0);
  });
});
