import { routes } from '@seller-api/contracts';
import { prepareContext } from '../../fuzz/setup';
import { describeFailure, formatReport, runFuzz } from '../../fuzz/runner';
import { createKey, startSystem, uniqueEmail, type RunningGateway, type System } from '../support/system';

// CI's slice of `npm run fuzz` (docs/fuzz.md): 2,000 requests of a fixed seed drawn from the contracts'
// route registry, against the system started in this process. Any 5xx, stack trace, SQL or 4xx outside
// the documented error shape fails it; each failure names the request index to replay.
const SEED = 20261126;
const REQUESTS = 2_000;

let system: System;
let gateway: RunningGateway;

beforeAll(async () => {
  system = await startSystem();
  // The fuzzer sends far more than a client's minute allows, much of it unauthenticated.
  gateway = await system.startGateway({
    RATE_LIMIT_PER_MINUTE: '1000000',
    UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000000',
    PSP_RATE_LIMIT_PER_MINUTE: '1000000',
  });
}, 60_000);
afterAll(async () => {
  await system.stop();
});

it('answers 2,000 fuzzed requests on every route without a 5xx or an undocumented error', async () => {
  const email = uniqueEmail('fuzz');
  const keys = {
    seller: (await createKey(gateway.service, { email })).key,
    live: (await createKey(gateway.service, { email, environment: 'live' })).key,
    operator: (await createKey(gateway.service, { role: 'operator' })).key,
  };
  const context = await prepareContext(gateway.url, keys, system.env.PSP_WEBHOOK_SECRET ?? null);
  expect(context.ids.orders.length).toBeGreaterThan(0);
  expect(context.ids.webhooks.length).toBeGreaterThan(0);

  const report = await runFuzz({
    baseUrl: gateway.url,
    context,
    seed: SEED,
    requests: REQUESTS,
    concurrency: 8,
  });
  // Every route of the registry was drawn, and nearly every request left the client.
  expect([...report.byRoute.keys()].sort()).toEqual(
    routes.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort(),
  );
  expect(report.sent).toBeGreaterThan(REQUESTS * 0.9);
  if (report.failures.length > 0) console.log(formatReport(report));
  expect(report.failures.map((failure) => describeFailure(failure, SEED))).toEqual([]);
}, 110_000);
