import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.js';

export type TDb = PrismaClient;
export type TTx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

export interface TDbOptions {
  /** Pool size per process. */
  poolMax?: number;
}

export function createDb(url: string, options: TDbOptions = {}): TDb {
  const adapter = new PrismaPg({ connectionString: url, max: options.poolMax ?? 10 });
  return new PrismaClient({ adapter });
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
