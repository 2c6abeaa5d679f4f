// PgBouncer in transaction pooling mode. Imports nothing but pg, so `@sps/db/sql` (the admin CLI) can use it.
import pg from 'pg';

/**
 * The per-session bounds a direct connection sets at start-up: a stalled statement or an abandoned
 * transaction must not hold post rows locked for ever.
 */
export const SESSION_BOUNDS = { statement_timeout: 30_000, idle_in_transaction_session_timeout: 30_000 };

/**
 * Whether `url` goes through PgBouncer in transaction pooling mode: `pgbouncer=true` in its query string,
 * Prisma's own convention. Returns the URL without that parameter (PostgreSQL does not know it).
 */
export function parseDatabaseUrl(url: string): { connectionString: string; pgbouncer: boolean } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, pgbouncer: false };
  }
  const flag = parsed.searchParams.get('pgbouncer');
  if (flag === null) return { connectionString: url, pgbouncer: false };
  parsed.searchParams.delete('pgbouncer');
  return { connectionString: parsed.toString(), pgbouncer: flag === 'true' || flag === '1' };
}

/**
 * A pg client that never names a statement. Behind PgBouncer in transaction pooling mode (1.18, as Debian
 * ships it, passes no prepared statement between server connections) a statement prepared in one transaction
 * is unknown, or prepared by someone else, on the server connection of the next one; pg would send a
 * named statement once and then only refer to it. Unnamed statements are parsed on every execution.
 */
export class UnnamedStatementClient extends pg.Client {
  override query(...args: unknown[]): never {
    const [config] = args;
    if (typeof config === 'object' && config !== null && 'name' in config && !('submit' in config)) {
      const { name: _unused, ...unnamed } = config as { name?: string };
      args[0] = unnamed;
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}

/**
 * pg options for `url`: the connection string without `pgbouncer=true`, and either the session bounds (a
 * direct connection) or a client that names no statement (PgBouncer, which has the bounds on its side).
 */
export function connectionOptions(url: string): pg.ClientConfig & { Client?: typeof pg.Client } {
  const { connectionString, pgbouncer } = parseDatabaseUrl(url);
  return pgbouncer
    ? { connectionString, Client: UnnamedStatementClient }
    : { connectionString, ...SESSION_BOUNDS };
}
