import { MAX_INT_COLUMN } from './common';
import { zodIssuesToFieldErrors } from './errors';
import {
  CreateOrderRequest,
  GROSS_AMOUNT_REQUIRED_MESSAGE,
  MedResolveRequest,
  OrderListQuery,
  OrderSummaryQuery,
  TRACKING_FIELD_REQUIRED_MESSAGE,
  TrackingUpdateRequest,
  formatAddress,
} from './orders';

const PRODUCT = '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c';

const address = {
  street: 'Rua das Flores',
  number: '100',
  neighborhood: 'Centro',
  city: 'São Paulo',
  state: 'SP',
  postal_code: '01001000',
};

const validBody = {
  customer: { name: 'Maria Silva', tax_id: '529.982.247-25', email: 'maria@example.com', address },
  items: [{ product_uuid: PRODUCT, quantity: 2 }],
  payment: {},
};

/** Field errors of a body that must fail. */
function fieldErrors(body: unknown): Record<string, string[]> {
  const result = CreateOrderRequest.safeParse(body);
  if (result.success) throw new Error('expected the body to be refused');
  return zodIssuesToFieldErrors(result.error);
}

describe('CreateOrderRequest', () => {
  it('accepts an order with products and fills defaults, cleaned tax id and deduced type', () => {
    const order = CreateOrderRequest.parse(validBody);
    expect(order.customer.tax_id).toBe('52998224725');
    expect(order.customer.tax_id_type).toBe('CPF');
    expect(order.customer.phone).toBe('');
    expect(order.customer.address?.postal_code).toBe('01001-000');
    expect(order.customer.address?.country).toBe('BR');
    expect(order.payment).toEqual({ shipping_amount: 0, discount_amount: 0 });
    expect(order.postback_url).toBeNull();
  });

  it('accepts an alphanumeric CNPJ and deduces CNPJ', () => {
    const order = CreateOrderRequest.parse({
      ...validBody,
      customer: { ...validBody.customer, tax_id: '12.abc.345/01de-35' },
    });
    expect(order.customer.tax_id).toBe('12ABC34501DE35');
    expect(order.customer.tax_id_type).toBe('CNPJ');
  });

  it('reports every violation at once, each under its dotted path', () => {
    const errors = fieldErrors({
      customer: {
        name: 'Maria',
        tax_id: '529.982.247-24',
        email: 'not-an-email',
        address: { ...address, state: 'sp', postal_code: '123' },
      },
      items: [
        { product_uuid: PRODUCT, quantity: 0 },
        { product_uuid: 'nope', quantity: 1.5 },
      ],
      payment: { shipping_amount: -1 },
      postback_url: 'ftp://example.com/hook',
    });
    expect(Object.keys(errors).sort()).toEqual(
      [
        'customer.tax_id',
        'customer.email',
        'customer.address.state',
        'customer.address.postal_code',
        'items.0.quantity',
        'items.1.product_uuid',
        'items.1.quantity',
        'payment.shipping_amount',
        'postback_url',
      ].sort(),
    );
    for (const messages of Object.values(errors)) expect(messages.length).toBeGreaterThan(0);
  });

  it('bounds quantity by its int column: 2^31 is refused on the field, 2^31 - 1 accepted', () => {
    const withQuantity = (quantity: number) => ({
      ...validBody,
      items: [{ product_uuid: PRODUCT, quantity }],
      payment: { gross_amount: 100 },
    });
    expect(Object.keys(fieldErrors(withQuantity(2 ** 31)))).toEqual(['items.0.quantity']);
    expect(Object.keys(fieldErrors(withQuantity(Number.MAX_SAFE_INTEGER + 2)))).toEqual(['items.0.quantity']);
    expect(CreateOrderRequest.parse(withQuantity(MAX_INT_COLUMN)).items[0]?.quantity).toBe(MAX_INT_COLUMN);
  });

  it('requires payment.gross_amount for a standalone charge (items omitted or empty)', () => {
    const customer = { name: 'Maria', tax_id: '52998224725', email: 'maria@example.com' };
    expect(fieldErrors({ customer, payment: {} })).toEqual({
      'payment.gross_amount': [GROSS_AMOUNT_REQUIRED_MESSAGE],
    });
    expect(fieldErrors({ customer, items: [], payment: {} })).toEqual({
      'payment.gross_amount': [GROSS_AMOUNT_REQUIRED_MESSAGE],
    });
    expect(
      CreateOrderRequest.parse({ customer, payment: { gross_amount: 15000 } }).payment.gross_amount,
    ).toBe(15000);
  });

  it('reports the missing gross_amount together with customer errors', () => {
    const errors = fieldErrors({ customer: { name: 'Maria', tax_id: '52998224725' }, payment: {} });
    expect(Object.keys(errors).sort()).toEqual(['customer.email', 'payment.gross_amount']);
  });

  it('refuses a tax_id_type that contradicts the length, on customer.tax_id_type', () => {
    const errors = fieldErrors({
      ...validBody,
      customer: { ...validBody.customer, tax_id_type: 'CNPJ' },
    });
    expect(Object.keys(errors)).toEqual(['customer.tax_id_type']);
  });

  it('refuses a tax id of the wrong length or of one repeated digit', () => {
    expect(
      Object.keys(fieldErrors({ ...validBody, customer: { ...validBody.customer, tax_id: '123' } })),
    ).toEqual(['customer.tax_id']);
    expect(
      Object.keys(
        fieldErrors({ ...validBody, customer: { ...validBody.customer, tax_id: '111.111.111-11' } }),
      ),
    ).toEqual(['customer.tax_id']);
  });

  it('keeps gross_amount between 1 and 999999999999 and items at 100 at most', () => {
    expect(Object.keys(fieldErrors({ ...validBody, payment: { gross_amount: 0 } }))).toEqual([
      'payment.gross_amount',
    ]);
    expect(Object.keys(fieldErrors({ ...validBody, payment: { gross_amount: 1_000_000_000_000 } }))).toEqual([
      'payment.gross_amount',
    ]);
    const items = Array.from({ length: 101 }, () => ({ product_uuid: PRODUCT, quantity: 1 }));
    expect(Object.keys(fieldErrors({ ...validBody, items }))).toEqual(['items']);
  });

  it('validates debtor_document and the format of expiration_date', () => {
    const errors = fieldErrors({
      ...validBody,
      payment: { debtor_document: '11.222.333/0001-80', expiration_date: 'tomorrow' },
    });
    expect(Object.keys(errors).sort()).toEqual(['payment.debtor_document', 'payment.expiration_date']);
    const ok = CreateOrderRequest.parse({
      ...validBody,
      payment: { debtor_document: '11.222.333/0001-81', expiration_date: '2030-01-31' },
    });
    expect(ok.payment.debtor_document).toBe('11222333000181');
  });
});

