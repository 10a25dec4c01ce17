/**
 * CRC16-CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR): the checksum the BR Code
 * (EMV QRCPS-MPM) carries in field 63. Check value: "123456789" gives "29B1".
 */

// Byte-at-a-time table, built once at load: every charge's BR Code goes through it, and bit by bit
// the ~150 bytes cost a few microseconds of unpredictable branches.
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let n = 0; n < 256; n++) {
    let crc = n << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[n] = crc;
  }
  return table;
})();

export function crc16CcittFalse(data: Uint8Array | string): string {
  // The BR Code CRC is defined over UTF-8 bytes, not UTF-16 code units.
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let crc = 0xffff;
  for (let i = 0; i < bytes.length; i++) {
    crc = ((crc << 8) & 0xffff) ^ (TABLE[(crc >> 8) ^ (bytes[i] as number)] as number);
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}
