import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { qrMatrix } from './matrix';
import { renderQrPng, renderQrPngBase64 } from './png';

// BR Codes as payments builds them (buildDynamicBrCode, buildStaticBrCode): a dynamic one with a short
// location, a static one with an amount and a 25-character txid, a long one with a description.
const SHORT =
  '00020101021226520014br.gov.bcb.pix2530pix.example.com/qr/v2/9d36b84f5204000053039865802BR5904Loja6006Recife62070503***63042B13';
const WITH_AMOUNT =
  '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865406150.005802BR5913Fulano de Tal6008BRASILIA622905257f3a9c2e1b4d4e8f9a0b1c2d3630421C7';
const LONG =
  '00020126990014br.gov.bcb.pix0134financeiro+pix@loja-exemplo.com.br0239Pedido 8f0e2d9c-4b1a-4e7f-9a3b-2c1d0e9f52040000530398654139999999999.995802BR5925Comercio de Utilidades Do6015Sao Jose dos Ca62290525a1b2c3d4e5f6g7h8i9j0k1l2m6304386C';

function decode(png: Buffer): { image: PNG; text: string | undefined } {
  const image = PNG.sync.read(png);
  const rgba = new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length);
  return { image, text: jsQR(rgba, image.width, image.height)?.data };
}

function isWhite(image: PNG, x: number, y: number): boolean {
  const at = (y * image.width + x) * 4;
  return image.data[at] === 255 && image.data[at + 1] === 255 && image.data[at + 2] === 255;
}

describe('renderQrPng', () => {
  it('has the BR Codes of the tests at the intended lengths', () => {
    expect(SHORT.length).toBeLessThanOrEqual(130);
    expect(WITH_AMOUNT).toContain('5406150.00');
    expect(LONG.length).toBeGreaterThanOrEqual(190);
  });

  it.each([
    ['short', SHORT],
    ['with amount', WITH_AMOUNT],
    ['long', LONG],
  ])('decodes back to the %s BR Code', (_name, text) => {
    expect(decode(renderQrPng(text)).text).toBe(text);
  });

  it.each([
    { scale: 2, margin: 4 },
    { scale: 3, margin: 6 },
  ])('decodes at %o', (options) => {
    expect(decode(renderQrPng(WITH_AMOUNT, options)).text).toBe(WITH_AMOUNT);
  });

  it('writes a PNG signature and an IHDR for 1-bit grayscale', () => {
    const png = renderQrPng(WITH_AMOUNT);
    const side = (qrMatrix(WITH_AMOUNT).size + 8) * 6;
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.readUInt32BE(8)).toBe(13);
    expect(png.toString('latin1', 12, 16)).toBe('IHDR');
    expect(png.readUInt32BE(16)).toBe(side);
    expect(png.readUInt32BE(20)).toBe(side);
    expect(png[24]).toBe(1); // bit depth
    expect(png[25]).toBe(0); // colour type: grayscale
    expect([png[26], png[27], png[28]]).toEqual([0, 0, 0]); // deflate, filter method 0, no interlace
    expect(png.toString('latin1', png.length - 8, png.length - 4)).toBe('IEND');
    const image = PNG.sync.read(png); // pngjs checks every chunk CRC
    expect(image.depth).toBe(1);
    expect(image.colorType).toBe(0);
  });

  it('ends with the IEND chunk every PNG ends with, CRC-32 included', () => {
    const png = renderQrPng(SHORT);
    // Length 0, "IEND", then the CRC-32 of "IEND": the same 12 bytes in every PNG.
    expect(png.subarray(png.length - 12).toString('hex')).toBe('0000000049454e44ae426082');
  });

  it.each([6, 3])('keeps a white quiet zone of 4 modules at scale %d', (scale) => {
    const image = PNG.sync.read(renderQrPng(LONG, { scale }));
    const quiet = 4 * scale;
    let dark = 0;
    for (let y = 0; y < image.height; y++) {
      for (let x = 0; x < image.width; x++) {
        const inQuietZone = x < quiet || y < quiet || x >= image.width - quiet || y >= image.height - quiet;
        if (inQuietZone && !isWhite(image, x, y)) dark++;
      }
    }
    expect(dark).toBe(0);
    // The top-left finder pattern starts dark right after the quiet zone.
    expect(isWhite(image, quiet, quiet)).toBe(false);
  });

  it.each([1, 3, 4, 6, 11])(
    'paints every module as a block of scale %i, dark where the matrix is',
    (scale) => {
      const matrix = qrMatrix(SHORT);
      const image = PNG.sync.read(renderQrPng(SHORT, { scale }));
      let wrong = 0;
      for (let r = 0; r < matrix.size; r++) {
        for (let c = 0; c < matrix.size; c++) {
          const dark = matrix.modules[r * matrix.size + c] === 1;
          for (let dy = 0; dy < scale; dy++) {
            for (let dx = 0; dx < scale; dx++) {
              if (isWhite(image, (4 + c) * scale + dx, (4 + r) * scale + dy) === dark) wrong++;
            }
          }
        }
      }
      expect(wrong).toBe(0);
    },
  );

  it('refuses a thinner quiet zone or a bad scale', () => {
    expect(() => renderQrPng(SHORT, { margin: 3 })).toThrow(RangeError);
    expect(() => renderQrPng(SHORT, { scale: 0 })).toThrow(RangeError);
    expect(() => renderQrPng(SHORT, { scale: 1.5 })).toThrow(RangeError);
  });
});

describe('renderQrPngBase64', () => {
  it('is the bare base64 of the PNG', () => {
    const base64 = renderQrPngBase64(WITH_AMOUNT);
    expect(base64).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(base64.startsWith('iVBORw0KGgo')).toBe(true);
    expect(Buffer.from(base64, 'base64').equals(renderQrPng(WITH_AMOUNT))).toBe(true);
    expect(decode(Buffer.from(base64, 'base64')).text).toBe(WITH_AMOUNT);
  });
});
