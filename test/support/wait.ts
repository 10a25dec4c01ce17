/** Polls `check` until it returns a truthy value or the deadline passes (no fixed sleeps in tests). */
type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

export async function waitFor<T>(
  check: () => Promise<T> | T,
  { timeoutMs = 10_000, intervalMs = 25, what = 'condition' } = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as Truthy<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
