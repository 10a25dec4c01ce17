import { eventIdOf, orderOf } from './events';

const ORDER = '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c';

describe('event ids', () => {
  it('are evt_ and 24 letters and digits, one per message, the same each time it arrives', () => {
    const ids = Array.from({ length: 5_000 }, (_, i) => eventIdOf(`message-${i}`));
    for (const id of ids) expect(id).toMatch(/^evt_[A-Za-z0-9]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(eventIdOf('message-7')).toBe(ids[7]);
    expect(new Set(ids.join('').replaceAll('evt_', '')).size).toBe(62);
  });
});

describe('the order of an event', () => {
  it("is data.order.uuid, else the producer's header, else none", () => {
    expect(orderOf({ order: { uuid: ORDER, status: 'PAID' } }, null)).toBe(ORDER);
    expect(orderOf({ withdrawal: {} }, ORDER)).toBe(ORDER);
    expect(orderOf({ withdrawal: {} }, null)).toBeNull();
    // Whatever a producer wrote, only a uuid reaches the uuid column.
    expect(orderOf({ order: { uuid: 'nope' } }, 'also-nope')).toBeNull();
    expect(orderOf(null, null)).toBeNull();
  });
});
