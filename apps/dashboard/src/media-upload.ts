// Uploads from the composer: small files as one multipart POST (XMLHttpRequest, for its upload progress),
// large ones with tus (tus-js-client), which resumes after a dropped connection. Both go to the API's own
// media routes behind the dashboard session, with the CSRF token, and end with the library item.
import { Upload } from 'tus-js-client';
import { ApiError, api, currentCsrfToken, type TApiIssue } from './api.js';

/** Above this, tus: a dropped connection then costs one chunk, not the whole file. */
export const TUS_THRESHOLD_BYTES = 5 * 1024 * 1024;
/** Bytes per tus PATCH: a few requests per file against the per-minute request limit, each retried alone. */
const TUS_CHUNK_BYTES = 50 * 1024 * 1024;

/** A library item as `/v1/media` shows it. */
export interface TMediaItemView {
  id: string;
  url: string;
  type: 'image' | 'gif' | 'video';
  mime_type: string;
  size_bytes: number;
  width: number | null;
  height: number | null;
  duration_s: number | null;
  alt_text: string | null;
  created_at: string;
}

export interface TUploadHandle {
  done: Promise<TMediaItemView>;
  cancel(): void;
}

function errorOf(status: number, text: string): ApiError {
  let data: Record<string, unknown> = {};
  try {
    data = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's page, a dropped connection): the status says enough.
  }
  const details = (data['details'] ?? {}) as { fix?: string; issues?: TApiIssue[]; field?: string };
  return new ApiError(
    status,
    String(data['error'] ?? (status === 0 ? 'The upload could not reach the service' : `HTTP ${status}`)),
    details.fix,
    details.issues ?? [],
    details.field,
  );
}

function multipart(file: File, onProgress: (fraction: number) => void): TUploadHandle {
  const xhr = new XMLHttpRequest();
  const done = new Promise<TMediaItemView>((resolve, reject) => {
    xhr.open('POST', '/dashboard/api/v1/media');
    xhr.setRequestHeader('x-csrf-token', currentCsrfToken());
    xhr.setRequestHeader('accept', 'application/json');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status === 201) resolve(JSON.parse(xhr.responseText) as TMediaItemView);
      else reject(errorOf(xhr.status, xhr.responseText));
    };
    xhr.onerror = () => reject(errorOf(0, ''));
    xhr.onabort = () => reject(new ApiError(0, 'The upload was cancelled', undefined, [], undefined));
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
  return { done, cancel: () => xhr.abort() };
}

function resumable(file: File, onProgress: (fraction: number) => void): TUploadHandle {
  let upload: Upload | null = null;
  // Set by cancel: the look-up of a previous upload below may answer after it, and must not start one then.
  let cancelled = false;
  let rejectDone: (error: unknown) => void = () => undefined;
  const done = new Promise<TMediaItemView>((resolve, reject) => {
    rejectDone = reject;
    upload = new Upload(file, {
      endpoint: '/dashboard/api/v1/media/uploads',
      headers: { 'x-csrf-token': currentCsrfToken() },
      metadata: { filename: file.name, filetype: file.type },
      chunkSize: TUS_CHUNK_BYTES,
      // Up to a minute apart: a 429 (each PATCH counts against the per-minute request limit) waits for the window.
      retryDelays: [0, 1000, 3000, 10000, 30000, 60000],
      // tus-js-client's default gives up on every 4xx but 409 and 423; a rate-limited request is worth retrying.
      onShouldRetry: (error) => {
        const status = error.originalResponse?.getStatus() ?? 0;
        return status === 0 || status === 409 || status === 423 || status === 429 || status >= 500;
      },
      removeFingerprintOnSuccess: true,
      onProgress: (sent, total) => onProgress(total > 0 ? sent / total : 0),
      onSuccess: ({ lastResponse }) => {
        const id = lastResponse.getHeader('Media-Id');
        if (!id) {
          reject(new ApiError(0, 'The upload finished without a media item', undefined, [], undefined));
          return;
        }
        api<TMediaItemView>('GET', `/v1/media/${encodeURIComponent(id)}`).then(resolve, reject);
      },
      onError: (error) => {
        const res = (error as { originalResponse?: { getStatus(): number; getBody(): string } | null })
          .originalResponse;
        reject(res ? errorOf(res.getStatus(), res.getBody()) : errorOf(0, ''));
      },
    });
    // A file sent before from this browser (same name, size and date) continues where it stopped.
    // If the look-up fails (storage refused), a fresh upload starts; either way, never after a cancel.
    void upload
      .findPreviousUploads()
      .catch(() => [])
      .then((previous) => {
        if (cancelled) return;
        if (previous[0]) upload?.resumeFromPreviousUpload(previous[0]);
        upload?.start();
      });
  });
  return {
    done,
    cancel: () => {
      cancelled = true;
      void upload?.abort(true).catch(() => undefined);
      rejectDone(new ApiError(0, 'The upload was cancelled', undefined, [], undefined));
    },
  };
}

/** Uploads `file` to the library, by tus above `TUS_THRESHOLD_BYTES`, reporting progress from 0 to 1. */
export function uploadMedia(file: File, onProgress: (fraction: number) => void): TUploadHandle {
  return file.size > TUS_THRESHOLD_BYTES ? resumable(file, onProgress) : multipart(file, onProgress);
}
