import type { DueDateTermsRecord } from '@seller-api/contracts';
import { componentRows, dueDateRules } from './due-date';

const plain = (text: string) => text.replace(/\s/g, ' ');
const rules = (terms: Partial<DueDateTermsRecord>) =>
  dueDateRules({
    due_date: '2025-09-10',
    days_after_due: 30,
    fine: null,
    interest: null,
    rebate: null,
    discount: null,
    calendar: null,
    ...terms,
  }).map(plain);

describe('dueDateRules', () => {
  it('says every rule of the worked example of docs/pix.md, in the order they apply', () => {
    expect(
      rules({
        fine: { type: 'percent', rate: 200 },
        interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
        rebate: { type: 'fixed', amount: 5000 },
        discount: { type: 'fixed_until', tiers: [{ until: '2025-09-05', value: 3000 }] },
      }),
    ).toEqual([
      'Rebate: R$ 50,00 off the amount, whatever the day paid.',
      'Discount: R$ 30,00 when paid on or before 2025-09-05.',
      'Fine: 2%, once, when paid after the effective due date (of the amount less any rebate).',
      'Interest: 1% a month (1/30 of it for each calendar day late).',
      'Payable until 30 days after the effective due date (the next business day if that is not one).',
      'Holidays: Brazilian national holidays.',
    ]);
  });

  it('says each kind of interest, discount tier, per-day discount and place of holidays', () => {
    expect(rules({ interest: { type: 'amount_per_day', value: 50, days: 'business' } })[0]).toBe(
      'Interest: R$ 0,50 for each business day late.',
    );
    expect(rules({ interest: { type: 'percent_per_day', value: 3, days: 'calendar' } })[0]).toBe(
      'Interest: 0,03% a day, for each calendar day late.',
    );
    expect(rules({ interest: { type: 'percent_per_month', value: 150, days: 'business' } })[0]).toBe(
      'Interest: 1,5% a month (1/21 of it for each business day late).',
    );
    expect(rules({ interest: { type: 'percent_per_year', value: 1200, days: 'business' } })[0]).toBe(
      'Interest: 12% a year (1/252 of it for each business day late).',
    );
    expect(rules({ interest: { type: 'percent_per_year', value: 1200, days: 'calendar' } })[0]).toBe(
      'Interest: 12% a year (1/365 of it for each calendar day late).',
    );
    expect(
      rules({
        discount: {
          type: 'percent_until',
          tiers: [
            { until: '2025-09-01', value: 500 },
            { until: '2025-09-05', value: 250 },
          ],
        },
      }).slice(0, 2),
    ).toEqual([
      'Discount: 5% when paid on or before 2025-09-01.',
      'Discount: 2,5% when paid on or before 2025-09-05.',
    ]);
    expect(rules({ discount: { type: 'amount_per_day_early', value: 10, days: 'calendar' } })[0]).toBe(
      'Discount: R$ 0,10 for each calendar day paid before the effective due date.',
    );
    expect(rules({ discount: { type: 'percent_per_day_early', value: 5, days: 'business' } })[0]).toBe(
      'Discount: 0,05% for each business day paid before the effective due date.',
    );
    expect(rules({ fine: { type: 'fixed', amount: 1000 }, rebate: { type: 'percent', rate: 1000 } })).toEqual(
      [
        'Rebate: 10% off the amount, whatever the day paid.',
        'Fine: R$ 10,00, once, when paid after the effective due date.',
        'Payable until 30 days after the effective due date (the next business day if that is not one).',
        'Holidays: Brazilian national holidays.',
      ],
    );
    expect(rules({ calendar: { state: 'SP', municipality: '3550308' } }).at(-1)).toBe(
      'Holidays: Brazilian national holidays and those of state SP, municipality 3550308 (IBGE code).',
    );
    expect(rules({ calendar: { state: 'RJ' } }).at(-1)).toBe(
      'Holidays: Brazilian national holidays and those of state RJ.',
    );
  });

  it('says when the amount is the same every day', () => {
    expect(rules({ days_after_due: 0 })).toEqual([
      'No fine, interest, rebate or discount: the amount is the same every day.',
      'Payable until 0 days after the effective due date (the next business day if that is not one).',
      'Holidays: Brazilian national holidays.',
    ]);
  });
});

describe('componentRows', () => {
  it('lists the original and every component that is not zero, with its sign', () => {
    const rows = componentRows({ original: 100000, rebate: 5000, discount: 0, fine: 1900, interest: 158 });
    expect(rows.map((r) => [r.label, plain(r.text)])).toEqual([
      ['Original amount', 'R$ 1.000,00'],
      ['Rebate', '− R$ 50,00'],
      ['Fine', '+ R$ 19,00'],
      ['Interest', '+ R$ 1,58'],
    ]);
    expect(
      componentRows({ original: 15000, rebate: 0, discount: 0, fine: 0, interest: 0 }).map((r) => r.label),
    ).toEqual(['Original amount']);
    expect(
      componentRows({ original: 100000, rebate: 0, discount: 3000, fine: 0, interest: 0 }).map((r) =>
        plain(r.text),
      ),
    ).toEqual(['R$ 1.000,00', '− R$ 30,00']);
  });
});
