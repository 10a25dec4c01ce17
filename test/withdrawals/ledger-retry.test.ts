import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { queueNames } from '@seller-api/service-kit';
import { consumerFault } from '../support/consumer-fault';
import { waitFor } from '../support/wait';
import {
  act,
  balance,
  balanceBecomes,
  newOrder,
  newSeller,
  publishSale,
  useHarness,
  SALE_NET,
} from './helpers';

/**
 * Ledger messages that fail once (the database restarting under the consumer) go through the real
 * broker's retry queue and come back with the queue's routing key: they must still be applied, by the
 * name they were published under, and a message nobody can name is parked, never acked.
 */
const h = useHarness();
let fault: Awaited<ReturnType<typeof consumerFault>>;
const db = () => h.system.withdrawals.runtime.orm.em.fork();

beforeAll(async () => {
  fault = await consumerFault(db, 'withdrawals', 'withdrawals.ledger');
  // Off before the services stop: it reads the withdrawals database.
  h.cleanup(() => fault.off());
});

async function creditEntries(orderId: string): Promise<number> {
  const rows = await db().execute<Array<{ n: string }>>(
    `select count(*) as n from withdrawals.ledger_entries where order_id = ? and kind = 'payment_credited'`,
    [orderId],
  );
  return Number(rows[0]?.n ?? 0);
}

describe('ledger messages that fail once', () => {
  it('credits a paid order whose every message failed once and came back through the retry queue', async () => {
    const seller = await newSeller(h);
    const before = await fault.failures();
    await fault.on();
    const order = await newOrder(h, seller.key);
    await act(h, seller.key, `/sandbox/orders/${order}/pay/`);
    // payment.pix_qr_code_created, payment.approved and internal.charge.paid each failed at least once.
    await waitFor(async () => (await fault.failures()) - before >= 3, { what: 'three injected failures' });
    await fault.off();
    await balanceBecomes(h, seller.key, { available_amount: SALE_NET });
    expect(await creditEntries(order)).toBe(1);
  });

  it('names a retried message from x-death when its publisher set no type', async () => {
    const seller = await newSeller(h);
    const before = await fault.failures();
    await fault.on();
    // Published the way another producer might: routing key only, no `type` property.
    const order = await publishSale(h.system.env, { ...seller, environment: 'test', name: 'Loja' }, 5_000);
    await waitFor(async () => (await fault.failures()) - before >= 2, { what: 'two injected failures' });
    await fault.off();
    await balanceBecomes(h, seller.key, { available_amount: 5_000 });
    expect(await creditEntries(order)).toBe(1);
  });

  it('parks a message whose name the ledger does not know instead of acking it', async () => {
    const seller = await newSeller(h);
    const messageId = randomUUID();
    const connection = await amqp.connect(h.system.env.AMQP_URL as string);
    try {
      const channel = await connection.createConfirmChannel();
      const exchange = `${h.system.env.AMQP_NAMESPACE}payments.events`;
      await new Promise<void>((resolve, reject) =>
        channel.publish(
          exchange,
          'payment.unheard_of',
          Buffer.from('{}'),
          { messageId, headers: { 'x-seller-id': seller.sellerId, 'x-environment': 'test' } },
          (err) => (err ? reject(err) : resolve()),
        ),
      );
      const dead = queueNames(h.system.env.AMQP_NAMESPACE as string, 'withdrawals.ledger').dead;
      const parked = await waitFor(
        async () => {
          const message = await channel.get(dead, { noAck: false });
          if (message && message.properties.messageId !== messageId) {
            channel.nack(message, false, true);
            return null;
          }
          return message;
        },
        { what: 'the parked message' },
      );
      channel.ack(parked);
      expect(parked.properties.headers?.['x-parked-reason']).toMatch(/payment\.unheard_of/);
      const processed = await db().execute<Array<{ n: string }>>(
        `select count(*) as n from withdrawals.processed_messages where message_id = ?`,
        [messageId],
      );
      expect(Number(processed[0]?.n)).toBe(0);
      expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });
    } finally {
      await connection.close();
    }
  });
});
