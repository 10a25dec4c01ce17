// The stack in one place: the five services, their default ports, who calls whom and the variables
// each needs. `npm start` (scripts/start.mjs), `npm run compose:env`, the chaos harness's cluster,
// the benches and the test support (test/support/) all read it, so a service or a variable is added
// here once (docs/architecture.md, "Layout").
//
// CommonJS with types beside it (stack.d.cts): the .mjs scripts import it without a build, and Jest
// requires it untransformed from the TypeScript tests.
'use strict';

/**
 * Each service: its name (as the kit's SERVICE_NAMES and services/<name>/), the prefix `npm start`
 * reads its ports under (`<env>_PORT`, `<env>_METRICS_PORT`), its default ports (its config.ts), the
 * variable its callers find it by, and the services it calls (their src/http/callers.ts). In the
 * kit's SERVICE_NAMES order, which INTERNAL_CALLER_KEYS lists callers in.
 */
const SERVICES = Object.freeze(
  [
    {
      name: 'gateway',
      env: 'GATEWAY',
      port: 8080,
      metricsPort: 9080,
      urlVar: null,
      callees: ['orders', 'payments', 'withdrawals', 'webhook-dispatcher'],
    },
    {
      name: 'orders',
      env: 'ORDERS',
      port: 3001,
      metricsPort: 9001,
      urlVar: 'ORDERS_URL',
      callees: ['payments', 'withdrawals'],
    },
    { name: 'payments', env: 'PAYMENTS', port: 3002, metricsPort: 9002, urlVar: 'PAYMENTS_URL', callees: [] },
    {
      name: 'withdrawals',
      env: 'WITHDRAWALS',
      port: 3003,
      metricsPort: 9003,
      urlVar: 'WITHDRAWALS_URL',
      callees: ['payments'],
    },
    {
      name: 'webhook-dispatcher',
      env: 'WEBHOOK_DISPATCHER',
      port: 3004,
      metricsPort: 9004,
      urlVar: 'WEBHOOKS_URL',
      callees: [],
    },
  ].map((s) =>
    Object.freeze({
      ...s,
      callees: Object.freeze(s.callees),
      main: `services/${s.name}/dist/main.js`,
      // Every service keeps its tables in PostgreSQL and its events in RabbitMQ (kit config.ts); the
      // gateway alone counts rate limits in Redis.
      needs: Object.freeze(['DATABASE_URL', 'AMQP_URL', ...(s.name === 'gateway' ? ['REDIS_URL'] : [])]),
    }),
  ),
);

const SERVICE_NAMES = Object.freeze(SERVICES.map((s) => s.name));

function service(name) {
  const found = SERVICES.find((s) => s.name === name);
  if (!found) throw new Error(`no service named ${name} in scripts/stack.cjs`);
  return found;
}

/** The services that call `callee`, in SERVICES order. */
function callersOf(callee) {
  return SERVICES.filter((s) => s.callees.includes(callee)).map((s) => s.name);
}

/** The `*_URL` variables `name` needs, each its callee's address as `urlOf(callee)` gives it. */
function calleeUrls(name, urlOf) {
  return Object.fromEntries(service(name).callees.map((callee) => [service(callee).urlVar, urlOf(callee)]));
}

/** Every service's `*_URL` variable, as `urlOf(service)` gives it (what `npm start` passes to all). */
function serviceUrls(urlOf) {
  return Object.fromEntries(SERVICES.filter((s) => s.urlVar).map((s) => [s.urlVar, urlOf(s.name)]));
}

/**
 * `name`'s internal keys as a deployment gives them (docs/deploy.md, "Internal keys"): its own
 * INTERNAL_KEY when `keys` has one, and INTERNAL_CALLER_KEYS, each of its callers' keys derived for it
 * (`derive` is the kit's deriveCallKey). A service nobody calls gets no INTERNAL_CALLER_KEYS.
 */
function internalKeyEnv(name, keys, derive) {
  const env = {};
  if (keys[name] !== undefined) env.INTERNAL_KEY = keys[name];
  const callers = callersOf(name);
  if (callers.length > 0)
    env.INTERNAL_CALLER_KEYS = callers.map((caller) => `${caller}:${derive(keys[caller], name)}`).join(',');
  return env;
}

/** Every variable `name` is given by the stack: connections, callees' URLs, internal keys. */
function variablesOf(name) {
  const s = service(name);
  return [
    ...s.needs,
    ...s.callees.map((callee) => service(callee).urlVar),
    ...(s.callees.length > 0 ? ['INTERNAL_KEY'] : []),
    ...(callersOf(name).length > 0 ? ['INTERNAL_CALLER_KEYS'] : []),
  ];
}

/**
 * The services in groups to start one after the other, each after the services it calls (a caller
 * may check its callees when it starts; payments, called by three, comes first).
 */
function startWaves() {
  const started = new Set();
  const waves = [];
  while (started.size < SERVICES.length) {
    const wave = SERVICES.filter((s) => !started.has(s.name) && s.callees.every((c) => started.has(c)));
    if (wave.length === 0) throw new Error('scripts/stack.cjs: the services call each other in a cycle');
    for (const s of wave) started.add(s.name);
    waves.push(wave.map((s) => s.name));
  }
  return waves;
}

module.exports = {
  SERVICES,
  SERVICE_NAMES,
  service,
  callersOf,
  calleeUrls,
  serviceUrls,
  internalKeyEnv,
  variablesOf,
  startWaves,
};
