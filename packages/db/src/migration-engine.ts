import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { parseDatabaseUrl } from './pgbouncer.js';

// Prisma's CLI would download a native schema engine; these machines cannot. The same engine ships
// compiled to WebAssembly, which we drive through a driver adapter. The migrations folder keeps
// Prisma's own layout, so `prisma migrate deploy` works unchanged where the native engine exists.

type TBg = typeof import('@prisma/schema-engine-wasm/schema_engine_bg');
type TSchemaEngine = Awaited<ReturnType<TBg['SchemaEngine']['new']>>;
type TMigrationList = Parameters<TSchemaEngine['applyMigrations']>[0]['migrationsList'];

const FILTERS = { externalTables: [], externalEnums: [] };

interface TWasmApi {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: unknown } }>;
}

let bgPromise: Promise<TBg> | undefined;

/** Node 20 cannot import a `.wasm` module; instantiate it by hand as Prisma 6's CLI did. */
function loadWasm(): Promise<TBg> {
  bgPromise ??= (async () => {
    const bg: TBg = await import('@prisma/schema-engine-wasm/schema_engine_bg');
    const bgPath = fileURLToPath(import.meta.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    const bytes = await readFile(join(dirname(bgPath), 'schema_engine_bg.wasm'));
    // @types/node 20 does not declare the WebAssembly global; its runtime has it.
    const wasm = (globalThis as unknown as { WebAssembly: TWasmApi }).WebAssembly;
    const { instance } = await wasm.instantiate(bytes, { './schema_engine_bg.js': bg });
    const exports = instance.exports as unknown as { __wbindgen_start: () => void };
    (bg as unknown as { __wbg_set_wasm: (e: unknown) => void }).__wbg_set_wasm(instance.exports);
    exports.__wbindgen_start();
    return bg;
  })();
  return bgPromise;
}

const CHAR_OID = 18;

/**
 * adapter-pg cannot read PostgreSQL's internal `"char"` type that catalog queries return;
 * relabel those columns as text so introspection (used by diff) works.
 */
class CatalogSafePool extends pg.Pool {
  override query(...args: unknown[]): never {
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      return (result as Promise<pg.QueryResult>).then((r) => {
        for (const field of r.fields ?? []) if (field.dataTypeID === CHAR_OID) field.dataTypeID = 25;
        return r;
      }) as never;
    }
    return result as never;
  }
  override connect(...args: unknown[]): never {
    const patch = (client: pg.PoolClient): pg.PoolClient => {
      const original = client.query.bind(client) as (...a: unknown[]) => unknown;
      (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
        const result = original(...a);
        if (result && typeof (result as Promise<unknown>).then === 'function') {
          return (result as Promise<pg.QueryResult>).then((r) => {
            for (const field of r.fields ?? []) if (field.dataTypeID === CHAR_OID) field.dataTypeID = 25;
            return r;
          });
        }
        return result;
      };
      return client;
    };
    if (typeof args[0] === 'function') {
      const cb = args[0] as (err: Error | undefined, client?: pg.PoolClient, done?: () => void) => void;
      return super.connect((err, client, done) => cb(err, client ? patch(client) : undefined, done)) as never;
    }
    return super.connect().then(patch) as never;
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Creates the target database when it does not exist (first run on a fresh machine, per-test databases). */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      try {
        await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
      } catch (error) {
        // Another process created it between our check and CREATE.
        if ((error as { code?: string }).code !== '42P04' && (error as { code?: string }).code !== '23505') {
          throw error;
        }
      }
    }
  } finally {
    await admin.end();
  }
}

/**
 * A migration-aware adapter factory whose shadow database is really separate: adapter-pg 7.10 sends a
 * shadow connection built from a string to the main database and drops the shadow before closing its
 * pool, so we create, connect and drop it ourselves.
 */
class MigrationAdapterFactory {
  readonly provider = 'postgres' as const;
  readonly adapterName = '@prisma/adapter-pg';
  private readonly shadows: { name: string; pool: pg.Pool }[] = [];
  private readonly pools: pg.Pool[] = [];

  constructor(private readonly url: string) {}

  connect() {
    const pool = new CatalogSafePool({ connectionString: this.url, max: 2 });
    this.pools.push(pool);
    return new PrismaPg(pool, { disposeExternalPool: true }).connect();
  }

  async connectToShadowDb() {
    const name = `${databaseName(this.url)}_shadow_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: withDatabase(this.url, 'postgres') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
    await admin.end();
    const pool = new CatalogSafePool({ connectionString: withDatabase(this.url, name), max: 2 });
    this.shadows.push({ name, pool });
    return new PrismaPg(pool).connect();
  }

  /** Ends every pool, so no idle connection holds the database (a template must have none). */
  async close(): Promise<void> {
    for (const pool of this.pools.splice(0)) await pool.end().catch(() => undefined);
    await this.dropShadows();
  }

  private async dropShadows(): Promise<void> {
    for (const shadow of this.shadows.splice(0)) {
      await shadow.pool.end().catch(() => undefined);
      const admin = new pg.Client({ connectionString: withDatabase(this.url, 'postgres') });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(shadow.name)} WITH (FORCE)`);
      await admin.end();
    }
  }
}

