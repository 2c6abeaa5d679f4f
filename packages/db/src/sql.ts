// `@sps/db/sql`: the plain-SQL writes of accounts, keys and connections on one pg connection, for processes
// that live a fraction of a second (the admin CLI) and must not load the Prisma client. Imports nothing but
// pg and `@sps/core/essentials`.
import pg from 'pg';

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

/** One connection, with the same statement bounds as the pools of `createDb`. */
export async function openSqlClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    statement_timeout: 30_000,
    idle_in_transaction_session_timeout: 30_000,
  });
  await client.connect();
  return client;
}
