import { z } from 'zod';
import { validationError } from './app-error.js';
import { PLATFORMS, type TPlatform } from './platforms.js';
import { MAX_CONTENT_B, ZMediaB, ZPlatformsB, ZSegmentsB } from './post-input-b.js';
import { ZText } from './text-fields.js';
import { zodIssues } from './zod-issues.js';

/**
 * A preset is a named, reusable set of platforms plus optional defaults for new posts, in the
 * same shape as POST /v1/posts fields. Names are unique per account.
 */
export const ZCreatePresetB = z.object(
  {
    name: ZText(1, 100),
    description: ZText(0, 500).nullable().optional(),
    platforms: ZPlatformsB,
    defaults: z
      .object(
        {
          content: ZText(1, MAX_CONTENT_B).optional(),
          media: ZMediaB.nullable().optional(),
          segments: ZSegmentsB.nullable().optional(),
        },
        { error: 'must be an object {content?, media?, segments?}' },
      )
      .strict()
      .nullable()
      .optional(),
  },
  { error: 'the body must be a JSON object' },
);

export interface TPresetInput {
  name: string;
  description: string | null;
  platforms: TPlatform[];
  defaults: Record<string, unknown> | null;
}

export function parseCreatePresetB(body: unknown): TPresetInput {
  const parsed = ZCreatePresetB.safeParse(body);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  const { name, description, platforms, defaults } = parsed.data;
  return { name: name.trim(), description: description ?? null, platforms, defaults: defaults ?? null };
}

/** A stored preset, as both the repository and the presenter see it. */
export interface TPresetRecord {
  id: string;
  name: string;
  description: string | null;
  platforms: TPlatform[];
  defaults: Record<string, unknown> | null;
  createdAt: Date;
  updatedAt: Date;
}

export function presentPresetB(preset: TPresetRecord) {
  return {
    id: preset.id,
    name: preset.name,
    description: preset.description,
    platforms: preset.platforms,
    defaults: preset.defaults,
    created_at: preset.createdAt.toISOString(),
    updated_at: preset.updatedAt.toISOString(),
  };
}

/** Response schema (OpenAPI): the shape `presentPresetB` returns, checked against it at compile time. */
export const ZPresetViewB = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  platforms: z.array(z.enum(PLATFORMS)),
  defaults: z
    .record(z.string(), z.unknown())
    .nullable()
    .meta({ description: 'Defaults for new posts, in the shape of POST /v1/posts fields.' }),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
presentPresetB satisfies (preset: Parameters<typeof presentPresetB>[0]) => z.output<typeof ZPresetViewB>;
