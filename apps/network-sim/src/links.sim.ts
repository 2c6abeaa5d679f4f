import twitter from 'twitter-text';

/** A link as a network finds it in a text: UTF-16 offsets, and the target with a scheme. */
export interface TSimLink {
  start: number;
  end: number;
  typed: string;
  target: string;
}

/**
 * Links in a text the way X finds them (twitter-text, links typed without a scheme included; X's own
 * parser is twitter-text). Slack's linkifier is modeled with the same finder. A link typed without a
 * scheme targets `http://…`, as both networks expand it.
 */
export function findLinks(text: string): TSimLink[] {
  // Bounded: the simulator is given post texts the service already measured.
  return twitter.extractUrlsWithIndices(text.slice(0, 30_000)).map(({ url, indices: [start, end] }) => ({
    start,
    end,
    typed: url,
    target: /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`,
  }));
}

/** Offsets in Unicode code points, as X gives entity indices. */
export const codePoints = (text: string, utf16: number) => Array.from(text.slice(0, utf16)).length;
