import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type TPostView } from '../api.js';
import { useFallbackInterval } from '../live-updates.js';
import { asApiError, localTime } from '../ui.js';
import { Composer } from './composer.js';
import { PostActions, type TQueueState } from './post-actions.js';
import { PostFigures } from './post-figures.js';

/** What Variant B lets a person change: drafts, scheduled posts and failed ones (which become drafts). */
const EDITABLE = new Set(['draft', 'scheduled', 'failed']);

const when = (iso: string | null) => localTime(iso);

interface TSchedule {
  queued: { post_id: string; expected_slot: string; content: string }[];
}

/** Scheduled and queued posts by local day, the next two weeks. */
function Calendar({ posts }: { posts: TPostView[] }) {
  const schedule = useQuery({
    queryKey: ['queue-schedule'],
    queryFn: () => api<TSchedule>('GET', '/queue-schedule'),
  });
  const items = [
    ...posts
      .filter((p) => p.status === 'scheduled' && p.scheduled_for)
      .map((p) => ({ id: p.id, at: p.scheduled_for!, text: p.content, kind: 'scheduled' })),
    ...(schedule.data?.queued ?? []).map((q) => ({
      id: q.post_id,
      at: q.expected_slot,
      text: q.content,
      kind: 'queued',
    })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  const days = new Map<string, typeof items>();
  for (const item of items) {
    const day = new Date(item.at).toLocaleDateString(undefined, {
      weekday: 'short',
      month: 'short',
      day: 'numeric',
    });
    days.set(day, [...(days.get(day) ?? []), item]);
  }
  return (
    <section aria-labelledby="calendar-title">
      <h2 id="calendar-title">Calendar</h2>
      {days.size === 0 && <p>Nothing scheduled or queued.</p>}
      <div className="calendar">
        {[...days].map(([day, list]) => (
          <div key={day} className="day">
            <h3>{day}</h3>
            <ul>
              {list.map((i) => (
                <li key={`${i.kind}-${i.id}`}>
                  {new Date(i.at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })} ·{' '}
                  {i.kind} · {i.text.slice(0, 60)}
                </li>
              ))}
            </ul>
          </div>
        ))}
      </div>
    </section>
  );
}

function Results({ post }: { post: TPostView }) {
  const results = post.platform_results ?? {};
  return (
    <ul className="results">
      {post.platforms.map((p) => {
        const r = results[p] as { success: boolean; post_url?: string; error?: string } | undefined;
        if (!r)
          return (
            <li key={p}>
              {p}: {post.status === 'publishing' ? 'publishing…' : '—'}
            </li>
          );
        // While other networks are still going, a copy that is out is "sent": "published" is said with the
        // post's final status, which comes in the same answer (no row says published while still publishing).
        return r.success ? (
          <li key={p}>
            {p}:{' '}
            <a href={r.post_url} target="_blank" rel="noreferrer">
              {post.status === 'publishing' ? 'sent' : 'published'}
            </a>
          </li>
        ) : (
          <li key={p} className="error">
            {p}: {r.error}
          </li>
        );
      })}
    </ul>
  );
}

/** Delete with a confirmation; a post with published copies may take them down too (Variant A's delete). */
function DeleteControls({ post, onDeleted }: { post: TPostView; onDeleted: (notice: string) => void }) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const [fromNetworks, setFromNetworks] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const published = Object.values(post.platform_results ?? {}).some((r) => r.success);
  if (post.status === 'publishing') return null;
  const remove = async () => {
    setError(null);
    try {
      if (fromNetworks) await api('DELETE', `/a/posts/${post.id}?deleteFromPlatforms=true`);
      else await api('DELETE', `/v1/posts/${post.id}`);
      await client.invalidateQueries({ queryKey: ['posts'] });
      await client.invalidateQueries({ queryKey: ['queue-schedule'] });
      onDeleted(fromNetworks ? 'Deleted; its published copies are being removed.' : 'Deleted.');
    } catch (e) {
      setError(asApiError(e).readable);
    }
  };
  if (!confirming)
    return (
      <button type="button" className="secondary" onClick={() => setConfirming(true)}>
        Delete
      </button>
    );
  return (
    <fieldset className="confirm">
      <legend>Delete this post?{published ? '' : ' It was not published anywhere.'}</legend>
      {published && (
        <label className="check">
          <input type="checkbox" checked={fromNetworks} onChange={(e) => setFromNetworks(e.target.checked)} />
          Also delete its published copies from the networks (where they allow it)
        </label>
      )}
      <button type="button" className="danger" onClick={remove}>
        Yes, delete
      </button>
      <button type="button" className="secondary" onClick={() => setConfirming(false)}>
        Keep it
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** Variant B's view has no queue state: Variant A's list says which posts are queued or pending approval. */
function useQueueStates(interval: number | false): Map<string, TQueueState> {
  const list = (status: 'queued' | 'pending') =>
    api<{ posts: { id: string }[] }>('GET', `/a/posts?status=${status}&limit=100`);
  const queued = useQuery({
    queryKey: ['posts', 'queued'],
    queryFn: () => list('queued'),
    refetchInterval: interval,
  });
  const pending = useQuery({
    queryKey: ['posts', 'pending'],
    queryFn: () => list('pending'),
    refetchInterval: interval,
  });
  const states = new Map<string, TQueueState>();
  for (const p of queued.data?.posts ?? []) states.set(p.id, 'queued');
  for (const p of pending.data?.posts ?? []) states.set(p.id, 'pending');
  return states;
}

export function PostsPage() {
  // Changes arrive on the live stream (see live-updates.ts); only while it is down do the lists poll.
  const interval = useFallbackInterval();
  const posts = useQuery({
    queryKey: ['posts'],
    queryFn: () => api<{ posts: TPostView[]; total: number }>('GET', '/v1/posts?limit=100'),
    refetchInterval: interval,
  });
  const queueStates = useQueueStates(interval);
  const [editing, setEditing] = useState<TPostView | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const list = posts.data?.posts ?? [];
  return (
    <>
      <h1>Posts</h1>
      {editing ? (
        <Composer
          key={editing.id}
          post={editing}
          onDone={(message) => {
            setEditing(null);
            setNotice(message ?? null);
          }}
        />
      ) : (
        <Composer />
      )}
      {notice && <p role="status">{notice}</p>}
      <Calendar posts={list} />
      <section aria-labelledby="list-title">
        <h2 id="list-title">All posts ({posts.data?.total ?? 0})</h2>
        <table className="posts">
          <thead>
            <tr>
              <th scope="col">Content</th>
              <th scope="col">Status</th>
              <th scope="col">Networks</th>
              <th scope="col">Scheduled for</th>
              <th scope="col">Results</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((p) => (
              <tr key={p.id} data-post-id={p.id}>
                <td data-label="Content">{p.content.slice(0, 120)}</td>
                <td data-label="Status" className={`status-${p.status}`}>
                  {p.status}
                  {queueStates.get(p.id) === 'queued' && ' · queued'}
                  {queueStates.get(p.id) === 'pending' && ' · pending approval'}
                </td>
                <td data-label="Networks">{p.platforms.join(', ')}</td>
                <td data-label="Scheduled for">{when(p.scheduled_for)}</td>
                <td data-label="Results">
                  <Results post={p} />
                  {Object.values(p.platform_results ?? {}).some((r) => r.success) && (
                    <PostFigures postId={p.id} />
                  )}
                </td>
                <td data-label="Actions">
                  <div className="actions">
                    {EDITABLE.has(p.status) && (
                      <button
                        type="button"
                        onClick={() => {
                          setNotice(null);
                          setEditing(p);
                          window.scrollTo({ top: 0 });
                        }}
                      >
                        Edit
                      </button>
                    )}
                    <PostActions post={p} queueState={queueStates.get(p.id) ?? null} />
                    <DeleteControls
                      post={p}
                      onDeleted={(message) => {
                        if (editing?.id === p.id) setEditing(null);
                        setNotice(message);
                      }}
                    />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}
