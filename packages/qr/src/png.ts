import { crc32, deflateSync } from 'node:zlib';
import { qrMatrix, type QrMatrix } from './matrix';

/**
 * The PIX QR image: a 1-bit grayscale PNG written directly from the module matrix.
 *
 * `qrcode.toBuffer` goes through pngjs with a full RGBA bitmap; here each pixel is one bit and each
 * module row is rendered once, so the PNG part is a few tens of µs, mostly deflate. A whole render
 * (matrix included) measures 0.14 to 0.25 ms of CPU for a typical BR Code (bench/create-order/qr.mjs,
 * on the 2-core machines of 2026-11), well under 1 ms, so it runs inline on the event loop rather
 * than in a worker.
 */

export interface QrPngOptions {
  /** Pixels per module; the default 6 gives ~270–410 px for BR Codes of 100–240 characters. */
  scale?: number;
  /** Light modules around the symbol; at least 4, the quiet zone the QR standard asks for. */
  margin?: number;
}

const DEFAULT_SCALE = 6;
const QUIET_ZONE = 4;
const MAX_SCALE = 64;
// Measured on a 342 px BR Code image (Up-filtered scanlines): level 1 takes ~55 µs for 922 B, level 6
// ~130 µs for 788 B, level 9 ~360 µs for 756 B. The image is tiny, so the fast level wins.
const DEFLATE_LEVEL = 1;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const IEND = chunk('IEND', Buffer.alloc(0));

/** Length, type, data, then CRC-32 over type and data. */
function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

function header(side: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // colour type: grayscale
  // compression 0 (deflate), filter method 0, interlace 0 (none): already zero.
  return chunk('IHDR', ihdr);
}

/**
 * For one layout (modules per side, scale, margin): the modules each byte of a scanline shows (at most
 * `width`), and the byte's value for each combination of their colours. A module row's scanline is
 * then, per byte, a table lookup indexed by the colours of its few modules. At the default scale and
 * margin there is one layout per QR version, so they are kept (all of them dropped past MAX_LAYOUTS,
 * for callers that vary the options).
 */
interface LineLayout {
  /** Pixel bytes per scanline, after its filter byte. */
  bytes: number;
  /** Modules a byte shows at most. */
  width: number;
  /** Byte k shows the modules `columns[k * width + j]`; `size` (always light) pads the rest. */
  columns: Int32Array;
  /** Byte k's value is `values[(k << width) | colours]`, bit j of colours the colour of its j-th module. */
  values: Uint8Array;
}

const layouts = new Map<string, LineLayout>();
const MAX_LAYOUTS = 64;

function layoutOf(size: number, scale: number, margin: number): LineLayout {
  const key = `${size}/${scale}/${margin}`;
  const cached = layouts.get(key);
  if (cached) return cached;
  const side = (size + 2 * margin) * scale;
  const bytes = (side + 7) >> 3;
  // Per byte, each module it shows with the mask of the bits it covers (MSB first).
  const shown: Array<Array<{ column: number; mask: number }>> = [];
  for (let k = 0; k < bytes; k++) {
    const modules: Array<{ column: number; mask: number }> = [];
    for (let bit = 0; bit < 8; bit++) {
      const column = Math.floor((k * 8 + bit) / scale) - margin;
      if (column < 0 || column >= size) continue;
      const last = modules[modules.length - 1];
      if (last?.column === column) last.mask |= 0x80 >> bit;
      else modules.push({ column, mask: 0x80 >> bit });
    }
    shown.push(modules);
  }
  const width = Math.max(1, ...shown.map((modules) => modules.length));
  const columns = new Int32Array(bytes * width).fill(size);
  const values = new Uint8Array(bytes << width);
  shown.forEach((modules, k) => {
    modules.forEach(({ column }, j) => (columns[k * width + j] = column));
    for (let colours = 0; colours < 1 << width; colours++) {
      // White (1) everywhere but under the dark modules.
      let value = 0xff;
      modules.forEach(({ mask }, j) => {
        if ((colours >> j) & 1) value &= ~mask;
      });
      values[(k << width) | colours] = value & 0xff;
    }
  });
  const layout = { bytes, width, columns, values };
  if (layouts.size >= MAX_LAYOUTS) layouts.clear();
  layouts.set(key, layout);
  return layout;
}

/**
 * Scanlines of a filter byte then packed pixels, MSB first. In 1-bit grayscale 0 is black and 1 is
 * white, so a line starts white and dark modules clear their bits. A line that repeats the one above
 * (the other `scale - 1` lines of a module row, the quiet zone) is written with filter 2 (Up): all
 * zeros, which deflate compresses in next to no time.
 */
function rasterise(matrix: QrMatrix, scale: number, margin: number): { side: number; raw: Buffer } {
  const { size, modules } = matrix;
  const { bytes, width, columns, values } = layoutOf(size, scale, margin);
  const side = (size + 2 * margin) * scale;
  const stride = 1 + bytes;
  const raw = Buffer.alloc(stride * side);
  for (let y = 0; y < side; y++) raw[y * stride] = 2;
  // The first line of the quiet zone (filter 0, all white); the lines below it repeat it.
  raw[0] = 0;
  raw.fill(0xff, 1, stride);
  // One module row, plus a light module at index `size` for the padding columns.
  const row = new Uint8Array(size + 1);
  for (let r = 0; r < size; r++) {
    row.set(modules.subarray(r * size, (r + 1) * size));
    const at = (margin + r) * scale * stride;
    raw[at] = 0;
    for (let k = 0, c = 0; k < bytes; k++) {
      let colours = 0;
      for (let j = 0; j < width; j++, c++) colours |= (row[columns[c] as number] as number) << j;
      raw[at + 1 + k] = values[(k << width) | colours] as number;
    }
  }
  // The first line of the bottom quiet zone, white again.
  const bottom = (margin + size) * scale * stride;
  raw[bottom] = 0;
  raw.fill(0xff, bottom + 1, bottom + stride);
  return { side, raw };
}

/** PNG bytes of the QR code of `text` (error correction level M). */
export function renderQrPng(text: string, options: QrPngOptions = {}): Buffer {
  const scale = options.scale ?? DEFAULT_SCALE;
  const margin = options.margin ?? QUIET_ZONE;
  if (!Number.isInteger(scale) || scale < 1 || scale > MAX_SCALE) {
    throw new RangeError(`scale must be an integer in 1..${MAX_SCALE}`);
  }
  // Bank apps reading from a screen need the full quiet zone, so a thinner one is refused.
  if (!Number.isInteger(margin) || margin < QUIET_ZONE || margin > 64) {
    throw new RangeError(`margin must be an integer in ${QUIET_ZONE}..64`);
  }
  const { side, raw } = rasterise(qrMatrix(text), scale, margin);
  return Buffer.concat([
    PNG_SIGNATURE,
    header(side),
    chunk('IDAT', deflateSync(raw, { level: DEFLATE_LEVEL })),
    IEND,
  ]);
}

/** Bare base64 of the PNG (no `data:` prefix), as `pix.qr_code_image_base64` carries it. */
export function renderQrPngBase64(text: string): string {
  return renderQrPng(text).toString('base64');
}
