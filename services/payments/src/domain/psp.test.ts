import { hasError, isStaticPix, parsePix } from 'pix-utils';
import { parseBrCode } from './brcode';
import { sandboxPsp } from './psp';

const psp = sandboxPsp({
  pixKey: '7d9f0335-8dcd-4b5c-9b3e-2f6a4c1e8a52',
  merchantName: 'Seller API Ltda',
  merchantCity: 'São Paulo',
});
const input = {
  txid: 'AbC123dEf456GhI789jKl0MnO',
  amountCents: 15000,
  expiresAt: new Date('2030-01-01T00:00:00.000Z'),
  debtorName: 'Maria',
  debtorDocument: '52998224725',
};

describe('sandbox PSP', () => {
  it('makes a static BR Code with the key, amount, merchant and txid, and no location', async () => {
    const { copyAndPaste, location } = await psp.createCharge(input);
    expect(psp.name).toBe('sandbox');
    expect(location).toBeNull();
    const parsed = parseBrCode(copyAndPaste);
    expect(parsed.valid).toBe(true);
    expect(parsed.fields).toMatchObject({
      '00': '01',
      '26': { '00': 'br.gov.bcb.pix', '01': '7d9f0335-8dcd-4b5c-9b3e-2f6a4c1e8a52' },
      '52': '0000',
      '53': '986',
      '54': '150.00',
      '58': 'BR',
      '59': 'Seller API Ltda',
      '60': 'Sao Paulo',
      '62': { '05': 'AbC123dEf456GhI789jKl0MnO' },
    });
    expect(parsed.fields['01']).toBeUndefined();
  });

  it('is accepted by pix-utils as a static code', async () => {
    const { copyAndPaste } = await psp.createCharge({ ...input, amountCents: 1 });
    const pix = parsePix(copyAndPaste);
    if (hasError(pix) || !isStaticPix(pix)) throw new Error(`pix-utils refused ${copyAndPaste}`);
    expect(pix.transactionAmount).toBe(0.01);
    expect(pix.txid).toBe(input.txid);
  });
});

describe('the sandbox in `processing` refunds', () => {
  const later = sandboxPsp({
    pixKey: 'sandbox@example.com',
    merchantName: 'SELLER API',
    merchantCity: 'SAO PAULO',
    refunds: 'processing',
  });
  const ref = { endToEndId: `E${'1'.repeat(31)}`, refundId: 'D1' };

  it('answers a refund as in progress and ends it on a look-up', async () => {
    await expect(later.refund({ ...ref, amountCents: 1000 })).resolves.toEqual({
      status: 'PROCESSING',
      reason: null,
    });
    await expect(later.lookupRefund({ ...ref, amountCents: 1000 })).resolves.toEqual({
      status: 'REFUNDED',
      reason: null,
    });
  });

  it('does not make a refund of an amount ending in 13 cents', async () => {
    await expect(later.lookupRefund({ ...ref, amountCents: 1013 })).resolves.toMatchObject({
      status: 'FAILED',
      reason: expect.stringMatching(/13 cents/),
    });
  });

  it('refunds at once by default', async () => {
    await expect(psp.refund({ ...ref, amountCents: 1013 })).resolves.toEqual({
      status: 'REFUNDED',
      reason: null,
    });
  });
});
