import { zodIssuesToFieldErrors } from './errors';
import {
  Balance,
  CreateWithdrawalRequest,
  DenyWithdrawalRequest,
  OpsWithdrawalListQuery,
  WithdrawalListQuery,
  pixKeyProblem,
} from './finance';

describe('CreateWithdrawalRequest', () => {
  it('stores a punctuated CPF key as 11 digits', () => {
    const body = CreateWithdrawalRequest.parse({
      amount: 1000,
      pix_key: '529.982.247-25',
      pix_key_type: 'cpf',
    });
    expect(body.pix_key).toBe('52998224725');
  });

  it.each([
    ['email', 'seller@example.com'],
    ['phone', '+5511987654321'],
    ['phone', '+551187654321'],
    ['random', '123e4567-e89b-42d3-a456-426614174000'],
  ] as const)('accepts a valid %s key', (type, key) => {
    expect(pixKeyProblem(key, type)).toBeNull();
  });

  it.each([
    ['email', 'not-an-email'],
    ['cpf', '529.982.247-24'],
    ['cpf', '111.111.111-11'],
    ['phone', '11987654321'],
    ['phone', '+55119876543210'],
    ['random', 'abc'],
  ] as const)('refuses the %s key %s on pix_key', (type, key) => {
    const result = CreateWithdrawalRequest.safeParse({ amount: 1000, pix_key: key, pix_key_type: type });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(Object.keys(zodIssuesToFieldErrors(result.error))).toEqual(['pix_key']);
  });

  it('reports a bad amount and a bad key together', () => {
    const result = CreateWithdrawalRequest.safeParse({ amount: 0, pix_key: 'x', pix_key_type: 'phone' });
    if (result.success) throw new Error('expected failure');
    expect(Object.keys(zodIssuesToFieldErrors(result.error)).sort()).toEqual(['amount', 'pix_key']);
  });
});

describe('finance shapes', () => {
  it('has a BRL balance whose amounts are never negative', () => {
    expect(Balance.safeParse({ available_amount: -500, pending_amount: 0, currency: 'BRL' }).success).toBe(
      false,
    );
    expect(Balance.safeParse({ available_amount: 0, pending_amount: -1, currency: 'BRL' }).success).toBe(
      false,
    );
    expect(Balance.safeParse({ available_amount: 0, pending_amount: 0, currency: 'USD' }).success).toBe(
      false,
    );
  });

  it('accepts a deny with or without reason (action routes take an empty body)', () => {
    expect(DenyWithdrawalRequest.parse({})).toEqual({});
    expect(DenyWithdrawalRequest.parse({ reason: ' suspicious ' })).toEqual({ reason: 'suspicious' });
  });
});

describe('WithdrawalListQuery', () => {
  it('reads one status or several separated by commas as a set', () => {
    expect(WithdrawalListQuery.parse({}).status).toBeUndefined();
    expect(WithdrawalListQuery.parse({ status: 'PAID' }).status).toEqual(['PAID']);
    expect(WithdrawalListQuery.parse({ status: 'PENDING, APPROVED,PROCESSING,PENDING' }).status).toEqual([
      'PENDING',
      'APPROVED',
      'PROCESSING',
    ]);
  });

  it('refuses an unknown, empty or repeated parameter on status', () => {
    for (const status of ['DONE', '', 'PAID,', 'paid', ['PAID', 'DENIED']]) {
      const result = WithdrawalListQuery.safeParse({ status });
      expect({ status, success: result.success }).toEqual({ status, success: false });
      expect(zodIssuesToFieldErrors(result.error!)).toHaveProperty(['status']);
    }
  });

  it('leaves the operators their one status, PENDING by default', () => {
    expect(OpsWithdrawalListQuery.parse({}).status).toBe('PENDING');
    expect(OpsWithdrawalListQuery.safeParse({ status: 'PENDING,PAID' }).success).toBe(false);
  });
});
