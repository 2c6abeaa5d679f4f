// CPU cost of measuring hostile texts: twitter-text's parseTweet on the whole text (what the service did
// before the bound) against the bounded check every create, publish and due post now runs
// (findPublishProblems: every network's counting rule, one parse budget per check). No servers needed.
//
//   npm run bench:text            (add --quick to skip the unbounded parses of the longest texts)
import { findPublishProblems } from '@sps/core';
import twitter from 'twitter-text';

const quick = process.argv.includes('--quick');
const repeat = (unit, units) => unit.repeat(Math.ceil(units / unit.length)).slice(0, units);

const texts = [
  ['"a.a.a.…" 63,206 (the issue)', repeat('a.', 63206)],
  ['"日.日.…" 63,206', repeat('日.', 63206)],
  ['"日.日.…" then one link', `${repeat('日.', 63190)}!a.com`],
  ['"a.com" glued 63,205', repeat('a.com', 63205)],
  ['"😀." 63,206', repeat('😀.', 63206)],
  ['"http://a.a.…" 63,206 (Mastodon)', `http://${repeat('a.', 63199)}`],
  ['"日.…!a.com" 2,048 × 25 (spends the budget)', `${repeat('日.', 2040)}!a.com`],
  ['a tweet: 200 chars + a 300-char link', `${'word '.repeat(40)}https://example.com/${'p'.repeat(280)}`],
];

function time(fn) {
  const start = performance.now();
  const result = fn();
  return { ms: performance.now() - start, result };
}

const everyNetwork = ['twitter', 'mastodon', 'bluesky', 'threads', 'youtube', 'tiktok', 'linkedin'];
console.log(`node ${process.version}`);
console.log('text'.padEnd(40), 'parseTweet(whole)'.padStart(18), 'bounded check'.padStart(14), '  verdict');
for (const [name, text] of texts) {
  const whole = quick && text.length > 20000 ? null : time(() => twitter.parseTweet(text).weightedLength);
  // A post with this text and 24 replies of its first 5,000 characters, to every network: the most one
  // Variant B request can ask to measure.
  const replies = Array.from({ length: 24 }, () => ({ content: text.slice(0, 5000), media: null }));
  const post = { content: text, platforms: everyNetwork, media: null, segments: replies };
  findPublishProblems(post, new Set(everyNetwork)); // warm-up
  const bounded = time(() => findPublishProblems(post, new Set(everyNetwork)));
  const verdict = bounded.result.tooLong
    .filter((t) => t.field === 'content')
    .map((t) => t.platform)
    .join(',');
  console.log(
    name.padEnd(40),
    (whole ? `${whole.ms.toFixed(0)} ms` : 'skipped').padStart(18),
    `${bounded.ms.toFixed(1)} ms`.padStart(14),
    ` too long for: ${verdict || '-'}`,
  );
}
