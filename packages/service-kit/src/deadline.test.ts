import { DeadlineWindow, SharedDeadline, guardCall } from './deadline';

describe('call deadlines', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('aborts a started call when its deadline passes, and fails one not started yet at once', () => {
    const deadline = new SharedDeadline(100);
    const started = { abort: jest.fn() };
    const earlyA = jest.fn();
    const a = guardCall(deadline, earlyA);
    a.started(started);
    const earlyB = jest.fn();
    const b = guardCall(deadline, earlyB);
    jest.advanceTimersByTime(99);
    expect(started.abort).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(started.abort).toHaveBeenCalledWith(expect.objectContaining({ name: 'TimeoutError' }));
    expect(earlyA).not.toHaveBeenCalled();
    expect(earlyB).toHaveBeenCalledTimes(1);
    // B's call starting after its deadline is aborted as it starts.
    const late = { abort: jest.fn() };
    b.started(late);
    expect(late.abort).toHaveBeenCalledTimes(1);
    // A deadline already past fails a new call from inside guardCall.
    const earlyC = jest.fn();
    guardCall(deadline, earlyC);
    expect(earlyC).toHaveBeenCalledTimes(1);
  });

  it('leaves a call it was told to forget alone', () => {
    const deadline = new SharedDeadline(50);
    const controller = { abort: jest.fn() };
    const guard = guardCall(deadline, jest.fn());
    guard.started(controller);
    guard.forget();
    jest.advanceTimersByTime(50);
    expect(controller.abort).not.toHaveBeenCalled();
  });

  it('shares one deadline among the calls of one window, set that much later', () => {
    const window = new DeadlineWindow(1_000, 10);
    const now = Date.now();
    const first = window.deadline(now);
    expect(window.deadline(now + 9)).toBe(first);
    expect(window.deadline(now + 10)).not.toBe(first);
    const aborted = jest.fn();
    guardCall(first, jest.fn()).started({ abort: aborted });
    jest.advanceTimersByTime(1_009);
    expect(aborted).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(aborted).toHaveBeenCalledTimes(1);
  });
});
