import type { Logger } from './logger';
import { startPeriodicJob, type PeriodicJobOptions } from './periodic-job';

function fakeLogger() {
  const warn = jest.fn();
  return { logger: { warn } as unknown as Logger, warn };
}

/**
 * A job of 100 ms whose runs finish when told to (`finish`); `startedAfter(ms)` advances the clock and
 * answers how many runs have begun.
 */
function heldJob(options: Partial<PeriodicJobOptions> = {}) {
  const releases: Array<() => void> = [];
  let started = 0;
  const run = () =>
    new Promise<void>((resolve) => {
      started += 1;
      releases.push(resolve);
    });
  const job = startPeriodicJob({
    name: 'job',
    intervalMs: 100,
    run,
    logger: fakeLogger().logger,
    ...options,
  });
  return {
    job,
    finish: () => releases.shift()?.(),
    startedAfter: async (ms: number) => {
      await jest.advanceTimersByTimeAsync(ms);
      return started;
    },
  };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('startPeriodicJob', () => {
  it('runs at once, then an interval after each run ends, never two at a time', async () => {
    const { job, finish, startedAfter } = heldJob();
    expect(await startedAfter(1_000)).toBe(1);
    finish();
    expect(await startedAfter(99)).toBe(1);
    expect(await startedAfter(1)).toBe(2);
    finish();
    await job.stop();
  });

  it('waits one interval for the first run when asked', async () => {
    const { job, finish, startedAfter } = heldJob({ runAtStart: false });
    expect(await startedAfter(99)).toBe(0);
    expect(await startedAfter(1)).toBe(1);
    finish();
    await job.stop();
  });

  it('never runs with an interval of 0', async () => {
    const run = jest.fn(async () => undefined);
    const job = startPeriodicJob({ name: 'job', intervalMs: 0, run, logger: fakeLogger().logger });
    await jest.advanceTimersByTimeAsync(10_000);
    await job.stop();
    expect(run).not.toHaveBeenCalled();
  });

  it('logs a failed run, thrown or rejected, and runs again at the next interval', async () => {
    const { logger, warn } = fakeLogger();
    let calls = 0;
    const run = () => {
      calls += 1;
      if (calls === 1) throw new Error('thrown');
      return Promise.reject(new Error('rejected'));
    };
    const job = startPeriodicJob({
      name: 'cleanup',
      intervalMs: 50,
      run,
      logger,
      failureMessage: 'it failed',
    });
    await jest.advanceTimersByTimeAsync(50);
    expect(calls).toBe(2);
    expect(warn.mock.calls).toEqual([
      [{ err: 'thrown', job: 'cleanup' }, 'it failed'],
      [{ err: 'rejected', job: 'cleanup' }, 'it failed'],
    ]);
    await job.stop();
  });

  it('names the job in the default failure message', async () => {
    const { logger, warn } = fakeLogger();
    const job = startPeriodicJob({
      name: 'sweep',
      intervalMs: 50,
      run: () => Promise.reject(new Error('x')),
      logger,
    });
    await job.stop();
    expect(warn).toHaveBeenCalledWith({ err: 'x', job: 'sweep' }, 'sweep failed');
  });

  it('stop waits for the run in progress and cancels the next', async () => {
    const { job, finish, startedAfter } = heldJob({ intervalMs: 10 });
    let stopped = false;
    const stopping = job.stop().then(() => (stopped = true));
    expect(await startedAfter(100)).toBe(1);
    expect(stopped).toBe(false);
    finish();
    await stopping;
    expect(await startedAfter(100)).toBe(1);
  });
});
