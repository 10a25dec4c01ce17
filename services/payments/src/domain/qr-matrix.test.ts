import { create } from 'qrcode';
import { buildDynamicBrCode, buildStaticBrCode } from './brcode';
import { qrMatrix } from './qr-matrix';
import { optimalSegments } from './qr-segments';

const TEXTS = [
  'a',
  '0123456789',
  'HELLO WORLD',
  buildStaticBrCode({
    pixKey: '123e4567-e12b-12d1-a456-426655440000',
    amountCents: 15000,
    merchantName: 'Fulano de Tal',
    merchantCity: 'BRASILIA',
    txid: 'ORDER123',
  }),
  buildStaticBrCode({
    pixKey: 'financeiro+pix@loja-exemplo.com.br',
    amountCents: 999999999999,
    merchantName: 'Comércio de Utilidades Domésticas',
    merchantCity: 'São José dos Campos',
    txid: 'a1b2c3d4e5f6g7h8i9j0k1l2m3',
    description: 'Pedido 8f0e2d9c-4b1a-4e7f-9a3b-2c1d0e9f8a7b',
  }),
  buildDynamicBrCode({
    location: 'pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25',
    amountCents: 1,
    merchantName: 'Loja',
    merchantCity: 'Recife',
  }),
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
