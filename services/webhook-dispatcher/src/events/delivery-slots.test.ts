import { DeliverySlots } from './delivery-slots';

const slots = () =>
  new DeliverySlots<{ url: string; id: number }>({
    concurrency: 4,
    destinationConcurrency: 2,
    waitingPlaces: 2,
    waitingShare: 1,
    fastMs: 100,
  });

describe('DeliverySlots', () => {
  it("starts what has a slot and keeps the rest waiting, counted in its destination's hold", () => {
    const s = slots();
    expect([1, 2, 3].map((id) => s.admit({ url: 'a', id }, 0))).toEqual([true, true, false]);
    expect(s.total).toBe(3);
    expect(s.waitingTotal).toBe(1);
    expect(s.heldPerDestination.get('a')).toBe(3);
  });

  it('gives a freed slot to the next delivery waiting for the same destination, in order', () => {
    const s = slots();
    for (const id of [1, 2, 3, 4]) s.admit({ url: 'a', id }, 0);
    expect(s.free('a', 5)).toEqual({ url: 'a', id: 3 });
    expect(s.free('a', 5)).toEqual({ url: 'a', id: 4 });
    expect(s.free('a', 5)).toBeNull();
    expect(s.heldPerDestination.get('a')).toBe(1);
  });

  it('when the process-wide budget held a destination back, gives it a slot freed elsewhere', () => {
    const s = slots();
    for (const [url, id] of [
      ['a', 1],
      ['a', 2],
      ['b', 3],
      ['b', 4],
    ] as const)
      s.admit({ url, id }, 0);
    // Four in flight: c waits for the process, not for its own destination.
    expect(s.admit({ url: 'c', id: 5 }, 0)).toBe(false);
    expect(s.free('a', 5)).toEqual({ url: 'c', id: 5 });
    expect(s.total).toBe(4);
  });

  it('gives places to wait in only to a destination known to answer fast', () => {
    const s = slots();
    expect(s.destinationCapacity('a')).toBe(2);
    s.admit({ url: 'a', id: 1 }, 0);
    s.free('a', 20);
    expect(s.destinationCapacity('a')).toBe(4);
    // Slow answers bring its smoothed duration over the limit; failures (null) do not count.
    for (let id = 2; id < 12; id += 1) {
      s.admit({ url: 'a', id }, 0);
      s.free('a', 2000);
    }
    expect(s.destinationCapacity('a')).toBe(2);
    s.admit({ url: 'b', id: 20 }, 0);
    s.free('b', null);
    expect(s.destinationCapacity('b')).toBe(2);
  });

  it('takes the places of a destination whose waiting deliveries had to be handed back', () => {
    const s = slots();
    s.admit({ url: 'a', id: 0 }, 0);
    s.free('a', 20);
    for (const id of [1, 2, 3]) s.admit({ url: 'a', id }, 0);
    expect(s.expired(300, 250)).toEqual([{ url: 'a', id: 3 }]);
    expect(s.destinationCapacity('a')).toBe(2);
  });

  it('hands back what waited too long, and everything when asked', () => {
    const s = slots();
    for (const id of [1, 2]) s.admit({ url: 'a', id }, 0);
    s.admit({ url: 'a', id: 3 }, 0);
    s.admit({ url: 'a', id: 4 }, 200);
    expect(s.expired(250, 250)).toEqual([{ url: 'a', id: 3 }]);
    expect(s.heldPerDestination.get('a')).toBe(3);
    expect(s.takeAllWaiting()).toEqual([{ url: 'a', id: 4 }]);
    expect(s.waitingTotal).toBe(0);
    expect(s.total).toBe(2);
  });
});
