import type { Logger } from './logger';
import { startPeriodicJob } from './periodic-job';

function fakeLogger() {
  const warn = jest.fn();
  return { logger: { warn } as unknown as Logger, warn };
}

/** A run that finishes when told to; `started` counts the runs begun. */
function heldRuns() {
  const releases: Array<() => void> = [];
  const runs = {
    started: 0,
    run: () =>
      new Promise<void>((resolve) => {
        runs.started += 1;
        releases.push(resolve);
      }),
    finish: () => releases.shift()?.(),
  };
  return runs;
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('startPeriodicJob', () => {
  it('runs at once, then an interval after each run ends, never two at a time', async () => {
    const runs = heldRuns();
    const job = startPeriodicJob({
      name: 'job',
      intervalMs: 100,
      run: runs.run,
      logger: fakeLogger().logger,
    });
    expect(runs.started).toBe(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(runs.started).toBe(1);
    runs.finish();
    await jest.advanceTimersByTimeAsync(99);
    expect(runs.started).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(runs.started).toBe(2);
    runs.finish();
    await job.stop();
  });

  it('waits one interval for the first run when asked', async () => {
    const runs = heldRuns();
    const job = startPeriodicJob({
      name: 'job',
      intervalMs: 100,
      run: runs.run,
      logger: fakeLogger().logger,
      runAtStart: false,
    });
    expect(runs.started).toBe(0);
    await jest.advanceTimersByTimeAsync(100);
    expect(runs.started).toBe(1);
    runs.finish();
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
    const runs = heldRuns();
    const job = startPeriodicJob({ name: 'job', intervalMs: 10, run: runs.run, logger: fakeLogger().logger });
    let stopped = false;
    const stopping = job.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(100);
    expect(stopped).toBe(false);
    runs.finish();
    await stopping;
    await jest.advanceTimersByTimeAsync(100);
    expect(runs.started).toBe(1);
  });
});
