import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  DueDateTermsSchema,
  dueDateAmountIssues,
  safeParseRequest,
  strictInput,
} from '@seller-api/contracts';
import { amountDue } from './amount';
import { brazilCalendar, type CalendarPlace } from './calendar';
import { fromCobvDecimal } from './cobv';

// docs/pix.md, "Worked examples": each example is a JSON block (amount, terms, and the place of the
// holidays when not national) followed by a table of days. Every row is checked against amountDue, so
// the docs and the code cannot disagree.

const COLUMNS = [
  'paid on',
  'effective due date',
  'last payable date',
  'days late',
  'rebate',
  'discount',
  'fine',
  'interest',
  'owed',
];

type Example = { amount: number; terms: unknown; calendar?: CalendarPlace; rows: string[][] };

function examples(): Example[] {
  const text = readFileSync(path.join(__dirname, '../../../docs/pix.md'), 'utf8');
  const start = text.indexOf('### Worked examples');
  expect(start).toBeGreaterThan(-1);
  const next = text.indexOf('\n## ', start);
  const section = text.slice(start, next === -1 ? undefined : next);
  return [...section.matchAll(/```json\n([\s\S]*?)\n```\n\n((?:\|.*\|\n?)+)/g)].map((match) => {
    const charge = JSON.parse(match[1] as string) as Omit<Example, 'rows'>;
    const [header, separator, ...rows] = (match[2] as string)
      .trim()
      .split('\n')
      .map((line) =>
        line
          .slice(1, -1)
          .split('|')
          .map((cell) => cell.trim()),
      );
    expect(header).toEqual(COLUMNS);
    expect(separator?.every((cell) => /^-+$/.test(cell))).toBe(true);
    return { ...charge, rows };
  });
}

const all = examples();
const cases = all.flatMap((example, index) =>
  example.rows.map((row) => [`example ${index + 1}, paid ${row[0]}`, example, row] as const),
);

describe('the worked examples of docs/pix.md', () => {
  it('are there', () => {
    expect(all.length).toBeGreaterThanOrEqual(6);
    expect(cases.length).toBeGreaterThanOrEqual(18);
  });

  it.each(all.map((example, index) => [index + 1, example] as const))(
    'example %i has terms the API takes',
    (_index, example) => {
      const parsed = safeParseRequest(strictInput(DueDateTermsSchema), example.terms);
      expect(parsed.success).toBe(true);
      if (parsed.success) expect(dueDateAmountIssues(parsed.data, example.amount)).toEqual([]);
    },
  );

  it.each(cases)('%s', (_name, example, row) => {
    const [date, effective, last, late, rebate, discount, fine, interest, owed] = row;
    const parsed = strictInput(DueDateTermsSchema).parse(example.terms);
    const due = amountDue(example.amount, parsed, date as string, brazilCalendar(example.calendar ?? {}));
    expect({
      effective_due_date: due.effective_due_date,
      last_payable_date: due.last_payable_date,
      days_late: due.days_late,
    }).toEqual({ effective_due_date: effective, last_payable_date: last, days_late: Number(late) });
    if (owed === '') {
      // An empty row is a day the charge cannot be paid.
      expect([rebate, discount, fine, interest]).toEqual(['', '', '', '']);
      expect(due).toMatchObject({ payable: false, components: null, final: null });
      return;
    }
    expect(due.payable).toBe(true);
    expect({ components: due.components, final: due.final }).toEqual({
      components: {
        original: example.amount,
        rebate: fromCobvDecimal(rebate as string),
        discount: fromCobvDecimal(discount as string),
        fine: fromCobvDecimal(fine as string),
        interest: fromCobvDecimal(interest as string),
      },
      final: fromCobvDecimal(owed as string),
    });
  });
});
