/**
 * A list's place, kept in the URL hash (`#/orders?status=PAID&page=c1&page=c2`) so that a reload or
 * the Back button shows the same page: its filters, and the stack of keyset cursors it came through.
 * The API only ever answers a `next` cursor; "previous" pops the stack.
 */
export interface ListState<F extends Record<string, string>> {
  filters: F;
  /** Cursors of the pages after the first, in the order they were reached; empty on page 1. */
  cursors: string[];
}

export const PAGE_PARAM = 'page';

export function readListState<F extends Record<string, string>>(
  query: URLSearchParams,
  defaults: F,
): ListState<F> {
  const filters = { ...defaults };
  for (const key of Object.keys(defaults) as (keyof F & string)[]) {
    const value = query.get(key);
    if (value !== null) filters[key] = value as F[typeof key];
  }
  return { filters, cursors: query.getAll(PAGE_PARAM).filter(Boolean) };
}

/** The hash query of a list state; filters equal to their default are left out. */
export function listStateQuery<F extends Record<string, string>>(
  state: ListState<F>,
  defaults: F,
): URLSearchParams {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(state.filters)) {
    if (value !== defaults[key]) query.set(key, value);
  }
  for (const cursor of state.cursors) query.append(PAGE_PARAM, cursor);
  return query;
}

/** The cursor to send for the page shown (none on page 1). */
export const currentCursor = (cursors: readonly string[]): string | undefined => cursors[cursors.length - 1];

export const nextPage = (cursors: readonly string[], next: string): string[] => [...cursors, next];

export const previousPage = (cursors: readonly string[]): string[] => cursors.slice(0, -1);

/** New filters start again at page 1: a cursor is only good for the filters it was issued under. */
export function withFilters<F extends Record<string, string>>(state: ListState<F>, filters: F): ListState<F> {
  return { filters, cursors: [] };
}
