import { ApiError } from './api.js';

/** An error shown next to the field it concerns (the input points at it with aria-describedby). */
export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p id={id} role="alert" className="error">
      {message}
    </p>
  );
}

/** Anything thrown by a call, as an ApiError a form can show (a network failure gets plain words). */
export function asApiError(error: unknown): ApiError {
  return error instanceof ApiError
    ? error
    : new ApiError(0, 'The service could not be reached', undefined, [], undefined);
}

/** A date-time in the viewer's time zone, with the zone named so nobody has to guess. */
export function localTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  // dateStyle/timeStyle cannot be combined with timeZoneName (a TypeError): the fields are named one by one.
  return new Date(iso).toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  });
}
