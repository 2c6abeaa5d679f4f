// Text measures in the units networks count in. Browser-safe (the dashboard counts with them too): no Node APIs.

/** What a length was counted in; also the word used in messages. */
export type TTextUnit =
  | 'weighted characters'
  | 'characters'
  | 'graphemes'
  | 'UTF-8 bytes'
  | 'UTF-16 code units';

/** A length, exact or (when counting stopped early) a lower bound that is already over the limit. */
export interface TMeasure {
  length: number;
  exact: boolean;
}

export function utf16Length(text: string): number {
  return text.length;
}

export function codePointCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point; a lone surrogate counts as one.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i += 1;
    }
    n += 1;
  }
  return n;
}

/** UTF-8 length without encoding the text (a lone surrogate counts 3, as U+FFFD would). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

let segmenter: Intl.Segmenter | undefined;

function graphemeSegmenter(): Intl.Segmenter {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return segmenter;
}

/**
 * Intl.Segmenter on Node 20 (V8 11) costs time proportional to the whole input for every segment it
 * yields, so a 63,206-character text takes seconds; Node 24's is linear. Texts are segmented in windows of
 * this many UTF-16 units: the boundaries inside a window are the text's own (grapheme rules look at most
 * one character ahead), so counting resumes exactly at the last boundary before the window's end.
 */
const GRAPHEME_WINDOW = 256;

/**
 * Extended grapheme clusters (what people see as one character). With `stopAbove`, counting stops once
 * the count passes it, and the answer is a lower bound (`exact: false`): a prefix never has more
 * graphemes than the whole text.
 */
export function graphemeCount(text: string, stopAbove = Number.POSITIVE_INFINITY): TMeasure {
  let count = 0;
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + GRAPHEME_WINDOW);
    for (;;) {
      let clusters = 0;
      let lastStart = 0;
      for (const { index } of graphemeSegmenter().segment(text.slice(start, end))) {
        clusters += 1;
        lastStart = index;
      }
      if (end === text.length) return { length: count + clusters, exact: true };
      if (clusters > 1) {
        // The window's last cluster may continue past its end: it is counted from the next window.
        count += clusters - 1;
        start += lastStart;
        break;
      }
      // One cluster fills the window (thousands of combining marks): widen it until the cluster ends.
      end = Math.min(text.length, start + (end - start) * 2);
    }
    if (count > stopAbove) return { length: count, exact: false };
  }
  return { length: count, exact: true };
}
