import { startReceiver, type ReceivedHook, type Reply } from '../support/receiver';
import { createKey, startSystem, type RunningGateway, type System } from '../support/system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

let system: System;
let gateway: RunningGateway;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const replies = new Map<string, (hook: ReceivedHook) => Reply>();

beforeAll(async () => {
  system = await startSystem();
  gateway = await system.startGateway();
  receiver = await startReceiver((hook) => replies.get(hook.path)?.(hook) ?? { status: 200 });
});
afterAll(async () => {
  await system.stop();
  await receiver.close();
});

const ordersAt = (path: string) =>
  new Set(
    receiver.received.filter((h) => h.path === path).map((h) => (h.body.data.order as { uuid: string }).uuid),
  );

describe('dispatcher resilience', () => {
  it('two dispatcher replicas never send the same delivery twice', async () => {
    const replica = await system.startDispatcherReplica();
    try {
      const { key } = await createKey(gateway.service);
      await register(gateway.url, key, `${receiver.url}/replicas`);
      const orders = await Promise.all(Array.from({ length: 30 }, () => placeOrder(gateway.url, key)));
      await waitFor(() => orders.every((o) => ordersAt('/replicas').has(o)) || null, {
        timeoutMs: 20_000,
        what: 'all deliveries',
      });
      const hits = receiver.received.filter((h) => h.path === '/replicas');
      const ids = hits.map((h) => h.headers['x-webhook-event-id']);
      expect(new Set(ids).size).toBe(30);
      expect(ids).toHaveLength(30);
    } finally {
      await replica.stop();
    }
  });

  it('keeps a slow destination from delaying a healthy one', async () => {
    // A host of its own: a destination is a host, whose URLs share its budget (docs/webhooks.md,
    // "Concurrency per host"), so the others of this file are not held up by its backlog.
    const slow = await startReceiver(() => ({ status: 200, delayMs: 8_000 }));
    try {
      const slowSeller = await createKey(gateway.service);
      const fastSeller = await createKey(gateway.service);
      await register(gateway.url, slowSeller.key, `${slow.url}/slow`);
      await register(gateway.url, fastSeller.key, `${receiver.url}/fast`);
      // Enough slow deliveries to fill the slow destination's budget three times over.
      await Promise.all(Array.from({ length: 24 }, () => placeOrder(gateway.url, slowSeller.key)));
      const slowHits = () => slow.received.length;
      // The slow destination is saturated: its budget (8 at a time) is taken, the rest wait their turn.
      await waitFor(() => slowHits() >= 8 || null, { what: 'the slow destination saturated' });
      const fast = await Promise.all(
        Array.from({ length: 5 }, () => placeOrder(gateway.url, fastSeller.key)),
      );
      await waitFor(() => fast.every((o) => ordersAt('/fast').has(o)) || null, { what: 'fast deliveries' });
      // The slow receiver answers after 8 s: had the fast deliveries queued behind it, they could not
      // have arrived before its first wave answered and a second wave began.
      expect(slowHits()).toBe(8);
    } finally {
      await slow.close();
    }
  });

  it('loses nothing when the dispatcher stops mid-flight: deliveries due while it was down go out when it is back', async () => {
    const { key } = await createKey(gateway.service);
    await register(gateway.url, key, `${receiver.url}/restart`);
    const before = await placeOrder(gateway.url, key);
    await system.dispatcher.stop();
    // Events keep coming while no dispatcher runs: they wait in RabbitMQ.
    const during = await Promise.all(Array.from({ length: 5 }, () => placeOrder(gateway.url, key)));
    const replacement = await system.startDispatcherReplica();
    expect(replacement.port).toBeGreaterThan(0);
    await waitFor(() => [before, ...during].every((o) => ordersAt('/restart').has(o)) || null, {
      timeoutMs: 20_000,
      what: 'deliveries after restart',
    });
    const perOrder = [before, ...during].map(
      (o) =>
        receiver.received.filter(
          (h) => h.path === '/restart' && (h.body.data.order as { uuid: string }).uuid === o,
        ).length,
    );
    expect(perOrder.every((n) => n >= 1)).toBe(true);
  });
});
