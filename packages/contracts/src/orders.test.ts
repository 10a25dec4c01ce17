import { MAX_INT_COLUMN } from './common';
import { zodIssuesToFieldErrors } from './errors';
import {
  CreateOrderRequest,
  GROSS_AMOUNT_REQUIRED_MESSAGE,
  MedResolveRequest,
  OrderListQuery,
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
