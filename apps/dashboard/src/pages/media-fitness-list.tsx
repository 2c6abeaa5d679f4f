import { mediaFitness, type TFitnessItem, type TPlatform } from '@sps/core/browser';
import type { TAttachment } from './media-attachments.js';

/**
 * For each chosen network, whether the uploaded media fits: the API's own rules (`mediaFitness` from core,
 * the check post creation runs plus the connectors' size and duration caps), computed here as the person
 * picks files and networks, before anything is saved.
 */
export function MediaFitnessList({
  platforms,
  attachments,
  imageUrls,
}: {
  platforms: readonly TPlatform[];
  attachments: readonly TAttachment[];
  /** Images given by URL: sent before the uploads, so they count (size unknown until publish). */
  imageUrls: readonly string[];
}) {
  const uploaded = attachments.filter((a) => a.item !== null);
  if (platforms.length === 0 || uploaded.length === 0) return null;
  // In the order the composer sends them: URL images, uploaded images, the video.
  const named = [
    ...imageUrls.map((url) => ({
      name: url,
      item: { url, type: 'image' as const, sizeBytes: null, durationS: null },
    })),
    ...uploaded.map((a) => ({
      name: a.name,
      item: {
        url: a.item!.url,
        type: a.item!.type,
        sizeBytes: a.item!.size_bytes,
        durationS: a.item!.duration_s,
      },
    })),
  ];
  const items: TFitnessItem[] = named.map((n) => n.item);
  const fitness = mediaFitness(platforms, items, { draft: true });
  return (
    <ul className="fitness" aria-label="Media fit per network">
      {fitness.map((f) => {
        const notes = [
          ...f.post.map((n) => ({ ...n, about: null as string | null })),
          ...f.items.flatMap((list, i) => list.map((n) => ({ ...n, about: named[i]!.name }))),
        ];
        const warnings = notes.some((n) => n.level === 'warning');
        return (
          <li key={f.platform} className={f.fits ? (warnings ? 'fits-with-notes' : 'fits') : 'unfit'}>
            <strong>{f.platform}</strong>:{' '}
            {f.fits ? (warnings ? 'fits, with a warning' : 'fits') : 'does not fit'}
            {notes.length > 0 && (
              <ul>
                {notes.map((n) => (
                  <li key={`${n.about}-${n.message}`} className={n.level}>
                    {n.level === 'error' ? 'Refused' : 'Warning'}
                    {n.about ? ` (${n.about})` : ''}: {n.message}
                  </li>
                ))}
              </ul>
            )}
          </li>
        );
      })}
    </ul>
  );
}
