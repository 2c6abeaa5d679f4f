import pg from 'pg';

// A parameterised statement written out as plain SQL text, so it can share one simple-query message (one
// round trip) with the COMMIT after it: pg sends a parameterised query alone and waits for its answer
// before the next. Values are written as escaped literals (pg's escapeLiteral), never spliced raw.

type TScalar = string | number | boolean | Date | null | undefined;

function scalar(value: TScalar): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('inlineStatement: a number parameter must be finite');
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return pg.escapeLiteral(value.toISOString());
  return pg.escapeLiteral(value);
}

/** A one-dimensional array in PostgreSQL's array input syntax (every element double-quoted, or NULL). */
function arrayText(values: readonly TScalar[]): string {
  const element = (value: TScalar) => {
    if (value === null || value === undefined) return 'NULL';
    if (Array.isArray(value)) throw new Error('inlineStatement: nested arrays are not supported');
    const text =
      value instanceof Date
        ? value.toISOString()
        : typeof value === 'boolean'
          ? String(value)
          : String(value);
    return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  };
  return `{${values.map(element).join(',')}}`;
}

/**
 * `text` with `$1`, `$2`, … replaced by `values` as literals (arrays in array syntax, to be cast by the
 * statement: every placeholder cast, e.g. `$1::uuid[]`, since a literal is not typed from its context as
 * a parameter is). Only for statements written in this package with no `$` inside string literals or
 * dollar quoting.
 */
export function inlineStatement(text: string, values: readonly unknown[] = []): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new Error(`inlineStatement: no value for $${n}`);
    const value = values[index];
    if (Array.isArray(value)) return pg.escapeLiteral(arrayText(value as TScalar[]));
    return scalar(value as TScalar);
  });
}
