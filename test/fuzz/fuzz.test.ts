import { routes } from '@seller-api/contracts';
import { prepareContext } from '../../fuzz/setup';
import { describeFailure, formatReport, runFuzz } from '../../fuzz/runner';
import { uniqueEmail } from '../support/system';
import { useSystem } from '../support/use-system';

// CI's slice of `npm run fuzz` (docs/fuzz.md): 2,000 requests of a fixed seed drawn from the contracts'
// route registry, against the system started in this process. Any 5xx, stack trace, SQL or 4xx outside
// the documented error shape fails it; each failure names the request index to replay.
const SEED = 20261126;
const REQUESTS = 2_000;

// The fuzzer sends far more than a client's minute allows, much of it unauthenticated.
const t = useSystem({
  gateway: {
    RATE_LIMIT_PER_MINUTE: '1000000',
    UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1000000',
    PSP_RATE_LIMIT_PER_MINUTE: '1000000',
  },
});

it('answers 2,000 fuzzed requests on every route without a 5xx or an undocumented error', async () => {
  const email = uniqueEmail('fuzz');
  const keys = {
    seller: (await t.newKey({ email })).key,
    live: (await t.newKey({ email, environment: 'live' })).key,
    operator: (await t.newKey({ role: 'operator' })).key,
  };
  const context = await prepareContext(t.url, keys, t.env.PSP_WEBHOOK_SECRET ?? null);
  expect(context.ids.orders.length).toBeGreaterThan(0);
  expect(context.ids.webhooks.length).toBeGreaterThan(0);

  const report = await runFuzz({
    baseUrl: t.url,
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