describe('formatAddress', () => {
  it('joins the seven parts, S/N when no number, complement kept in the number part', () => {
    const parsed = CreateOrderRequest.parse(validBody).customer.address;
    if (!parsed) throw new Error('address expected');
    expect(formatAddress(parsed)).toBe('Rua das Flores, 100, Centro, São Paulo, SP, 01001-000, BR');
    expect(formatAddress({ ...parsed, number: undefined, complement: 'Apto 12' })).toBe(
      'Rua das Flores, S/N - Apto 12, Centro, São Paulo, SP, 01001-000, BR',
    );
  });
});

describe('TrackingUpdateRequest', () => {
  it('refuses an empty body on non_field_errors', () => {
    const result = TrackingUpdateRequest.safeParse({});
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(zodIssuesToFieldErrors(result.error)).toEqual({
      non_field_errors: [TRACKING_FIELD_REQUIRED_MESSAGE],
    });
  });

  it('accepts any one field, signed_by null and estimated_delivery_date included', () => {
    expect(TrackingUpdateRequest.safeParse({ shipping_status: 'DELIVERED' }).success).toBe(true);
    expect(TrackingUpdateRequest.safeParse({ signed_by: null }).success).toBe(true);
    expect(TrackingUpdateRequest.safeParse({ estimated_delivery_date: '2030-02-01' }).success).toBe(true);
    expect(TrackingUpdateRequest.safeParse({ shipping_status: 'FLYING' }).success).toBe(false);
  });
});

