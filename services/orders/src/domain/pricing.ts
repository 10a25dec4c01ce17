import { MAX_AMOUNT, MESSAGES, message, type ProductType } from '@seller-api/contracts';

export interface PricedProduct {
  id: string;
  name: string;
  price: number;
  images: string[];
  type: ProductType;
  commissionUnitAmount: number;
  producerName: string | null;
}

export interface PricedLine {
  position: number;
  product: PricedProduct;
  quantity: number;
  lineTotalAmount: number;
  commissionTotalAmount: number;
}

export interface OrderAmounts {
  subtotalAmount: number;
  shippingAmount: number;
  discountAmount: number;
  commissionAmount: number;
  grossAmount: number;
}

export interface PricingInput {
  lines: Array<{ product: PricedProduct; quantity: number }>;
  grossAmount?: number;
  shippingAmount: number;
  discountAmount: number;
}

/** Field errors keyed like the validation body (`payment.discount_amount`). */
export type FieldErrors = Record<string, string[]>;

const tooBig = (what: string) => message('amountTooBig', { what, maximum: MAX_AMOUNT });

/**
 * Prices an order (docs/orders.md): line totals and commissions per item; gross is subtotal + shipping
 * - discount unless sent; the discount may not exceed subtotal + shipping; gross stays within limits.
 * Every stored amount (line and commission totals, their sums) stays within the money limit too
 * (999999999999 cents, docs/limits.md), checked here, before payments is asked for the charge: a sum the
 * order's columns could not hold is a 400, never a charge without its order.
 */
export function priceOrder(
  input: PricingInput,
): { lines: PricedLine[]; amounts: OrderAmounts } | { errors: FieldErrors } {
  const lines = input.lines.map((line, position) => ({
    position,
    product: line.product,
    quantity: line.quantity,
    lineTotalAmount: line.product.price * line.quantity,
    commissionTotalAmount: line.product.commissionUnitAmount * line.quantity,
  }));
  const subtotalAmount = lines.reduce((sum, l) => sum + l.lineTotalAmount, 0);
  const commissionAmount = lines.reduce((sum, l) => sum + l.commissionTotalAmount, 0);
  const errors: FieldErrors = {};
  for (const line of lines) {
    if (line.lineTotalAmount > MAX_AMOUNT)
      errors[`items.${line.position}.quantity`] = [tooBig('Quantity times the unit price')];
    else if (line.commissionTotalAmount > MAX_AMOUNT)
      errors[`items.${line.position}.quantity`] = [tooBig('Quantity times the unit commission')];
  }
  if (Object.keys(errors).length > 0) return { errors };
  if (subtotalAmount > MAX_AMOUNT) errors.items = [tooBig("The items' total")];
  else if (commissionAmount > MAX_AMOUNT) errors.items = [tooBig("The items' total commission")];
  if (Object.keys(errors).length > 0) return { errors };
  if (input.discountAmount > subtotalAmount + input.shippingAmount) {
    errors['payment.discount_amount'] = [MESSAGES.discountTooBig];
  }
  const grossAmount = input.grossAmount ?? subtotalAmount + input.shippingAmount - input.discountAmount;
  if (input.grossAmount === undefined && !errors['payment.discount_amount']) {
    if (grossAmount < 1) errors['payment.gross_amount'] = [MESSAGES.computedAmountTooSmall];
    else if (grossAmount > MAX_AMOUNT) errors['payment.gross_amount'] = [tooBig('The computed amount')];
  }
  if (Object.keys(errors).length > 0) return { errors };
  return {
    lines,
    amounts: {
      subtotalAmount,
      shippingAmount: input.shippingAmount,
      discountAmount: input.discountAmount,
      commissionAmount,
      grossAmount,
    },
  };
}
