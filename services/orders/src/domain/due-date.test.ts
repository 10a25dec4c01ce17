import type { DueDateTermsRecord } from '@seller-api/contracts';
import { HttpError } from '@seller-api/service-kit';
import { amountDueOf, dueDatesOf, isOverdue, orderDueDate } from './due-date';

const terms: DueDateTermsRecord = {
  due_date: '2027-09-11',
  days_after_due: 0,
  fine: null,
  interest: null,
  rebate: null,
  discount: null,
  calendar: null,
};
// A Saturday: due the Monday after; with no days after due, the last payable day is that Monday.
const order = {
  status: 'PENDING' as const,
  dueDateTerms: terms,
  effectiveDueDate: '2027-09-13',
  lastPayableDate: '2027-09-13',
  grossAmount: 1000,
  createdAt: new Date('2027-09-01T12:00:00.000Z'),
};

const thrown = (work: () => unknown): HttpError => {
  try {
    work();
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error('expected an HttpError');
};

describe('due-date orders', () => {
  it('gives the dates of the terms, and the end of the last payable day in São Paulo', () => {
    expect(dueDatesOf(terms)).toEqual({
      effectiveDueDate: '2027-09-13',
      lastPayableDate: '2027-09-13',
      expiresAt: new Date('2027-09-14T03:00:00.000Z'),
    });
  });

  it('is overdue only while PENDING and after the effective due date in São Paulo', () => {
    expect(isOverdue(order, '2027-09-13')).toBe(false);
    expect(isOverdue(order, '2027-09-14')).toBe(true);
    expect(isOverdue({ ...order, status: 'PAID' }, '2027-09-14')).toBe(false);
    // 01:00 UTC on the 14th is still the 13th in São Paulo.
    expect(orderDueDate(order, new Date('2027-09-14T01:00:00.000Z'))?.overdue).toBe(false);
    expect(orderDueDate(order, new Date('2027-09-14T03:00:00.000Z'))).toEqual({
      ...terms,
      effective_due_date: '2027-09-13',
      last_payable_date: '2027-09-13',
      overdue: true,
    });
    expect(
      orderDueDate({ ...order, dueDateTerms: null, effectiveDueDate: null, lastPayableDate: null }),
    ).toBeNull();
  });

  it('quotes a day from the order’s creation on; none is payable after the last payable date', () => {
    expect(amountDueOf(order, '2027-09-01')).toMatchObject({ payable: true, final: 1000 });
    expect(amountDueOf(order, '2028-09-13')).toMatchObject({ payable: false, final: null });
    expect(amountDueOf(order, '9999-12-31')).toMatchObject({
      payable: false,
      final: null,
      last_payable_date: '2027-09-13',
    });
    expect(thrown(() => amountDueOf(order, '2027-08-31'))).toMatchObject({
      status: 400,
      data: { date: ['Must be at least 2027-09-01.'] },
    });
    const immediate = { ...order, dueDateTerms: null, effectiveDueDate: null, lastPayableDate: null };
    expect(thrown(() => amountDueOf(immediate, '2027-09-01'))).toMatchObject({
      status: 409,
      code: 'conflict',
    });
  });

  it('is not payable on any day once the order is no longer PENDING, with its dates', () => {
    for (const status of ['PAID', 'CANCELLED', 'EXPIRED'] as const)
      expect(amountDueOf({ ...order, status }, '2027-09-01')).toMatchObject({
        payable: false,
        components: null,
        final: null,
        effective_due_date: '2027-09-13',
      });
  });
});
