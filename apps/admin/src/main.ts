import { parseArgs } from 'node:util';
import { DEVELOPMENT_KEY_WARNING } from '@sps/core';
import { createDb } from '@sps/db';
import { Redis } from 'ioredis';
import { COMMANDS, OPTION_NAMES, UsageError } from './commands.js';
import { loadEnv } from './env.js';

// The admin CLI: exactly one JSON object on stdout per call; errors as JSON on stderr, exit code 1
// (2 for usage errors).

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

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: attachDashValues(process.argv.slice(2)),
      options: Object.fromEntries(OPTION_NAMES.map((n) => [n, { type: 'string' as const }])),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    fail(new UsageError((error as Error).message), 2);
  }
  const command = parsed.positionals.slice(0, 2).join(' ');
  const handler = COMMANDS[command];
  if (!handler || parsed.positionals.length !== 2) {
    fail(
      new UsageError(
        `unknown command "${parsed.positionals.join(' ')}"; commands: ${Object.keys(COMMANDS).join(', ')}`,
      ),
      2,
    );
  }
  const env = loadEnv();
  const db = createDb(env.DATABASE_URL, { poolMax: 2 });
  try {
    const result = await handler(
      {
        db,
        env,
        async invalidate(hashes) {
          // Best effort: if Redis is unreachable, cached keys still expire after the API's cache TTL.
          const redis = new Redis(env.REDIS_URL, {
            lazyConnect: true,
            maxRetriesPerRequest: 0,
            connectTimeout: 2000,
            retryStrategy: () => null,
          });
          redis.on('error', () => undefined);
          try {
            await redis.connect();
            for (const hash of hashes) await redis.publish(`${env.QUEUE_PREFIX}:auth-invalidate`, hash);
          } catch {
            // ignored, see above
          } finally {
            redis.disconnect();
          }
        },
      },
      parsed.values as Record<string, string | undefined>,
    );
    // Sealing with the development key is said in the one JSON answer (stderr carries only errors).
    const sealed = command === 'social connect';
    const output =
      sealed && env.usesDevelopmentKey ? { ...result, warning: DEVELOPMENT_KEY_WARNING } : result;
    process.stdout.write(`${JSON.stringify(output)}\n`);
    await db.$disconnect();
    process.exit(0);
  } catch (error) {
    await db.$disconnect().catch(() => undefined);
    fail(error, error instanceof UsageError ? 2 : 1);
  }
}

await main();
