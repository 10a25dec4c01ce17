import { hasError, isDynamicPix, isStaticPix, parsePix } from 'pix-utils';
import {
  buildDynamicBrCode,
  buildStaticBrCode,
  formatAmountCents,
  normaliseMerchantText,
  normaliseStaticTxid,
  parseBrCode,
} from './brcode';

// Published BR Codes whose CRC16-CCITT-FALSE checks out: the Central Bank Pix manual's static example,
// the API Pix specification's dynamic one with field 80, and a bank's published dynamic example.
const VECTORS = {
  staticManual:
    '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D',
  dynamicField80:
    '00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/8b3da2f39a4140d1a91abd93113bd4415204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***80800014br.gov.bcb.pix2558pix.example.com/qr/v2/rec/94ed2badcbc04c15b0bb7fa35319489063047741',
  dynamicBank:
    '00020101021226870014br.gov.bcb.pix2565qrcodepix-h.bb.com.br/pix/v2/d9b97f73-b48b-43f6-be7e-f0594fb275a65204000053039865802BR5920ALAN GUIACHERO BUENO6008BRASILIA62070503***630464FF',
};

const staticInput = {
  pixKey: '123e4567-e12b-12d1-a456-426655440000',
  amountCents: 15000,
  merchantName: 'Fulano de Tal',
  merchantCity: 'BRASILIA',
  txid: 'ORDER123',
};

function parsePixOrFail(code: string) {
  const pix = parsePix(code);
  if (hasError(pix)) throw new Error(`pix-utils refused ${code}: ${pix.message}`);
  return pix;
}

describe('parseBrCode on the published vectors', () => {
  it.each(Object.entries(VECTORS))('%s parses with a valid CRC', (_name, code) => {
    const parsed = parseBrCode(code);
    expect(parsed.error).toBeUndefined();
    expect(parsed.valid).toBe(true);
    expect(parsed.fields['00']).toBe('01');
    expect(parsed.fields['26']).toMatchObject({ '00': 'br.gov.bcb.pix' });
    expect(parsed.fields['62']).toEqual({ '05': '***' });
    expect(parsed.fields['63']).toBe(code.slice(-4));
  });

  it('reads the key of the static vector and the location of the dynamic ones', () => {
    expect(parseBrCode(VECTORS.staticManual).fields['26']).toEqual({
      '00': 'br.gov.bcb.pix',
      '01': '123e4567-e12b-12d1-a456-426655440000',
    });
    expect(parseBrCode(VECTORS.dynamicBank).fields['26']).toEqual({
      '00': 'br.gov.bcb.pix',
      '25': 'qrcodepix-h.bb.com.br/pix/v2/d9b97f73-b48b-43f6-be7e-f0594fb275a6',
    });
    expect(parseBrCode(VECTORS.dynamicField80).fields['80']).toEqual({
      '00': 'br.gov.bcb.pix',
      '25': 'pix.example.com/qr/v2/rec/94ed2badcbc04c15b0bb7fa353194890',
    });
  });

  it('are accepted by pix-utils too', () => {
    for (const code of Object.values(VECTORS)) parsePixOrFail(code);
  });
});

describe('parseBrCode rejects', () => {
  it('a wrong CRC', () => {
    const code = VECTORS.staticManual.slice(0, -4) + '1D3E';
    expect(parseBrCode(code)).toMatchObject({ valid: false, error: expect.stringMatching(/CRC/) });
  });

  it('a changed payload under the old CRC', () => {
    const code = VECTORS.staticManual.replace('Fulano', 'Fulana');
    expect(parseBrCode(code).valid).toBe(false);
  });

  it('broken TLV, a missing CRC field and a bad start', () => {
    expect(parseBrCode('').valid).toBe(false);
    expect(parseBrCode('000201').valid).toBe(false);
    expect(parseBrCode('0002015913Fulano').valid).toBe(false);
    expect(parseBrCode('0002015913Fulano de Tal').valid).toBe(false);
    expect(parseBrCode('0002025802BR6304ABCD').valid).toBe(false);
    expect(parseBrCode(VECTORS.staticManual.replace('26580014', '26580099')).valid).toBe(false);
  });
});

