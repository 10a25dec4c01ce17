import { decodeCursor, encodeCursor } from './pagination';

const forged = (text: string) => Buffer.from(text).toString('base64url');

describe('decodeCursor', () => {
  it('reads back what encodeCursor wrote', () => {
    const cursor = {
      createdAt: new Date('2026-11-26T04:00:00.000Z'),
      id: '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
    };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  });

  it('refuses, as a 400 on cursor, forged times and ids PostgreSQL would fail on', () => {
    for (const text of [
      '0000-01-01T00:00:00.000Z|3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
      '+275760-09-13T00:00:00.000Z|3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
      '-271821-04-20T00:00:00.000Z|3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
      `2026-11-26T04:00:00.000Z|${'-'.repeat(36)}`,
      `1|${'f'.repeat(36)}`,
      'nonsense',
    ]) {
      expect(() => decodeCursor(forged(text))).toThrow(
        expect.objectContaining({ status: 400, data: { cursor: expect.any(Array) } }),
      );
    }
  });

  it('reads ids of another form when the list says which', () => {
    const cursor = { createdAt: new Date('2026-11-26T04:00:00.000Z'), id: 'evt_0123456789abcdefghijABCD' };
    const pattern = /^evt_[A-Za-z0-9]{24}$/;
    expect(decodeCursor(encodeCursor(cursor), pattern)).toEqual(cursor);
    expect(() => decodeCursor(encodeCursor(cursor))).toThrow(expect.objectContaining({ status: 400 }));
    expect(() =>
      decodeCursor(encodeCursor({ ...cursor, id: '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c' }), pattern),
    ).toThrow(expect.objectContaining({ status: 400 }));
  });
});
