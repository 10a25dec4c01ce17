import { randomUUID } from 'node:crypto';
import { verifyWebhook } from '@seller-api/webhook-verify';
import { moveStrandedDeliveries } from '../../services/webhook-dispatcher/src/db/webhooks';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { deliveries, register } from './helpers';

const t = useSystem({ receiver: true, db: true });

/**
 * A pending delivery stored on `webhookId` as a fan-out that read the subscribers just before a
 * rotation would store it (it cannot be timed from outside, so it is written directly).
 */
async function strandOn(webhookId: string, sellerId: string, url: string): Promise<string> {
  const eventId = `evt_stranded${randomUUID().replaceAll('-', '')}`;
  await t.db.query(
    `insert into webhooks.deliveries (id, event_id, webhook_id, order_id, seller_id, environment, event, url,
       signed, payload, occurred_at, status, next_attempt_at, created_at)
     values ($1, $2, $3, null, $4, 'test', 'order.created', $5, true, $6, now(), 'pending', now(), now())`,
    [randomUUID(), eventId, webhookId, sellerId, url, JSON.stringify({ order: { uuid: randomUUID() } })],
  );
  return eventId;
}

describe('a delivery stored on a webhook a rotation had just retired', () => {
  it('moves to the successor and goes out signed with its secret', async () => {
    const { key, sellerId } = await t.newKey();
    const target = `${t.receiver.url}/stranded`;
    const old = await register(t.url, key, target);
    const successor = await register(t.url, key, target);
    const eventId = await strandOn(old.id, sellerId!, target);

    // The dispatcher's own job may move it first: either way it ends on the successor.
    await moveStrandedDeliveries(t.system.dispatcher.runtime.sql);
    const hook = await waitFor(
      () => t.receiver.received.find((h) => h.headers['x-webhook-event-id'] === eventId),
      {
        what: 'the stranded delivery sent',
      },
    );
    expect(() =>
      verifyWebhook({ secret: successor.secret, headers: hook.headers, rawBody: hook.rawBody }),
    ).not.toThrow();
    const moved = await waitFor(
      async () =>
        (await deliveries(t.url, key, successor.id, '?status=delivered')).find((d) => d.event_id === eventId),
      { what: 'the moved delivery delivered under the successor' },
    );
    expect(moved.attempts).toHaveLength(1);
    expect(await deliveries(t.url, key, old.id, '?status=pending')).toEqual([]);
  });

  it('leaves the webhooks retired long ago alone', async () => {
    const { key, sellerId } = await t.newKey();
    const target = `${t.receiver.url}/retired-long-ago`;
    const old = await register(t.url, key, target);
    await register(t.url, key, target);
    await t.db.query(`update webhooks.webhooks set updated_at = now() - interval '1 day' where id = $1`, [
      old.id,
    ]);
    const eventId = await strandOn(old.id, sellerId!, target);

    await moveStrandedDeliveries(t.system.dispatcher.runtime.sql);
    const left = await t.db.query<{ webhook_id: string }>(
      'select webhook_id from webhooks.deliveries where event_id = $1',
      [eventId],
    );
    expect(left.rows).toEqual([{ webhook_id: old.id }]);
  });
});
