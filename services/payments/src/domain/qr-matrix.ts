import { create, type QRCode } from 'qrcode';
import { optimalSegments, versionClass } from './qr-segments';

/**
 * The QR module matrix of a text at error correction level M, identical to what
 * `QRCode.create(segments, { errorCorrectionLevel: 'M' })` yields, in about a tenth of the time of
 * `QRCode.create(text)`.
 *
 * Where the time goes in `QRCode.create(text)` (~1.4 ms for a BR Code): ~0.4 ms segmenting the text
 * (see qr-segments.ts) and ~0.9 ms choosing the mask, which applies each of the 8 masks and scores it
 * through per-module method calls. Here `qrcode` still does the encoding, Reed-Solomon and module
 * placement (with mask 0 fixed, ~0.07 ms), and the 8 masks are scored over a flat array with the
 * same penalty rules, so the same mask wins.
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

// Same placement as `qrcode`'s setupFormatInfo: one copy by the top-left finder, one split between
// the other two.
function writeFormatInfo(m: Uint8Array, size: number, mask: number): void {
  const bits = formatBits(mask);
  for (let i = 0; i < 15; i++) {
    const bit = (bits >> i) & 1;
    const row = i < 6 ? i : i < 8 ? i + 1 : size - 15 + i;
    m[row * size + 8] = bit;
    const col = i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1;
    m[8 * size + col] = bit;
  }
}

// The penalty rules N1–N4 exactly as `qrcode` computes them, so the chosen mask is the one it picks.
function penalty(m: Uint8Array, size: number): number {
  let n1 = 0;
  let n3 = 0;
  for (let a = 0; a < size; a++) {
    let runRow = 0;
    let runCol = 0;
    let lastRow = -1;
    let lastCol = -1;
    let bitsRow = 0;
    let bitsCol = 0;
    for (let b = 0; b < size; b++) {
      const inRow = m[a * size + b] as number;
      const inCol = m[b * size + a] as number;
      if (inRow === lastRow) runRow++;
      else {
        if (runRow >= 5) n1 += 3 + runRow - 5;
        lastRow = inRow;
        runRow = 1;
      }
      if (inCol === lastCol) runCol++;
      else {
        if (runCol >= 5) n1 += 3 + runCol - 5;
        lastCol = inCol;
        runCol = 1;
      }
      // 1:1:3:1:1 finder-like pattern with 4 light modules on one side.
      bitsRow = ((bitsRow << 1) & 0x7ff) | inRow;
      bitsCol = ((bitsCol << 1) & 0x7ff) | inCol;
      if (b >= 10) {
        if (bitsRow === 0x5d0 || bitsRow === 0x05d) n3++;
        if (bitsCol === 0x5d0 || bitsCol === 0x05d) n3++;
      }
    }
    if (runRow >= 5) n1 += 3 + runRow - 5;
    if (runCol >= 5) n1 += 3 + runCol - 5;
  }

  let n2 = 0;
  let dark = 0;
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      const i = r * size + c;
      dark += m[i] as number;
      if (r < size - 1 && c < size - 1) {
        const sum =
          (m[i] as number) + (m[i + 1] as number) + (m[i + size] as number) + (m[i + size + 1] as number);
        if (sum === 0 || sum === 4) n2++;
      }
    }
  }
  const total = size * size;
  const n4 = Math.abs(Math.ceil((dark * 100) / total / 5) - 10);
  return n1 + n2 * 3 + n3 * 40 + n4 * 10;
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
  const mask0 = MASKS[0] as (row: number, col: number) => boolean;

  // Undo mask 0 on the data modules; function patterns (reserved) are never masked.
  const unmasked = new Uint8Array(data);
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      const i = r * size + c;
      if (!reservedBit[i] && mask0(r, c)) unmasked[i] = (unmasked[i] as number) ^ 1;
    }
  }

  let best = new Uint8Array(size * size);
  let candidate = new Uint8Array(size * size);
  let bestMask = 0;
  let bestPenalty = Infinity;
  MASKS.forEach((mask, p) => {
    for (let r = 0; r < size; r++) {
      for (let c = 0; c < size; c++) {
        const i = r * size + c;
        candidate[i] = !reservedBit[i] && mask(r, c) ? (unmasked[i] as number) ^ 1 : (unmasked[i] as number);
      }
    }
    writeFormatInfo(candidate, size, p);
    const score = penalty(candidate, size);
    // Strictly lower, so ties go to the lower mask number as in `qrcode`.
    if (score < bestPenalty) {
      bestPenalty = score;
      bestMask = p;
      [best, candidate] = [candidate, best];
    }
  });

  return { size, version: qr.version, maskPattern: bestMask, modules: best };
}
