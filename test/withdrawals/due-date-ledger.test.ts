import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { ChargeState, PaymentApprovedData, PaymentPixQrCodeCreatedData } from '@seller-api/contracts';
import { waitFor } from '../support/wait';
import { balance, balanceBecomes, newSeller, useHarness, type Seller } from './helpers';

/**
 * The ledger and a due-date charge (docs/pix.md, "Due-date charges"): payment.pix_qr_code_created has
 * the amounts of the charge as made, payment.approved and internal.charge.paid those of the payment (a
 * fine and interest here). The seller is credited the net of the payment, once, whatever the order in
 * which the messages arrive. The messages are published as payments publishes them, in a chosen order.
 */
const h = useHarness();

// The default fee (399 bps) on each gross, rounded as payments' computeFee does.
const MADE = { gross: 15000, fee: 599, net: 14401 };
const PAID = { gross: 15345, fee: 612, net: 14733 };

const db = () => h.system.payments.runtime.orm.em.fork();

type Name = 'created' | 'approved' | 'charge.paid';

/** Publishes one order's payments messages in `order` on payments.events; returns the order and ids. */
async function publishInOrder(seller: Seller, order: Name[]) {
  const orderId = randomUUID();
  const transactionId = randomUUID();
  const now = new Date().toISOString();
  const headers = { 'x-seller-id': seller.sellerId, 'x-environment': 'test', 'x-order-uuid': orderId };
  const tx = (a: typeof MADE) => ({ gross_amount: a.gross, fee_amount: a.fee, net_amount: a.net });
  const messages: Record<Name, [string, unknown]> = {
    created: [
      'payment.pix_qr_code_created',
      {
        transaction: {
          id: transactionId,
          method: 'PIX',
          status: 'CREATED',
          ...tx(MADE),
          created_at: now,
          expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
        },
        order: { uuid: orderId, status: 'PENDING' },
        seller: { name: 'Loja' },
      },
    ],
    approved: [
      'payment.approved',
      {
        transaction: {
          id: transactionId,
          method: 'PIX',
          status: 'APPROVED',
          ...tx(PAID),
          approved_at: now,
          components: { original: 15000, rebate: 0, discount: 0, fine: 300, interest: 45 },
        },
        order: { uuid: orderId, status: 'PAID' },
        seller: { name: 'Loja' },
      },
    ],
    'charge.paid': [
      'internal.charge.paid',
      {
        order_uuid: orderId,
        status: 'PAID',
        previous_status: 'PENDING',
        version: 1,
        paid_at: now,
        changed_at: now,
        refund: null,
        amount_paid: {
          amount: PAID.gross,
          date: now.slice(0, 10),
          components: { original: 15000, rebate: 0, discount: 0, fine: 300, interest: 45 },
        },
        fee_amount: PAID.fee,
        net_amount: PAID.net,
      },
    ],
  };
  const ids: string[] = [];
  const connection = await amqp.connect(h.system.env.AMQP_URL as string);
  try {
    const channel = await connection.createConfirmChannel();
    const exchange = `${h.system.env.AMQP_NAMESPACE}payments.events`;
    for (const name of order) {
      const [routingKey, payload] = messages[name];
      // As payments' contracts have them: a payload the ledger refused would be parked, not applied.
      ({ created: PaymentPixQrCodeCreatedData, approved: PaymentApprovedData, 'charge.paid': ChargeState })[
        name
      ].parse(payload);
      const messageId = randomUUID();
      ids.push(messageId);
      channel.publish(exchange, routingKey, Buffer.from(JSON.stringify(payload)), {
        messageId,
        headers,
        contentType: 'application/json',
        persistent: true,
      });
    }
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
  return { orderId, ids };
}

/** Resolves once the ledger consumer has taken every one of these messages. */
async function processed(ids: string[]) {
  await waitFor(
    async () => {
      const rows = await db().execute<Array<{ n: string }>>(
        `select count(*) as n from withdrawals.processed_messages where message_id = any(?::text[])`,
        [`{${ids.join(',')}}`],
      );
      return Number(rows[0]?.n) === ids.length || null;
    },
    { what: `${ids.length} messages taken by the ledger` },
  );
}

async function creditLines(orderId: string) {
  const rows = await db().execute<Array<{ kind: string; account: string; amount: string }>>(
    `select e.kind, l.account, l.amount from withdrawals.ledger_entries e
         join withdrawals.ledger_lines l on l.entry_id = e.id
        where e.order_id = ? order by e.created_at, l.id`,
    [orderId],
  );
  return rows.map((r) => ({ kind: r.kind, account: r.account, amount: Number(r.amount) }));
}

describe('the ledger and a due-date charge paid with other amounts than it was made with', () => {
  it.each<[string, Name[]]>([
    ['the QR code event first', ['created', 'approved', 'charge.paid']],
    ['the QR code event last', ['approved', 'charge.paid', 'created']],
    ['the internal state before payment.approved', ['created', 'charge.paid', 'approved']],
    [
      'duplicated QR code events around the approval',
      ['created', 'approved', 'created', 'charge.paid', 'created'],
    ],
  ])('credits the net of the payment once: %s', async (_name, order) => {
    const seller = await newSeller(h);
    const { orderId, ids } = await publishInOrder(seller, order);
    await balanceBecomes(h, seller.key, { available_amount: PAID.net });
    await processed(ids);
    // Every message taken, and still the one credit of the payment's amounts.
    expect(await balance(h, seller.key)).toEqual({
      available_amount: PAID.net,
      pending_amount: 0,
      currency: 'BRL',
    });
    const lines = await creditLines(orderId);
    expect(lines.every((l) => l.kind === 'payment_credited')).toBe(true);
    expect(Object.fromEntries(lines.map((l) => [l.account, l.amount]))).toEqual({
      psp_settlement: -PAID.gross,
      platform_fees: PAID.fee,
      seller_available: PAID.net,
    });
    expect(lines).toHaveLength(3);
  });
});
