// The composer's form against a post being edited: datetime-local values and the PUT body of what changed.
import type { TPostView } from '../api.js';
import type { attachmentsMedia } from './media-attachments.js';

/** An ISO instant as the value of a datetime-local input, in the viewer's time zone. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

export function imageUrlsOf(post: TPostView | undefined): string {
  return (post?.media?.images ?? []).map((i) => i.url).join('\n');
}

/**
 * A PUT body with only what the person changed (Variant B changes only the fields it is given), so what the
 * form cannot show (a video, alt text, a reply's media) stays as it is. Files uploaded while editing are
 * added to the post's images (with their alt text), and an uploaded video takes the place of the post's.
 */
export function changesOf(
  post: TPostView,
  form: {
    content: string;
    platforms: string[];
    segments: string[];
    mediaUrls: string;
    scheduledFor: string;
    firstComment: string;
  },
  urls: string[],
  uploaded: ReturnType<typeof attachmentsMedia>,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (form.content !== post.content) body.content = form.content;
  if ([...form.platforms].sort().join() !== [...post.platforms].sort().join())
    body.platforms = form.platforms;
  const before = post.segments ?? [];
  if (form.segments.length !== before.length || form.segments.some((s, i) => s !== before[i]?.content))
    body.segments = form.segments.map((content, i) => ({
      content,
      ...(before[i]?.media_urls?.length ? { media_urls: before[i]?.media_urls } : {}),
    }));
  if (
    form.mediaUrls.trim() !== imageUrlsOf(post).trim() ||
    uploaded.images.length > 0 ||
    uploaded.video !== null
  ) {
    // Images kept from the post keep their alt text; the form shows them by URL only.
    const altOf = new Map((post.media?.images ?? []).map((i) => [i.url, i.alt_text]));
    const images = [
      ...urls.map((url) => {
        const alt = altOf.get(url);
        return alt ? { url, alt_text: alt } : { url };
      }),
      ...uploaded.images,
    ];
    const video = uploaded.video ?? post.media?.video ?? null;
    body.media = images.length > 0 || video ? { images, video } : null;
  }
  if (form.firstComment !== (post.first_comment ?? ''))
    body.first_comment = form.firstComment.trim() ? form.firstComment : null;
  if (form.scheduledFor !== toLocalInput(post.scheduled_for))
    body.scheduled_for = form.scheduledFor ? new Date(form.scheduledFor).toISOString() : null;
  return body;
}
