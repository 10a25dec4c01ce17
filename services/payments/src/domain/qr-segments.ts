import type { QRCodeSegment } from 'qrcode';

/**
 * Splits a text into QR segments (numeric, alphanumeric, byte) of minimal total bit length: the same
 * goal as `qrcode`'s own optimiser, which builds a graph and runs Dijkstra over regex matches and costs
 * ~0.4 ms per BR Code. This is a linear dynamic programme over the characters (after Nayuki's
 * "optimal segment mode switching"), a few microseconds for a BR Code.
 */

type Mode = 'byte' | 'alphanumeric' | 'numeric';
const MODES: readonly Mode[] = ['byte', 'alphanumeric', 'numeric'];
const BYTE = 0;
const ALPHANUMERIC = 1;
const NUMERIC = 2;

// Character count indicator widths for versions 1–9, 10–26 and 27–40 (ISO/IEC 18004, table 3).
const COUNT_BITS: readonly (readonly [number, number, number])[] = [
  [8, 16, 16],
  [9, 11, 13],
  [10, 12, 14],
];

const ALPHANUMERIC_CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';

/** 0 for versions 1–9, 1 for 10–26, 2 for 27–40: the classes that share count-indicator widths. */
export function versionClass(version: number): 0 | 1 | 2 {
  return version <= 9 ? 0 : version <= 26 ? 1 : 2;
}

// Byte mode stores UTF-8, as `qrcode` does (TextEncoder); a lone surrogate becomes U+FFFD, 3 bytes.
function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/** Minimal-length segments for a symbol of the given version's class. Kanji mode is not used. */
export function optimalSegments(text: string, version: number): QRCodeSegment[] {
  const cls = versionClass(version);
  const chars = Array.from(text);
  // Costs are in sixths of a bit so numeric (10 bits per 3 digits) and alphanumeric (11 bits per 2
  // characters) stay integral; a segment header is the 4-bit mode plus the count indicator.
  const head = MODES.map((_, m) => (4 + (COUNT_BITS[m]?.[cls] ?? 0)) * 6);
  let prev = head.slice();
  // modeOf[i * 3 + j]: the mode character i is written in, on the cheapest path that is in mode j
  // after it; -1 when mode j cannot hold it.
  const modeOf = new Int8Array(chars.length * 3).fill(-1);

  chars.forEach((ch, i) => {
    const cur = [Infinity, Infinity, Infinity];
    cur[BYTE] = (prev[BYTE] as number) + utf8Length(ch.codePointAt(0) ?? 0) * 8 * 6;
    modeOf[i * 3 + BYTE] = BYTE;
    if (ALPHANUMERIC_CHARS.includes(ch)) {
      cur[ALPHANUMERIC] = (prev[ALPHANUMERIC] as number) + 33;
      modeOf[i * 3 + ALPHANUMERIC] = ALPHANUMERIC;
    }
    if (ch >= '0' && ch <= '9') {
      cur[NUMERIC] = (prev[NUMERIC] as number) + 20;
      modeOf[i * 3 + NUMERIC] = NUMERIC;
    }
    // Or close the segment here (padded to a whole bit) and open one in another mode.
    const closed = cur.map((cost) => Math.ceil(cost / 6) * 6);
    for (let to = 0; to < 3; to++) {
      for (let from = 0; from < 3; from++) {
        const cost = (closed[from] as number) + (head[to] as number);
        if (modeOf[i * 3 + from] !== -1 && cost < (cur[to] as number)) {
          cur[to] = cost;
          modeOf[i * 3 + to] = from;
        }
      }
    }
    prev = cur;
  });

  let mode = 0;
  for (let m = 1; m < 3; m++) if ((prev[m] as number) < (prev[mode] as number)) mode = m;
  const modes = new Int8Array(chars.length);
  for (let i = chars.length - 1; i >= 0; i--) {
    mode = modeOf[i * 3 + mode] as number;
    modes[i] = mode;
  }

  const segments: QRCodeSegment[] = [];
  let start = 0;
  for (let i = 1; i <= chars.length; i++) {
    if (i < chars.length && modes[i] === modes[start]) continue;
    const data = chars.slice(start, i).join('');
    const m = modes[start];
    segments.push(
      m === NUMERIC
        ? { mode: 'numeric', data }
        : m === ALPHANUMERIC
          ? { mode: 'alphanumeric', data }
          : { mode: 'byte', data: Buffer.from(data, 'utf8') },
    );
    start = i;
  }
  return segments;
}
