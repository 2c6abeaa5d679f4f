export const PLATFORMS = [
  'twitter',
  'threads',
  'bluesky',
  'linkedin',
  'mastodon',
  'instagram',
  'facebook',
  'tiktok',
  'youtube',
  'discord',
  'slack',
  'telegram',
] as const;
export type TPlatform = (typeof PLATFORMS)[number];

/** Variant A accepts exactly these five identifiers. */
export const VARIANT_A_PLATFORMS = ['twitter', 'threads', 'bluesky', 'linkedin', 'mastodon'] as const;
export type TVariantAPlatform = (typeof VARIANT_A_PLATFORMS)[number];

export function isPlatform(value: string): value is TPlatform {
  return (PLATFORMS as readonly string[]).includes(value);
}

/** How a network delivers thread replies (spec, Variant B rule 6). */
export type TThreadGroup = 'reply_chain' | 'comment' | 'native_message' | 'sequential_counter';

export const THREAD_GROUP: Record<TPlatform, TThreadGroup> = {
  twitter: 'reply_chain',
  bluesky: 'reply_chain',
  mastodon: 'reply_chain',
  threads: 'reply_chain',
  facebook: 'comment',
  instagram: 'comment',
  linkedin: 'comment',
  youtube: 'comment',
  slack: 'native_message',
  discord: 'native_message',
  telegram: 'native_message',
  tiktok: 'sequential_counter',
};

/**
 * How each network counts text and its limit. `twitter` uses twitter-text's weighted length
 * (links 23, CJK 2); `graphemes` counts user-perceived characters (Bluesky); `chars` counts UTF-16
 * code units as most HTTP APIs do; `mastodon` counts every link as 23 like the server does.
 */
export type TLengthRule = 'twitter' | 'graphemes' | 'chars' | 'mastodon';

export interface TNetworkTextLimit {
  max: number;
  rule: TLengthRule;
}

export const NETWORK_TEXT_LIMITS: Record<TPlatform, TNetworkTextLimit> = {
  twitter: { max: 280, rule: 'twitter' },
  bluesky: { max: 300, rule: 'graphemes' },
  mastodon: { max: 500, rule: 'mastodon' },
  threads: { max: 500, rule: 'chars' },
  linkedin: { max: 3000, rule: 'chars' },
  facebook: { max: 63206, rule: 'chars' },
  instagram: { max: 2200, rule: 'chars' },
  tiktok: { max: 2200, rule: 'chars' },
  youtube: { max: 5000, rule: 'chars' },
  discord: { max: 2000, rule: 'chars' },
  slack: { max: 40000, rule: 'chars' },
  telegram: { max: 4096, rule: 'chars' },
};

/** Networks whose API can delete a published post (Instagram and TikTok cannot). */
export const DELETE_SUPPORTED: ReadonlySet<TPlatform> = new Set(
  PLATFORMS.filter((p) => p !== 'instagram' && p !== 'tiktok'),
);

/**
 * Variant A network availability (spec: twitter live, threads after the network owner's approval,
 * bluesky/linkedin/mastodon in testing). Operators change it with NETWORK_AVAILABILITY.
 */
export type TAvailability = 'live' | 'testing' | 'pending_approval' | 'disabled';
export const DEFAULT_AVAILABILITY_A =
  'twitter=live,threads=pending_approval,bluesky=testing,linkedin=testing,mastodon=testing';

export function parseAvailability(spec: string): Partial<Record<TPlatform, TAvailability>> {
  const out: Partial<Record<TPlatform, TAvailability>> = {};
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, state] = part.split('=').map((s) => s.trim());
    if (
      !name ||
      !isPlatform(name) ||
      !state ||
      !['live', 'testing', 'pending_approval', 'disabled'].includes(state)
    ) {
      throw new Error(`"${part}" is not platform=live|testing|pending_approval|disabled`);
    }
    out[name] = state as TAvailability;
  }
  return out;
}
