// How the YouTube connector turns a post's text into a video's title and description. Here (pure) so the
// dashboard's preview shows exactly what the connector sends.
// https://developers.google.com/youtube/v3/docs/videos/insert: the title is at most 100 characters, and
// neither the title nor the description may contain < or >.

export const YOUTUBE_TITLE_MAX = 100;

/** YouTube refuses `<` and `>` in titles and descriptions; look-alikes keep the text readable. */
export function youtubeDescription(text: string): string {
  return text.replace(/</g, '‹').replace(/>/g, '›');
}

/** The first non-empty line, cut at 100 characters (code points); `Video` when the text has none. */
export function youtubeTitle(text: string): string {
  const line =
    text
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  return Array.from(youtubeDescription(line)).slice(0, YOUTUBE_TITLE_MAX).join('') || 'Video';
}
