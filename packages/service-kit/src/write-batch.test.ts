import { WriteBatch } from './write-batch';

/** A write whose batches are recorded and finish only when told to. */
function recorder(fail: (item: number) => boolean = () => false) {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  const write = (items: number[]) => {
    batches.push(items);
    return new Promise<string[]>((resolve, reject) => {
      pending.push(() =>
        items.some(fail) ? reject(new Error(`bad ${items.join(',')}`)) : resolve(items.map((i) => `ok ${i}`)),
      );
    });
  };
  // Finishes every write, including those that the finished ones start, until a few turns pass quietly.
  const finishAll = async () => {
    for (let quiet = 0; quiet < 3; quiet += 1) {
      if (pending.length > 0) quiet = 0;
      pending.splice(0).forEach((finish) => finish());
      await new Promise((r) => setImmediate(r));
    }
  };
  // Finishes the writes started so far, not those they start.
  const finishStarted = async () => {
    pending.splice(0).forEach((finish) => finish());
    for (let i = 0; i < 3; i += 1) await new Promise((r) => setImmediate(r));
  };
  return { batches, write, finishAll, finishStarted };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('WriteBatch', () => {
  it('writes what one turn submits in one batch, each caller getting its own result', async () => {
    const { batches, write, finishAll } = recorder();
    const batch = new WriteBatch(write);
    const results = Promise.all([1, 2, 3].map((i) => batch.submit(i)));
    await turn();
    expect(batches).toEqual([[1, 2, 3]]);
    await finishAll();
    expect(await results).toEqual(['ok 1', 'ok 2', 'ok 3']);
  });

  it('holds what arrives while maxInFlight batches are being written, then writes it together', async () => {
    const { batches, write, finishAll } = recorder();
    const batch = new WriteBatch(write, { maxInFlight: 1 });
    const first = batch.submit(1);
    await turn();
    const later = [2, 3, 4].map((i) => batch.submit(i));
    await turn();
    expect(batches).toEqual([[1]]);
    await finishAll();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    expect(await Promise.all([first, ...later])).toEqual(['ok 1', 'ok 2', 'ok 3', 'ok 4']);
  });

  it('splits a queue longer than maxBatch', async () => {
    const { batches, write, finishAll } = recorder();
    const batch = new WriteBatch(write, { maxBatch: 2, maxInFlight: 2 });
    const results = Promise.all([1, 2, 3, 4, 5].map((i) => batch.submit(i)));
    await turn();
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    await finishAll();
    expect(batches.at(-1)).toEqual([5]);
    expect(await results).toHaveLength(5);
  });

  it('writes a failed batch again one item at a time, so only the bad item fails', async () => {
    const { batches, write, finishAll } = recorder((i) => i === 2);
    const batch = new WriteBatch(write);
    const outcomes = Promise.allSettled([1, 2, 3].map((i) => batch.submit(i)));
    await turn();
    await finishAll();
    expect(batches).toEqual([[1, 2, 3], [1], [2], [3]]);
    const settled = await outcomes;
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(settled[1]).toMatchObject({ reason: new Error('bad 2') });
  });

  it('rejects a lone item that fails without writing it again', async () => {
    const { batches, write, finishAll } = recorder(() => true);
    const batch = new WriteBatch(write);
    const outcome = batch.submit(7).catch((err: Error) => err.message);
    await turn();
    await finishAll();
    expect(await outcome).toBe('bad 7');
    expect(batches).toEqual([[7]]);
  });

  it('writes the items of a failed batch again all at once by default', async () => {
    const { batches, write, finishAll, finishStarted } = recorder((i) => i === 2);
    const batch = new WriteBatch(write);
    const outcomes = Promise.allSettled([1, 2, 3].map((i) => batch.submit(i)));
    await turn();
    await finishStarted();
    expect(batches).toEqual([[1, 2, 3], [1], [2], [3]]);
    await finishAll();
    expect((await outcomes).map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('with retryOneAtATime, writes a failed batch again one item after another', async () => {
    const { batches, write, finishAll, finishStarted } = recorder((i) => i === 2);
    const batch = new WriteBatch(write, { retryOneAtATime: true });
    const outcomes = Promise.allSettled([1, 2, 3].map((i) => batch.submit(i)));
    await turn();
    await finishStarted();
    expect(batches).toEqual([[1, 2, 3], [1]]);
    await finishStarted();
    expect(batches).toEqual([[1, 2, 3], [1], [2]]);
    await finishAll();
    expect(batches).toEqual([[1, 2, 3], [1], [2], [3]]);
    expect((await outcomes).map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('with retryOneAtATime, writes a lone item that failed once more', async () => {
    let failures = 1;
    const { batches, write, finishAll } = recorder(() => failures-- > 0);
    const batch = new WriteBatch(write, { retryOneAtATime: true });
    const outcome = batch.submit(7);
    await turn();
    await finishAll();
    await expect(outcome).resolves.toBe('ok 7');
    expect(batches).toEqual([[7], [7]]);
  });

  it('settled() resolves once everything submitted so far is written, queued batches included', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const written: number[] = [];
    const batch = new WriteBatch(
      async (items: number[]) => {
        await gate;
        written.push(...items);
        return items;
      },
      { maxInFlight: 1 },
    );
    void batch.submit(1);
    await turn();
    void batch.submit(2);
    let settled = false;
    const done = batch.settled().then(() => (settled = true));
    await turn();
    expect(settled).toBe(false);
    release();
    await done;
    expect(written).toEqual([1, 2]);
  });

  it('settled() resolves at once when nothing was submitted', async () => {
    await expect(new WriteBatch(async (items: number[]) => items).settled()).resolves.toBeUndefined();
  });
});