describe('buildStaticBrCode', () => {
  it('writes the fields in order and round-trips through our parser', () => {
    const code = buildStaticBrCode(staticInput);
    expect(code).toMatch(/^00020126580014br\.gov\.bcb\.pix0136123e4567-/);
    expect(code).toContain(
      '5204000053039865406150.005802BR5913Fulano de Tal6008BRASILIA62120508ORDER1236304',
    );
    const parsed = parseBrCode(code);
    expect(parsed.valid).toBe(true);
    expect(parsed.fields).toEqual({
      '00': '01',
      '26': { '00': 'br.gov.bcb.pix', '01': staticInput.pixKey },
      '52': '0000',
      '53': '986',
      '54': '150.00',
      '58': 'BR',
      '59': 'Fulano de Tal',
      '60': 'BRASILIA',
      '62': { '05': 'ORDER123' },
      '63': code.slice(-4),
    });
  });

  it('leaves field 54 out without an amount, still a valid code public parsers accept', () => {
    const { amountCents: _amount, ...withoutAmount } = staticInput;
    const code = buildStaticBrCode(withoutAmount);
    expect(code).toContain('5204000053039865802BR5913Fulano de Tal');
    const parsed = parseBrCode(code);
    expect(parsed.valid).toBe(true);
    expect(parsed.fields['54']).toBeUndefined();
    expect(parsed.fields['62']).toEqual({ '05': 'ORDER123' });
    const pix = parsePixOrFail(code);
    if (!isStaticPix(pix)) throw new Error('expected a static Pix');
    expect(pix).toMatchObject({ pixKey: staticInput.pixKey, transactionAmount: 0, txid: 'ORDER123' });
  });

  it('is accepted by pix-utils with the same key, amount, name, city and txid', () => {
    const pix = parsePixOrFail(buildStaticBrCode({ ...staticInput, description: 'Pedido 123' }));
    if (!isStaticPix(pix)) throw new Error('expected a static Pix');
    expect(pix).toMatchObject({
      pixKey: staticInput.pixKey,
      transactionAmount: 150,
      merchantName: 'Fulano de Tal',
      merchantCity: 'BRASILIA',
      txid: 'ORDER123',
      infoAdicional: 'Pedido 123',
    });
  });

  it('removes accents and cuts the name to 25 and the city to 15', () => {
    const code = buildStaticBrCode({
      ...staticInput,
      merchantName: 'Padaria Pão de Açúcar — Filial Centro',
      merchantCity: 'São João da Boa Vista',
    });
    const { fields } = parseBrCode(code);
    expect(fields['59']).toBe('Padaria Pao de Acucar Fil');
    expect(fields['60']).toBe('Sao Joao da Boa');
    expect(parsePixOrFail(code)).toMatchObject({
      merchantName: 'Padaria Pao de Acucar Fil',
      merchantCity: 'Sao Joao da Boa',
    });
  });

  it('normalises the txid', () => {
    const build = (txid: string) => parseBrCode(buildStaticBrCode({ ...staticInput, txid })).fields['62'];
    expect(build('pedido-123_abc')).toEqual({ '05': 'pedido123abc' });
    expect(build('A'.repeat(40))).toEqual({ '05': 'A'.repeat(25) });
    expect(build('---')).toEqual({ '05': '***' });
  });

  it('shortens a long description to fit field 26', () => {
    const code = buildStaticBrCode({ ...staticInput, description: 'Descrição '.repeat(10) });
    const account = parseBrCode(code).fields['26'] as Record<string, string>;
    expect(account['02']).toMatch(/^Descricao Descricao/);
    // 26 holds GUI (4 + 14) + key (4 + 36) + description header (4): 37 characters are left.
    expect(account['02']).toHaveLength(37);
    expect(code.slice(6, 10)).toBe('2699');
    expect(parseBrCode(code).valid).toBe(true);
    parsePixOrFail(code);
  });

  it('refuses values that do not fit two length digits, and empty or non-ASCII keys', () => {
    expect(() => buildStaticBrCode({ ...staticInput, pixKey: 'k'.repeat(78) })).toThrow(RangeError);
    expect(() => buildStaticBrCode({ ...staticInput, pixKey: ' ' })).toThrow(RangeError);
    expect(() => buildStaticBrCode({ ...staticInput, pixKey: 'joão@example.com' })).toThrow(RangeError);
    expect(() => buildStaticBrCode({ ...staticInput, merchantName: '———' })).toThrow(RangeError);
    expect(() => buildStaticBrCode({ ...staticInput, amountCents: 0 })).toThrow(RangeError);
  });
});

describe('buildDynamicBrCode', () => {
  it('reproduces the bank vector byte for byte', () => {
    const code = buildDynamicBrCode({
      location: 'https://qrcodepix-h.bb.com.br/pix/v2/d9b97f73-b48b-43f6-be7e-f0594fb275a6',
      merchantName: 'ALAN GUIACHERO BUENO',
      merchantCity: 'BRASILIA',
    });
    expect(code).toBe(VECTORS.dynamicBank);
  });

  it('carries an amount when given, and round-trips through both parsers', () => {
    const location = 'psp.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25';
    const code = buildDynamicBrCode({
      location,
      amountCents: 1,
      merchantName: 'Loja Ação',
      merchantCity: 'Goiânia',
    });
    const parsed = parseBrCode(code);
    expect(parsed.valid).toBe(true);
    expect(parsed.fields).toMatchObject({
      '00': '01',
      '01': '12',
      '26': { '00': 'br.gov.bcb.pix', '25': location },
      '54': '0.01',
      '59': 'Loja Acao',
      '60': 'Goiania',
      '62': { '05': '***' },
    });
    const pix = parsePixOrFail(code);
    if (!isDynamicPix(pix)) throw new Error('expected a dynamic Pix');
    expect(pix).toMatchObject({ url: location, merchantName: 'Loja Acao', merchantCity: 'Goiania' });
  });

  it('refuses a location longer than field 26 can hold', () => {
    expect(() =>
      buildDynamicBrCode({ location: 'x'.repeat(78), merchantName: 'A', merchantCity: 'B' }),
    ).toThrow(RangeError);
    expect(() => buildDynamicBrCode({ location: 'https://', merchantName: 'A', merchantCity: 'B' })).toThrow(
      RangeError,
    );
  });
});

describe('formatAmountCents', () => {
  it.each([
    [1, '0.01'],
    [10, '0.10'],
    [100, '1.00'],
    [15000, '150.00'],
    [123456789, '1234567.89'],
    [999999999999, '9999999999.99'],
  ])('%d cents -> %s', (cents, text) => {
    expect(formatAmountCents(cents)).toBe(text);
  });

  it.each([0, -1, 1.5, Number.NaN, 1_000_000_000_000])('refuses %d', (cents) => {
    expect(() => formatAmountCents(cents)).toThrow(RangeError);
  });
});

describe('normalisation helpers', () => {
  it('keeps printable ASCII only', () => {
    expect(normaliseMerchantText('  Çà\tß é\u0000x  ', 25)).toBe('Ca ex');
    expect(normaliseMerchantText('ABCDEFGHIJKLMNOPQRSTUVWXYZ', 25)).toHaveLength(25);
    expect(normaliseStaticTxid('')).toBe('***');
  });
});
