import { MAX_AMOUNT, MAX_INT_COLUMN } from '@seller-api/contracts';
import { priceOrder, type PricedProduct } from './pricing';

const product = (price: number, commissionUnitAmount = 0): PricedProduct => ({
  id: 'p',
  name: 'Camiseta',
  price,
  images: [],
  type: 'DIGITAL',
  commissionUnitAmount,
  producerName: null,
});

const base = { shippingAmount: 0, discountAmount: 0 };

describe('priceOrder: money limits', () => {
  it('prices lines, subtotal and commission within the limit', () => {
    const priced = priceOrder({ ...base, lines: [{ product: product(5000, 500), quantity: 3 }] });
    expect(priced).toMatchObject({
      amounts: { subtotalAmount: 15000, commissionAmount: 1500, grossAmount: 15000 },
    });
  });

  it('refuses a line whose total exceeds the limit on its quantity, even with gross_amount sent', () => {
    const priced = priceOrder({
      ...base,
      grossAmount: 100,
      lines: [
        { product: product(5000), quantity: 1 },
        { product: product(5000), quantity: MAX_INT_COLUMN },
      ],
    });
    expect(priced).toEqual({ errors: { 'items.1.quantity': [expect.stringContaining(String(MAX_AMOUNT))] } });
  });

  it('refuses a commission total above the limit on the quantity', () => {
    const priced = priceOrder({
      ...base,
      grossAmount: 100,
      lines: [{ product: product(0, MAX_AMOUNT), quantity: 2 }],
    });
    expect(priced).toEqual({ errors: { 'items.0.quantity': [expect.stringContaining('commission')] } });
  });

  it('refuses a subtotal above the limit on items, though each line is within it', () => {
    const priced = priceOrder({
      ...base,
      grossAmount: 100,
      lines: [
        { product: product(MAX_AMOUNT), quantity: 1 },
        { product: product(1), quantity: 1 },
      ],
    });
    expect(priced).toEqual({ errors: { items: [expect.stringContaining(String(MAX_AMOUNT))] } });
  });

  it('refuses a computed gross above the limit', () => {
    const priced = priceOrder({
      shippingAmount: 1,
      discountAmount: 0,
      lines: [{ product: product(MAX_AMOUNT), quantity: 1 }],
    });
    expect(priced).toEqual({ errors: { 'payment.gross_amount': [expect.any(String)] } });
  });
});
