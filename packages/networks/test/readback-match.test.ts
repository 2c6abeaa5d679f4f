import { describe, expect, it } from '@jest/globals';
import { expandXLinks, sameText, unwrapSlackLinks } from '../src/readback-match.js';

describe('read-back text matching keeps links', () => {
  it('X: t.co links are expanded, the appended media link dropped, a scheme X added ignored', () => {
    const found = expandXLinks(
      'New https://t.co/aaaaaaaaaa and https://t.co/bbbbbbbbbb https://t.co/cccccccccc',
      [
        { url: 'https://t.co/aaaaaaaaaa', expanded_url: 'https://blog.example.com/a' },
        { url: 'https://t.co/bbbbbbbbbb', expanded_url: 'http://example.com' },
        {
          url: 'https://t.co/cccccccccc',
          expanded_url: 'https://x.com/u/status/1/photo/1',
          media_key: '3_1',
        },
      ],
    );
    expect(sameText('New https://blog.example.com/a and example.com', found, { schemeless: true })).toBe(
      true,
    );
    expect(sameText('New https://blog.example.com/b and example.com', found, { schemeless: true })).toBe(
      false,
    );
    // Without the entities a link cannot be compared, so nothing is taken for the post.
    expect(sameText('New https://blog.example.com/a', expandXLinks('New https://t.co/aaaaaaaaaa', []))).toBe(
      false,
    );
  });

  it('Slack: <url> and <url|label> are read as typed; mentions stay as they are', () => {
    expect(
      unwrapSlackLinks('See <https://blog.example.com/a> and <http://example.com|example.com> <@U1>'),
    ).toBe('See https://blog.example.com/a and example.com <@U1>');
    expect(
      sameText('a &amp; b https://x.example/1', unwrapSlackLinks('a &amp; b <https://x.example/1>')),
    ).toBe(true);
    expect(sameText('a https://x.example/1', unwrapSlackLinks('a <https://x.example/2>'))).toBe(false);
  });
});
