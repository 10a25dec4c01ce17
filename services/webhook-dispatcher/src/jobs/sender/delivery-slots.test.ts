import { DeliverySlots } from './delivery-slots';

const slots = () =>
  new DeliverySlots<{ destination: string; id: number }>({
    concurrency: 4,
    destinationConcurrency: 2,
    waitingPlaces: 2,
    waitingShare: 1,
    fastMs: 100,
    waitMs: 100,
  });

/** One quick answer from each destination: they are then known to be fast. */
function fast(s: ReturnType<typeof slots>, ...urls: string[]) {
  for (const url of urls) {
    s.admit({ destination: url, id: -1 }, 0);
    s.free(url, 5);
  }
}

describe('DeliverySlots', () => {
  it("starts what has a slot and keeps the rest of a fast destination's waiting, counted in its hold", () => {
    const s = slots();
    fast(s, 'a');
    expect([1, 2, 3].map((id) => s.admit({ destination: 'a', id }, 0))).toEqual(['start', 'start', 'wait']);
    expect(s.total).toBe(3);
    expect(s.waitingTotal).toBe(1);
    expect(s.heldPerDestination.get('a')).toBe(3);
  });

  it('takes out the waiting deliveries a predicate picks, and no others', () => {
    const s = slots();
    fast(s, 'a', 'b');
    for (const [url, id] of [
      ['a', 1],
      ['a', 2],
      ['a', 3],
      ['a', 4],
      ['b', 5],
      ['b', 6],
      ['b', 7],
    ] as const)
      s.admit({ destination: url, id }, 0);
    // a: 1 and 2 in flight, 3 and 4 waiting; b: 5 and 6 in flight, 7 waiting.
    expect(s.takeWaitingWhere((d) => d.id % 2 === 1).map((d) => d.id)).toEqual([3, 7]);
    expect(s.waitingTotal).toBe(1);
    expect(s.heldPerDestination.get('b')).toBe(2);
    expect(s.free('a', 5)?.id).toBe(4);
    expect(s.free('b', 5)).toBeNull();
  });

  it('refuses a delivery without a slot when its destination is not known to be fast', () => {
    const s = slots();
    expect([1, 2, 3].map((id) => s.admit({ destination: 'a', id }, 0))).toEqual(['start', 'start', 'refuse']);
    expect(s.total).toBe(2);
    expect(s.heldPerDestination.get('a')).toBe(2);
  });

  it('gives a freed slot to the next delivery waiting for the same destination, in order', () => {
    const s = slots();
    fast(s, 'a');
    for (const id of [1, 2, 3, 4]) s.admit({ destination: 'a', id }, 0);
    expect(s.free('a', 5)).toEqual({ destination: 'a', id: 3 });
    expect(s.free('a', 5)).toEqual({ destination: 'a', id: 4 });
    expect(s.free('a', 5)).toBeNull();
    expect(s.heldPerDestination.get('a')).toBe(1);
  });

  it('frees a slot without taking a waiting delivery when told not to (stopping)', () => {
    const s = slots();
    fast(s, 'a');
    for (const id of [1, 2, 3]) s.admit({ destination: 'a', id }, 0);
    expect(s.free('a', 5, false)).toBeNull();
    expect(s.total).toBe(2);
    expect(s.takeAllWaiting()).toEqual([{ destination: 'a', id: 3 }]);
    expect(s.total).toBe(1);
  });

  it('when the process-wide budget held a destination back, gives it a slot freed elsewhere', () => {
    const s = slots();
    fast(s, 'a', 'b', 'c');
    for (const [url, id] of [
      ['a', 1],
      ['a', 2],
      ['b', 3],
      ['b', 4],
    ] as const)
      s.admit({ destination: url, id }, 0);
    // Four in flight: c waits for the process, not for its own destination.
    expect(s.admit({ destination: 'c', id: 5 }, 0)).toBe('wait');
    expect(s.free('a', 5)).toEqual({ destination: 'c', id: 5 });
    expect(s.total).toBe(4);
  });

  it('holds more than its slots only for the places of fast destinations', () => {
    const s = slots();
    expect(s.capacity).toBe(4);
    fast(s, 'a');
    expect(s.capacity).toBe(6);
    fast(s, 'b', 'c');
    // At most concurrency * waitingShare places in all.
    expect(s.capacity).toBe(8);
  });

  it('gives places to wait in only to a destination known to answer fast', () => {
    const s = slots();
    expect(s.destinationCapacity('a')).toBe(2);
    fast(s, 'a');
    expect(s.destinationCapacity('a')).toBe(4);
    // Slow answers bring its smoothed duration over the limit; failures (null) do not count.
    for (let id = 2; id < 12; id += 1) {
      s.admit({ destination: 'a', id }, 0);
      s.free('a', 2000);
    }
    expect(s.destinationCapacity('a')).toBe(2);
    expect(s.capacity).toBe(4);
    s.admit({ destination: 'b', id: 20 }, 0);
    s.free('b', null);
    expect(s.destinationCapacity('b')).toBe(2);
  });

  it('gives a fast destination as many places as its slots get through in waitMs, at most waitingPlaces', () => {
    const s = new DeliverySlots<{ destination: string; id: number }>({
      concurrency: 8,
      destinationConcurrency: 2,
      waitingPlaces: 8,
      waitingShare: 4,
      fastMs: 100,
      waitMs: 100,
    });
    const answer = (url: string, ms: number) => {
      s.admit({ destination: url, id: 0 }, 0);
      s.free(url, ms);
    };
    answer('quick', 5);
    answer('steady', 50);
    answer('late', 90);
    // 2 slots * 100 ms / 5 ms = 40, capped at 8; 2 * 100 / 50 = 4; 2 * 100 / 90 = 2.
    expect(s.destinationCapacity('quick')).toBe(10);
    expect(s.destinationCapacity('steady')).toBe(6);
    expect(s.destinationCapacity('late')).toBe(4);
    expect(s.capacity).toBe(8 + 8 + 4 + 2);
    // Slowing down gives places back.
    for (let n = 0; n < 20; n += 1) answer('quick', 60);
    expect(s.destinationCapacity('quick')).toBe(5);
    expect(s.capacity).toBe(8 + 3 + 4 + 2);
  });

  it('hands back what waited too long, and everything when asked', () => {
    const s = slots();
    fast(s, 'a');
    for (const id of [1, 2]) s.admit({ destination: 'a', id }, 0);
    s.admit({ destination: 'a', id: 3 }, 0);
    s.admit({ destination: 'a', id: 4 }, 200);
    expect(s.expired(250, 250)).toEqual([{ destination: 'a', id: 3 }]);
    expect(s.heldPerDestination.get('a')).toBe(3);
    expect(s.takeAllWaiting()).toEqual([{ destination: 'a', id: 4 }]);
    expect(s.waitingTotal).toBe(0);
    expect(s.total).toBe(2);
  });

  it('takes the places of a destination whose own slots stayed busy while its deliveries waited', () => {
    const s = slots();
    fast(s, 'a');
    for (const id of [1, 2, 3]) s.admit({ destination: 'a', id }, 0);
    expect(s.expired(300, 250)).toEqual([{ destination: 'a', id: 3 }]);
    expect(s.destinationCapacity('a')).toBe(2);
  });

  it('keeps the places of a destination that only waited for a process-wide slot', () => {
    const s = slots();
    fast(s, 'a', 'b', 'c');
    for (const [url, id] of [
      ['a', 1],
      ['a', 2],
      ['c', 3],
      ['c', 4],
    ] as const)
      s.admit({ destination: url, id }, 0);
    // The process is full: a waits for its own slots too, b only for the process's.
    expect(s.admit({ destination: 'a', id: 5 }, 0)).toBe('wait');
    expect(s.admit({ destination: 'b', id: 6 }, 0)).toBe('wait');
    expect(s.expired(300, 250).map((d) => d.id)).toEqual([5, 6]);
    expect(s.destinationCapacity('a')).toBe(2);
    expect(s.destinationCapacity('b')).toBe(4);
  });
});
