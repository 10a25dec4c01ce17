import { useSystem } from '../support/use-system';
import { TcpProxy, hostPort, viaProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

const amqp = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const { host, port } = hostPort(amqp, 5672);
const proxy = new TcpProxy(host, port);
// Started before the system and stopped after it: every service reaches RabbitMQ through the proxy,
// as through a broker that can restart.
beforeAll(() => proxy.start());
const t = useSystem({ env: () => ({ AMQP_URL: viaProxy(amqp, proxy.port) }), receiver: true });
afterAll(() => proxy.stop());

describe('RabbitMQ outage', () => {
  it('keeps taking orders while the broker is away and delivers every event once it is back', async () => {
    const { key } = await t.newKey();
    await register(t.url, key, `${t.receiver.url}/outage`);
    await proxy.cut();
    const orders = await Promise.all(Array.from({ length: 5 }, () => placeOrder(t.url, key)));
    await proxy.restore();
    await waitFor(
      () => {
        const seen = new Set(t.receiver.received.map((h) => (h.body.data.order as { uuid: string }).uuid));
        return orders.every((o) => seen.has(o)) || null;
      },
      { timeoutMs: 20_000, what: 'deliveries after the outage' },
    );
    const ids = t.receiver.received.map((h) => h.headers['x-webhook-event-id']);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