export interface TMigrationPaths {
  /** `prisma/schema.prisma` */
  schemaPath: string;
  /** `prisma/migrations` */
  migrationsDir: string;
}

export async function readMigrationsList(migrationsDir: string): Promise<TMigrationList> {
  const entries = await readdir(migrationsDir, { withFileTypes: true }).catch(() => []);
  const dirs = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const lockPath = join(migrationsDir, 'migration_lock.toml');
  const lockContent = await readFile(lockPath, 'utf8').catch(() => null);
  return {
    baseDir: migrationsDir,
    lockfile: { path: 'migration_lock.toml', content: lockContent },
    migrationDirectories: await Promise.all(
      dirs.map(async (dir) => {
        const sql = await readFile(join(migrationsDir, dir, 'migration.sql'), 'utf8').catch((e: Error) => e);
        return {
          path: dir,
          migrationFile: {
            path: 'migration.sql',
            content:
              typeof sql === 'string'
                ? { tag: 'ok' as const, value: sql }
                : { tag: 'error' as const, value: sql.message },
          },
        };
      }),
    ),
    shadowDbInitScript: '',
  };
}

async function withEngine<T>(
  url: string,
  paths: TMigrationPaths,
  run: (engine: TSchemaEngine, schema: string) => Promise<T>,
): Promise<T> {
  const bg = await loadWasm();
  const schema = await readFile(paths.schemaPath, 'utf8');
  const factory = new MigrationAdapterFactory(url);
  const engine = await bg.SchemaEngine.new(
    { datamodels: [[paths.schemaPath, schema]] },
    () => undefined,
    bindMigrationAwareSqlAdapterFactory(factory as never),
  );
  try {
    return await run(engine, schema);
  } finally {
    engine.free();
    await factory.close();
  }
}

/**
 * Migrations need a connection of their own to PostgreSQL, not one through PgBouncer in transaction mode:
 * this runner and Prisma's engine both take session-level advisory locks (pg_advisory_lock), which PgBouncer
 * would leave on whichever server connection ran them, and CREATE DATABASE and long DDL belong on a direct
 * connection anyway (Prisma's `directUrl`).
 */
function refusePooledUrl(url: string): void {
  if (parseDatabaseUrl(url).pgbouncer)
    throw new Error(
      'migrations cannot run through PgBouncer (the URL has pgbouncer=true): set DIRECT_DATABASE_URL to a direct connection to PostgreSQL',
    );
}

// Our own lock, distinct from the one Prisma's engine may take, so concurrent `db:migrate`
// runs queue up instead of racing to create the same tables.
const MIGRATE_LOCK_KEY = 7_250_431_001;

/** Applies pending migrations (like `prisma migrate deploy`); safe to run from several processes at once. */
export async function deployMigrations(url: string, paths: TMigrationPaths): Promise<string[]> {
  refusePooledUrl(url);
  await ensureDatabase(url);
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK_KEY]);
    const migrationsList = await readMigrationsList(paths.migrationsDir);
    return await withEngine(url, paths, async (engine) => {
      const out = await engine.applyMigrations({ migrationsList, filters: FILTERS });
      return out.appliedMigrationNames;
    });
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK_KEY]).catch(() => undefined);
    await lock.end();
  }
}

export async function migrationStatus(url: string, paths: TMigrationPaths) {
  refusePooledUrl(url);
  const migrationsList = await readMigrationsList(paths.migrationsDir);
  return withEngine(url, paths, (engine) =>
    engine.diagnoseMigrationHistory({ migrationsList, optInToShadowDatabase: false, filters: FILTERS }),
  );
}

/** SQL that takes the migrations folder to `schema.prisma` (empty when they agree). */
export async function diffMigrationsToSchema(url: string, paths: TMigrationPaths): Promise<string> {
  refusePooledUrl(url);
  await ensureDatabase(url);
  const migrationsList = await readMigrationsList(paths.migrationsDir);
  return withEngine(url, paths, async (engine, schema) => {
    const from =
      migrationsList.migrationDirectories.length === 0
        ? { tag: 'empty' as const }
        : { tag: 'migrations' as const, ...migrationsList };
    const result = await engine.diff({
      from,
      to: { tag: 'schemaDatamodel', files: [{ path: paths.schemaPath, content: schema }] },
      script: true,
      exitCode: null,
      filters: FILTERS,
    });
    return stripEmptyDiff(result.stdout ?? '');
  });
}

function stripEmptyDiff(sql: string): string {
  const meaningful = sql
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('--'))
    .join('\n');
  return meaningful.length === 0 ? '' : sql;
}
