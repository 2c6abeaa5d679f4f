import twitter from 'twitter-text';

/**
 * What twitter-text has been given in this process. Its link search costs the square of a stretch without
 * spaces (link-weight.ts bounds what it is given), so the API and the publisher show these on /metrics:
 * a bound that stopped working shows as a large input long before anyone times a request.
 */
export interface TTextParserStats {
  /** Texts handed to the library. */
  calls: number;
  /** Sum over those texts of their length squared (UTF-16 units²): the work the parser may do. */
  squaredUnits: number;
  /** The longest text handed to it (UTF-16 units) since `takeLargestParsed` was last called. */
  largestSinceTaken: number;
}

const stats: TTextParserStats = { calls: 0, squaredUnits: 0, largestSinceTaken: 0 };
/** Calls the library makes to its own exports count once, with the outer text. */
let depth = 0;
let counting = false;

/** The library's entry points that take a text to search (parseTweet, extract*, autoLink*, isValid*). */
const ENTRY = /^(parse|extract|autoLink|isValid|getTweetLength)/;

/**
 * Counts every text given to twitter-text in this process, whichever code calls it: the entry points are
 * wrapped on the library's own module object (CommonJS, one object shared by every importer, looked up
 * at each call). Installed once by each process that serves metrics; does nothing else.
 */
export function countTextParsing(): void {
  if (counting) return;
  counting = true;
  const library = twitter as unknown as Record<string, unknown>;
  for (const [name, original] of Object.entries(library)) {
    if (!ENTRY.test(name) || typeof original !== 'function') continue;
    library[name] = function counted(this: unknown, text: unknown, ...rest: unknown[]) {
      if (depth === 0 && typeof text === 'string') {
        stats.calls += 1;
        stats.squaredUnits += text.length * text.length;
        stats.largestSinceTaken = Math.max(stats.largestSinceTaken, text.length);
      }
      depth += 1;
      try {
        return (original as (...args: unknown[]) => unknown).call(this, text, ...rest);
      } finally {
        depth -= 1;
      }
    };
  }
}

/** The counts so far. */
export function textParserStats(): Readonly<TTextParserStats> {
  return { ...stats };
}

/** The longest text since the previous call, then forgotten (a gauge read once per scrape). */
export function takeLargestParsed(): number {
  const largest = stats.largestSinceTaken;
  stats.largestSinceTaken = 0;
  return largest;
}
