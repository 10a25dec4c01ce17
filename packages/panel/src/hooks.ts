import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, newIdempotencyKey } from './api';
import {
  currentCursor,
  listStateQuery,
  nextPage,
  previousPage,
  readListState,
  withFilters,
  type ListState,
} from './paging';
import { navigateTo, useLocation } from './router';
import { messageOf } from './ui';

/** Loads on mount and when `deps` change; `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const latest = useRef(0);
  const reload = useCallback(async () => {
    const call = ++latest.current;
    setLoading(true);
    try {
      const value = await load();
      if (call === latest.current) {
        setData(value);
        setError(null);
      }
    } catch (err) {
      if (call === latest.current) setError(messageOf(err));
    } finally {
      if (call === latest.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload, setData };
}

type FieldErrors = Record<string, string[]>;

/**
 * A form's submission: `busy` while it runs (to disable the button), then the API's message and, for a
 * validation error, the messages of each field.
 */
export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<FieldErrors>({});
  const run = async (send: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setFields({});
    try {
      await send();
    } catch (err) {
      setError(messageOf(err));
      setFields(err instanceof ApiError ? err.fields : {});
    } finally {
      setBusy(false);
    }
  };
  /** For what the form itself finds wrong: nothing is sent. */
  const refuse = (found: FieldErrors) => {
    setError(null);
    setFields(found);
  };
  return { busy, error, fields, run, refuse };
}

/**
 * The action buttons of a list (resend, approve, delete…): `act` runs one and, when it worked, shows
 * the note it returns and reloads the list; when it failed, shows why.
 */
export function useActions(reload: () => Promise<void>) {
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const act = async (action: () => Promise<string>) => {
    setError(null);
    try {
      setNotice(await action());
      await reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return { notice, error, act, clearNotice: () => setNotice(null) };
}

/**
 * A list's filters and keyset paging, kept in the URL hash (see paging.ts): changing a filter goes
 * back to page 1, Next pushes the page's `next_cursor`, Previous pops it. Each change is a history
 * entry, so Back undoes it and a reload shows the same page.
 */
export function useListState<F extends Record<string, string>>(defaults: F) {
  const { path, query } = useLocation();
  const state = readListState(query, defaults);
  const go = (next: ListState<F>) => navigateTo(path, listStateQuery(next, defaults));
  return {
    filters: state.filters,
    cursors: state.cursors,
    cursor: currentCursor(state.cursors),
    /** For useLoad's deps: changes when the filters or the page do. */
    key: `${JSON.stringify(state.filters)} ${currentCursor(state.cursors) ?? ''}`,
    setFilters: (filters: F) => go(withFilters(state, filters)),
    setFilter: (key: keyof F) => (value: string) =>
      go(withFilters(state, { ...state.filters, [key]: value })),
    next: (cursor: string) => go({ ...state, cursors: nextPage(state.cursors, cursor) }),
    previous: () => go({ ...state, cursors: previousPage(state.cursors) }),
    /** Back to page 1 with the same filters (after adding a row, say). */
    firstPage: () => go({ ...state, cursors: [] }),
  };
}

/**
 * The Idempotency-Key of a form's action: `keyed(body, send)` sends with the same key while the same
 * body is retried after an unknown outcome (no answer, 5xx, or the first attempt still running), so a
 * request that did go through is not made twice; a new key once it succeeded, was refused (4xx: a retry
 * should be judged afresh, not replayed), or the body changed.
 */
export function useIdempotencyKey() {
  const pending = useRef<{ body: string; key: string } | null>(null);
  return async <T>(body: unknown, send: (key: string) => Promise<T>): Promise<T> => {
    const text = JSON.stringify(body);
    if (pending.current?.body !== text) pending.current = { body: text, key: newIdempotencyKey() };
    const attempt = pending.current;
    try {
      const result = await send(attempt.key);
      if (pending.current === attempt) pending.current = null;
      return result;
    } catch (err) {
      const unknownOutcome =
        !(err instanceof ApiError) || err.status >= 500 || err.code === 'idempotency_conflict';
      if (!unknownOutcome && pending.current === attempt) pending.current = null;
      throw err;
    }
  };
}
