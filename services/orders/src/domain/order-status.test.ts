import type { ChargeRefund, ChargeState } from '@seller-api/contracts';
import {
  mirrorChargeState,
  mirrorRefund,
  statesToMirror,
  type MirroredOrder,
  type OrderRefund,
} from './order-status';

const none = (): OrderRefund => ({
  refundStatus: null,
  refundAttempt: null,
  refundAmount: null,
  refundRequestedAt: null,
  refundUpdatedAt: null,
  refundFailureReason: null,
});

const refund = (overrides: Partial<ChargeRefund> = {}): ChargeRefund => ({
  status: 'PROCESSING',
  attempt: 1,
  amount: 15000,
  requested_at: '2026-06-15T12:00:00.000Z',
  updated_at: '2026-06-15T12:00:01.000Z',
  failure_reason: null,
  hold_seq: 0,
  ...overrides,
});

describe('mirrorRefund', () => {
  it('copies the refund payments reports, every field but the ledger instruction', () => {
    const order = none();
    mirrorRefund(order, refund({ status: 'FAILED', failure_reason: 'Saldo insuficiente', hold_seq: 1 }));
    expect(order).toEqual({
      refundStatus: 'FAILED',
      refundAttempt: 1,
      refundAmount: 15000,
      refundRequestedAt: new Date('2026-06-15T12:00:00.000Z'),
      refundUpdatedAt: new Date('2026-06-15T12:00:01.000Z'),
      refundFailureReason: 'Saldo insuficiente',
    });
  });

  it('replaces a failed refund with the next attempt, its reason gone', () => {
    const order = none();
    mirrorRefund(order, refund({ status: 'FAILED', failure_reason: 'Saldo insuficiente' }));
    mirrorRefund(
      order,
      refund({
        attempt: 2,
        requested_at: '2026-06-16T09:00:00.000Z',
        updated_at: '2026-06-16T09:00:00.000Z',
      }),
    );
    expect(order).toMatchObject({ refundStatus: 'PROCESSING', refundAttempt: 2, refundFailureReason: null });
    expect(order.refundRequestedAt?.toISOString()).toBe('2026-06-16T09:00:00.000Z');
  });

  it.each([
    ['absent (a payments of an earlier release)', undefined],
    ['null (no refund with an outcome)', null],
  ])('keeps what the order has when the refund is %s', (_what, value) => {
    const order = none();
    mirrorRefund(order, refund());
    const before = { ...order };
    mirrorRefund(order, value);
    expect(order).toEqual(before);
    expect(order.refundStatus).toBe('PROCESSING');
  });
});

/** An order as the mirror reads it: PENDING, version 1, with one item. */
const mirroredOrder = (overrides: Partial<MirroredOrder> = {}): MirroredOrder => ({
  id: '6f1c2d8e-1b7a-4c55-9a3e-2f0d4b6c8a10',
  sellerId: '0b5e9c1a-3d2f-4e6b-8a7c-9d1e2f3a4b5c',
  environment: 'test',
  sellerName: 'Loja',
  status: 'PENDING',
  method: 'PIX',
  grossAmount: 15000,
  shippingAmount: 1000,
  discountAmount: 0,
  feeAmount: 750,
  netAmount: 14250,
  createdAt: new Date('2026-06-15T11:00:00.000Z'),
  paidAt: null,
  affiliateName: null,
  customerName: 'Maria',
  customerTaxId: '52998224725',
  customerTaxIdType: 'CPF',
  customerEmail: 'maria@example.com',
  postbackUrl: null,
  chargeVersion: 1,
  dueDateTerms: null,
  effectiveDueDate: null,
  lastPayableDate: null,
  amountPaid: null,
  items: [
    {
      productId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      name: 'Caneca',
      quantity: 2,
      price: 7000,
      lineTotalAmount: 14000,
    },
  ],
  ...none(),
  ...overrides,
});

