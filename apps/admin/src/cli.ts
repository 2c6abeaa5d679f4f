import { parseArgs } from 'node:util';
import { DEVELOPMENT_KEY_WARNING } from '@sps/core/essentials';
import type { TDb } from '@sps/db';
import type { openSqlClient } from '@sps/db/sql';
import { COMMAND_SPECS, OPTION_NAMES, specOf } from './command-specs.js';
import { type TCommandContext, UsageError } from './context.js';
import { loadEnv } from './env.js';
import { cliHelp, commandHelp, groupHelp } from './help.js';

// The admin CLI: exactly one JSON object on stdout per call; errors as JSON on stderr, exit code 1 (2 for
// usage errors); `--help` prints text on stdout with exit 0. Only what the command needs is loaded: most
// commands are one pg statement and never load the Prisma client, BullMQ or Redis.

function fail(error: unknown, code: number): never {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${JSON.stringify({ error: message })}\n`);
  process.exit(code);
}

/**
 * `--external-id -1001234567890`: parseArgs takes a value that starts with a dash for another option and
 * refuses it as ambiguous. A value is what follows an option of ours unless it is itself `--name`, so it is
 * attached as `--external-id=-1001234567890`.
 */
export function attachDashValues(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    const next = args[i + 1];
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : null;
    if (name && OPTION_NAMES.includes(name) && next?.startsWith('-') && !next.startsWith('--')) {
      out.push(`${arg}=${next ?? ''}`);
      i += 1;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** The help text `args` ask for, or null: `--help`/`-h` anywhere, `help [command]`, or no arguments at all. */
function helpFor(args: string[]): string | null {
  const words = args.filter((a) => !a.startsWith('-'));
  const asked = args.length === 0 || args.includes('--help') || args.includes('-h') || words[0] === 'help';
  if (!asked) return null;
  const named = words[0] === 'help' ? words.slice(1) : words;
  const spec = specOf(named.slice(0, 2).join(' '));
  if (spec) return commandHelp(spec);
  return (named[0] ? groupHelp(named[0]) : null) ?? cliHelp();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const help = helpFor(args);
  if (help !== null) {
    process.stdout.write(help);
    process.exit(0);
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: attachDashValues(args),
      options: Object.fromEntries(OPTION_NAMES.map((n) => [n, { type: 'string' as const }])),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    fail(new UsageError(`${(error as Error).message} (npm run -s admin -- --help lists the commands)`), 2);
  }
  const spec = specOf(parsed.positionals.slice(0, 2).join(' '));
  if (!spec || parsed.positionals.length !== 2) {
    fail(
      new UsageError(
        `unknown command "${parsed.positionals.join(' ')}"; commands: ${COMMAND_SPECS.map((c) => c.name).join(', ')}`,
      ),
      2,
    );
  }

  const env = loadEnv();
  // A command that evicts cached keys loads the Redis client while its statement runs, not after it.
  const invalidation = spec.evicts ? import('./invalidate.js') : undefined;
  let client: ReturnType<typeof openSqlClient> | undefined;
  let db: TDb | undefined;
  const ctx: TCommandContext = {
    env,
    sql: () => {
      client ??= import('@sps/db/sql').then((m) => m.openSqlClient(env.DATABASE_URL));
      return client;
    },
    db: async () => {
      const { createDb } = await import('@sps/db');
      db ??= createDb(env.DATABASE_URL, { poolMax: 2 });
      return db;
    },
    async invalidate(hashes) {
      if (hashes.length === 0) return;
      const { publishInvalidations } = await (invalidation ?? import('./invalidate.js'));
      await publishInvalidations(env, hashes);
    },
  };
  const close = async () => {
    await Promise.allSettled([client?.then((c) => c.end()), db?.$disconnect()]);
  };
  try {
    const handler = (await spec.load())[spec.name];
    if (!handler) throw new Error(`no handler for ${spec.name}`);
    const result = await handler(ctx, parsed.values as Record<string, string | undefined>);
    // Sealing with the development key is said in the one JSON answer (stderr carries only errors).
    const sealed = spec.name === 'social connect';
    const output =
      sealed && env.usesDevelopmentKey ? { ...result, warning: DEVELOPMENT_KEY_WARNING } : result;
    process.stdout.write(`${JSON.stringify(output)}\n`);
    await close();
    process.exit(0);
  } catch (error) {
    await close();
    fail(error, error instanceof UsageError ? 2 : 1);
  }
}

await main();
