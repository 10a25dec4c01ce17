import { deflateSync } from 'node:zlib';
import { crc32 } from './crc32';
import { qrMatrix, type QrMatrix } from './qr-matrix';

/**
 * The PIX QR image: a 1-bit grayscale PNG written directly from the module matrix.
 *
 * `qrcode.toBuffer` goes through pngjs with a full RGBA bitmap; here each pixel is one bit and the
 * scanlines of a module row are copied, so the PNG part is a few tens of microseconds. A whole render
 * (matrix included) measures ~0.1 ms (bench/create-order/qr.mjs), well under 1 ms, so it runs inline
 * on the event loop; a worker thread would cost more than the work it moves.
 */

export interface QrPngOptions {
  /** Pixels per module; the default 6 gives ~250–320 px for a BR Code. */
  scale?: number;
  /** Light modules around the symbol; at least 4, the quiet zone the QR standard asks for. */
  margin?: number;
}

const DEFAULT_SCALE = 6;
const QUIET_ZONE = 4;
const MAX_SCALE = 64;
// Measured on 318 px BR Code images: level 1 is ~2x faster than 6 and the output only ~10% larger
// (~0.9 KB vs ~0.8 KB): the repeated scanlines compress well whatever the level.
const DEFLATE_LEVEL = 1;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const IEND = chunk('IEND', Buffer.alloc(0));

/** Length, type, data, then CRC-32 over type and data. */
function chunk(type: string, data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  out.set(data, 8);
  out.writeUInt32BE(crc32(out, 4, 8 + data.length), 8 + data.length);
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
 * Scanlines of filter byte 0 (None) then packed pixels, MSB first. In 1-bit grayscale 0 is black and
 * 1 is white, so everything starts white and dark modules clear their bits.
 */
function rasterise(matrix: QrMatrix, scale: number, margin: number): { side: number; raw: Buffer } {
  const { size, modules } = matrix;
  const side = (size + 2 * margin) * scale;
  const stride = 1 + ((side + 7) >> 3);
  const raw = Buffer.alloc(stride * side, 0xff);
  for (let y = 0; y < side; y++) raw[y * stride] = 0;

  const line = new Uint8Array(stride);
  for (let r = 0; r < size; r++) {
    line.fill(0xff);
    line[0] = 0;
    for (let c = 0; c < size; c++) {
      if (!modules[r * size + c]) continue;
      const x0 = (margin + c) * scale;
      for (let x = x0; x < x0 + scale; x++) {
        const at = 1 + (x >> 3);
        line[at] = (line[at] as number) & ~(0x80 >> (x & 7));
      }
    }
    // Every pixel row of a module row is the same scanline.
    const y0 = (margin + r) * scale;
    for (let k = 0; k < scale; k++) raw.set(line, (y0 + k) * stride);
  }
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
