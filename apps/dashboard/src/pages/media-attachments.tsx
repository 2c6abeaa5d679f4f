import type { TPlatform } from '@sps/core/browser';
import { type DragEvent, useEffect, useRef, useState } from 'react';
import { type TMediaItemView, uploadMedia } from '../media-upload.js';
import { asApiError } from '../ui.js';
import { MediaFitnessList } from './media-fitness-list.js';

/** One file the composer attaches: uploading, uploaded (a library item) or refused. */
export interface TAttachment {
  key: string;
  name: string;
  isVideo: boolean;
  /** An object URL of the local file, for the thumbnail before (and after) the upload. */
  preview: string | null;
  progress: number;
  item: TMediaItemView | null;
  error: string | null;
  altText: string;
  cancel: (() => void) | null;
}

/** What the pickers offer: the types the API takes (it reads the type from the bytes either way). */
const ACCEPT = 'image/jpeg,image/png,image/webp,image/gif,video/mp4,video/quicktime,video/webm';

let counter = 0;

/** The post's `media` from the uploaded attachments (images with their alt text, and the video). */
export function attachmentsMedia(attachments: readonly TAttachment[]) {
  const done = attachments.filter((a) => a.item !== null);
  const images = done
    .filter((a) => a.item!.type !== 'video')
    .map((a) => ({ url: a.item!.url, ...(a.altText.trim() ? { alt_text: a.altText.trim() } : {}) }));
  const video = done.find((a) => a.item!.type === 'video');
  return { images, video: video ? { url: video.item!.url } : null };
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;
}

function Thumbnail({ attachment }: { attachment: TAttachment }) {
  const { preview, name, isVideo } = attachment;
  if (isVideo) {
    return (
      <div className="thumb video-thumb">
        {preview ? <video src={preview} muted preload="metadata" aria-label={`Video ${name}`} /> : null}
        <span className="thumb-badge" aria-hidden="true">
          ▶ video
        </span>
      </div>
    );
  }
  return (
    <div className="thumb">
      {preview ? <img src={preview} alt={`Thumbnail of ${name}`} /> : <span>{name}</span>}
    </div>
  );
}

/**
 * The composer's media: files dropped on the zone or picked, uploaded at once to the library (progress shown,
 * tus for large files), with a thumbnail, alt text per image, remove, and whether they fit each chosen network.
 */
export function MediaAttachments({
  attachments,
  setAttachments,
  platforms,
  imageUrls,
}: {
  attachments: TAttachment[];
  setAttachments: (update: (current: TAttachment[]) => TAttachment[]) => void;
  platforms: TPlatform[];
  /** The images the composer also sends by URL (they count towards each network's limits). */
  imageUrls: string[];
}) {
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const live = useRef(attachments);
  live.current = attachments;
  // When the composer goes away, uploads still running stop and the thumbnails' object URLs are released.
  useEffect(
    () => () => {
      for (const a of live.current) {
        a.cancel?.();
        if (a.preview) URL.revokeObjectURL(a.preview);
      }
    },
    [],
  );

  const patch = (key: string, change: Partial<TAttachment>) =>
    setAttachments((current) => current.map((a) => (a.key === key ? { ...a, ...change } : a)));

  const add = (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      counter += 1;
      const key = `upload-${counter}`;
      const handle = uploadMedia(file, (progress) => patch(key, { progress }));
      const attachment: TAttachment = {
        key,
        name: file.name,
        isVideo: file.type.startsWith('video/'),
        preview: typeof URL.createObjectURL === 'function' ? URL.createObjectURL(file) : null,
        progress: 0,
        item: null,
        error: null,
        altText: '',
        cancel: handle.cancel,
      };
      setAttachments((current) => [...current, attachment]);
      handle.done.then(
        (item) => patch(key, { item, progress: 1, cancel: null, isVideo: item.type === 'video' }),
        (error: unknown) => patch(key, { error: asApiError(error).readable, cancel: null }),
      );
    }
    if (input.current) input.current.value = '';
  };

  const remove = (attachment: TAttachment) => {
    attachment.cancel?.();
    if (attachment.preview) URL.revokeObjectURL(attachment.preview);
    setAttachments((current) => current.filter((a) => a.key !== attachment.key));
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    add(e.dataTransfer.files);
  };

  return (
    <div className="attachments">
      {/* Dropping is a shortcut: the file input inside does the same with a keyboard or a screen reader. */}
      <section
        aria-label="Drop photos or a video here"
        className={dragging ? 'drop-zone dragging' : 'drop-zone'}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <label htmlFor="media-files">Photos or a video (drop files here, or choose them)</label>
        <input
          id="media-files"
          ref={input}
          type="file"
          multiple
          accept={ACCEPT}
          onChange={(e) => add(e.target.files)}
        />
      </section>
      {attachments.length > 0 && (
        <ul className="attachment-list" aria-label="Attached media">
          {attachments.map((a, index) => (
            <li key={a.key} className="attachment">
              <Thumbnail attachment={a} />
              <div className="attachment-body">
                <strong>{a.name}</strong>
                {a.item ? (
                  <span className="muted">
                    {' '}
                    {a.item.type}, {megabytes(a.item.size_bytes)}
                    {a.item.width ? `, ${a.item.width}×${a.item.height}` : ''}
                    {a.item.duration_s !== null ? `, ${Math.round(a.item.duration_s)} s` : ''}
                  </span>
                ) : a.error ? (
                  <p role="alert" className="error">
                    Upload failed: {a.error}
                  </p>
                ) : (
                  <span>
                    {' '}
                    <progress value={a.progress} max={1} aria-label={`Uploading ${a.name}`} />{' '}
                    {Math.round(a.progress * 100)}%
                  </span>
                )}
                {!a.isVideo && !a.error && (
                  <>
                    <label htmlFor={`alt-${a.key}`}>Alt text for {a.name}</label>
                    <input
                      id={`alt-${a.key}`}
                      value={a.altText}
                      maxLength={1000}
                      onChange={(e) => patch(a.key, { altText: e.target.value })}
                    />
                  </>
                )}
                <button type="button" className="secondary" onClick={() => remove(a)}>
                  Remove {a.name || `item ${index + 1}`}
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <MediaFitnessList platforms={platforms} attachments={attachments} imageUrls={imageUrls} />
    </div>
  );
}
