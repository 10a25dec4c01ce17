/**
 * One timer cutting off every outgoing call started within a short span: a signal and a timer per
 * call, or hundreds of listeners on one AbortSignal (added and removed by a list walk each), showed
 * in the profiles of the services that make thousands of calls a second. `watch` registers a call's
 * abort; the function it returns forgets it.
 */
export class SharedDeadline {
  private readonly watchers = new Set<(reason: Error) => void>();
  private reason: Error | null = null;

  constructor(ms: number) {
    setTimeout(() => {
      this.reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
      for (const abort of this.watchers) abort(this.reason);
      this.watchers.clear();
    }, ms).unref();
  }

  watch(abort: (reason: Error) => void): () => void {
    if (this.reason) {
      abort(this.reason);
      return () => undefined;
    }
    this.watchers.add(abort);
    return () => this.watchers.delete(abort);
  }
}

/**
 * The deadline of calls that must end within `timeoutMs`: calls started within the same `shareMs`
 * share one SharedDeadline, set `shareMs` later, so each is cut off at most that much late.
 */
export class DeadlineWindow {
  private current: { shared: SharedDeadline; until: number } | null = null;

  constructor(
    private readonly timeoutMs: number,
    private readonly shareMs = 10,
  ) {}

  deadline(now = Date.now()): SharedDeadline {
    if (!this.current || now >= this.current.until) {
      this.current = { shared: new SharedDeadline(this.timeoutMs + this.shareMs), until: now + this.shareMs };
    }
    return this.current.shared;
  }
}

/** What a dispatched call needs of its deadline (`guardCall`). */
export interface CallGuard {
  /** Give it the call's controller once the call has started (undici's `onRequestStart`). */
  started(controller: { abort(reason: Error): void }): void;
  /** The call is over: the deadline no longer concerns it. */
  forget(): void;
}

/**
 * Ties one undici call to a deadline. Before the call has a connection there is nothing to abort
 * yet: `failEarly` answers it at once, and the call is aborted as soon as it starts. After that, the
 * deadline aborts the call, which ends it with an error.
 */
export function guardCall(deadline: SharedDeadline, failEarly: (reason: Error) => void): CallGuard {
  let controller: { abort(reason: Error): void } | null = null;
  let expired: Error | null = null;
  const forget = deadline.watch((reason) => {
    expired = reason;
    if (controller) controller.abort(reason);
    else failEarly(reason);
  });
  return {
    started(c) {
      controller = c;
      if (expired) c.abort(expired);
    },
    forget,
  };
}
