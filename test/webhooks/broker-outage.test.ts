import { startReceiver } from '../support/receiver';
import { createKey, startSystem, type RunningGateway, type System } from '../support/system';
import { TcpProxy, hostPort, viaProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

let system: System;
let gateway: RunningGateway;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let proxy: TcpProxy;

beforeAll(async () => {
  const amqp = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
  const { host, port } = hostPort(amqp, 5672);
  proxy = new TcpProxy(host, port);
  await proxy.start();
  // Every service reaches RabbitMQ through the proxy, as through a broker that can restart.
  system = await startSystem({ AMQP_URL: viaProxy(amqp, proxy.port) });
  gateway = await system.startGateway();
  receiver = await startReceiver();
});
afterAll(async () => {
  await system.stop();
  await receiver.close();
  await proxy.stop();
});

describe('RabbitMQ outage', () => {
  it('keeps taking orders while the broker is away and delivers every event once it is back', async () => {
    const { key } = await createKey(gateway.service);
    await register(gateway.url, key, `${receiver.url}/outage`);
    await proxy.cut();
    const orders = await Promise.all(Array.from({ length: 5 }, () => placeOrder(gateway.url, key)));
    await proxy.restore();
    await waitFor(
      () => {
        const seen = new Set(receiver.received.map((h) => (h.body.data.order as { uuid: string }).uuid));
        return orders.every((o) => seen.has(o)) || null;
      },
      { timeoutMs: 20_000, what: 'deliveries after the outage' },
    );
    const ids = receiver.received.map((h) => h.headers['x-webhook-event-id']);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
