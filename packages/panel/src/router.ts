import { useEffect, useState } from 'react';

/**
 * Hash routes (`#/orders/<uuid>`, `#/orders?status=PAID`): the gateway serves one index.html at `/`,
 * whatever the page. The query after `?` keeps a page's filters and paging, so reload and Back work.
 */
export interface Location {
  path: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Location {
  const body = hash.replace(/^#\/?/, '');
  const mark = body.indexOf('?');
  const pathText = mark === -1 ? body : body.slice(0, mark);
  return {
    path: pathText.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(mark === -1 ? '' : body.slice(mark + 1)),
  };
}

export function useLocation(): Location {
  const [hash, setHash] = useState(() => window.location.hash);
  useEffect(() => {
    const onChange = () => setHash(window.location.hash);
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return parseHash(hash);
}

export const useRoute = (): string[] => useLocation().path;

/** `#/a/b`, or `#/a/b?x=1` with a query (empty values left out). */
export function hrefTo(parts: readonly string[], query?: URLSearchParams | Record<string, string>): string {
  const path = `#/${parts.map(encodeURIComponent).join('/')}`;
  const params = query instanceof URLSearchParams ? query : new URLSearchParams();
  if (query && !(query instanceof URLSearchParams))
    for (const [k, v] of Object.entries(query)) if (v) params.set(k, v);
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export const href = (...parts: string[]) => hrefTo(parts);

/** A new history entry: Back returns to the previous page, or to the previous filters and page. */
export function navigate(...parts: string[]): void {
  window.location.hash = href(...parts);
}

export function navigateTo(parts: readonly string[], query?: URLSearchParams): void {
  window.location.hash = hrefTo(parts, query);
}
