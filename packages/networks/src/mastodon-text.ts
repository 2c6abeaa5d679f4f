import { Parser } from 'htmlparser2';

/** A status's HTML is bounded before it is parsed (instances allow a few thousand characters of text). */
const MAX_HTML = 200_000;

/**
 * The text of a Mastodon status from its HTML `content` (the API gives no plain text except on delete):
 * paragraphs are separated by a blank line, `<br>` is a line break, entities are decoded, and a link's
 * text is its whole address (Mastodon hides the scheme and the tail of long links in
 * `<span class="invisible">`, which is still text). https://docs.joinmastodon.org/spec/activitypub/#sanitization
 */
export function mastodonStatusText(html: unknown): string {
  if (typeof html !== 'string') return '';
  let out = '';
  let paragraphs = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === 'br') out += '\n';
        if (name === 'p' && paragraphs++ > 0) out += '\n\n';
      },
      ontext(text) {
        out += text;
      },
    },
    { decodeEntities: true },
  );
  parser.write(html.slice(0, MAX_HTML));
  parser.end();
  return out;
}

/**
 * A mention as Mastodon shows it: `@user@server` is shown as `@user` once resolved, so both sides are
 * compared by the local part.
 */
export const localMentions = (text: string) => text.replace(/(^|[^\w@/])@(\w+)@[\w.-]+\w/g, '$1@$2');