describe('list and sandbox bodies', () => {
  it('coerces limit from the query string with default 20 and max 100', () => {
    expect(OrderListQuery.parse({}).limit).toBe(20);
    expect(OrderListQuery.parse({ limit: '50', status: 'PAID' })).toEqual({ limit: 50, status: 'PAID' });
    expect(OrderListQuery.safeParse({ limit: '101' }).success).toBe(false);
    expect(OrderListQuery.safeParse({ limit: 'abc' }).success).toBe(false);
  });

  it('resolves a MED only as refunded or rejected', () => {
    expect(MedResolveRequest.parse({ outcome: 'rejected' })).toEqual({ outcome: 'rejected' });
    expect(MedResolveRequest.safeParse({ outcome: 'maybe' }).success).toBe(false);
  });
});

describe('order list searches', () => {
  it('cleans a tax id of its punctuation and keeps an e-mail as written, trimmed', () => {
    expect(OrderListQuery.parse({ customer_tax_id: '529.982.247-25' }).customer_tax_id).toBe('52998224725');
    expect(OrderListQuery.parse({ customer_tax_id: '12.abc.345/01de-35' }).customer_tax_id).toBe(
      '12ABC34501DE35',
    );
    expect(OrderListQuery.parse({ customer_email: ' Ana@Example.com ' }).customer_email).toBe(
      'Ana@Example.com',
    );
  });

  it('refuses a tax id of neither length, and an empty or overlong e-mail', () => {
    for (const query of [
      { customer_tax_id: '1234' },
      { customer_tax_id: '' },
      { customer_email: ' ' },
      { customer_email: `${'a'.repeat(250)}@x.io` },
      { customer_email: ['a@x.io', 'b@x.io'] },
    ]) {
      const result = OrderListQuery.safeParse(query);
      expect({ query, success: result.success }).toEqual({ query, success: false });
      expect(zodIssuesToFieldErrors(result.error!)).toHaveProperty([Object.keys(query)[0] as string]);
    }
  });
});

describe('OrderSummaryQuery', () => {
  const errorsOf = (query: unknown) => {
    const result = OrderSummaryQuery.safeParse(query);
    return result.success ? null : zodIssuesToFieldErrors(result.error);
  };

  it('defaults to days of UTC', () => {
    expect(OrderSummaryQuery.parse({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' })).toEqual({
      from: '2026-01-01T00:00:00Z',
      to: '2026-01-02T00:00:00Z',
      granularity: 'day',
      time_zone: 'UTC',
    });
  });

  it('allows 92 days of the time zone clock by day and 7 by hour, and no more', () => {
    const ok = (query: Record<string, string>) => expect(errorsOf(query)).toBeNull();
    ok({ from: '2026-01-01T00:00:00Z', to: '2026-04-03T00:00:00Z' });
    ok({ from: '2026-01-01T00:00:00Z', to: '2026-01-08T00:00:00Z', granularity: 'hour' });
    // 92 days of New York's clock, one of them 25 hours long.
    ok({ from: '2026-09-01T00:00:00-04:00', to: '2026-12-02T00:00:00-05:00', time_zone: 'America/New_York' });
    expect(errorsOf({ from: '2026-01-01T00:00:00Z', to: '2026-04-03T00:00:00.001Z' })).toEqual({
      to: ['Must be at most 92 days after from with granularity day.'],
    });
    expect(
      errorsOf({ from: '2026-01-01T00:00:00Z', to: '2026-01-08T00:00:00.001Z', granularity: 'hour' }),
    ).toEqual({ to: ['Must be at most 7 days after from with granularity hour.'] });
    expect(errorsOf({ from: '2026-01-02T00:00:00Z', to: '2026-01-02T00:00:00Z' })).toEqual({
      to: ['Must be after from.'],
    });
  });

  it('reports a bad field alone, without a range check over it', () => {
    expect(
      errorsOf({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', time_zone: 'Mars/Base' }),
    ).toEqual({ time_zone: [expect.stringContaining('Unknown time zone')] });
    expect(
      Object.keys(
        errorsOf({ from: 'yesterday', to: '2026-01-02T00:00:00Z', granularity: 'week' }) ?? {},
      ).sort(),
    ).toEqual(['from', 'granularity']);
    expect(errorsOf({})).toEqual({ from: [expect.any(String)], to: [expect.any(String)] });
  });
});
