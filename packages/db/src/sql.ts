// `@sps/db/sql`: the plain-SQL writes of accounts, keys and connections on one pg connection, for processes
// that live a fraction of a second (the admin CLI) and must not load the Prisma client. Imports nothing but
// pg and `@sps/core/essentials`.
import pg from 'pg';
import { connectionOptions } from './pgbouncer.js';

export {
  insertAccountWithKey,
  insertApiKey,
  insertConnectedAccount,
  revokeKey,
  type TConnectInput,
  type TSqlRunner,
  updatePasswordHash,
  updatePlan,
} from './account-sql.js';
export { PLANS, type TPlan } from './plans.js';

/** One connection, with the same statement bounds (and PgBouncer handling) as the pools of `createDb`. */
export async function openSqlClient(url: string): Promise<pg.Client> {
  const { Client = pg.Client, ...options } = connectionOptions(url);
  const client = new Client({ ...options, connectionTimeoutMillis: 10_000 });
  await client.connect();
  return client;
}
