// A parameterised statement written out as plain SQL text, so it can share one simple-query message (one
// round trip) with the COMMIT after it: pg sends a parameterised query alone and waits for its answer
// before the next. Values are written as escaped literals (as pg's escapeLiteral writes them), never spliced raw.

type TScalar = string | number | bigint | boolean | Date | null | undefined;

/** A number's text; a negative one in parentheses, so `5-$1` never becomes `5--3` (the start of a comment). */
function numberText(value: number | bigint): string {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new Error('inlineStatement: a number parameter must be finite');
  }
  const text = String(value);
  return text.startsWith('-') ? `(${text})` : text;
}

/**
 * Only the types written exactly as pg writes a parameter. pg.escapeLiteral answers '' for anything that is
 * not a string, so an object (pg would send its JSON), a Buffer (bytea) or a symbol is refused here rather
 * than stored empty.
 */
function unsupported(value: unknown): never {
  throw new Error(`inlineStatement: cannot inline a value of type ${typeof value}`);
}

/**
 * What pg.escapeLiteral writes (quotes doubled; with a backslash, backslashes doubled in an E'' string, so
 * the text means the same whatever `standard_conforming_strings` is), by native replaces rather than its
 * loop in JS over each character: the outbox rows of a finalize batch are kilobytes of JSON.
 */
function literal(text: string): string {
  const quoted = text.replace(/'/g, "''");
  return text.includes('\\') ? ` E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`;
}

function scalar(value: TScalar): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'bigint') return numberText(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return literal(value.toISOString());
  if (typeof value === 'string') return literal(value);
  return unsupported(value);
}

/** A one-dimensional array in PostgreSQL's array input syntax (every element double-quoted, or NULL). */
function arrayText(values: readonly TScalar[]): string {
  const element = (value: TScalar) => {
    if (value === null || value === undefined) return 'NULL';
    if (Array.isArray(value)) throw new Error('inlineStatement: nested arrays are not supported');
    let text: string;
    if (value instanceof Date) text = value.toISOString();
    else if (['string', 'number', 'bigint', 'boolean'].includes(typeof value)) text = String(value);
    else return unsupported(value);
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
    if (Array.isArray(value)) return literal(arrayText(value as TScalar[]));
    return scalar(value as TScalar);
  });
}
