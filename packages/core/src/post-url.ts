/** Longest post URL kept; a network's answer is input like any other. */
const POST_URL_MAX = 2048;

/**
 * A network's link to a published post as it may be stored and shown (`post_url`, the dashboard's links):
 * `https:` only, without user info, bounded. Anything else (`javascript:`, `data:`, plain http from a
 * self-hosted instance, a malformed value) is not stored as a URL: '' (no link) instead.
 */
export function storablePostUrl(url: string | null | undefined): string {
  if (!url || url.length > POST_URL_MAX) return '';
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' && !parsed.username && !parsed.password ? url : '';
  } catch {
    return '';
  }
}
