import { findTextViolations, type TPlatform } from '@sps/core/browser';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { type ApiError, api, type TPostView, type TSocialAccountView } from '../api.js';
import { asApiError, FieldError } from '../ui.js';
import { changesOf, imageUrlsOf, toLocalInput } from './composer-changes.js';
import { attachmentsMedia, MediaAttachments, type TAttachment } from './media-attachments.js';
import { NetworkPreview } from './network-preview.js';
import { Counts, overBy } from './text-counts.js';

/** Variant A's networks: only they can join the interval queue. */
const QUEUE_NETWORKS = new Set(['twitter', 'threads', 'bluesky', 'linkedin', 'mastodon']);
type TAction = 'draft' | 'publish' | 'queue' | 'save' | 'save-publish';

/** The new-post form, or with `post` the same form editing that post (drafts, scheduled and failed posts). */
export function Composer({
  post,
  onDone,
}: {
  post?: TPostView;
  /** Editing ended: saved (with what to tell the person) or cancelled. */
  onDone?: (notice?: string) => void;
} = {}) {
  const client = useQueryClient();
  const accounts = useQuery({
    queryKey: ['accounts'],
    queryFn: () => api<{ accounts: TSocialAccountView[] }>('GET', '/v1/accounts'),
  });
  const [content, setContent] = useState(post?.content ?? '');
  const [platforms, setPlatforms] = useState<TPlatform[]>((post?.platforms ?? []) as TPlatform[]);
  const [segments, setSegments] = useState<string[]>((post?.segments ?? []).map((s) => s.content));
  const [mediaUrls, setMediaUrls] = useState(imageUrlsOf(post));
  const [attachments, setAttachments] = useState<TAttachment[]>([]);
  const [scheduledFor, setScheduledFor] = useState(toLocalInput(post?.scheduled_for ?? null));
  const [firstComment, setFirstComment] = useState(post?.first_comment ?? '');
  const [error, setError] = useState<ApiError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // An edited post keeps its networks on offer even when their account was disconnected since.
  const connected = [
    ...new Set([
      ...(accounts.data?.accounts ?? []).filter((a) => a.is_active).map((a) => a.platform),
      ...(post?.platforms ?? []),
    ]),
  ];
  const texts = [content, ...segments];
  const violations = findTextViolations(platforms, texts);
  const urls = mediaUrls
    .split(/\s+/)
    .map((u) => u.trim())
    .filter(Boolean);

  const uploading = attachments.some((a) => !a.item && !a.error);
  const uploaded = attachmentsMedia(attachments);

  const toggle = (p: TPlatform) =>
    setPlatforms((current) => (current.includes(p) ? current.filter((x) => x !== p) : [...current, p]));

  const submit = async (action: TAction, event?: FormEvent) => {
    event?.preventDefault();
    setError(null);
    setNotice(null);
    if (violations.length > 0 || uploading) return;
    setBusy(true);
    try {
      // Library items are referenced by their URL, as the API takes them (images with their alt text).
      const images = [...urls.map((url) => ({ url })), ...uploaded.images];
      const media =
        images.length > 0 || uploaded.video
          ? { images, ...(uploaded.video ? { video: uploaded.video } : {}) }
          : undefined;
      const allUrls = [...images.map((i) => i.url), ...(uploaded.video ? [uploaded.video.url] : [])];
      let created: TPostView;
      if ((action === 'save' || action === 'save-publish') && post) {
        const changes = changesOf(
          post,
          { content, platforms, segments, mediaUrls, scheduledFor, firstComment },
          urls,
          uploaded,
        );
        let message = 'Nothing was changed.';
        if (Object.keys(changes).length > 0) {
          const saved = await api<TPostView>('PUT', `/v1/posts/${post.id}`, changes);
          message = `Saved; the post is now ${saved.status === 'scheduled' ? 'scheduled' : 'a draft'}.`;
        }
        if (action === 'save-publish') {
          // The saved post is published as it is stored (Variant B publish): what was just saved goes out.
          await api('POST', `/v1/posts/${post.id}/publish`);
          message = 'Saved and publishing: the results appear in its row.';
        }
        await client.invalidateQueries({ queryKey: ['posts'] });
        onDone?.(message);
        return;
      }
      if (action === 'queue') {
        const created = await api<{ post: { id: string } }>('POST', '/a/posts', {
          content,
          platforms,
          queueStatus: 'queued',
          ...(allUrls.length > 0 ? { mediaUrls: allUrls } : {}),
        });
        setNotice(`Added to the queue (post ${created.post.id}).`);
      } else {
        created = await api<TPostView>('POST', '/v1/posts', {
          content,
          platforms,
          ...(media ? { media } : {}),
          ...(segments.length > 0 ? { segments: segments.map((s) => ({ content: s })) } : {}),
          ...(firstComment.trim() ? { first_comment: firstComment } : {}),
          ...(scheduledFor && action === 'draft'
            ? { scheduled_for: new Date(scheduledFor).toISOString() }
            : {}),
        });
        if (action === 'publish') {
          await api('POST', `/v1/posts/${created.id}/publish`);
          setNotice('Publishing: results appear in the list below.');
        } else {
          setNotice(created.status === 'scheduled' ? 'Scheduled.' : 'Saved as a draft.');
        }
      }
      setContent('');
      setSegments([]);
      setFirstComment('');
      setMediaUrls('');
      // The thumbnails' object URLs hold the local files until revoked (the page may stay open all day).
      for (const a of attachments) if (a.preview) URL.revokeObjectURL(a.preview);
      setAttachments([]);
      setScheduledFor('');
      await client.invalidateQueries({ queryKey: ['posts'] });
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(false);
    }
  };

  const queueAllowed = platforms.length > 0 && platforms.every((p) => QUEUE_NETWORKS.has(p));
  const contentError =
    violations
      .filter((v) => v.segmentIndex === 0)
      .map((v) => `Too long for ${v.platform}: ${overBy(v)}.`)
      .join(' ') || error?.forField('content');

  return (
    <form
      className="composer"
      onSubmit={(e) => submit(post ? 'save' : 'draft', e)}
      aria-label={post ? 'Edit the post' : 'Compose a post'}
    >
      <h2>{post ? 'Edit post' : 'New post'}</h2>
      <label htmlFor="content">Content</label>
      <textarea
        id="content"
        rows={4}
        value={content}
        onChange={(e) => setContent(e.target.value)}
        aria-describedby={contentError ? 'content-error' : undefined}
      />
      <FieldError id="content-error" message={contentError} />
      <Counts platforms={platforms} texts={texts} />

      <fieldset>
        <legend>Networks</legend>
        {connected.length === 0 && <p>No connected accounts yet: connect one on the Accounts page.</p>}
        {connected.map((p) => (
          <label key={p} className="check">
            <input
              type="checkbox"
              checked={platforms.includes(p as TPlatform)}
              onChange={() => toggle(p as TPlatform)}
            />
            {p}
          </label>
        ))}
      </fieldset>
      <FieldError id="platforms-error" message={error?.forField('platforms')} />

      {segments.map((segment, i) => {
        const id = `segment-${i + 1}`;
        const over = violations.filter((v) => v.segmentIndex === i + 1);
        return (
          <div key={id} className="segment">
            <label htmlFor={id}>Thread reply {i + 1}</label>
            <textarea
              id={id}
              rows={2}
              value={segment}
              onChange={(e) => setSegments((s) => s.map((x, j) => (j === i ? e.target.value : x)))}
            />
            <FieldError
              id={`${id}-error`}
              message={
                over.map((v) => `Too long for ${v.platform}: ${overBy(v)}.`).join(' ') ||
                error?.forField(`segments.${i}`)
              }
            />
            <button type="button" onClick={() => setSegments((s) => s.filter((_, j) => j !== i))}>
              Remove reply {i + 1}
            </button>
          </div>
        );
      })}
      <button type="button" onClick={() => setSegments((s) => [...s, ''])}>
        Add a thread reply
      </button>

      <label htmlFor="first-comment">First comment (optional)</label>
      <textarea
        id="first-comment"
        rows={2}
        value={firstComment}
        onChange={(e) => setFirstComment(e.target.value)}
        aria-describedby="first-comment-hint"
      />
      <p id="first-comment-hint" className="hint">
        Posted after the post: a comment on LinkedIn, Facebook, Instagram and YouTube, a reply on X, Threads,
        Bluesky and Mastodon.
      </p>
      <FieldError id="first-comment-error" message={error?.forField('first_comment')} />

      <label htmlFor="media">Image URLs (one per line)</label>
      <textarea id="media" rows={2} value={mediaUrls} onChange={(e) => setMediaUrls(e.target.value)} />
      <MediaAttachments
        attachments={attachments}
        setAttachments={setAttachments}
        platforms={platforms}
        imageUrls={urls}
      />
      <FieldError id="media-error" message={error?.forField('media')} />
      {urls.length > 0 && (
        <div className="previews">
          {urls.slice(0, 4).map((u) => (
            <img key={u} src={u} alt={`Preview of ${u}`} />
          ))}
        </div>
      )}

      <label htmlFor="scheduled-for">
        Schedule for (your time zone, {Intl.DateTimeFormat().resolvedOptions().timeZone})
      </label>
      <input
        id="scheduled-for"
        type="datetime-local"
        value={scheduledFor}
        onChange={(e) => setScheduledFor(e.target.value)}
      />
      <FieldError id="scheduled-error" message={error?.forField('scheduled_for')} />

      <details className="preview-box">
        <summary>Preview on each network</summary>
        <NetworkPreview platforms={platforms} texts={texts} />
      </details>

      {error && !['content', 'platforms', 'media', 'scheduled_for'].some((f) => error.forField(f)) && (
        <p role="alert" className="error">
          {error.readable}
        </p>
      )}
      {notice && <p role="status">{notice}</p>}
      {post ? (
        <div className="actions">
          <button type="submit" disabled={busy || uploading || violations.length > 0}>
            Save changes
          </button>
          {(post.status === 'draft' || post.status === 'scheduled') && (
            <button
              type="button"
              disabled={busy || uploading || violations.length > 0}
              onClick={() => submit('save-publish')}
            >
              Save and publish
            </button>
          )}
          <button type="button" className="secondary" onClick={() => onDone?.()}>
            Cancel editing
          </button>
        </div>
      ) : (
        <div className="actions">
          <button type="submit" disabled={busy || uploading || violations.length > 0}>
            {scheduledFor ? 'Schedule' : 'Save draft'}
          </button>
          <button
            type="button"
            disabled={busy || uploading || violations.length > 0}
            onClick={() => submit('publish')}
          >
            Publish now
          </button>
          <button
            type="button"
            disabled={busy || uploading || violations.length > 0 || !queueAllowed}
            title={
              queueAllowed ? undefined : 'The queue takes X, Threads, Bluesky, LinkedIn and Mastodon posts'
            }
            onClick={() => submit('queue')}
          >
            Add to the queue
          </button>
        </div>
      )}
    </form>
  );
}
