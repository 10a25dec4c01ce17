import { crc32 } from './crc32';

describe('crc32', () => {
  it('gives the IEEE check value', () => {
    expect(crc32(Buffer.from('123456789', 'ascii'))).toBe(0xcbf43926);
  });

  it('hashes a sub-range', () => {
    expect(crc32(Buffer.from('xx123456789yy', 'ascii'), 2, 11)).toBe(0xcbf43926);
  });

  it('matches the IEND chunk CRC every PNG ends with', () => {
    expect(crc32(Buffer.from('IEND', 'ascii'))).toBe(0xae426082);
  });
});
