import { zodIssuesToFieldErrors } from './errors';
import { ReconciliationCharge, ReconciliationChargesQuery } from './reconciliation';

describe('ReconciliationChargesQuery', () => {
  it('needs only the environment; the page size defaults to 100', () => {
    expect(ReconciliationChargesQuery.parse({ environment: 'live' })).toEqual({
      environment: 'live',
      limit: 100,
    });
  });

  it('takes a window with offsets and a page size from the query string', () => {
    expect(
      ReconciliationChargesQuery.parse({
        environment: 'test',
        changed_after: '2026-12-01T00:00:00-03:00',
        changed_before: '2026-12-01T03:00:00.001Z',
        limit: '500',
      }),
    ).toMatchObject({ limit: 500, changed_after: '2026-12-01T00:00:00-03:00' });
  });

  it('names every bad field at once', () => {
    const result = ReconciliationChargesQuery.safeParse({
      environment: 'prod',
      changed_after: 'yesterday',
      cursor: '',
      limit: '501',
    });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(Object.keys(zodIssuesToFieldErrors(result.error)).sort()).toEqual([
      'changed_after',
      'cursor',
      'environment',
      'limit',
    ]);
  });

  it('refuses an empty or reversed window on changed_before', () => {
    for (const changed_before of ['2026-12-01T00:00:00Z', '2026-11-30T23:59:59Z']) {
      const result = ReconciliationChargesQuery.safeParse({
        environment: 'test',
        changed_after: '2026-12-01T00:00:00Z',
        changed_before,
      });
      expect(result.success).toBe(false);
      if (!result.success)
        expect(zodIssuesToFieldErrors(result.error)).toEqual({
          changed_before: ['Must be later than changed_after'],
        });
    }
  });
});

describe('ReconciliationCharge', () => {
  const charge = {
    order_uuid: '7d5c7069-3b1e-4c1a-9d0e-2f6a4c1e8a52',
    seller_id: '14ec07c8-8dcd-4b5c-9b3e-2f6a4c1e8a52',
    environment: 'test',
    gross_amount: 15000,
    fee_amount: 599,
    net_amount: 14401,
    charge_status: 'MED',
    version: 2,
    status_changed_at: '2026-12-01T12:00:00.000Z',
  };

  it('is a charge that was paid at some point', () => {
    expect(ReconciliationCharge.parse(charge)).toEqual(charge);
    for (const status of ['PENDING', 'EXPIRED', 'CANCELLED'])
      expect(ReconciliationCharge.safeParse({ ...charge, charge_status: status }).success).toBe(false);
  });

  it('carries integer cents only', () => {
    expect(ReconciliationCharge.safeParse({ ...charge, net_amount: 144.01 }).success).toBe(false);
    expect(ReconciliationCharge.safeParse({ ...charge, fee_amount: -1 }).success).toBe(false);
  });
});
