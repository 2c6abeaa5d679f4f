import { parseAppEnv, ZCommonEnv } from '@sps/core';
import type { z } from 'zod';

export type TAdminEnv = z.output<typeof ZCommonEnv> & { encryptionKey: Buffer; usesDevelopmentKey: boolean };

export function loadEnv(source: Record<string, string | undefined> = process.env): TAdminEnv {
  return parseAppEnv(ZCommonEnv, source);
}
