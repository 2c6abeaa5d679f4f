// Text lengths as each chosen network counts them, for the composer.
import { NETWORK_TEXT_LIMITS, type TPlatform, type TTextViolation, textLength } from '@sps/core/browser';

/** `281 of 280 characters`, in the unit the network counts (bytes, graphemes…). */
export function overBy(v: TTextViolation): string {
  const unit = v.unit === 'weighted characters' ? 'characters' : v.unit;
  return v.exact ? `${v.length} of ${v.max} ${unit}` : `more than ${v.max} ${unit}`;
}

/** Lengths as each chosen network counts them (the API's own functions), over-limit ones marked. */
export function Counts({ platforms, texts }: { platforms: TPlatform[]; texts: string[] }) {
  if (platforms.length === 0) return null;
  return (
    <ul className="counts" aria-label="Characters per network">
      {platforms.map((p) => {
        const longest = Math.max(0, ...texts.map((t) => textLength(p, t)));
        const max = NETWORK_TEXT_LIMITS[p].max;
        return (
          <li key={p} className={longest > max ? 'over' : undefined}>
            {p}: {longest}/{max}
          </li>
        );
      })}
    </ul>
  );
}
