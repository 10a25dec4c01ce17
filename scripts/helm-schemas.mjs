// Writes helm/<chart>/values.schema.json for the five service charts and the umbrella chart from one
// description, so the charts' shared keys (read by helm/common) are described once. `node
// scripts/helm-schemas.mjs` rewrites them; `--check` exits 1 when a file differs (test/ops/helm.test.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';
import { SERVICE_NAMES } from './stack.cjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The service charts: one per service of the stack (stack.cjs).
export const SERVICES = [...SERVICE_NAMES];

const str = { type: 'string' };
const bool = { type: 'boolean' };
const nullableBool = { type: ['boolean', 'null'] };
const int = (minimum = 0) => ({ type: 'integer', minimum });
const port = { type: 'integer', minimum: 1, maximum: 65535 };
const obj = (properties, extra = {}) => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...extra,
});
const anyObj = { type: 'object' };
const list = (items = anyObj) => ({ type: 'array', items });
const quantity = { type: ['string', 'number'] };
const duration = { type: 'string', pattern: '^[0-9]+(ms|s|m|h)$' };
const resources = obj({
  requests: obj({ cpu: quantity, memory: quantity }),
  limits: obj({ cpu: quantity, memory: quantity }),
});
const probe = obj({
  initialDelaySeconds: int(),
  periodSeconds: int(1),
  timeoutSeconds: int(1),
  failureThreshold: int(1),
  successThreshold: int(1),
});
const alert = obj({
  enabled: bool,
  threshold: { type: 'number', minimum: 0 },
  thresholdSeconds: { type: 'number', exclusiveMinimum: 0 },
  for: duration,
  severity: { enum: ['critical', 'warning', 'info'] },
});
const dependency = obj({ enabled: bool, port, to: list() });
// Names of variables that hold secrets (README "Configuration", docs/deploy.md "Secrets"): they come from
// the existing Secret, never from values. Go regular expressions (Helm's validator): no lookahead, so the
// token endpoint URLs (PSP_TOKEN_URL) are let through separately. Not secrets, and allowed: PIX_KEY,
// PAYOUT_PIX_KEY (a public receiving key), *_TLS_CERT_FILE and *_TLS_KEY_FILE (paths to a mounted Secret),
// WEBHOOK_ALLOW_PRIVATE_TARGETS, REDIS_KEY_PREFIX.
const SECRET_WORDS =
  '(^|_)(SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|CLIENT_ID|API_KEY|ACCESS_KEY|PRIVATE_KEY)(_|$)|^INTERNAL_(CALLER_)?KEYS?$|(^|_)(DATABASE(_LOCK)?|AMQP|REDIS)_URL$';
const secretName = {
  anyOf: [
    { pattern: SECRET_WORDS },
    { allOf: [{ pattern: '(^|_)TOKEN(_|$)' }, { not: { pattern: '_TOKEN_URL$' } }] },
  ],
};
const envName = { type: 'string', pattern: '^[A-Z_][A-Z0-9_]*$' };
const global = {
  type: 'object',
  properties: {
    imageRegistry: str,
    imageTag: str,
    // Removed: one Secret for every service. Refused, so an old values file stops the install instead
    // of leaving the pods without their Secrets.
    existingSecret: { not: {}, description: 'Removed: each service reads <secretPrefix>-<service>.' },
    // Each service's Secret is <secretPrefix>-<service>: a Secret name's characters.
    secretPrefix: { type: 'string', pattern: '^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$' },
    amqpNamespace: { type: 'string', pattern: '^[a-z0-9_.-]*$' },
    // A label value (seller-api/group on every pod).
    releaseGroup: { type: 'string', maxLength: 63, pattern: '^([A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?)?$' },
    otlpEndpoint: str,
    databasePreparedStatements: nullableBool,
    monitoring: obj({ serviceMonitor: bool, prometheusRule: bool }),
  },
};

