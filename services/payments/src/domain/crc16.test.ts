import { crc16CcittFalse } from './crc16';

describe('crc16CcittFalse', () => {
  it('gives the CCITT-FALSE check value', () => {
    expect(crc16CcittFalse('123456789')).toBe('29B1');
  });

  it('accepts bytes as well as strings', () => {
    expect(crc16CcittFalse(Buffer.from('123456789', 'ascii'))).toBe('29B1');
  });

  it('pads to 4 uppercase hex digits', () => {
    expect(crc16CcittFalse('')).toBe('FFFF');
    for (const input of ['a', 'ab', 'abc', 'Fulano', '0002']) {
      expect(crc16CcittFalse(input)).toMatch(/^[0-9A-F]{4}$/);
    }
  });

  it('hashes UTF-8 bytes, not UTF-16 code units', () => {
    expect(crc16CcittFalse('ã')).toBe(crc16CcittFalse(Buffer.from([0xc3, 0xa3])));
  });
});
