import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { hasError, parsePix } from 'pix-utils';
import { parseBrCode } from '../../services/payments/src/domain/brcode';

/** What a bank app would read from the image: the PNG decoded by a QR reader. */
export function decodeQrPng(base64: string): string | null {
  const png = PNG.sync.read(Buffer.from(base64, 'base64'));
  const rgba = new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length);
  return jsQR(rgba, png.width, png.height)?.data ?? null;
}

/** A BR Code checked by our parser (CRC) and by a public one. */
export function checkBrCode(code: string) {
  const ours = parseBrCode(code);
  const theirs = parsePix(code);
  if (hasError(theirs)) throw new Error(`pix-utils refused the BR Code: ${theirs.message}`);
  return { ours, theirs };
}
