import { useQuery } from '@tanstack/react-query';
import { api, type TPostView } from '../api.js';
import { Composer } from './composer.js';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

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
        return r.success ? (
          <li key={p}>
            {p}:{' '}
            <a href={r.post_url} target="_blank" rel="noreferrer">
              published
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

export function PostsPage() {
  const posts = useQuery({
    queryKey: ['posts'],
    queryFn: () => api<{ posts: TPostView[]; total: number }>('GET', '/v1/posts?limit=100'),
    // Results appear without a reload: poll while anything is publishing.
    refetchInterval: (q) => (q.state.data?.posts.some((p) => p.status === 'publishing') ? 1500 : 15_000),
  });
  const list = posts.data?.posts ?? [];
  return (
    <>
      <h1>Posts</h1>
      <Composer />
      <Calendar posts={list} />
      <section aria-labelledby="list-title">
        <h2 id="list-title">All posts ({posts.data?.total ?? 0})</h2>
        <table>
          <thead>
            <tr>
              <th scope="col">Content</th>
              <th scope="col">Status</th>
              <th scope="col">Networks</th>
              <th scope="col">Scheduled for</th>
              <th scope="col">Results</th>
            </tr>
          </thead>
          <tbody>
            {list.map((p) => (
              <tr key={p.id} data-post-id={p.id}>
                <td>{p.content.slice(0, 120)}</td>
                <td className={`status-${p.status}`}>{p.status}</td>
                <td>{p.platforms.join(', ')}</td>
                <td>{when(p.scheduled_for)}</td>
                <td>
                  <Results post={p} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}
