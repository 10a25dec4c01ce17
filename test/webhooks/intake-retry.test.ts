import { consumerFault } from '../support/consumer-fault';
import { startReceiver } from '../support/receiver';
import { createKey, startSystem, type RunningGateway, type System } from '../support/system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

/**
 * An event whose intake fails once (the database restarting under the dispatcher) goes through the
 * real broker's retry queue and comes back with the queue's routing key: it must still become a
 * delivery of the event it was published as.
 */
let system: System;
let gateway: RunningGateway;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let fault: Awaited<ReturnType<typeof consumerFault>>;

beforeAll(async () => {
  system = await startSystem();
  gateway = await system.startGateway();
  receiver = await startReceiver();
  fault = await consumerFault(() => system.dispatcher.runtime.orm.em.fork(), 'webhooks', 'webhooks.intake');
});
afterAll(async () => {
  await fault.off();
  await system.stop();
  await receiver.close();
});

describe('webhook intake after a failure', () => {
  it('delivers an event whose intake failed once, under its own name, once', async () => {
    const { key } = await createKey(gateway.service);
    await register(gateway.url, key, `${receiver.url}/retried`);
    const before = await fault.failures();
    await fault.on();
    const order = await placeOrder(gateway.url, key);
    await waitFor(async () => (await fault.failures()) > before, { what: 'an injected failure' });
    await fault.off();
    const of = () =>
      receiver.received.filter(
        (hook) => (hook.body.data.order as { uuid?: string } | undefined)?.uuid === order,
      );
    await waitFor(() => of().length > 0, { what: 'the delivery after the retry' });
    expect(of().map((hook) => hook.body.event)).toEqual(['order.created']);
  });
});