function serviceSchema(name) {
  const properties = {
    enabled: { ...bool, description: 'Read by the umbrella chart (dependency condition).' },
    image: obj(
      {
        registry: str,
        repository: { type: 'string', minLength: 1 },
        tag: str,
        pullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] },
      },
      { required: ['repository'] },
    ),
    imagePullSecrets: list(obj({ name: str })),
    fullnameOverride: str,
    replicaCount: int(1),
    ports: obj({ http: port, metrics: port }, { required: ['http', 'metrics'] }),
    existingSecret: {
      ...str,
      description:
        "Name of this service's own Secret (its DATABASE_URL, DATABASE_LOCK_URL behind PgBouncer, AMQP_URL, its INTERNAL_KEY and INTERNAL_CALLER_KEYS, ...; docs/deploy.md, Secrets); empty: <global.secretPrefix>-<service>.",
    },
    nodeEnv: { enum: ['production', 'development', 'test'] },
    logLevel: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    shutdownTimeoutMs: int(1000),
    terminationGracePeriodSeconds: int(1),
    otlpEndpoint: str,
    databasePreparedStatements: nullableBool,
    config: {
      type: 'object',
      description:
        'Non-secret environment variables of the service (README, Configuration). Secret names (DATABASE_URL, *_SECRET, *_CLIENT_ID, ...) are refused: they belong in existingSecret.',
      propertyNames: { pattern: '^[A-Z][A-Z0-9_]*$', not: secretName },
      additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
    },
    extraEnv: {
      ...list({
        type: 'object',
        required: ['name'],
        properties: { name: envName },
        // A secret's name only with valueFrom (a secretKeyRef), never with a literal value.
        anyOf: [{ properties: { name: { not: secretName } } }, { not: { required: ['value'] } }],
      }),
      description: 'Extra container variables; secret names only with valueFrom (secretKeyRef).',
    },
    extraVolumes: list(),
    extraVolumeMounts: list(),
    resources,
    podSecurityContext: anyObj,
    containerSecurityContext: anyObj,
    probes: obj({ startup: probe, liveness: probe, readiness: probe }),
    topologySpread: obj({
      enabled: bool,
      maxSkew: int(1),
      whenUnsatisfiable: { enum: ['ScheduleAnyway', 'DoNotSchedule'] },
      topologyKeys: list(str),
    }),
    autoscaling: obj({
      enabled: bool,
      minReplicas: int(1),
      maxReplicas: int(1),
      targetCPUUtilizationPercentage: { type: 'integer', minimum: 1, maximum: 100 },
      targetMemoryUtilizationPercentage: { type: ['integer', 'null'], minimum: 1, maximum: 100 },
    }),
    pdb: obj({
      enabled: bool,
      maxUnavailable: { type: ['integer', 'string', 'null'] },
      minAvailable: { type: ['integer', 'string', 'null'] },
    }),
    serviceAccount: obj({ create: bool, name: str, annotations: anyObj }),
    podAnnotations: anyObj,
    podLabels: anyObj,
    nodeSelector: anyObj,
    tolerations: list(),
    affinity: anyObj,
    priorityClassName: str,
    migrations: obj({
      enabled: bool,
      backoffLimit: int(),
      activeDeadlineSeconds: int(1),
      resources,
    }),
    metrics: obj({
      serviceMonitor: obj({ enabled: bool, interval: duration, scrapeTimeout: duration, labels: anyObj }),
      prometheusRule: obj({
        enabled: bool,
        labels: anyObj,
        runbookBaseUrl: { type: 'string', pattern: '^https?://' },
        alerts: obj({
          SellerApiHigh5xxRatio: alert,
          SellerApiHighP99Latency: alert,
          SellerApiOutboxLag: alert,
          SellerApiConsumerStopped: alert,
          SellerApiReadinessFailing: alert,
          SellerApiDeadWebhookDeliveries: alert,
          SellerApiLedgerReconciliationMismatch: alert,
          SellerApiLedgerReconciliationStalled: alert,
          SellerApiRefundHoldsUnresolved: alert,
          SellerApiRefundsUnresolved: alert,
          SellerApiInternalCallRefused: alert,
        }),
      }),
    }),
    networkPolicy: obj({
      enabled: bool,
      allowUngroupedPeers: bool,
      callers: list({ enum: SERVICES }),
      ingressFrom: list(),
      metricsFrom: list(),
      dns: obj({ podLabels: anyObj }),
      postgres: dependency,
      rabbitmq: dependency,
      redis: dependency,
      peers: list(obj({ service: { enum: SERVICES }, port }, { required: ['service', 'port'] })),
      internet: obj({ enabled: bool, ports: list(port), except: list(str) }),
      extraEgress: list(),
    }),
    global,
    common: { type: 'object', description: 'Values of the library chart (it has none).' },
  };
  if (name === 'gateway') {
    const tlsHost = { type: 'string', minLength: 1 };
    properties.ingress = obj({
      enabled: bool,
      className: str,
      host: tlsHost,
      tlsSecretName: tlsHost,
      annotations: anyObj,
      pspMtls: obj({
        enabled: bool,
        host: tlsHost,
        tlsSecretName: tlsHost,
        path: { type: 'string', pattern: '^/' },
        // A Gateway per PSP (Gateway API), or an Ingress per PSP on ingress-nginx.
        via: { enum: ['gateway-api', 'ingress-nginx'] },
        caConfigMap: { type: 'string', pattern: '^([a-z0-9][a-z0-9.-]*)?$' },
        caSecret: { type: 'string', pattern: '^([a-z0-9-]+/[a-z0-9.-]+)?$' },
        gatewayApi: obj({
          gatewayClassName: str,
          // Only the certificate's subject and issuer: the verdict is the route's own.
          certificateHeaders: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'value'],
              properties: {
                name: { enum: ['ssl-client-subject-dn', 'ssl-client-issuer-dn'] },
                value: { type: 'string', minLength: 1 },
              },
            },
          },
        }),
        verifyDepth: int(1),
        annotations: anyObj,
        // The homologation PSP's own front and CA (docs/deploy.md, "PSP notifications").
        homologation: obj({
          enabled: bool,
          host: tlsHost,
          tlsSecretName: tlsHost,
          caConfigMap: { type: 'string', pattern: '^([a-z0-9][a-z0-9.-]*)?$' },
          caSecret: { type: 'string', pattern: '^([a-z0-9-]+/[a-z0-9.-]+)?$' },
        }),
      }),
    });
  }
  return {
    $schema: 'https://json-schema.org/draft-07/schema#',
    title: `${name} chart values`,
    ...obj(properties),
  };
}

