/** Extensions of the media types the fetcher hands to networks that upload files by name. */
const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'video/mp4': 'mp4',
  'video/quicktime': 'mov',
  'video/webm': 'webm',
};

/**
 * A safe file name for an upload (Discord, Slack): the URL's last path segment without its extension,
 * reduced to word characters, dots and dashes, with the extension of the bytes' real type.
 */
export function mediaFileName(url: string, type: string, index: number): string {
  let stem = `file${index}`;
  try {
    const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    const clean = last
      .replace(/\.[^.]*$/, '')
      .replace(/[^\w.-]+/g, '_')
      .slice(0, 80);
    if (clean) stem = clean;
  } catch {
    // Keep the generic name.
  }
  return `${stem}.${EXTENSIONS[type] ?? 'bin'}`;
}
