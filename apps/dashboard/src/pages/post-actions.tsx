import type { TPlatform } from '@sps/core/browser';
import { useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState } from 'react';
import { api, type TPostView } from '../api.js';
import { asApiError } from '../ui.js';
import { NetworkPreview } from './network-preview.js';

/** Variant A's networks: only they can join the interval queue. */
const QUEUE_NETWORKS = new Set(['twitter', 'threads', 'bluesky', 'linkedin', 'mastodon']);

export type TQueueState = 'queued' | 'pending' | null;

interface TPublishResultA {
  platform: string;
  success: boolean;
  error?: string;
}

/** The create body of a copy: the same text, networks, media and thread, as a new draft (Variant B). */
export function duplicateBody(post: TPostView): Record<string, unknown> {
  const media = post.media;
  return {
    content: post.content,
    platforms: post.platforms,
    ...(media && (media.images.length > 0 || media.video) ? { media } : {}),
    ...(post.segments && post.segments.length > 0
      ? {
          segments: post.segments.map((s) => ({
            content: s.content,
            ...(s.media_urls?.length ? { media_urls: s.media_urls } : {}),
          })),
        }
      : {}),
  };
}

function retryNotice(results: TPublishResultA[]): string {
  const words = results.map((r) =>
    r.success ? `${r.platform} published` : `${r.platform} failed: ${r.error}`,
  );
  return `Retried the failed networks: ${words.join('; ')}.`;
}

/**
 * Names differ from the composer's ("Publish now", "Add to the queue") so each button's name is unique on the page.
 *
 * A post's actions in its row, each the public API's own call behind the session: publish a saved draft
 * (Variant B publish), retry the failed networks (Variant A retry), approve a pending post (Variant A approve),
 * add a draft to the interval queue (Variant A update with `queueStatus: queued`), duplicate (Variant B create),
 * and the per-network preview.
 */
export function PostActions({ post, queueState }: { post: TPostView; queueState: TQueueState }) {
  const client = useQueryClient();
  const previewId = useId();
  // Not `disabled` while a call runs: a disabled button loses the keyboard focus. A second press is ignored.
  const busy = useRef(false);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [previewing, setPreviewing] = useState(false);
  // Said in the row, next to the button pressed (on a phone the top of the page is far away).
  const [notice, setNotice] = useState<string | null>(null);

  const failed = Object.values(post.platform_results ?? {}).some((r) => !r.success);
  const canPublish = post.status === 'draft' || post.status === 'scheduled';
  const canRetry = failed && (post.status === 'failed' || post.status === 'published');
  const canQueue =
    post.status === 'draft' && queueState === null && post.platforms.every((p) => QUEUE_NETWORKS.has(p));

  const run = async (call: () => Promise<string>) => {
    if (busy.current) return;
    busy.current = true;
    setError(null);
    setNotice(null);
    setRunning(true);
    try {
      const notice = await call();
      await client.invalidateQueries({ queryKey: ['posts'] });
      await client.invalidateQueries({ queryKey: ['queue-schedule'] });
      setNotice(notice);
    } catch (e) {
      setError(asApiError(e).readable);
    } finally {
      busy.current = false;
      setRunning(false);
    }
  };

  const publish = () =>
    run(async () => {
      await api('POST', `/v1/posts/${post.id}/publish`);
      return 'Publishing: the results appear in this row.';
    });
  const retry = () =>
    run(async () => {
      const answer = await api<{ publishResults: TPublishResultA[] }>('POST', `/a/posts/${post.id}/retry`);
      return retryNotice(answer.publishResults);
    });
  const approve = () =>
    run(async () => {
      await api('POST', `/a/posts/${post.id}/approve`);
      return 'Approved: the post joined the queue.';
    });
  const addToQueue = () =>
    run(async () => {
      await api('PUT', `/a/posts/${post.id}`, {
        content: post.content,
        platforms: post.platforms,
        queueStatus: 'queued',
      });
      return 'Added to the queue.';
    });
  const duplicate = () =>
    run(async () => {
      const copy = await api<TPostView>('POST', '/v1/posts', duplicateBody(post));
      return `Duplicated as a new draft (post ${copy.id}).`;
    });

  return (
    <>
      {canPublish && (
        <button type="button" aria-disabled={running} onClick={publish}>
          Publish
        </button>
      )}
      {canRetry && (
        <button type="button" aria-disabled={running} onClick={retry}>
          Retry failed networks
        </button>
      )}
      {queueState === 'pending' && (
        <button type="button" aria-disabled={running} onClick={approve}>
          Approve
        </button>
      )}
      {canQueue && (
        <button type="button" className="secondary" aria-disabled={running} onClick={addToQueue}>
          Add to queue
        </button>
      )}
      <button type="button" className="secondary" aria-disabled={running} onClick={duplicate}>
        Duplicate
      </button>
      <button
        type="button"
        className="secondary"
        aria-expanded={previewing}
        aria-controls={previewId}
        onClick={() => setPreviewing((v) => !v)}
      >
        Preview
      </button>
      {notice && (
        <p role="status" className="row-notice">
          {notice}
        </p>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <div id={previewId} hidden={!previewing} className="row-preview">
        {previewing && (
          <NetworkPreview
            platforms={post.platforms as TPlatform[]}
            texts={[post.content, ...(post.segments ?? []).map((s) => s.content)]}
          />
        )}
      </div>
    </>
  );
}
