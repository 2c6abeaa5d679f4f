import { z } from 'zod';
import { parseDuration } from './duration.js';
import { ZBooleanFlag, ZDuration } from './env-schema.js';

/** The media store, shared by the API (uploads, serving) and the publisher (reads at publish). */
export const ZMediaEnv = z.object({
  MEDIA_STORAGE: z.enum(['fs', 's3']).default('fs'),
  MEDIA_DIR: z.string().min(1).default('./data/media'),
  S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_BUCKET: z.string().min(1).optional(),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: ZBooleanFlag,
  /** Items no post uses are removed this long after their upload (and after their last use). */
  MEDIA_RETENTION: ZDuration.default(parseDuration('30d')),
});

export type TMediaEnv = z.output<typeof ZMediaEnv>;

/** What `@sps/storage`'s createStorage takes; S3 settings are checked here, at start. */
export type TMediaStorageConfig =
  | { kind: 'fs'; dir: string }
  | {
      kind: 's3';
      endpoint?: string;
      region: string;
      bucket: string;
      accessKeyId?: string;
      secretAccessKey?: string;
      forcePathStyle: boolean;
    };

export function mediaStorageConfig(env: TMediaEnv): TMediaStorageConfig {
  if (env.MEDIA_STORAGE === 'fs') return { kind: 'fs', dir: env.MEDIA_DIR };
  if (!env.S3_BUCKET) throw new Error('MEDIA_STORAGE=s3 needs S3_BUCKET');
  if (Boolean(env.S3_ACCESS_KEY_ID) !== Boolean(env.S3_SECRET_ACCESS_KEY)) {
    throw new Error('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together');
  }
  return {
    kind: 's3',
    region: env.S3_REGION,
    bucket: env.S3_BUCKET,
    forcePathStyle: env.S3_FORCE_PATH_STYLE,
    ...(env.S3_ENDPOINT ? { endpoint: env.S3_ENDPOINT } : {}),
    ...(env.S3_ACCESS_KEY_ID ? { accessKeyId: env.S3_ACCESS_KEY_ID } : {}),
    ...(env.S3_SECRET_ACCESS_KEY ? { secretAccessKey: env.S3_SECRET_ACCESS_KEY } : {}),
  };
}
