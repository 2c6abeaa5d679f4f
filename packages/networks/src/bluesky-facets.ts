import type { Facet } from '@atproto/api';
import { type Got, HTTPError } from 'got';
import { createExpiringCache } from './expiring-cache.js';

/** Handles resolved per post at most; a 300-grapheme post cannot hold more mentions than this anyway. */
const MAX_MENTIONS = 50;
/** A handle moves to another DID rarely; a day keeps lookups off the hot path without going stale long. */
const RESOLVED_TTL_MS = 24 * 60 * 60_000;
const MAX_CACHED = 5_000;
/**
 * @atproto/api costs ~40 MiB of RSS once imported (measured by bench/publisher-rss.mjs), in every process
 * that loads the connectors (publisher, API) whether or not it ever posts to Bluesky: loaded on the first
 * post that needs facets instead (issue 23; figures in docs/performance.md). The module system caches it afterwards.
 */
const loadRichText = async () => (await import('@atproto/api')).RichText;

/**
 * Rich-text facets of a post, with byte offsets into its UTF-8 text: links (with https:// added where the
 * text has none) and mentions, each mention carrying the DID its handle resolves to. A handle that does
 * not resolve stays plain text (the PDS refuses a mention whose `did` is not a DID).
 * https://docs.bsky.app/docs/advanced-guides/post-richtext
 */
export function createFacetBuilder() {
  const resolved = createExpiringCache<string | null>(RESOLVED_TTL_MS, MAX_CACHED);

  /** com.atproto.identity.resolveHandle on the account's PDS; null when the handle does not exist. */
  async function resolveHandle(http: Got, handle: string): Promise<string | null> {
    const key = handle.toLowerCase();
    const cached = resolved.get(key);
    if (cached !== undefined) return cached;
    let did: string | null;
    try {
      const body = await http
        .get('xrpc/com.atproto.identity.resolveHandle', { searchParams: { handle: key } })
        .json<{ did?: unknown }>();
      did = typeof body.did === 'string' && body.did.startsWith('did:') ? body.did : null;
    } catch (err) {
      // 400 HandleNotFound (or InvalidRequest for a malformed handle): the text stays plain. Anything else
      // (server down, rate limit) is the publish's failure, retried later rather than losing the mention.
      if (!(err instanceof HTTPError) || err.response.statusCode !== 400) throw err;
      did = null;
    }
    resolved.set(key, did);
    return did;
  }

  return async function facetsOf(http: Got, text: string): Promise<Facet[]> {
    const RichText = await loadRichText();
    const rich = new RichText({ text });
    // Detection finds links and @handles with correct UTF-8 byte ranges; mentions still hold the handle.
    rich.detectFacetsWithoutResolution();
    const out: Facet[] = [];
    let mentions = 0;
    for (const facet of rich.facets ?? []) {
      const features: Facet['features'] = [];
      for (const feature of facet.features) {
        if (feature.$type !== 'app.bsky.richtext.facet#mention') {
          features.push(feature);
          continue;
        }
        const handle = String((feature as { did?: unknown }).did ?? '');
        mentions += 1;
        const did = mentions <= MAX_MENTIONS ? await resolveHandle(http, handle) : null;
        if (did) features.push({ ...feature, did } as Facet['features'][number]);
      }
      if (features.length > 0) out.push({ ...facet, features });
    }
    return out;
  };
}
