import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api.js';
import type { TMediaItemView } from '../media-upload.js';
import { asApiError, localTime } from '../ui.js';

interface TLibraryItem extends TMediaItemView {
  /** Posts (not deleted) that use the item. */
  used_by: number;
  /** Of those, drafts, scheduled and publishing ones: while there are any, the item cannot be deleted. */
  pending_posts: number;
}

interface TLibraryPage {
  media: TLibraryItem[];
  total: number;
  limit: number;
  offset: number;
  quota: { used_bytes: number; quota_bytes: number; image_bytes: number; video_bytes: number };
}

const PAGE = 50;

function size(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

function measures(item: TLibraryItem): string {
  const parts = [];
  if (item.width && item.height) parts.push(`${item.width}×${item.height}`);
  if (item.duration_s !== null) parts.push(`${Math.round(item.duration_s)} s`);
  return parts.join(', ') || '—';
}

/** The media library: what was uploaded, how much of the plan's storage it takes, where it is used. */
export function MediaPage() {
  const client = useQueryClient();
  const [offset, setOffset] = useState(0);
  const [message, setMessage] = useState<{ id: string; text: string } | null>(null);
  const library = useQuery({
    queryKey: ['media-library', offset],
    queryFn: () => api<TLibraryPage>('GET', `/media?limit=${PAGE}&offset=${offset}`),
    placeholderData: keepPreviousData,
  });

  const remove = async (item: TLibraryItem) => {
    setMessage(null);
    try {
      await api('DELETE', `/v1/media/${item.id}`);
      await client.invalidateQueries({ queryKey: ['media-library'] });
    } catch (e) {
      const error = asApiError(e);
      setMessage({
        id: item.id,
        text:
          error.status === 409
            ? `Not deleted: it is used by ${item.pending_posts || 'some'} post(s) not yet published (drafts, scheduled or publishing). Remove it from those posts or delete them first.`
            : error.readable,
      });
    }
  };

  const data = library.data;
  return (
    <>
      <h1>Media</h1>
      {data && (
        <p className="quota">
          Storage used: {size(data.quota.used_bytes)} of {size(data.quota.quota_bytes)} (files up to{' '}
          {size(data.quota.image_bytes)} for images, {size(data.quota.video_bytes)} for videos).
        </p>
      )}
      {library.isError && <p role="alert">{asApiError(library.error).readable}</p>}
      {data && data.media.length === 0 && <p>No media yet: upload photos or videos in the composer.</p>}
      {data && data.media.length > 0 && (
        <table className="media-table">
          <thead>
            <tr>
              <th>Preview</th>
              <th>Type</th>
              <th>Size</th>
              <th>Dimensions / duration</th>
              <th>Uploaded</th>
              <th>Used by</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {data.media.map((item) => (
              <tr key={item.id} data-media-id={item.id}>
                <td>
                  {item.type === 'video' ? (
                    // The browser shows the video's first frame as its poster (metadata only is fetched).
                    <div className="thumb video-thumb">
                      <video src={item.url} muted preload="metadata" aria-label={`Video ${item.id}`} />
                      <span className="thumb-badge" aria-hidden="true">
                        ▶ video
                      </span>
                    </div>
                  ) : (
                    <img className="thumb" src={item.url} alt={item.alt_text ?? `Media ${item.id}`} />
                  )}
                </td>
                <td>{item.mime_type}</td>
                <td>{size(item.size_bytes)}</td>
                <td>{measures(item)}</td>
                <td>{localTime(item.created_at)}</td>
                <td>
                  {item.used_by === 1 ? '1 post' : `${item.used_by} posts`}
                  {item.pending_posts > 0 ? ` (${item.pending_posts} pending)` : ''}
                </td>
                <td>
                  <button type="button" onClick={() => remove(item)}>
                    Delete
                  </button>
                  {message?.id === item.id && (
                    <p role="alert" className="error">
                      {message.text}
                    </p>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && data.total > PAGE && (
        <div className="actions">
          <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
            Newer
          </button>
          <span>
            {offset + 1}–{Math.min(offset + PAGE, data.total)} of {data.total}
          </span>
          <button
            type="button"
            disabled={offset + PAGE >= data.total}
            onClick={() => setOffset(offset + PAGE)}
          >
            Older
          </button>
        </div>
      )}
    </>
  );
}