describe('mirrorChargeState', () => {
  const order = mirroredOrder;
  const state = (overrides: Partial<ChargeState> = {}): ChargeState => ({
    order_uuid: order().id,
    status: 'PAID',
    previous_status: 'PENDING',
    version: 2,
    paid_at: '2026-06-15T12:00:00.000Z',
    changed_at: '2026-06-15T12:00:00.000Z',
    ...overrides,
  });

  it('changes nothing for a version the order holds or an older one', () => {
    expect(mirrorChargeState(order({ chargeVersion: 2 }), state())).toBeNull();
    expect(mirrorChargeState(order({ chargeVersion: 3 }), state())).toBeNull();
  });

  it('pays the order, keeps the first paid_at, and emits order.paid with its items', () => {
    const before = order();
    const next = mirrorChargeState(before, state());
    expect(next?.order).toMatchObject({
      status: 'PAID',
      chargeVersion: 2,
      paidAt: new Date('2026-06-15T12:00:00.000Z'),
    });
    expect(next?.events).toHaveLength(1);
    expect(next?.events[0]).toMatchObject({
      routingKey: 'order.paid',
      headers: { 'x-order-uuid': before.id, 'x-seller-id': before.sellerId, 'x-environment': 'test' },
      payload: {
        order: { status: 'PAID', paid_at: '2026-06-15T12:00:00.000Z' },
        items: [{ quantity: 2, line_total_amount: 14000 }],
      },
    });
    // The order read is left as it was.
    expect(before).toMatchObject({ status: 'PENDING', chargeVersion: 1, paidAt: null });
    const paidBefore = new Date('2026-06-15T11:30:00.000Z');
    expect(mirrorChargeState(order({ paidAt: paidBefore }), state())?.order.paidAt).toEqual(paidBefore);
  });

  it('keeps what the payment paid, with fee and net of it, and order.paid carries them', () => {
    const amountPaid = {
      amount: 97058,
      date: '2027-09-13',
      components: { original: 100000, rebate: 5000, discount: 0, fine: 1900, interest: 158 },
    };
    const paid = mirrorChargeState(
      order({ grossAmount: 100000, feeAmount: 3990, netAmount: 96010 }),
      state({ amount_paid: amountPaid, fee_amount: 3873, net_amount: 93185 }),
    );
    expect(paid?.order).toMatchObject({ grossAmount: 100000, feeAmount: 3873, netAmount: 93185, amountPaid });
    expect(paid?.events[0]?.payload).toMatchObject({
      order: {
        gross_amount: 100000,
        fee_amount: 3873,
        net_amount: 93185,
        amount_paid: amountPaid,
        due_date: null,
      },
    });
    // A later state without them (a refund's, from a payments of an earlier release) forgets nothing.
    const refunded = mirrorChargeState(
      paid?.order as MirroredOrder,
      state({ status: 'REFUNDED', previous_status: 'PAID', version: 3 }),
    );
    expect(refunded?.order).toMatchObject({ feeAmount: 3873, netAmount: 93185, amountPaid });
    // Before payment payments' fee and net are the order's own: nothing to copy.
    const pending = mirrorChargeState(
      order(),
      state({ status: 'CANCELLED', amount_paid: null, fee_amount: 1, net_amount: 2 }),
    );
    expect(pending?.order).toMatchObject({ feeAmount: 750, netAmount: 14250, amountPaid: null });
  });

  it('emits nothing for a refund that changes alone, nor for a MED rejected back to PAID', () => {
    const refundOnly = mirrorChargeState(order({ status: 'PAID' }), state({ refund: refund() }));
    expect(refundOnly?.events).toEqual([]);
    expect(refundOnly?.order).toMatchObject({ status: 'PAID', chargeVersion: 2, refundStatus: 'PROCESSING' });
    const backFromMed = mirrorChargeState(order({ status: 'MED' }), state({ previous_status: 'MED' }));
    expect(backFromMed?.order.status).toBe('PAID');
    expect(backFromMed?.events).toEqual([]);
  });
});

describe('mirrorChargeState, states out of order', () => {
  const base = mirroredOrder({ items: [] });
  const later = (status: 'REFUNDED' | 'MED' | 'CHARGEBACK'): ChargeState => ({
    order_uuid: base.id,
    status,
    previous_status: 'PAID',
    version: 3,
    paid_at: '2026-06-15T12:00:00.000Z',
    changed_at: '2026-06-15T12:05:00.000Z',
  });

  it.each([
    ['REFUNDED', ['order.paid', 'order.refunded']],
    ['CHARGEBACK', ['order.paid', 'order.chargeback']],
    ['MED', ['order.paid']],
  ] as const)(
    'a %s state before the PAID one still pays the order and emits order.paid first',
    (status, routingKeys) => {
      const next = mirrorChargeState(base, later(status));
      expect(next?.order).toMatchObject({ status, paidAt: new Date('2026-06-15T12:00:00.000Z') });
      expect(next?.events.map((e) => e.routingKey)).toEqual(routingKeys);
      expect(next?.events[0]?.payload).toMatchObject({
        order: { status: 'PAID', paid_at: '2026-06-15T12:00:00.000Z' },
      });
      // The PAID state arriving after is older: nothing more, no second order.paid.
      const paid = {
        ...later(status),
        status: 'PAID' as const,
        previous_status: 'PENDING' as const,
        version: 2,
      };
      expect(mirrorChargeState(next?.order as MirroredOrder, paid)).toBeNull();
    },
  );

  it('emits no order.paid for an order already paid, nor for a cancel', () => {
    const paidOrder = { ...base, status: 'PAID' as const, paidAt: new Date('2026-06-15T12:00:00.000Z') };
    expect(mirrorChargeState(paidOrder, later('REFUNDED'))?.events.map((e) => e.routingKey)).toEqual([
      'order.refunded',
    ]);
    const cancelled = mirrorChargeState(base, { ...later('REFUNDED'), status: 'CANCELLED', paid_at: null });
    expect(cancelled?.events.map((e) => e.routingKey)).toEqual(['order.cancelled']);
    expect(cancelled?.order.paidAt).toBeNull();
  });
});

describe('statesToMirror', () => {
  const A = '1a000000-0000-4000-8000-000000000000';
  const B = '2b000000-0000-4000-8000-000000000000';
  const state = (order: string, version: number): { value: ChargeState } => ({
    value: {
      order_uuid: order,
      status: 'PAID',
      previous_status: 'PENDING',
      version,
      paid_at: '2026-06-15T12:00:00.000Z',
      changed_at: '2026-06-15T12:00:00.000Z',
    },
  });
  const keys = (batch: Array<{ value: ChargeState }>) =>
    batch.map(({ value }) => `${value.order_uuid[0]}${value.version}`);

  it('keeps the states newer than their order holds, order by order and version by version', () => {
    const batch = [state(B, 3), state(A, 2), state(B, 1), state(A, 4), state(B, 2)];
    expect(
      keys(
        statesToMirror(
          batch,
          new Map([
            [A, 2],
            [B, 1],
          ]),
        ),
      ),
    ).toEqual(['14', '22', '23']);
  });

  it('keeps every state of an order it holds no version of', () => {
    expect(keys(statesToMirror([state(A, 2), state(A, 1)], new Map()))).toEqual(['11', '12']);
  });

  it('keeps nothing when the orders hold every version', () => {
    expect(statesToMirror([state(A, 1), state(A, 2)], new Map([[A, 2]]))).toEqual([]);
  });
});
