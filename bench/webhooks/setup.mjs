// Set-up: a product, and the throughput webhooks, checked with one order end to end.
import { PRODUCT_BODY, orderBody } from '../lib.mjs';
import { DESTINATIONS } from './settings.mjs';

export async function setUp({
  expect,
  register,
  arrivals,
  receiver,
  settle,
  lastAttemptError,
  nextCpf,
  throughputPorts,
}) {
  const product = await expect(201, 'POST', '/sellers/products/', PRODUCT_BODY);
  const productId = product.data.uuid;

  const throughputHooks = [];
  for (const [i, p] of throughputPorts.entries()) {
    throughputHooks.push(await register(p, `t${i}`, 'order.created'));
  }

  // One order end to end: it checks the whole path (registration of a loopback target, the outbox,
  // RabbitMQ, the intake, the sender) and gives the backlog a real order.created payload.
  await expect(201, 'POST', '/sellers/orders/', orderBody(productId, nextCpf()));
  const first = await arrivals(throughputPorts, DESTINATIONS, 30_000);
  if (first.count < DESTINATIONS) {
    throw new Error(
      `one order reached ${first.count} of ${DESTINATIONS} receivers within 30 s (${await lastAttemptError()})`,
    );
  }
  const sampleBody = JSON.stringify(await receiver('GET', `/sample?port=${throughputPorts[0]}`));
  const payload = JSON.parse(sampleBody).data;
  await settle();

  return { productId, throughputHooks, sampleBody, payload };
}
