import { z } from 'zod';
import { safeParseRequest, zodIssuesToFieldErrors } from './errors';
import { MESSAGES } from './messages';
import { CreateOrderRequest, OrderListQuery } from './orders';
import { PspPixNotification } from './payments';
import { routes } from './route-registry';
import { isStrictInput, strictInput } from './strict';

const fieldErrors = (schema: z.ZodType, value: unknown, source: 'body' | 'query' = 'body') => {
  const result = safeParseRequest(schema, value, source);
  return result.success ? {} : zodIssuesToFieldErrors(result.error);
};

const order = {
  customer: { name: 'Ana', tax_id: '52998224725', email: 'ana@example.com' },
  payment: { gross_amount: 1500 },
};

describe('strictInput', () => {
  it('names unknown fields at every depth, with the other problems of the body', () => {
    const errors = fieldErrors(CreateOrderRequest, {
      ...order,
      customer: { ...order.customer, nickname: 'A', address: { street: 'R', zip: '1' } },
      items: [{ product_uuid: 'not-a-uuid', quantity: 1, currency: 'BRL' }],
      payment: { amount: 1500 },
      extra: true,
    });
    expect(errors).toEqual({
      extra: [MESSAGES.unknownField],
      'customer.nickname': [MESSAGES.unknownField],
      'customer.address.zip': [MESSAGES.unknownField],
      'customer.address.neighborhood': [MESSAGES.required],
      'customer.address.city': [MESSAGES.required],
      'customer.address.state': [MESSAGES.required],
      'customer.address.postal_code': [MESSAGES.required],
      'items.0.currency': [MESSAGES.unknownField],
      'items.0.product_uuid': [MESSAGES.uuid],
      'payment.amount': [MESSAGES.unknownField],
    });
  });

  it('keeps what the schema does: defaults, transforms and documentation', () => {
    const result = safeParseRequest(CreateOrderRequest, order);
    expect(result.success && result.data).toMatchObject({
      items: [],
      postback_url: null,
      customer: { tax_id_type: 'CPF', phone: '' },
      payment: { shipping_amount: 0, discount_amount: 0 },
    });
    const described = z.object({ a: z.string().meta({ description: 'the a' }) }).meta({ description: 'top' });
    const json = z.toJSONSchema(strictInput(described), { io: 'input' });
    expect(json).toMatchObject({
      description: 'top',
      additionalProperties: false,
      properties: { a: { description: 'the a' } },
    });
  });

  it('names an unknown query parameter as one', () => {
    expect(fieldErrors(OrderListQuery, { statuss: 'PAID' }, 'query')).toEqual({
      statuss: [MESSAGES.unknownQueryParameter],
    });
  });

  it('leaves a loose object loose and answers the same copy every time', () => {
    expect(PspPixNotification.safeParse({ pix: [], added_by_the_psp: 1 }).success).toBe(true);
    const loose = z.looseObject({ a: z.string() });
    expect(strictInput(loose).safeParse({ a: 'x', b: 1 }).success).toBe(true);
    const plain = z.object({ a: z.string() });
    expect(strictInput(plain)).toBe(strictInput(plain));
    expect(plain.safeParse({ a: 'x', b: 1 }).success).toBe(true);
  });

  it('is what every public route reads its body and query with, PSP notifications excepted', () => {
    const checked = routes.filter((route) => route.auth && (route.body || route.query));
    expect(checked.length).toBeGreaterThan(15);
    for (const route of checked) {
      const name = `${route.method} ${route.path}`;
      if (route.body) expect({ name, strict: isStrictInput(route.body) }).toEqual({ name, strict: true });
      if (route.query) expect({ name, strict: isStrictInput(route.query) }).toEqual({ name, strict: true });
    }
    const psp = routes.find((route) => route.path === '/psp/webhook/pix');
    expect(psp?.body && isStrictInput(psp.body)).toBe(false);
  });
});
