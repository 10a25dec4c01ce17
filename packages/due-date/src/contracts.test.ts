import {
  AmountDueDetail,
  DueDateTermsSchema,
  safeParseRequest,
  strictInput,
  type DueDateTermsOutput,
} from '@seller-api/contracts';
import { amountDue, type AmountDue } from './amount';
import { fixedCalendar } from './calendar';
import type { DueDateTerms } from './terms';

// The API's schemas and this package describe the same terms and the same answer: what the schema
// gives, amountDue takes, and what amountDue gives, the response schema takes. The assignments below
// are checked by the type checker; the test checks the values.
const termsFromSchema = (terms: DueDateTermsOutput): DueDateTerms => terms;
const answer = (due: AmountDue): AmountDueDetail => due;

describe('the contracts agree with the core', () => {
  it('computes from parsed terms, and answers in the response schema', () => {
    const parsed = safeParseRequest(strictInput(DueDateTermsSchema), {
      due_date: '2025-09-10',
      fine: { type: 'percent', rate: 200 },
      interest: { type: 'percent_per_month', value: 100 },
      rebate: { type: 'fixed', amount: 5000 },
      discount: { type: 'fixed_until', tiers: [{ until: '2025-09-05', value: 3000 }] },
    });
    if (!parsed.success) throw parsed.error;
    const calendar = fixedCalendar([]);
    const late = amountDue(100_000, termsFromSchema(parsed.data), '2025-09-15', calendar);
    expect(late.final).toBe(97_058);
    expect(AmountDueDetail.parse(answer(late))).toEqual(late);
    const closed = amountDue(100_000, termsFromSchema(parsed.data), '2025-10-11', calendar);
    expect(AmountDueDetail.parse(answer(closed))).toMatchObject({ payable: false, final: null });
  });
});
