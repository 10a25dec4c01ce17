import { createHash } from 'node:crypto';
import { qrMatrix } from './matrix';
import { renderQrPng, renderQrPngBase64 } from './png';

/*
 * The bytes of the PIX QR image, pinned. The hashes were computed from the encoder as it was in
 * services/payments/src/domain (qr-matrix.ts, qr-png.ts, qr-segments.ts) before it moved to this
 * package: the same BR Code must give the same PNG, byte for byte. A change that alters them changes
 * what every seller's customers see; if it is meant, say so in its commit and pin the new hashes.
 */

const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

// [name, BR Code, version, mask, PNG bytes, sha256 of the PNG at the default scale and margin]
const BR_CODES: [string, string, number, number, number, string][] = [
  [
    'dynamic, short location',
    '00020101021226520014br.gov.bcb.pix2530pix.example.com/qr/v2/9d36b84f5204000053039865802BR5904Loja6006Recife62070503***63042B13',
    6,
    2,
    730,
    '53697df7800a9edb9a97ec81d45cf53cdc89b855d2f4194c416e6b4c41d6005e',
  ],
  [
    'static, amount and 25-character txid',
    '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865406150.005802BR5913Fulano de Tal6008BRASILIA622905257f3a9c2e1b4d4e8f9a0b1c2d3630421C7',
    8,
    2,
    983,
    'c194e05ffcd2da53d5ee7f96b9b837792287770c336c8a39dc9df12288386b0d',
  ],
  [
    'static, short txid',
    '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865406150.005802BR5913Fulano de Tal6008BRASILIA62120508ORDER123630426D9',
    7,
    4,
    880,
    '2efc12a995a7781803b2b0c4bab9b213d68feb65443c2b4f12f6529c888737d2',
  ],
  [
    'dynamic, cobv location and amount',
    '00020101021226810014br.gov.bcb.pix2559pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca2552040000530398654040.015802BR5904Loja6006Recife62070503***6304BD38',
    8,
    2,
    978,
    '20a9ee2e490bf56a43a42053d693ac247b4a17eeb5ef91166d3417033879da37',
  ],
  [
    'static, long, with a description',
    '00020126990014br.gov.bcb.pix0134financeiro+pix@loja-exemplo.com.br0239Pedido 8f0e2d9c-4b1a-4e7f-9a3b-2c1d0e9f52040000530398654139999999999.995802BR5925Comercio de Utilidades Do6015Sao Jose dos Ca62290525a1b2c3d4e5f6g7h8i9j0k1l2m6304386C',
    11,
    2,
    1523,
    '8c1030ae9dbf043fc8c132feb3c8e45973062f73fd690e55298948665b3b7fab',
  ],
];

const TYPICAL = (BR_CODES[1] as (typeof BR_CODES)[number])[1];

// Prefixes of one text (digits, lowercase, uppercase, 2- and 3-byte UTF-8) fill every version; the
// longest prefix each version holds, found with the encoder before the move.
const PATTERN =
  '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865406150.005802BR5913Fulano de Tal6008BRASILIA62290525ção✓7f3a9c2e1b4d4e8f9a0b1c2d3e6304ABCD';
const LONGEST = [
  20, 35, 49, 84, 110, 136, 148, 182, 212, 248, 295, 329, 377, 410, 479, 512, 570, 644, 710, 752, 815, 885,
  981, 1033, 1142, 1200, 1261, 1345, 1419, 1540, 1626, 1726, 1838, 1933, 2037, 2140, 2233, 2366, 2480, 2599,
];
const prefix = (length: number): string =>
  PATTERN.repeat(Math.ceil(length / PATTERN.length)).slice(0, length);

describe('the PIX QR image, pinned', () => {
  it.each(BR_CODES)('%s: the same PNG, byte for byte', (_name, text, version, mask, bytes, hash) => {
    const matrix = qrMatrix(text);
    expect([matrix.version, matrix.maskPattern]).toEqual([version, mask]);
    const png = renderQrPng(text);
    expect(png.length).toBe(bytes);
    expect(sha256(png)).toBe(hash);
  });

  it('the same PNG at other scales and margins, and the same base64', () => {
    expect(sha256(renderQrPng(TYPICAL, { scale: 3, margin: 6 }))).toBe(
      'd651d56e1eda72fd14f25f9e78aba60cb70cbfbb99082166fb4640b94afae469',
    );
    expect(sha256(renderQrPng(TYPICAL, { scale: 1 }))).toBe(
      '730832a29d7048a5d866c52ed31f97d0f8487b4adf080110994c110fe7abb4fd',
    );
    expect(sha256(renderQrPngBase64(TYPICAL))).toBe(
      '5064a3c00876b26f2a3150e88c3f4ff658e7015b3c66f51c894f7fdb2c85fedf',
    );
  });

  it('fills each of the 40 versions to the same character and no further', () => {
    LONGEST.forEach((length, i) => {
      expect({ length, version: qrMatrix(prefix(length)).version }).toEqual({ length, version: i + 1 });
      if (i < 39) {
        expect({ length: length + 1, version: qrMatrix(prefix(length + 1)).version }).toEqual({
          length: length + 1,
          version: i + 2,
        });
      }
    });
    expect(() => qrMatrix(prefix(2600))).toThrow(RangeError);
  });

  it('the same PNGs in every version, at the first and last length each holds', () => {
    const lengths = [1, ...LONGEST.slice(0, 39).map((n) => n + 1), ...LONGEST];
    const hash = createHash('sha256');
    for (const length of lengths) hash.update(renderQrPng(prefix(length), { scale: 1 }));
    expect(hash.digest('hex')).toBe('f66bd8b0e0633019c00e9b9bcb0b1b70b7e8c1f1fcb5025c5cfd81afc2d05210');
  });
});
