import { startReceiver } from '../support/receiver';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

const t = useSystem({ receiver: true });

const ordersAt = (path: string) =>
  new Set(
    t.receiver.received
      .filter((h) => h.path === path)
      .map((h) => (h.body.data.order as { uuid: string }).uuid),
  );

describe('dispatcher resilience', () => {
  it('two dispatcher replicas never send the same delivery twice', async () => {
    const replica = await t.system.startDispatcherReplica();
    try {
      const { key } = await t.newKey();
      await register(t.url, key, `${t.receiver.url}/replicas`);
      const orders = await Promise.all(Array.from({ length: 30 }, () => placeOrder(t.url, key)));
      await waitFor(() => orders.every((o) => ordersAt('/replicas').has(o)) || null, {
        timeoutMs: 20_000,
        what: 'all deliveries',
      });
      const hits = t.receiver.received.filter((h) => h.path === '/replicas');
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
      const slowSeller = await t.newKey();
      const fastSeller = await t.newKey();
      await register(t.url, slowSeller.key, `${slow.url}/slow`);
      await register(t.url, fastSeller.key, `${t.receiver.url}/fast`);
      // Enough slow deliveries to fill the slow destination's budget three times over.
      await Promise.all(Array.from({ length: 24 }, () => placeOrder(t.url, slowSeller.key)));
      const slowHits = () => slow.received.length;
      // The slow destination is saturated: its budget (8 at a time) is taken, the rest wait their turn.
      await waitFor(() => slowHits() >= 8 || null, { what: 'the slow destination saturated' });
      const fast = await Promise.all(Array.from({ length: 5 }, () => placeOrder(t.url, fastSeller.key)));
      await waitFor(() => fast.every((o) => ordersAt('/fast').has(o)) || null, { what: 'fast deliveries' });
      // The slow receiver answers after 8 s: had the fast deliveries queued behind it, they could not
      // have arrived before its first wave answered and a second wave began.
      expect(slowHits()).toBe(8);
    } finally {
      await slow.close();
    }
  });

  it('loses nothing when the dispatcher stops mid-flight: deliveries due while it was down go out when it is back', async () => {
    const { key } = await t.newKey();
    await register(t.url, key, `${t.receiver.url}/restart`);
    const before = await placeOrder(t.url, key);
    await t.system.dispatcher.stop();
    // Events keep coming while no dispatcher runs: they wait in RabbitMQ.
    const during = await Promise.all(Array.from({ length: 5 }, () => placeOrder(t.url, key)));
    const replacement = await t.system.startDispatcherReplica();
    expect(replacement.port).toBeGreaterThan(0);
    await waitFor(() => [before, ...during].every((o) => ordersAt('/restart').has(o)) || null, {
      timeoutMs: 20_000,
      what: 'deliveries after restart',
    });
    const perOrder = [before, ...during].map(
      (o) =>
        t.receiver.received.filter(
          (h) => h.path === '/restart' && (h.body.data.order as { uuid: string }).uuid === o,
        ).length,
    );
    expect(perOrder.every((n) => n >= 1)).toBe(true);
  });
});
