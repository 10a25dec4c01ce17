import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { queueNames } from '@seller-api/service-kit';
import { waitFor } from '../support/wait';
import { balance, balanceBecomes, newSeller, useHarness } from './helpers';

/**
 * The ledger consumer writes what arrives together as one batch (services/withdrawals/src/events/
 * payments.ts): bursts of payments' messages, from several sellers, with duplicates and a message it
 * must refuse, published at once so that they meet in batches.
 */
const db = () => h.system.withdrawals.runtime.orm.em.fork();

const h = useHarness();

interface Message {
  routingKey: string;
  messageId: string;
  sellerId: string;
  orderId: string;
  payload: unknown;
}

/** The two approval signals of a paid order of `net` cents (as payments publishes them). */
function sale(sellerId: string, net: number, fee = 0): Message[] {
  const orderId = randomUUID();
  const now = new Date().toISOString();
  return [
    {
      routingKey: 'payment.approved',
      messageId: randomUUID(),
      sellerId,
      orderId,
      payload: {
        transaction: {
          id: randomUUID(),
          method: 'PIX',
          status: 'APPROVED',
          gross_amount: net + fee,
          fee_amount: fee,
          net_amount: net,
          approved_at: now,
        },
        order: { uuid: orderId, status: 'PAID' },
        seller: { name: 'Loja' },
      },
    },
    {
      routingKey: 'internal.charge.paid',
      messageId: randomUUID(),
      sellerId,
      orderId,
      payload: {
        order_uuid: orderId,
        status: 'PAID',
        previous_status: 'PENDING',
        version: 1,
        paid_at: now,
        changed_at: now,
      },
    },
  ];
}

/** Publishes every message without waiting between them, then waits for the broker's confirms. */
async function publishAll(messages: Message[]): Promise<void> {
  const connection = await amqp.connect(h.system.env.AMQP_URL as string);
  try {
    const channel = await connection.createConfirmChannel();
    const exchange = `${h.system.env.AMQP_NAMESPACE}payments.events`;
    for (const m of messages) {
      channel.publish(exchange, m.routingKey, Buffer.from(JSON.stringify(m.payload)), {
        messageId: m.messageId,
        type: m.routingKey,
        contentType: 'application/json',
        persistent: true,
        headers: { 'x-seller-id': m.sellerId, 'x-environment': 'test', 'x-order-uuid': m.orderId },
      });
    }
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
}

async function entriesOf(orderIds: string[]) {
  return db().execute<Array<{ order_id: string; kind: string; tx: string }>>(
    `select order_id, kind, xmin::text as tx from withdrawals.ledger_entries where order_id = any(?::uuid[])`,
    [`{${orderIds.join(',')}}`],
  );
}

describe('the ledger consumer, in batches', () => {
  it('credits every order of a burst from several sellers once, duplicates included', async () => {
    const sellers = await Promise.all([newSeller(h), newSeller(h), newSeller(h)]);
    const nets = [1_000, 2_500, 700];
    const messages = sellers.flatMap((seller, i) =>
      Array.from({ length: 40 }, () => sale(seller.sellerId, nets[i] as number, 50)).flat(),
    );
    // Every message a second time, as a relay retry would publish it: applied once.
    await publishAll([...messages, ...messages.slice(0, 60)]);
    for (const [i, seller] of sellers.entries()) {
      await balanceBecomes(h, seller.key, { available_amount: 40 * (nets[i] as number) });
    }
    const orderIds = [...new Set(messages.map((m) => m.orderId))];
    const entries = await entriesOf(orderIds);
    expect(entries).toHaveLength(orderIds.length);
    expect(entries.every((e) => e.kind === 'payment_credited')).toBe(true);
    // They were written together: some entries share their transaction.
    expect(new Set(entries.map((e) => e.tx)).size).toBeLessThan(entries.length);
    const processed = await db().execute<Array<{ n: string }>>(
      `select count(*) as n from withdrawals.processed_messages where message_id = any(?::text[])`,
      [`{${messages.map((m) => m.messageId).join(',')}}`],
    );
    expect(Number(processed[0]?.n)).toBe(messages.length);
  });

  it('parks a message that moves an order to another seller and applies the rest of its burst', async () => {
    const [owner, other] = await Promise.all([newSeller(h), newSeller(h)]);
    const first = sale(owner.sellerId, 900);
    await publishAll(first);
    await balanceBecomes(h, owner.key, { available_amount: 900 });
    const [approved] = first as [Message];
    const stolen: Message = { ...approved, messageId: randomUUID(), sellerId: other.sellerId };
    const rest = Array.from({ length: 20 }, () => sale(owner.sellerId, 100)).flat();
    await publishAll([...rest.slice(0, 20), stolen, ...rest.slice(20)]);
    await balanceBecomes(h, owner.key, { available_amount: 900 + 20 * 100 });
    expect(await balance(h, other.key)).toMatchObject({ available_amount: 0 });

    const connection = await amqp.connect(h.system.env.AMQP_URL as string);
    try {
      const channel = await connection.createChannel();
      const dead = queueNames(h.system.env.AMQP_NAMESPACE as string, 'withdrawals.ledger').dead;
      const parked = await waitFor(
        async () => {
          const message = await channel.get(dead, { noAck: false });
          if (message && message.properties.messageId !== stolen.messageId) {
            channel.nack(message, false, true);
            return null;
          }
          return message;
        },
        { what: 'the parked message' },
      );
      channel.ack(parked);
      expect(parked.properties.headers?.['x-parked-reason']).toMatch(/another seller/);
    } finally {
      await connection.close();
    }
  });
});
