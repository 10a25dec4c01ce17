import { TurnBatch } from './turn-batch';

describe('TurnBatch', () => {
  it('starts the calls of one turn together, after the turn, and gives each its own result', async () => {
    const batch = new TurnBatch();
    const started: number[] = [];
    const call = (n: number) => async () => {
      started.push(n);
      if (n === 2) throw new Error('two failed');
      return n * 10;
    };
    const results = [1, 2, 3].map((n) => batch.run(call(n)));
    // Nothing has started within the turn that asked.
    expect(started).toEqual([]);
    await expect(results[0]).resolves.toBe(10);
    await expect(results[1]).rejects.toThrow('two failed');
    await expect(results[2]).resolves.toBe(30);
    expect(started).toEqual([1, 2, 3]);
  });

  it('issues the calls of a turn one after the other in one tick, so what they send is pipelined together', async () => {
    const batch = new TurnBatch();
    const order: string[] = [];
    await Promise.all(
      [1, 2, 3].map((n) =>
        batch.run(async () => {
          order.push(`call ${n}`);
          // A client such as ioredis flushes what was issued in a tick once the tick's microtasks run.
          queueMicrotask(() => order.push(`after ${n}`));
        }),
      ),
    );
    expect(order.slice(0, 3)).toEqual(['call 1', 'call 2', 'call 3']);
  });

  it('runs a later call in a later turn', async () => {
    const batch = new TurnBatch();
    expect(await batch.run(async () => 'first')).toBe('first');
    expect(await batch.run(async () => 'second')).toBe('second');
  });
});
