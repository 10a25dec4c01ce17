import { TXID_LENGTH, newTxid } from './txid';

describe('newTxid', () => {
  it('is 25 letters and digits', () => {
    for (let i = 0; i < 200; i += 1) expect(newTxid()).toMatch(/^[A-Za-z0-9]{25}$/);
    expect(TXID_LENGTH).toBe(25);
  });

  it('does not repeat and uses the whole alphabet', () => {
    const ids = Array.from({ length: 2000 }, () => newTxid());
    expect(new Set(ids).size).toBe(ids.length);
    const seen = new Set(ids.join(''));
    // 50000 draws from 62 symbols: every one shows up.
    expect(seen.size).toBe(62);
  });
});
