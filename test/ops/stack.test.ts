// scripts/stack.cjs, the one description of the stack that `npm start`, the chaos cluster, the benches
// and the test support read: checked against what the services themselves say (their config defaults,
// their access tables), so the description cannot drift from the code.
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  SERVICE_NAMES as KIT_SERVICE_NAMES,
  callerKeysOf,
  callKeyOf,
  deriveCallKey,
  type AccessTable,
} from '@seller-api/service-kit';
import {
  SERVICES,
  SERVICE_NAMES,
  calleeUrls,
  callersOf,
  internalKeyEnv,
  service,
  serviceUrls,
  startWaves,
  variablesOf,
  type ServiceName,
} from '../../scripts/stack.cjs';
import { loadGatewayConfig } from '../../services/gateway/src/config';
import { loadOrdersConfig } from '../../services/orders/src/config';
import { ORDERS_ACCESS } from '../../services/orders/src/http/callers';
import { loadPaymentsConfig } from '../../services/payments/src/config';
import { PAYMENTS_ACCESS } from '../../services/payments/src/http/callers';
import { loadDispatcherConfig } from '../../services/webhook-dispatcher/src/config';
import { DISPATCHER_ACCESS } from '../../services/webhook-dispatcher/src/http/callers';
import { loadWithdrawalsConfig } from '../../services/withdrawals/src/config';
import { WITHDRAWALS_ACCESS } from '../../services/withdrawals/src/http/callers';
import { testEnv } from '../support/env';
import { ROOT } from './helm';

/** Each service's own idea of its variables, loaded with nothing set but what a test must set. */
const LOADERS: Record<ServiceName, (env: NodeJS.ProcessEnv) => Record<string, unknown>> = {
  gateway: loadGatewayConfig,
  orders: loadOrdersConfig,
  payments: loadPaymentsConfig,
  withdrawals: loadWithdrawalsConfig,
  'webhook-dispatcher': loadDispatcherConfig,
};

/** Who each service lets call it (src/http/callers.ts); the gateway is called by nobody. */
const ACCESS: Record<ServiceName, AccessTable> = {
  gateway: {},
  orders: ORDERS_ACCESS,
  payments: PAYMENTS_ACCESS,
  withdrawals: WITHDRAWALS_ACCESS,
  'webhook-dispatcher': DISPATCHER_ACCESS,
};

function defaults(name: ServiceName): Record<string, unknown> {
  const env = testEnv();
  // testEnv picks free ports and the test URLs; the defaults are what is checked here.
  delete env.PORT;
  delete env.METRICS_PORT;
  return LOADERS[name](env);
}

it('names the services as the kit does, in its order', () => {
  expect(SERVICE_NAMES).toEqual(KIT_SERVICE_NAMES);
  expect(SERVICES.map((s) => s.name)).toEqual([...KIT_SERVICE_NAMES]);
});

it.each(SERVICE_NAMES)("%s: ports and entry point are the service's own", (name) => {
  const s = service(name);
  const config = defaults(name);
  expect({ port: config.PORT, metricsPort: config.METRICS_PORT }).toEqual({
    port: s.port,
    metricsPort: s.metricsPort,
  });
  expect(s.env).toBe(name.toUpperCase().replace(/-/g, '_'));
  expect(s.main).toBe(`services/${name}/dist/main.js`);
  expect(existsSync(path.join(ROOT, `services/${name}/src/main.ts`))).toBe(true);
});

it('no two services share a port, a metrics port or a URL variable', () => {
  const ports = SERVICES.flatMap((s) => [s.port, s.metricsPort]);
  expect(new Set(ports).size).toBe(ports.length);
  const urlVars = SERVICES.map((s) => s.urlVar).filter((v) => v !== null);
  expect(new Set(urlVars).size).toBe(urlVars.length);
});

it.each(SERVICE_NAMES)(
  "%s: each callee exists, and its URL variable defaults to the callee's port",
  (name) => {
    const config = defaults(name);
    for (const callee of service(name).callees) {
      expect(callee).not.toBe(name);
      const { urlVar, port } = service(callee);
      expect(urlVar).not.toBeNull();
      expect({ callee, url: config[urlVar as string] }).toEqual({ callee, url: `http://127.0.0.1:${port}` });
    }
  },
);

it.each(SERVICE_NAMES)('%s: its callers are exactly those its access table lets in', (name) => {
  expect([...callersOf(name)].sort()).toEqual(Object.keys(ACCESS[name]).sort());
});

it('every URL variable is one a service reads, and only callers of a service are told its URL', () => {
  for (const s of SERVICES) {
    const config = defaults(s.name);
    for (const variable of variablesOf(s.name).filter((v) => v.endsWith('_URL')))
      expect({ service: s.name, variable, read: variable in config }).toEqual({
        service: s.name,
        variable,
        read: true,
      });
  }
  expect(calleeUrls('withdrawals', (callee) => `http://${callee}`)).toEqual({
    PAYMENTS_URL: 'http://payments',
  });
  expect(Object.keys(serviceUrls((name) => name)).sort()).toEqual(
    ['ORDERS_URL', 'PAYMENTS_URL', 'WEBHOOKS_URL', 'WITHDRAWALS_URL'].sort(),
  );
});

it('starts every service once, each after the services it calls', () => {
  const waves = startWaves();
  const order = waves.flat();
  expect([...order].sort()).toEqual([...SERVICE_NAMES].sort());
  for (const [i, wave] of waves.entries())
    for (const name of wave)
      for (const callee of service(name).callees) expect(waves.slice(0, i).flat()).toContain(callee);
  expect(waves.at(-1)).toEqual(['gateway']);
});

it('internal keys: each caller signs with a key its callee accepts, and no one else is listed', () => {
  const keys = Object.fromEntries(
    SERVICE_NAMES.map((name) => [name, `stack-test-${name}-key-0123456789abcdef0123456789`]),
  );
  for (const callee of SERVICE_NAMES) {
    const env = internalKeyEnv(callee, keys, deriveCallKey);
    expect(env.INTERNAL_KEY).toBe(keys[callee]);
    if (callersOf(callee).length === 0) {
      expect(env.INTERNAL_CALLER_KEYS).toBeUndefined();
      continue;
    }
    const accepted = callerKeysOf({ INTERNAL_CALLER_KEYS: env.INTERNAL_CALLER_KEYS }, callee);
    for (const caller of SERVICE_NAMES) {
      const signs = callKeyOf({ INTERNAL_KEY: keys[caller] }, caller, callee);
      expect({ caller, callee, accepted: accepted.keys.get(caller)?.includes(signs.key) ?? false }).toEqual({
        caller,
        callee,
        accepted: callersOf(callee).includes(caller),
      });
    }
  }
  // Without a key of its own (compose gives none to a service that calls nobody), none is set.
  const { payments: _payments, ...callersOnly } = keys;
  const payments = internalKeyEnv('payments', callersOnly, deriveCallKey);
  expect(payments.INTERNAL_KEY).toBeUndefined();
  expect(payments.INTERNAL_CALLER_KEYS).toBe(
    internalKeyEnv('payments', keys, deriveCallKey).INTERNAL_CALLER_KEYS,
  );
});
