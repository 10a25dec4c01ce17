import { create, type QRCode } from 'qrcode';
import { optimalSegments, versionClass } from './qr-segments';

/**
 * The QR module matrix of a text at error correction level M: the same symbol
 * `QRCode.create(segments, { errorCorrectionLevel: 'M' })` yields, for a fraction of the cost of
 * `QRCode.create(text)`.
 *
 * Where `QRCode.create(text)` spends its ~1.4 ms on a BR Code (measured here): ~0.4 ms segmenting the text (see
 * qr-segments.ts) and ~0.9 ms choosing the mask, applying each of the 8 masks in turn and scoring it
 * module by module. Here `qrcode` still does the encoding, Reed-Solomon and module placement (with
 * mask 0 fixed, ~0.1 ms), and the 8 masks are scored together in one pass, one bit per mask, with
 * `qrcode`'s penalty rules, so the same mask wins.
 */

export interface QrMatrix {
  /** Modules per side. */
  size: number;
  version: number;
  maskPattern: number;
  /** Row-major, `size * size` entries, 1 = dark. */
  modules: Uint8Array;
}

// M (15% recovery) is the level Pix QR codes are usually printed with, and `qrcode`'s default.
const EC_LEVEL = 'M';
const EC_LEVEL_M_BITS = 0b00;

// ISO/IEC 18004 mask conditions; `true` flips the module.
const MASKS: readonly ((row: number, col: number) => boolean)[] = [
  (i, j) => (i + j) % 2 === 0,
  (i) => i % 2 === 0,
  (_i, j) => j % 3 === 0,
  (i, j) => (i + j) % 3 === 0,
  (i, j) => (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0,
  (i, j) => ((i * j) % 2) + ((i * j) % 3) === 0,
  (i, j) => (((i * j) % 2) + ((i * j) % 3)) % 2 === 0,
  (i, j) => (((i * j) % 3) + ((i + j) % 2)) % 2 === 0,
];

// 15-bit format information: level and mask, BCH(15,5) protected, XOR-ed with 0x5412.
function formatBits(mask: number): number {
  const data = (EC_LEVEL_M_BITS << 3) | mask;
  let rem = data << 10;
  for (let bit = 14; bit >= 10; bit--) if ((rem >> bit) & 1) rem ^= 0x537 << (bit - 10);
  return ((data << 10) | rem) ^ 0x5412;
}

/**
 * "Lanes": one byte per module whose bit p is the module's colour under mask p. The template holds,
 * per version, the lanes of a symbol whose unmasked modules are all light: which masks flip each
 * data module, and the format information bits, which differ per mask. A real symbol's lanes are
 * then `template ^ (unmasked ? 0xff : 0)`.
 */
const templates = new Map<number, Uint8Array>();

function laneTemplate(version: number, size: number, reserved: Uint8Array): Uint8Array {
  const cached = templates.get(version);
  if (cached) return cached;
  const lanes = new Uint8Array(size * size);
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      if (reserved[r * size + c]) continue;
      let flips = 0;
      MASKS.forEach((mask, p) => {
        if (mask(r, c)) flips |= 1 << p;
      });
      lanes[r * size + c] = flips;
    }
  }
  // Same placement as `qrcode`'s setupFormatInfo: one copy by the top-left finder, one split
  // between the other two.
  for (let p = 0; p < 8; p++) {
    const bits = formatBits(p);
    for (let i = 0; i < 15; i++) {
      if (((bits >> i) & 1) === 0) continue;
      const row = i < 6 ? i : i < 8 ? i + 1 : size - 15 + i;
      const col = i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1;
      lanes[row * size + 8] = (lanes[row * size + 8] as number) | (1 << p);
      lanes[8 * size + col] = (lanes[8 * size + col] as number) | (1 << p);
    }
  }
  // Function patterns depend on the version only; BR Codes use a handful of versions.
  templates.set(version, lanes);
  return lanes;
}

