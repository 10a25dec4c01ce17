import { startReceiver } from '../support/receiver';
import { createKey, startSystem, type RunningGateway, type System } from '../support/system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

/*
 * A destination with a large old backlog and a free slot: each claim's window of the oldest due
 * deliveries is all its own. Small budgets (4 attempts in flight, 2 per destination, so a window of 100
 * deliveries) make the backlog far larger than the window.
 */
let system: System;
let gateway: RunningGateway;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  system = await startSystem({ WEBHOOK_CONCURRENCY: '4', WEBHOOK_DESTINATION_CONCURRENCY: '2' });
  gateway = await system.startGateway();
  receiver = await startReceiver();
  // This file's database outlives a run: a backlog an earlier run left (its receivers gone) must not
  // compete with this run's.
  await system.dispatcher.runtime.orm.em
    .fork()
    .execute(`update webhooks.deliveries set status = 'dead' where status = 'pending'`);
});
afterAll(async () => {
  await system.stop();
  await receiver.close();
});

const BACKLOG = 3000;

it("serves another destination while one destination's backlog fills every claim's window", async () => {
  const busy = await createKey(gateway.service);
  const other = await createKey(gateway.service);
  await register(gateway.url, busy.key, `${receiver.url}/busy`);
  await register(gateway.url, other.key, `${receiver.url}/other`);
  await placeOrder(gateway.url, busy.key);
  await waitFor(() => receiver.received.some((h) => h.path === '/busy') || null, {
    what: 'a first delivery',
  });
  // The busy destination's backlog: copies of its first delivery, all due a minute ago (older than any
  // new delivery), as after an outage of that receiver.
  const em = system.dispatcher.runtime.orm.em.fork();
  await em.execute(
    `insert into webhooks.deliveries (id, event_id, webhook_id, order_id, seller_id, environment, event, url, signed,
       payload, occurred_at, status, next_attempt_at, created_at)
     select gen_random_uuid(), 'evt_' || md5(random()::text || n), webhook_id, order_id, seller_id, environment,
       event, url, signed, payload, occurred_at, 'pending', now() - interval '1 minute', now() - interval '1 minute'
       from webhooks.deliveries d, generate_series(1, ?) n
      where d.url = ? and d.status = 'delivered'`,
    [BACKLOG, `${receiver.url}/busy`],
  );
  const busyHits = () => receiver.received.filter((h) => h.path === '/busy').length;
  await waitFor(() => busyHits() > 20 || null, { what: 'the backlog being sent' });

  await placeOrder(gateway.url, other.key);
  await waitFor(() => receiver.received.some((h) => h.path === '/other') || null, {
    what: "the other destination's delivery",
  });
  // It went out while most of the backlog was still waiting: not behind it.
  expect(busyHits()).toBeLessThan(BACKLOG / 2);
});
