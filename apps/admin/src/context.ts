import { UUID_PATTERN } from '@sps/core/essentials';
import type { TDb } from '@sps/db';
import type { TSqlRunner } from '@sps/db/sql';
import type { TAdminEnv } from './env.js';

export class UsageError extends Error {}

export type TOptions = Record<string, string | undefined>;

/** What a command may use; each connection is opened on first use, so a command pays only for its own. */
export interface TCommandContext {
  env: TAdminEnv;
  /** One plain pg connection (no Prisma client). */
  sql(): Promise<TSqlRunner>;
  /** The Prisma client, for the commands that use the repositories. */
  db(): Promise<TDb>;
  /** Tells every API process to drop cached keys (by hash). Best effort: caches expire anyway. */
  invalidate(hashes: string[]): Promise<void>;
}

/** Runs one command; the command modules export these by command name, loaded lazily by `command-specs.ts`. */
export type THandler = (ctx: TCommandContext, options: TOptions) => Promise<Record<string, unknown>>;

export function required(options: TOptions, name: string): string {
  const value = options[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

export function id(options: TOptions, name: string): string {
  const value = required(options, name);
  if (!UUID_PATTERN.test(value))
    throw new UsageError(`--${name} must be an id printed by an earlier command`);
  return value;
}
