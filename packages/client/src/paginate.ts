/** One page of a list endpoint, as the iterators need it. */
export interface TPage<T> {
  items: readonly T[];
  /** The `offset` of the next page; undefined when this page is the last. */
  nextOffset: number | undefined;
}

export interface TPaginateOptions {
  /** Items per request (each endpoint has its own maximum). */
  pageSize?: number;
  /** Where to start (default 0). */
  offset?: number;
  /** Stop after this many items (default: all). */
  maxItems?: number;
}

/**
 * Yields every item of an offset-paged list, one request per page, asking for the next page only when the
 * previous one is consumed. The lists are newest first: a post created meanwhile shifts later pages by one, so
 * an item already yielded (same `id`) is skipped rather than yielded twice.
 */
export async function* paginate<T extends { id: string }>(
  fetchPage: (offset: number) => Promise<TPage<T>>,
  options: Pick<TPaginateOptions, 'offset' | 'maxItems'> = {},
): AsyncGenerator<T, void, undefined> {
  const maxItems = options.maxItems ?? Number.POSITIVE_INFINITY;
  const seen = new Set<string>();
  let offset: number | undefined = options.offset ?? 0;
  let yielded = 0;
  while (offset !== undefined && yielded < maxItems) {
    const page = await fetchPage(offset);
    if (page.items.length === 0) return;
    for (const item of page.items) {
      if (seen.has(item.id)) continue;
      seen.add(item.id);
      yield item;
      yielded += 1;
      if (yielded >= maxItems) return;
    }
    // A server that answers a next offset not past this one would loop forever: stop instead.
    offset = page.nextOffset !== undefined && page.nextOffset > offset ? page.nextOffset : undefined;
  }
}

/** The next offset of a `{total}` page: past the items received, while that is below the total. */
export function nextOffsetByTotal(offset: number, received: number, total: number): number | undefined {
  const next = offset + received;
  return received > 0 && next < total ? next : undefined;
}
