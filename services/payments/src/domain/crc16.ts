/**
 * CRC16-CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR): the checksum the BR Code
 * (EMV QRCPS-MPM) carries in field 63. Check value: "123456789" gives "29B1".
 */
export function crc16CcittFalse(data: Uint8Array | string): string {
  // The BR Code CRC is defined over UTF-8 bytes, not UTF-16 code units.
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let crc = 0xffff;
  for (const byte of bytes) {
    crc ^= byte << 8;
    // Bitwise rather than table-driven: a BR Code is ~150 bytes, so a table would not be measurable.
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}
