import type { Logger } from './logger';

export interface PeriodicJobOptions {
  /** Names the job in the log line of a failed run. */
  name: string;
  /** The pause between the end of one run and the start of the next; 0 or less: the job never runs. */
  intervalMs: number;
  /** One run; a rejection is logged and the job goes on at the next interval. */
  run: () => Promise<unknown>;
  logger: Logger;
  /** The log message of a failed run (its error's message goes with it); `<name> failed` by default. */
  failureMessage?: string;
  /** Whether the first run starts at once (the default) or after one interval. */
  runAtStart?: boolean;
}

export interface PeriodicJob {
  /** Cancels the next run and waits for the one in progress, if any. */
  stop(): Promise<void>;
}

/**
 * Runs `run` every `intervalMs`, counted from the end of the previous run, so two runs never overlap
 * however long one takes. The timer keeps no process alive.
 */
export function startPeriodicJob(options: PeriodicJobOptions): PeriodicJob {
  const { name, intervalMs, run, logger } = options;
  if (intervalMs <= 0) return { stop: async () => undefined };
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void> = Promise.resolve();

  const schedule = () => {
    timer = setTimeout(tick, intervalMs);
    timer.unref();
  };
  const tick = () => {
    timer = null;
    if (stopped) return;
    // An async wrapper: a run that throws before its first await fails like one that rejects.
    current = (async () => run())()
      .then(
        () => undefined,
        (err: unknown) =>
          logger.warn(
            { err: err instanceof Error ? err.message : String(err), job: name },
            options.failureMessage ?? `${name} failed`,
          ),
      )
      .finally(() => {
        if (!stopped) schedule();
      });
  };

  if (options.runAtStart === false) schedule();
  else tick();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
