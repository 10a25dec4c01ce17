import { consumerFault } from '../support/consumer-fault';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

/**
 * An event whose intake fails once (the database restarting under the dispatcher) goes through the
 * real broker's retry queue and comes back with the queue's routing key: it must still become a
 * delivery of the event it was published as.
 */
const t = useSystem({ receiver: true });
let fault: Awaited<ReturnType<typeof consumerFault>>;

beforeAll(async () => {
  fault = await consumerFault(() => t.system.dispatcher.runtime.orm.em.fork(), 'webhooks', 'webhooks.intake');
  // Off before the dispatcher stops: it reads the dispatcher's database.
  t.cleanup(() => fault.off());
});

describe('webhook intake after a failure', () => {
  it('delivers an event whose intake failed once, under its own name, once', async () => {
    const { key } = await t.newKey();
    await register(t.url, key, `${t.receiver.url}/retried`);
    const before = await fault.failures();
    await fault.on();
    const order = await placeOrder(t.url, key);
    await waitFor(async () => (await fault.failures()) > before, { what: 'an injected failure' });
    await fault.off();
    const of = () =>
      t.receiver.received.filter(
        (hook) => (hook.body.data.order as { uuid?: string } | undefined)?.uuid === order,
      );
    await waitFor(() => of().length > 0, { what: 'the delivery after the retry' });
    expect(of().map((hook) => hook.body.event)).toEqual(['order.created']);
  });
});
