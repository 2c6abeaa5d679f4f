import { describe, expect, it } from '@jest/globals';
import { YOUTUBE_TITLE_MAX, youtubeDescription, youtubeTitle } from '../src/youtube-text.js';

describe('youtube text (what the connector sends and the dashboard previews)', () => {
  it('takes the first non-empty line as the title, trimmed, cut at 100 code points', () => {
    expect(youtubeTitle('\n  \n  My video  \nmore text')).toBe('My video');
    const long = '😀'.repeat(150);
    expect(Array.from(youtubeTitle(long))).toHaveLength(YOUTUBE_TITLE_MAX);
  });

  it('replaces < and > (YouTube refuses them) in the title and description', () => {
    expect(youtubeTitle('a <b> c')).toBe('a ‹b› c');
    expect(youtubeDescription('1 < 2 > 0\nline')).toBe('1 ‹ 2 › 0\nline');
  });

  it('names a video without text "Video"', () => {
    expect(youtubeTitle('')).toBe('Video');
    expect(youtubeTitle(' \n ')).toBe('Video');
  });
});