function umbrellaSchema() {
  const properties = { global };
  // Each service's own keys are checked by its chart's schema; here only that the section is a map.
  for (const name of SERVICES) properties[name] = { type: 'object', properties: { enabled: bool } };
  properties.dashboards = obj({ enabled: bool, namespace: str, labels: anyObj, annotations: anyObj });
  return {
    $schema: 'https://json-schema.org/draft-07/schema#',
    title: 'seller-api umbrella chart values',
    ...obj(properties),
  };
}

/** File path (from the repository root) to its text, formatted as `prettier --check` expects. */
export async function schemas() {
  const files = Object.fromEntries(
    SERVICES.map((name) => [`helm/${name}/values.schema.json`, serviceSchema(name)]),
  );
  files['helm/seller-api/values.schema.json'] = umbrellaSchema();
  const options = { ...(await prettier.resolveConfig(path.join(root, 'package.json'))), parser: 'json' };
  const out = {};
  for (const [file, schema] of Object.entries(files))
    out[file] = await prettier.format(JSON.stringify(schema), options);
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  let stale = false;
  for (const [file, text] of Object.entries(await schemas())) {
    const target = path.join(root, file);
    if (check) {
      let current;
      try {
        current = readFileSync(target, 'utf8');
      } catch {
        current = '';
      }
      if (current !== text) {
        console.error(`${file} is out of date: run node scripts/helm-schemas.mjs`);
        stale = true;
      }
    } else writeFileSync(target, text);
  }
  process.exit(stale ? 1 : 0);
}
