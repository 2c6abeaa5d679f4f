import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client.js';
import { connectionOptions } from './pgbouncer.js';
import { inlineStatement } from './sql-inline.js';

export type TDb = PrismaClient;
export type TTx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

export interface TDbOptions {
  /** Pool size per process. */
  poolMax?: number;
}

/**
 * Where a client keeps its pg pool (see `sqlOf`). A property rather than a side table, so a Proxy around
 * the client (tests that simulate an unavailable database) still reaches it and can wrap it too.
 */
export const SQL_POOL: unique symbol = Symbol('sps.db.sqlPool');
type TWithPool = TDb & { [SQL_POOL]?: pg.Pool };

export function createDb(url: string, options: TDbOptions = {}): TDb {
  // pg waits for a pooled connection forever by default; a bounded wait turns a saturated pool into a
  // 503 (see isDbUnavailable) instead of requests piling up without end. The statement and transaction
  // bounds of the plain-SQL paths (Prisma's own transactions have theirs) come from connectionOptions:
  // start-up parameters on a direct connection, PgBouncer's side behind it. TCP keep-alive notices a dead peer.
  const pool = new pg.Pool({
    ...connectionOptions(url),
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  });
  // An idle connection that dies (database restart) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  const db = new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true }),
    // Prisma's defaults (2 s to get a connection for a transaction, 5 s to run it) turn a busy pool into
    // errors under load; a request waits longer instead, and one that still cannot start is a 503.
    transactionOptions: { maxWait: 10_000, timeout: 15_000 },
  });
  Object.defineProperty(db, SQL_POOL, { value: pool, configurable: true });
  // Prisma ends the pool only if it ever connected; a process that ran nothing but plain SQL would keep
  // idle connections open (and itself alive) for their idle timeout after $disconnect.
  const disconnect = db.$disconnect.bind(db);
  Object.defineProperty(db, '$disconnect', {
    configurable: true,
    value: async () => {
      await disconnect();
      // `ending` is set as soon as an end began (Prisma's, or an earlier call of this one).
      if (!pool.ending) await pool.end();
    },
  });
  return db;
}

/**
 * The client's own pg pool, shared with Prisma (one pool size per process). The publish and delivery
 * hot paths write plain SQL on it: a Prisma model query costs about a millisecond of CPU in its query
 * interpreter, a pg query a tenth of that, and on a busy box that CPU is the throughput.
 */
export function sqlOf(db: TDb): pg.Pool {
  const pool = (db as TWithPool)[SQL_POOL];
  if (!pool) throw new Error('This client was not made by createDb');
  return pool;
}

/**
 * Runs `work` in one transaction on a pooled connection (BEGIN … COMMIT, ROLLBACK on any error). With
 * `commitsItself`, `work`'s last statement carries the COMMIT (see inShortTransaction).
 */
export async function inSqlTransaction<T>(
  db: TDb,
  work: (client: pg.PoolClient) => Promise<T>,
  commitsItself = false,
): Promise<T> {
  const client = await sqlOf(db).connect();
  let broken: Error | undefined;
  // pg-pool drops its own error listener while a client is checked out: without one, a connection lost
  // mid-transaction would be an uncaught exception. The query in flight rejects with the error anyway.
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    if (!commitsItself) await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      // A connection that cannot even roll back is not given back to the pool.
      broken = rollbackError as Error;
    }
    throw error;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

/**
 * A transaction of at most two statements where the second depends on the first's result: `first`, then
 * `then(first's result)`'s statement (if any), in inSqlTransaction. The second goes out as plain text with
 * the COMMIT in one simple-query message (one round trip, not two: each is a wait on a busy box, and the
 * publisher's slots are mostly waiting); PostgreSQL stops at its first error, so a failing second never
 * commits and the ROLLBACK below ends the transaction. `first` stays a prepared statement (its plan is
 * reused). Writing BEGIN in the same round trip as `first` needs pg's internal Query methods; it was tried
 * and saved too little to be worth depending on them.
 */
export function inShortTransaction<T>(
  db: TDb,
  first: pg.QueryConfig & { name: string },
  then: (result: pg.QueryResult) => { second: (pg.QueryConfig & { name: string }) | null; value: T },
): Promise<T> {
  return inSqlTransaction(
    db,
    async (client) => {
      const { second, value } = then(await client.query(first));
      await client.query(second ? `${inlineStatement(second.text, second.values)};\nCOMMIT` : 'COMMIT');
      return value;
    },
    true,
  );
}

/**
 * Prisma error codes that say the database is unreachable, overloaded or timed out, not that the request
 * was wrong: P1001/P1002 cannot reach, P1008 operation timed out, P1017 connection closed, P2024 no pool
 * connection in time, P2028 transaction could not start or expired, P2034 serialization conflict/deadlock.
 */
const UNAVAILABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2034']);
/** Node socket errors of a lost PostgreSQL connection (the pg driver passes them through). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

/** What the pg driver adapter reports (`meta.driverAdapterError.cause.kind`) for the same situations. */
const ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  'TransactionAlreadyClosed',
  'TransactionWriteConflict',
]);
/**
 * SQLSTATEs: serialization failure, deadlock, statement timeout (a busy database), admin/crash shutdown,
 * cannot connect now, too many connections.
 */
const SQLSTATE_RETRYABLE = /^(40001|40P01|57014|57P0[1-3]|53300|08\w{3})$/;

/** pg-pool's own errors carry no code, only these messages. */
const POOL_MESSAGES = /timeout exceeded when trying to connect|Connection terminated/;

/** True when an error means "the database cannot serve right now; the same request may work later". */
export function isDbUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const e = error as { name?: string; code?: unknown; cause?: unknown; meta?: unknown };
  if (e.name === 'PrismaClientInitializationError') return true;
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || SOCKET_CODES.has(e.code))) return true;
  // Errors of the plain pg statements carry the SQLSTATE as their code.
  if (typeof e.code === 'string' && SQLSTATE_RETRYABLE.test(e.code)) return true;
  const adapter = (e.meta as { driverAdapterError?: { cause?: { kind?: string; code?: string } } })
    ?.driverAdapterError?.cause;
  if (adapter?.kind && ADAPTER_KINDS.has(adapter.kind)) return true;
  if (adapter?.kind === 'postgres' && adapter.code && SQLSTATE_RETRYABLE.test(adapter.code)) return true;
  if (error instanceof Error && POOL_MESSAGES.test(error.message)) return true;
  return e.cause !== undefined && e.cause !== error && isDbUnavailable(e.cause, depth + 1);
}

/** `/readyz`: true when PostgreSQL answers. */
export async function pingDb(db: TDb): Promise<boolean> {
  try {
    await db.$queryRaw`SELECT 1`;
    return true;
  } catch {
    return false;
  }
}
