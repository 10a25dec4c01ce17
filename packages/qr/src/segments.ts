/**
 * Splits a text into QR segments (numeric, alphanumeric, byte) of minimal total bit length: the same
 * goal as `qrcode`'s own optimiser, which builds a graph and runs Dijkstra over regex matches and costs
 * ~0.4 ms per BR Code. This is a linear dynamic programme over the characters (after Nayuki's
 * "optimal segment mode switching"), ~15 µs for a BR Code.
 */

/**
 * A segment as `QRCode.create` takes them (its `QRCodeSegment`, kanji aside): digits or alphanumeric
 * characters as text, byte mode as UTF-8 bytes.
 */
export type QrSegment =
  | { mode: 'numeric'; data: string }
  | { mode: 'alphanumeric'; data: string }
  | { mode: 'byte'; data: Uint8Array };

// Mode indexes; COUNT_BITS rows follow the same order.
const BYTE = 0;
const ALPHANUMERIC = 1;
const NUMERIC = 2;

// Character count indicator widths for versions 1–9, 10–26 and 27–40 (ISO/IEC 18004, table 3).
const COUNT_BITS: readonly (readonly [number, number, number])[] = [
  [8, 16, 16],
  [9, 11, 13],
  [10, 12, 14],
];

// Per ASCII code: 2 = digit (numeric or alphanumeric), 1 = alphanumeric only, 0 = byte only.
const CHAR_CLASS = (() => {
  const table = new Uint8Array(128);
  for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:') table[ch.charCodeAt(0)] = 1;
  for (const ch of '0123456789') table[ch.charCodeAt(0)] = 2;
  return table;
})();

/** 0 for versions 1–9, 1 for 10–26, 2 for 27–40: the classes that share count-indicator widths. */
export function versionClass(version: number): 0 | 1 | 2 {
  return version <= 9 ? 0 : version <= 26 ? 1 : 2;
}

// Byte mode stores UTF-8, as `qrcode` does (TextEncoder); a lone surrogate becomes U+FFFD, 3 bytes.
function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/** Minimal-length segments for a symbol of the given version's class. Kanji mode is not used. */
export function optimalSegments(text: string, version: number): QrSegment[] {
  const cls = versionClass(version);
  // Costs are in sixths of a bit so numeric (10 bits per 3 digits) and alphanumeric (11 bits per 2
  // characters) stay integral; a segment header is the 4-bit mode plus the count indicator.
  const head = Float64Array.from(COUNT_BITS, (bits) => (4 + bits[cls]) * 6);
  const cost = head.slice();
  const closed = new Float64Array(3);
  // Per character (code point): where it starts in `text`, and modeOf[i * 3 + j], the mode it is
  // written in on the cheapest path that is in mode j after it.
  const starts = new Int32Array(text.length + 1);
  const modeOf = new Int8Array(text.length * 3);
  let n = 0;

  for (let at = 0; at < text.length; n++) {
    const code = text.codePointAt(at) as number;
    starts[n] = at;
    at += code > 0xffff ? 2 : 1;
    const kind = code < 128 ? (CHAR_CLASS[code] as number) : 0;
    cost[BYTE] = (cost[BYTE] as number) + utf8Length(code) * 8 * 6;
    modeOf[n * 3 + BYTE] = BYTE;
    cost[ALPHANUMERIC] = kind >= 1 ? (cost[ALPHANUMERIC] as number) + 33 : Infinity;
    modeOf[n * 3 + ALPHANUMERIC] = ALPHANUMERIC;
    cost[NUMERIC] = kind === 2 ? (cost[NUMERIC] as number) + 20 : Infinity;
    modeOf[n * 3 + NUMERIC] = NUMERIC;
    // Or close the segment here (padded to a whole bit) and open one in another mode. A mode that
    // cannot hold the character has an infinite cost, so it is never the one closed.
    for (let m = 0; m < 3; m++) closed[m] = Math.ceil((cost[m] as number) / 6) * 6;
    for (let to = 0; to < 3; to++) {
      for (let from = 0; from < 3; from++) {
        const switched = (closed[from] as number) + (head[to] as number);
        if (switched < (cost[to] as number)) {
          cost[to] = switched;
          modeOf[n * 3 + to] = from;
        }
      }
    }
  }
  starts[n] = text.length;

  let mode = BYTE;
  for (let m = 1; m < 3; m++) if ((cost[m] as number) < (cost[mode] as number)) mode = m;
  const modes = new Int8Array(n);
  for (let i = n - 1; i >= 0; i--) {
    mode = modeOf[i * 3 + mode] as number;
    modes[i] = mode;
  }

  const segments: QrSegment[] = [];
  for (let first = 0, i = 1; i <= n; i++) {
    if (i < n && modes[i] === modes[first]) continue;
    const data = text.slice(starts[first], starts[i]);
    const m = modes[first];
    segments.push(
      m === NUMERIC
        ? { mode: 'numeric', data }
        : m === ALPHANUMERIC
          ? { mode: 'alphanumeric', data }
          : { mode: 'byte', data: Buffer.from(data, 'utf8') },
    );
    first = i;
  }
  return segments;
}
