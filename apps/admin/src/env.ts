import { secretBox, ZCommonEnv } from '@sps/core';
import type { z } from 'zod';

export type TAdminEnv = z.output<typeof ZCommonEnv> & { encryptionKey: Buffer };

export function loadEnv(source: Record<string, string | undefined> = process.env): TAdminEnv {
  const parsed = ZCommonEnv.safeParse(source);
  if (!parsed.success) {
    throw new Error(
      `Invalid environment: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const env = parsed.data;
  if (!env.ENCRYPTION_KEY && env.NODE_ENV === 'production')
    throw new Error('Invalid environment: ENCRYPTION_KEY is required in production');
  return {
    ...env,
    encryptionKey: env.ENCRYPTION_KEY
      ? secretBox.parseEncryptionKey(env.ENCRYPTION_KEY)
      : secretBox.developmentKey('local'),
  };
}
