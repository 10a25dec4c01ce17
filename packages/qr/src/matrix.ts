import { optimalSegments, versionClass } from './segments';

/**
 * The QR module matrix of a text at error correction level M: the same symbol
 * `QRCode.create(segments, { errorCorrectionLevel: 'M' })` yields, for a fraction of the cost of
 * `QRCode.create(text)`.
 *
 * Where `QRCode.create(text)` spends its ~1.4 ms on a BR Code (measured here): ~0.4 ms segmenting
 * the text (see segments.ts) and ~0.9 ms choosing the mask, applying each of the 8 masks in turn and
 * scoring it module by module. Here the 8 masks are scored together in one pass, one bit per mask,
 * with `qrcode`'s penalty rules, so the same mask wins. The encoding (segments, padding, Reed-Solomon
 * blocks, placement) follows `qrcode`'s step for step, on tables made once per version: its function
 * patterns and the order in which data bits fill the modules. Per text, that leaves writing the bits
 * and one Reed-Solomon division per block, which cost less than `qrcode`'s general code did with
 * mask 0 fixed (~0.1 ms). Nothing of `qrcode` runs here (the standard's tables are written out below);
 * the unit tests hold the result to `qrcode`'s, module for module, in every version.
 */

export interface QrMatrix {
  /** Modules per side. */
  size: number;
  version: number;
  maskPattern: number;
  /** Row-major, `size * size` entries, 1 = dark. */
  modules: Uint8Array;
}

// M (15% recovery) is the level Pix QR codes are usually printed with, and `qrcode`'s default: its
// bits in the format information.
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
 * "Lanes": one byte per module whose bit p is the module's colour under mask p. The template holds
 * the lanes of a symbol whose unmasked modules are all light: which masks flip each data module, and
 * the format information bits, which differ per mask. A real symbol's lanes are then
 * `template ^ (unmasked ? 0xff : 0)`. Made once per version, for its plan (planOf).
 */