// N1 and N3 along one row or column, for all 8 masks at once; each weight goes to `weighted[lanes]`
// and is summed per mask afterwards.
// N1: a run of L >= 5 same-colour modules costs L - 2, counted as 1 for each module that is the 5th
// or later of its run, plus 2 when it is exactly the 5th.
// N3: 40 per 11 modules reading 1:1:3:1:1 with 4 light modules on one side, 10111010000 or
// 00001011101 oldest first, as `qrcode` checks them.
function scanLine(v: Uint8Array, start: number, step: number, size: number, weighted: Int32Array): void {
  // a1..a10: the previous 10 modules, a1 the nearest.
  let a1 = 0;
  let a2 = 0;
  let a3 = 0;
  let a4 = 0;
  let a5 = 0;
  let a6 = 0;
  let a7 = 0;
  let a8 = 0;
  let a9 = 0;
  let a10 = 0;
  for (let k = 0, at = start; k < size; k++, at += step) {
    const x = v[at] as number;
    if (k >= 4) {
      const run5 = ~((x ^ a1) | (x ^ a2) | (x ^ a3) | (x ^ a4)) & 0xff;
      weighted[run5] = (weighted[run5] as number) + 1;
      const fifth = k === 4 ? run5 : run5 & (x ^ a5);
      weighted[fifth] = (weighted[fifth] as number) + 2;
    }
    if (k >= 10) {
      // Both patterns share 1 0 1 in the middle and light modules 2nd and 2nd-to-last.
      const core = a6 & ~a5 & a4 & ~a9 & ~a1;
      if (core !== 0) {
        const first = a10 & a8 & a7 & ~(a3 | a2 | x);
        const second = ~(a10 | a8 | a7) & a3 & a2 & x;
        const finder = core & (first | second) & 0xff;
        weighted[finder] = (weighted[finder] as number) + 40;
      }
    }
    a10 = a9;
    a9 = a8;
    a8 = a7;
    a7 = a6;
    a6 = a5;
    a5 = a4;
    a4 = a3;
    a3 = a2;
    a2 = a1;
    a1 = x;
  }
}

// `qrcode`'s getBestMask over lanes: N1 + N2 + N3 + N4, lowest wins, ties to the lower mask number.
function bestMask(v: Uint8Array, size: number): number {
  const weighted = new Int32Array(256);
  const dark = new Int32Array(256);
  for (let i = 0; i < v.length; i++) dark[v[i] as number] = (dark[v[i] as number] as number) + 1;
  for (let line = 0; line < size; line++) {
    scanLine(v, line * size, 1, size, weighted);
    scanLine(v, line, size, size, weighted);
  }
  // N2: 3 per 2x2 block of one colour.
  for (let r = 0; r < size - 1; r++) {
    for (let i = r * size, end = i + size - 1; i < end; i++) {
      const a = v[i] as number;
      const b = v[i + 1] as number;
      const c = v[i + size] as number;
      const d = v[i + size + 1] as number;
      const uniform = (a & b & c & d) | (~(a | b | c | d) & 0xff);
      weighted[uniform] = (weighted[uniform] as number) + 3;
    }
  }

  const scores = new Int32Array(8);
  const darkCounts = new Int32Array(8);
  for (let lanes = 1; lanes < 256; lanes++) {
    for (let p = 0; p < 8; p++) {
      if ((lanes >> p) & 1) {
        scores[p] = (scores[p] as number) + (weighted[lanes] as number);
        darkCounts[p] = (darkCounts[p] as number) + (dark[lanes] as number);
      }
    }
  }
  let best = 0;
  let bestScore = Infinity;
  for (let p = 0; p < 8; p++) {
    // N4: 10 per 5% step away from half dark.
    const n4 = Math.abs(Math.ceil(((darkCounts[p] as number) * 100) / v.length / 5) - 10);
    const score = (scores[p] as number) + n4 * 10;
    if (score < bestScore) {
      bestScore = score;
      best = p;
    }
  }
  return best;
}

// The segments depend on the count-indicator widths, which depend on the version they end up in:
// start from versions 1–9 and redo once per class crossed (at most twice).
function encodeWithMask0(text: string): QRCode {
  let version = 1;
  let qr = create(optimalSegments(text, version), { errorCorrectionLevel: EC_LEVEL, maskPattern: 0 });
  for (let attempt = 0; attempt < 2 && versionClass(qr.version) !== versionClass(version); attempt++) {
    version = qr.version;
    qr = create(optimalSegments(text, version), { errorCorrectionLevel: EC_LEVEL, maskPattern: 0 });
  }
  return qr;
}

export function qrMatrix(text: string): QrMatrix {
  if (text === '') throw new RangeError('QR text must not be empty');
  const qr = encodeWithMask0(text);
  const { size, data, reservedBit } = qr.modules;
  const template = laneTemplate(qr.version, size, reservedBit);

  // The symbol came with mask 0, which is bit 0 of the template (format bits included), so
  // `data ^ (template & 1)` is the unmasked module, 0 on format cells.
  const lanes = new Uint8Array(size * size);
  for (let i = 0; i < lanes.length; i++) {
    const t = template[i] as number;
    lanes[i] = ((data[i] as number) ^ (t & 1) ? 0xff : 0) ^ t;
  }

  const maskPattern = bestMask(lanes, size);
  const modules = new Uint8Array(size * size);
  for (let i = 0; i < modules.length; i++) modules[i] = ((lanes[i] as number) >> maskPattern) & 1;
  return { size, version: qr.version, maskPattern, modules };
}
