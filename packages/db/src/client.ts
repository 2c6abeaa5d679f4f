import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.js';

export type TDb = PrismaClient;
export type TTx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

export interface TDbOptions {
  /** Pool size per process. */
  poolMax?: number;
}

export function createDb(url: string, options: TDbOptions = {}): TDb {
  // pg waits for a pooled connection forever by default; a bounded wait turns a saturated pool into a
  // 503 (see isDbUnavailable) instead of requests piling up without end.
  const adapter = new PrismaPg({
    connectionString: url,
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: 10_000,
  });
  return new PrismaClient({
    adapter,
    // Prisma's defaults (2 s to get a connection for a transaction, 5 s to run it) turn a busy pool into
    // errors under load; a request waits longer instead, and one that still cannot start is a 503.
    transactionOptions: { maxWait: 10_000, timeout: 15_000 },
  });
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
/** SQLSTATEs: serialization failure, deadlock, admin/crash shutdown, cannot connect now, too many connections. */
const SQLSTATE_RETRYABLE = /^(40001|40P01|57P0[1-3]|53300|08\w{3})$/;

/** pg-pool's own errors carry no code, only these messages. */
const POOL_MESSAGES = /timeout exceeded when trying to connect|Connection terminated/;

/** True when an error means "the database cannot serve right now; the same request may work later". */
export function isDbUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const e = error as { name?: string; code?: unknown; cause?: unknown; meta?: unknown };
  if (e.name === 'PrismaClientInitializationError') return true;
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || SOCKET_CODES.has(e.code))) return true;
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
