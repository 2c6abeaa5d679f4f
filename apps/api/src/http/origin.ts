/** `scheme://host[:port]` of an http(s) URL (lower-case host, default port dropped), or null. */
export function originOf(value: string): string | null {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : null;
  } catch {
    return null;
  }
}
