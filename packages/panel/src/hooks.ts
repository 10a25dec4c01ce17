import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './api';
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
 * A list's filters and keyset cursor. Changing a filter goes back to the first page: a cursor only
 * makes sense for the filters it was issued under.
 */
export function useFilters<F extends Record<string, string>>(initial: F) {
  const [filters, setFilters] = useState(initial);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const setFilter = (key: keyof F) => (value: string) => {
    setCursor(undefined);
    setFilters((f) => ({ ...f, [key]: value }));
  };
  return { filters, setFilter, cursor, setCursor };
}
