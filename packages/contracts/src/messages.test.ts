import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { safeParseRequest, zodIssuesToFieldErrors } from './errors';
import { MESSAGES, message } from './messages';
import { CreateOrderRequest } from './orders';

/** The messages of docs/errors.md, "Messages": the reference this list must match. */
function documentedMessages(): string[] {
  const text = readFileSync(path.join(__dirname, '../../../docs/errors.md'), 'utf8');
  const section = text.slice(text.indexOf('### Messages'), text.indexOf('## Codes'));
  return [...section.matchAll(/^\| .+ \| `(.+)` \|$/gm)].map((match) => match[1] as string);
}

const errorsOf = (schema: z.ZodType, value: unknown) => {
  const result = safeParseRequest(schema, value);
  if (result.success) throw new Error('expected a failure');
  return zodIssuesToFieldErrors(result.error);
};

describe('messages', () => {
  it('documents every message of the list in docs/errors.md', () => {
    const documented = documentedMessages();
    expect(documented.length).toBeGreaterThan(40);
    for (const text of Object.values(MESSAGES))
      expect({ text, documented: documented.includes(text) }).toEqual({ text, documented: true });
  });

  it('fills in the parts of a template', () => {
    expect(message('maxLength', { maximum: 255 })).toBe('Must be at most 255 characters.');
    expect(message('taxIdRepeated', { type: 'CPF' })).toBe(
      'Invalid CPF: a single repeated digit is never issued.',
    );
  });

  it("words every general rule in our words, not the validator's", () => {
    const schema = z.object({
      name: z.string().min(1).max(3),
      code: z.string().min(2),
      count: z.int().min(1).max(10),
      ratio: z.number().gt(0).lt(1),
      flag: z.boolean(),
      nested: z.object({ a: z.string() }),
      list: z.array(z.string()).min(1).max(2),
      kind: z.enum(['a', 'b']),
      at: z.iso.datetime(),
      day: z.iso.date(),
      shipping_amount: z.int(),
      amount: z.int(),
    });
    expect(
      errorsOf(schema, {
        name: 'long',
        code: 'x',
        count: 1.5,
        ratio: 1,
        flag: 'yes',
        nested: 'x',
        list: [],
        kind: 'c',
        at: 'today',
        day: '28/11/2026',
        shipping_amount: '115.00',
        amount: 1.5,
      }),
    ).toEqual({
      name: ['Must be at most 3 characters.'],
      code: ['Must be at least 2 characters.'],
      count: [MESSAGES.integer],
      ratio: ['Must be less than 1.'],
      flag: [MESSAGES.boolean],
      nested: [MESSAGES.object],
      list: [MESSAGES.notEmpty],
      kind: ['Must be one of: a, b.'],
      at: [MESSAGES.datetime],
      day: [MESSAGES.date],
      shipping_amount: [MESSAGES.amount],
      amount: [MESSAGES.amount],
    });
    expect(
      errorsOf(schema.pick({ name: true, count: true, list: true }), { name: '', count: '2', list: 'x' }),
    ).toEqual({
      name: [MESSAGES.notEmpty],
      count: [MESSAGES.number],
      list: [MESSAGES.array],
    });
  });

  it('answers the order of the issue in its own words: required, cents, and the reason a CPF is refused', () => {
    expect(errorsOf(CreateOrderRequest, { payment: { gross_amount: '115.00' } })).toEqual({
      customer: [MESSAGES.required],
      'payment.gross_amount': [MESSAGES.amount],
    });
    const customer = { name: 'Ana', email: 'ana@example.com' };
    expect(
      errorsOf(CreateOrderRequest, {
        customer: { ...customer, tax_id: '111.111.111-11' },
        payment: { gross_amount: 1 },
      }),
    ).toEqual({ 'customer.tax_id': ['Invalid CPF: a single repeated digit is never issued.'] });
    expect(
      errorsOf(CreateOrderRequest, {
        customer: { ...customer, tax_id: '529.982.247-26' },
        payment: { gross_amount: 1 },
      }),
    ).toEqual({ 'customer.tax_id': ['Invalid CPF: check digits do not match.'] });
  });
});
