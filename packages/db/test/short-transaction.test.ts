import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createDb, inShortTransaction, sqlOf, type TDb } from '../src/client.js';
import { inlineStatement } from '../src/sql-inline.js';
import { createTestDatabase, type TTestDatabase } from '../src/testing.js';

// A failure anywhere must commit nothing and leave the (single) connection usable, its prepared statements
// as PostgreSQL has them.
describe('inShortTransaction', () => {
  let database: TTestDatabase;
  let db: TDb;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { poolMax: 1 });
    await sqlOf(db).query('CREATE TABLE short_probe (n int PRIMARY KEY)');
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  const insert = (n: number) => ({
    name: 'short_probe_insert',
    text: 'INSERT INTO short_probe VALUES ($1) RETURNING n',
    values: [n],
  });
  const stored = async () =>
    (await sqlOf(db).query<{ n: number }>('SELECT n FROM short_probe ORDER BY n')).rows.map((r) => r.n);

  it('commits both statements and answers with the first one’s result', async () => {
    const value = await inShortTransaction(db, insert(1), (result) => ({
      second: insert((result.rows[0] as { n: number }).n + 1),
      value: (result.rows[0] as { n: number }).n,
    }));
    expect(value).toBe(1);
    expect(await inShortTransaction(db, insert(3), () => ({ second: null, value: 'alone' }))).toBe('alone');
    expect(await stored()).toEqual([1, 2, 3]);
  });

  it('a failing second statement rolls the first back; a failing first runs no second', async () => {
    await expect(
      inShortTransaction(db, insert(10), () => ({ second: insert(1), value: null })),
    ).rejects.toThrow(/duplicate key/);
    let asked = false;
    await expect(
      inShortTransaction(db, insert(2), () => {
        asked = true;
        return { second: insert(11), value: null };
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(asked).toBe(false);
    await expect(
      inShortTransaction(db, insert(12), () => {
        throw new Error('work failed');
      }),
    ).rejects.toThrow('work failed');
    expect(await stored()).toEqual([1, 2, 3]);
  });

  it('writes the second statement’s values exactly as a parameterised query would', async () => {
    await sqlOf(db).query('CREATE TABLE short_text_probe (t text, j jsonb, n int, at timestamptz, ok bool)');
    const texts = ['plain', "it's", 'back\\slash "quoted" {braces},comma', 'NULL', 'é 🚀 $1 $$', ''];
    const docs = texts.map((t) => JSON.stringify({ t, nested: { line: 'a\nb' } }));
    const at = new Date('2026-01-02T03:04:05.678Z');
    await inShortTransaction(db, insert(20), () => ({
      second: {
        name: 'short_text_insert',
        text: `INSERT INTO short_text_probe (t, j, n, at, ok)
               SELECT u.t, u.j, $3::int, $4::timestamptz, $5::bool FROM unnest($1::text[], $2::jsonb[]) AS u(t, j)
               UNION ALL SELECT NULL, NULL, NULL, NULL, NULL WHERE $6::text IS NULL`,
        values: [texts, docs, 7, at, true, null],
      },
      value: null,
    }));
    const { rows } = await sqlOf(db).query<{
      t: string | null;
      j: unknown;
      n: number;
      at: Date;
      ok: boolean;
    }>('SELECT t, j, n, at, ok FROM short_text_probe');
    expect(rows.filter((r) => r.t !== null).map((r) => r.t)).toEqual(texts);
    expect(rows.filter((r) => r.t !== null).map((r) => r.j)).toEqual(docs.map((d) => JSON.parse(d)));
    expect(
      rows.filter((r) => r.t !== null).every((r) => r.n === 7 && r.ok && r.at.getTime() === at.getTime()),
    ).toBe(true);
    expect(rows.filter((r) => r.t === null)).toHaveLength(1);
    await sqlOf(db).query('DELETE FROM short_probe WHERE n = 20');
  });

  it('inlines a negative number so that it cannot start a comment, as a parameter would not', async () => {
    // `5-$1` with -3 must stay 5 - (-3); written as `5--3`, the rest of the line is an SQL comment.
    const text = 'SELECT 5-$1 AS n, $2::text AS tail';
    const inline = inlineStatement(text, [-3, 'kept']);
    const { rows } = await sqlOf(db).query<{ n: number; tail: string }>(inline);
    const param = await sqlOf(db).query<{ n: number; tail: string }>(text, [-3, 'kept']);
    expect(rows).toEqual(param.rows);
    expect(rows[0]).toEqual({ n: 8, tail: 'kept' });
  });

  it('writes a string literal exactly as pg.escapeLiteral does', () => {
    for (const text of ['plain', "it's", 'back\\slash', "a\\'b\\\\", '', 'é 🚀 "q" {b}']) {
      expect(inlineStatement('SELECT $1::text', [text])).toBe(`SELECT ${pg.escapeLiteral(text)}::text`);
    }
  });

  it('refuses a value it cannot write as a literal instead of writing an empty string', () => {
    // pg.escapeLiteral answers '' for anything not a string: an object or a Buffer would be stored empty.
    expect(() => inlineStatement('SELECT $1::jsonb', [{ a: 1 }])).toThrow(/cannot inline/);
    expect(() => inlineStatement('SELECT $1::bytea', [Buffer.from('x')])).toThrow(/cannot inline/);
    expect(() => inlineStatement('SELECT $1::jsonb[]', [[{ a: 1 }]])).toThrow(/cannot inline/);
    expect(inlineStatement('SELECT $1::int8, $2::int8[]', [12n, [-1n, 2]])).toBe(
      `SELECT 12::int8, '{"-1","2"}'::int8[]`,
    );
  });

  it('a statement that does not parse fails each time with its own error, and the connection goes on', async () => {
    const bad = { name: 'short_probe_bad', text: 'SELEC 1', values: [] };
    for (let i = 0; i < 2; i += 1) {
      await expect(inShortTransaction(db, bad, () => ({ second: null, value: null }))).rejects.toThrow(
        /syntax error/,
      );
    }
    await inShortTransaction(db, insert(4), () => ({ second: null, value: null }));
    expect(await stored()).toEqual([1, 2, 3, 4]);
  });
});