function laneTemplate(size: number, reserved: Uint8Array): Uint8Array {
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

// ISO/IEC 18004 table 9 at level M, by version - 1: error correction blocks, and error correction
// codewords in all of them.
const EC_BLOCKS_M = [
  1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29,
  31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
];
const EC_CODEWORDS_M = [
  10, 16, 26, 36, 48, 64, 72, 88, 110, 130, 150, 176, 198, 216, 240, 280, 308, 338, 364, 416, 442, 476, 504,
  560, 588, 644, 700, 728, 784, 812, 868, 924, 980, 1036, 1064, 1120, 1204, 1260, 1316, 1372,
];

/**
 * Codewords of a version's symbol: its modules less the function patterns (finders with their
 * separators, timing, alignment, format and version information, the dark module), over 8; the 0 to
 * 7 remainder bits hold none.
 */
export function totalCodewordsOf(version: number): number {
  let modules = (16 * version + 128) * version + 64;
  if (version >= 2) {
    const alignments = Math.floor(version / 7) + 2;
    modules -= (25 * alignments - 10) * alignments - 55;
    if (version >= 7) modules -= 36;
  }
  return Math.floor(modules / 8);
}

/** Data codewords of a version's symbol at level M. */
function dataCodewordsOf(version: number): number {
  return totalCodewordsOf(version) - (EC_CODEWORDS_M[version - 1] as number);
}

/** Rows (and columns) of the centres of a version's alignment patterns (ISO/IEC 18004 annex E). */
function alignmentCentres(version: number, size: number): number[] {
  if (version === 1) return [];
  const count = Math.floor(version / 7) + 2;
  // Evenly spaced from the last towards the 7th row or column, by an even step; version 32 is the
  // exception the table has.
  const step = size === 145 ? 26 : Math.ceil((size - 13) / (2 * count - 2)) * 2;
  const centres = [size - 7];
  for (let i = 1; i < count - 1; i++) centres.push((centres[i - 1] as number) - step);
  centres.push(6);
  return centres.reverse();
}

// 18-bit version information: the version, BCH(18,6) protected.
function versionBits(version: number): number {
  let rem = version << 12;
  for (let bit = 17; bit >= 12; bit--) if ((rem >> bit) & 1) rem ^= 0x1f25 << (bit - 12);
  return (version << 12) | rem;
}

/**
 * The function patterns of a version's symbol, as `qrcode` draws them: `reserved` marks every module
 * that holds no data bit, `dark` those of them that are dark. The format information cells are
 * reserved and left light here (their bits depend on the mask: laneTemplate).
 */
export function functionPatterns(version: number): { size: number; dark: Uint8Array; reserved: Uint8Array } {
  const size = 17 + 4 * version;
  const dark = new Uint8Array(size * size);
  const reserved = new Uint8Array(size * size);
  const set = (row: number, col: number, on: boolean): void => {
    reserved[row * size + col] = 1;
    dark[row * size + col] = on ? 1 : 0;
  };
  // Finder patterns in three corners, with their light separators: rings around the 3x3 centre,
  // light at distance 2 and 4 from the middle, dark otherwise.
  for (const [top, left] of [
    [0, 0],
    [size - 7, 0],
    [0, size - 7],
  ] as const) {
    for (let r = -1; r <= 7; r++) {
      for (let c = -1; c <= 7; c++) {
        const row = top + r;
        const col = left + c;
        if (row < 0 || row >= size || col < 0 || col >= size) continue;
        const ring = Math.max(Math.abs(r - 3), Math.abs(c - 3));
        set(row, col, ring !== 2 && ring !== 4);
      }
    }
  }
  // Timing patterns along row and column 6, between the separators.
  for (let i = 8; i < size - 8; i++) {
    set(i, 6, i % 2 === 0);
    set(6, i, i % 2 === 0);
  }
  // Alignment patterns at every pair of centres but the three the finders take: dark centre and edge.
  const centres = alignmentCentres(version, size);
  const last = centres.length - 1;
  centres.forEach((row, i) =>
    centres.forEach((col, j) => {
      if ((i === 0 && (j === 0 || j === last)) || (i === last && j === 0)) return;
      for (let r = -2; r <= 2; r++) {
        for (let c = -2; c <= 2; c++) set(row + r, col + c, Math.max(Math.abs(r), Math.abs(c)) !== 1);
      }
    }),
  );
  // Version information from version 7: two 6x3 blocks, above the bottom-left finder and left of the
  // top-right one, least significant bit first.
  if (version >= 7) {
    const bits = versionBits(version);
    for (let i = 0; i < 18; i++) {
      const on = ((bits >> i) & 1) === 1;
      const row = Math.floor(i / 3);
      const col = (i % 3) + size - 11;
      set(row, col, on);
      set(col, row, on);
    }
  }
  // Format information cells (where laneTemplate writes them) and the dark module beside them.
  for (let i = 0; i < 15; i++) {
    set(i < 6 ? i : i < 8 ? i + 1 : size - 15 + i, 8, false);
    set(8, i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1, false);
  }
  set(size - 8, 8, true);
  return { size, dark, reserved };
}

/** What a symbol of one version needs, made once per version. */
interface VersionPlan {
  version: number;
  size: number;
  dataCodewords: number;
  blocks: number;
  /** Blocks of `shortBlock` data codewords; the rest hold one more. */
  shortBlocks: number;
  shortBlock: number;
  ecPerBlock: number;
  /** Reed-Solomon generator of degree `ecPerBlock`, highest term (1) omitted. */
  generator: Uint8Array;
  /** The lanes of the symbol whose data bits are all 0 (function patterns, format bits per mask). */
  base: Uint8Array;
  /** The module of each data bit, in `qrcode`'s placement order (up and down column pairs). */
  order: Int32Array;
}

// GF(256) with the QR polynomial x^8 + x^4 + x^3 + x^2 + 1.
const GF_EXP = new Uint8Array(512);
const GF_LOG = new Uint8Array(256);
{
  let x = 1;
  for (let i = 0; i < 255; i++) {
    GF_EXP[i] = x;
    GF_LOG[x] = i;
    x <<= 1;
    if (x & 0x100) x ^= 0x11d;
  }
  for (let i = 255; i < 512; i++) GF_EXP[i] = GF_EXP[i - 255] as number;
}

function gfMul(a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : (GF_EXP[(GF_LOG[a] as number) + (GF_LOG[b] as number)] as number);
}

/** The product of (x - α^i) for i < degree, as `qrcode` builds it, without its leading 1. */
function rsGenerator(degree: number): Uint8Array {
  let poly = new Uint8Array([1]);
  for (let i = 0; i < degree; i++) {
    const next = new Uint8Array(poly.length + 1);
    for (let j = 0; j < poly.length; j++) {
      next[j] = (next[j] as number) ^ (poly[j] as number);
      next[j + 1] = (next[j + 1] as number) ^ gfMul(poly[j] as number, GF_EXP[i] as number);
    }
    poly = next;
  }
  return poly.subarray(1);
}

const plans = new Map<number, VersionPlan>();

function planOf(version: number): VersionPlan {
  const cached = plans.get(version);
  if (cached) return cached;
  const { size, dark, reserved: reservedBit } = functionPatterns(version);
  const template = laneTemplate(size, reservedBit);
  const base = new Uint8Array(size * size);
  // A function module is what the patterns show (format cells: their bits per mask, from the
  // template); a data module starts light, i.e. only the masks that flip it.
  for (let i = 0; i < base.length; i++) base[i] = (dark[i] ? 0xff : 0) ^ (template[i] as number);
  // `qrcode`'s setupData walk: column pairs from the right, skipping the vertical timing column,
  // alternately upwards and downwards, right module before left.
  const order: number[] = [];
  for (let col = size - 1, upward = true; col > 0; col -= 2, upward = !upward) {
    if (col === 6) col--;
    for (let step = 0; step < size; step++) {
      const row = upward ? size - 1 - step : step;
      for (let c = 0; c < 2; c++) if (!reservedBit[row * size + col - c]) order.push(row * size + col - c);
    }
  }
  const totalCodewords = totalCodewordsOf(version);
  const blocks = EC_BLOCKS_M[version - 1] as number;
  const dataCodewords = dataCodewordsOf(version);
  const shortBlock = Math.floor(dataCodewords / blocks);
  const ecPerBlock = Math.floor(totalCodewords / blocks) - shortBlock;
  const plan: VersionPlan = {
    version,
    size,
    dataCodewords,
    blocks,
    shortBlocks: blocks - (totalCodewords % blocks),
    shortBlock,
    ecPerBlock,
    generator: rsGenerator(ecPerBlock),
    base,
    order: Int32Array.from(order),
  };
  plans.set(version, plan);
  return plan;
}

const MODE_BITS = { numeric: 0b0001, alphanumeric: 0b0010, byte: 0b0100 } as const;
// Count indicator widths by mode, for versions 1–9, 10–26 and 27–40.
const COUNT_WIDTHS = {
  numeric: [10, 12, 14],
  alphanumeric: [9, 11, 13],
  byte: [8, 16, 16],
} as const;
const ALPHANUMERIC_CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';
const ALPHANUMERIC_VALUE = (() => {
  const table = new Uint8Array(128);
  for (let i = 0; i < ALPHANUMERIC_CHARS.length; i++) table[ALPHANUMERIC_CHARS.charCodeAt(i)] = i;
  return table;
})();

type Mode = keyof typeof MODE_BITS;
interface Segment {
  mode: Mode;
  /** Digits or alphanumeric characters as text; UTF-8 bytes for byte mode. */
  text: string;
  bytes: Uint8Array | null;
}

function segmentsOf(text: string, version: number): Segment[] {
  return optimalSegments(text, version).map((segment) =>
    typeof segment.data === 'string'
      ? { mode: segment.mode as Mode, text: segment.data, bytes: null }
      : { mode: 'byte', text: '', bytes: segment.data as Uint8Array },
  );
}

function countOf(segment: Segment): number {
  return segment.bytes ? segment.bytes.length : segment.text.length;
}

function payloadBits(segment: Segment): number {
  const n = countOf(segment);
  if (segment.mode === 'numeric') return 10 * Math.floor(n / 3) + (n % 3 === 0 ? 0 : (n % 3) * 3 + 1);
  if (segment.mode === 'alphanumeric') return 11 * Math.floor(n / 2) + 6 * (n % 2);
  return 8 * n;
}

function totalBits(segments: Segment[], version: number): number {
  const cls = versionClass(version);
  let bits = 0;
  for (const segment of segments) bits += 4 + COUNT_WIDTHS[segment.mode][cls] + payloadBits(segment);
  return bits;
}

/** The smallest version at level M that holds the segments, as `qrcode` picks it. */
function smallestVersion(segments: Segment[]): number {
  for (let version = 1; version <= 40; version++) {
    if (totalBits(segments, version) <= dataCodewordsOf(version) * 8) return version;
  }
  throw new RangeError('QR text too long for a version 40 symbol at level M');
}

/** Data codewords as `qrcode`'s createData writes them: segments, terminator, padding. */
function dataCodewords(segments: Segment[], plan: VersionPlan): Uint8Array {
  const out = new Uint8Array(plan.dataCodewords);
  const capacity = plan.dataCodewords * 8;
  let length = 0;
  const put = (value: number, bits: number): void => {
    for (let i = bits - 1; i >= 0; i--, length++) {
      if ((value >>> i) & 1) out[length >> 3] = (out[length >> 3] as number) | (0x80 >>> (length & 7));
    }
  };
  const cls = versionClass(plan.version);
  for (const segment of segments) {
    put(MODE_BITS[segment.mode], 4);
    put(countOf(segment), COUNT_WIDTHS[segment.mode][cls]);
    const { text, bytes } = segment;
    if (bytes) {
      for (const byte of bytes) put(byte, 8);
    } else if (segment.mode === 'numeric') {
      for (let i = 0; i < text.length; i += 3) {
        const group = text.slice(i, i + 3);
        put(Number(group), group.length * 3 + 1);
      }
    } else {
      for (let i = 0; i + 1 < text.length; i += 2) {
        put(
          (ALPHANUMERIC_VALUE[text.charCodeAt(i)] as number) * 45 +
            (ALPHANUMERIC_VALUE[text.charCodeAt(i + 1)] as number),
          11,
        );
      }
      if (text.length % 2) put(ALPHANUMERIC_VALUE[text.charCodeAt(text.length - 1)] as number, 6);
    }
  }
  // The terminator only where it fits whole, then zeros to the byte, then 0xEC 0x11 alternately.
  if (length + 4 <= capacity) length += 4;
  length = (length + 7) & ~7;
  for (let i = 0, at = length >> 3; at < out.length; i++, at++) out[at] = i % 2 ? 0x11 : 0xec;
  return out;
}

/** Data and error correction codewords, split into blocks and interleaved. */
function codewords(data: Uint8Array, plan: VersionPlan): Uint8Array {
  const { blocks, shortBlocks, shortBlock, ecPerBlock, generator } = plan;
  const out = new Uint8Array(data.length + blocks * ecPerBlock);
  const ec = new Uint8Array(ecPerBlock);
  for (let b = 0, offset = 0; b < blocks; b++) {
    const length = b < shortBlocks ? shortBlock : shortBlock + 1;
    // Data codewords of block b go to positions b, b + blocks, ...; the extra one of a long block
    // comes after every short block's last.
    for (let i = 0; i < length; i++) {
      const at = i < shortBlock ? i * blocks + b : shortBlock * blocks + (b - shortBlocks);
      out[at] = data[offset + i] as number;
    }
    // The remainder of the block times x^ecPerBlock divided by the generator (an LFSR).
    ec.fill(0);
    for (let i = 0; i < length; i++) {
      const factor = (data[offset + i] as number) ^ (ec[0] as number);
      ec.copyWithin(0, 1);
      ec[ecPerBlock - 1] = 0;
      if (factor !== 0) {
        const logFactor = GF_LOG[factor] as number;
        for (let j = 0; j < ecPerBlock; j++) {
          const g = generator[j] as number;
          if (g !== 0) ec[j] = (ec[j] as number) ^ (GF_EXP[logFactor + (GF_LOG[g] as number)] as number);
        }
      }
    }
    for (let i = 0; i < ecPerBlock; i++) out[data.length + i * blocks + b] = ec[i] as number;
    offset += length;
  }
  return out;
}

// The segments depend on the count-indicator widths, which depend on the version they end up in:
// start from versions 1–9 and redo once per class crossed (at most twice).
function encode(text: string): { plan: VersionPlan; segments: Segment[] } {
  let segments = segmentsOf(text, 1);
  let version = smallestVersion(segments);
  for (let attempt = 0, from = 1; attempt < 2 && versionClass(version) !== versionClass(from); attempt++) {
    from = version;
    segments = segmentsOf(text, version);
    version = smallestVersion(segments);
  }
  return { plan: planOf(version), segments };
}

export function qrMatrix(text: string): QrMatrix {
  if (text === '') throw new RangeError('QR text must not be empty');
  const { plan, segments } = encode(text);
  const { size, order } = plan;
  const words = codewords(dataCodewords(segments, plan), plan);
  // Every dark data bit turns its module's lanes over; the remainder bits past the codewords stay light.
  const lanes = plan.base.slice();
  for (let w = 0; w < words.length; w++) {
    const word = words[w] as number;
    if (word === 0) continue;
    for (let bit = 0; bit < 8; bit++) {
      if ((word >> (7 - bit)) & 1) {
        const at = order[w * 8 + bit] as number;
        lanes[at] = (lanes[at] as number) ^ 0xff;
      }
    }
  }

  const maskPattern = bestMask(lanes, size);
  const modules = new Uint8Array(size * size);
  for (let i = 0; i < modules.length; i++) modules[i] = ((lanes[i] as number) >> maskPattern) & 1;
  return { size, version: plan.version, maskPattern, modules };
}
