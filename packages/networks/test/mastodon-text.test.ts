import { describe, expect, it } from '@jest/globals';
import { localMentions, mastodonStatusText } from '../src/mastodon-text.js';
import { sameText } from '../src/readback-match.js';

describe('a Mastodon status read back as text', () => {
  it('keeps paragraphs, line breaks, entities and whole links (hidden parts included)', () => {
    const html =
      '<p>Read &amp; share: <a href="https://blog.example.com/a-rather-long-path/x" rel="nofollow noopener" ' +
      'target="_blank"><span class="invisible">https://</span><span class="ellipsis">blog.example.com/a-rather-long</span>' +
      '<span class="invisible">-path/x</span></a><br />line two</p><p>&lt;p&gt; stays text</p>';
    expect(mastodonStatusText(html)).toBe(
      'Read & share: https://blog.example.com/a-rather-long-path/x\nline two\n\n<p> stays text',
    );
    expect(
      sameText(
        'Read & share: https://blog.example.com/a-rather-long-path/y\nline two\n\n<p> stays text',
        mastodonStatusText(html),
      ),
    ).toBe(false);
  });

  it('compares mentions by their local part, as Mastodon shows a resolved remote mention', () => {
    const html =
      '<p><span class="h-card" translate="no"><a href="https://mastodon.social/@bob" class="u-url mention">@<span>bob</span></a></span> hi</p>';
    expect(localMentions(mastodonStatusText(html))).toBe(localMentions('@bob@mastodon.social hi'));
    expect(localMentions('mail me at me@example.com')).toBe('mail me at me@example.com');
  });

  it('is bounded and total: no HTML is not a status', () => {
    expect(mastodonStatusText(undefined)).toBe('');
    expect(mastodonStatusText(`<p>${'a'.repeat(300_000)}</p>`).length).toBe(200_000 - 3);
  });
});
