import { buildDynamicBrCode, buildStaticBrCode } from './brcode';
import { checkDueDateBrCode, dueDateBrCodeOf } from './cobv-brcode';

const LOCATION = 'pix.psp.example/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25';
const merchant = { merchantName: 'Loja', merchantCity: 'Sao Paulo' };

describe('checkDueDateBrCode', () => {
  it('takes the dynamic code of the location, without an amount', () => {
    const code = buildDynamicBrCode({ location: LOCATION, ...merchant });
    expect(checkDueDateBrCode(code, LOCATION)).toEqual({ ok: true, location: LOCATION });
    // The answer's location may carry a scheme; the code never does.
    expect(checkDueDateBrCode(code, `https://${LOCATION}`)).toEqual({ ok: true, location: LOCATION });
    expect(checkDueDateBrCode(code, null)).toEqual({ ok: true, location: LOCATION });
  });

  it('refuses a code with an amount, a key, another location, a bad CRC or none at all', () => {
    const priced = buildDynamicBrCode({ location: LOCATION, amountCents: 15000, ...merchant });
    expect(checkDueDateBrCode(priced, LOCATION)).toEqual({
      ok: false,
      problem: expect.stringMatching(/amount/),
    });
    const keyed = buildStaticBrCode({
      pixKey: 'pix@loja.example',
      amountCents: 100,
      txid: 'T1',
      ...merchant,
    });
    expect(checkDueDateBrCode(keyed, null)).toEqual({
      ok: false,
      problem: expect.stringMatching(/location/),
    });
    const code = buildDynamicBrCode({ location: LOCATION, ...merchant });
    expect(checkDueDateBrCode(code, 'pix.psp.example/qr/v2/cobv/other')).toEqual({
      ok: false,
      problem: expect.stringMatching(/not the charge location/),
    });
    const broken = `${code.slice(0, -4)}${code.slice(-4) === '0000' ? '0001' : '0000'}`;
    expect(checkDueDateBrCode(broken, LOCATION)).toEqual({
      ok: false,
      problem: expect.stringMatching(/CRC/),
    });
    expect(checkDueDateBrCode('', LOCATION)).toEqual({ ok: false, problem: 'no pixCopiaECola' });
  });

  it('builds the code of a location when the PSP answers none, and only of a location a code can carry', () => {
    const code = dueDateBrCodeOf(`https://${LOCATION}`, merchant);
    expect(checkDueDateBrCode(code ?? '', LOCATION)).toEqual({ ok: true, location: LOCATION });
    expect(dueDateBrCodeOf(null, merchant)).toBeNull();
    expect(dueDateBrCodeOf(`pix.psp.example/${'x'.repeat(70)}`, merchant)).toBeNull();
    expect(dueDateBrCodeOf('not a location', merchant)).toBeNull();
  });
});
