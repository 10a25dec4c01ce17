import { create } from 'qrcode';
import { functionPatterns, qrMatrix, totalCodewordsOf } from './matrix';
import { optimalSegments } from './segments';

const TEXTS = [
  'a',
  '0123456789',
  'HELLO WORLD',
  // BR Codes (payments' buildStaticBrCode and buildDynamicBrCode): a static one with an amount, a
  // long one with a description, a dynamic one with a location.
  '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865406150.005802BR5913Fulano de Tal6008BRASILIA62120508ORDER123630426D9',
  '00020126990014br.gov.bcb.pix0134financeiro+pix@loja-exemplo.com.br0239Pedido 8f0e2d9c-4b1a-4e7f-9a3b-2c1d0e9f52040000530398654139999999999.995802BR5925Comercio de Utilidades Do6015Sao Jose dos Ca62290525a1b2c3d4e5f6g7h8i9j0k1l2m6304386C',
  '00020101021226810014br.gov.bcb.pix2559pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca2552040000530398654040.015802BR5904Loja6006Recife62070503***6304BD38',
  'ção ✓ 😀 mixed UTF-8 0123456789012345 ABCDEFGHIJ',
  'x'.repeat(400) + '0'.repeat(300),
  'Lorem ipsum '.repeat(150),
];

describe('qrMatrix', () => {
  it.each(TEXTS.map((t) => [t.slice(0, 40), t]))('matches qrcode for %s', (_label, text) => {
    const ours = qrMatrix(text);
    const reference = create(optimalSegments(text, ours.version), { errorCorrectionLevel: 'M' });
    expect(ours.version).toBe(reference.version);
    expect(ours.size).toBe(reference.modules.size);
    expect(ours.maskPattern).toBe(reference.maskPattern);
    expect(Buffer.from(ours.modules).equals(Buffer.from(reference.modules.data))).toBe(true);
  });

  it.each(TEXTS.map((t) => [t.slice(0, 40), t]))(
    'needs no larger a version than qrcode segmenting by itself: %s',
    (_label, text) => {
      expect(qrMatrix(text).version).toBeLessThanOrEqual(create(text, { errorCorrectionLevel: 'M' }).version);
    },
  );

  it('refuses an empty text', () => {
    expect(() => qrMatrix('')).toThrow(RangeError);
  });
});

const VERSIONS = Array.from({ length: 40 }, (_, i) => i + 1);

describe('functionPatterns', () => {
  it.each(VERSIONS)('draws those of qrcode in version %i', (version) => {
    const ours = functionPatterns(version);
    // Any text fits version 1; asking for `version` gives its function patterns.
    const reference = create('0', { version, errorCorrectionLevel: 'M', maskPattern: 0 }).modules;
    expect(ours.size).toBe(reference.size);
    expect(Buffer.from(ours.reserved).equals(Buffer.from(reference.reservedBit))).toBe(true);
    // The format information cells aside: qrcode writes mask 0's there, ours are left light.
    const format = new Set<number>();
    for (let i = 0; i < 15; i++) {
      format.add((i < 6 ? i : i < 8 ? i + 1 : ours.size - 15 + i) * ours.size + 8);
      format.add(8 * ours.size + (i < 8 ? ours.size - i - 1 : i < 9 ? 15 - i : 14 - i));
    }
    const differing: number[] = [];
    ours.reserved.forEach((reserved, at) => {
      if (reserved && !format.has(at) && ours.dark[at] !== reference.data[at]) differing.push(at);
    });
    expect(differing).toEqual([]);
  });

  it.each(VERSIONS)('leaves room for totalCodewordsOf(%i) codewords', (version) => {
    const { size, reserved } = functionPatterns(version);
    const free = size * size - reserved.reduce((sum, r) => sum + r, 0);
    expect(totalCodewordsOf(version)).toBe(Math.floor(free / 8));
  });
});

describe('optimalSegments', () => {
  it('puts long digit runs in numeric mode and lowercase in byte mode', () => {
    const segments = optimalSegments('br.gov.bcb.pix52040000530398654', 1);
    expect(segments.map((s) => s.mode)).toEqual(['byte', 'numeric']);
  });

  it('keeps the text intact', () => {
    for (const text of TEXTS) {
      const joined = optimalSegments(text, 1)
        .map((s) =>
          typeof s.data === 'string' ? s.data : Buffer.from(s.data as Uint8Array).toString('utf8'),
        )
        .join('');
      expect(joined).toBe(text);
    }
  });
});
