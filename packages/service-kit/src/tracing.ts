// Imported first by each service's main.ts, before express and pg are loaded, so their
// instrumentation can patch them. Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; off, the SDK is not
// even loaded (it and its instrumentations add memory to each process).
import type { TextMapPropagator } from '@opentelemetry/api';
import type {
  BatchSpanProcessorOptions,
  Sampler,
  SpanExporter,
  TracerProvider,
} from '@opentelemetry/sdk-trace';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand, synchronously (see above) */
const load = () => ({
  api: require('@opentelemetry/api') as typeof import('@opentelemetry/api'),
  core: require('@opentelemetry/core') as typeof import('@opentelemetry/core'),
  sdk: require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace'),
  context:
    require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks'),
  resources: require('@opentelemetry/resources') as typeof import('@opentelemetry/resources'),
  otlp: require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http'),
  instrumentation:
    require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation'),
  express:
    require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express'),
  pg: require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg'),
});
/* eslint-enable @typescript-eslint/no-require-imports */

type Env = Record<string, string | undefined>;

let provider: TracerProvider | null = null;
let unregister: (() => void) | null = null;

/**
 * Registers an OpenTelemetry tracer provider for traces only (metrics are Prometheus, logs are
 * stdout), built from the pieces used rather than the whole Node SDK: the tracer provider with the
 * sampler of OTEL_TRACES_SAMPLER, an AsyncLocalStorage context manager, the OTLP/HTTP exporter
 * (OTEL_EXPORTER_OTLP_HEADERS read by it) behind a batch processor (OTEL_BSP_*), resource attributes
 * from OTEL_RESOURCE_ATTRIBUTES, the host and the process, and the propagators of OTEL_PROPAGATORS
 * (`tracecontext`, `baggage`, `none`). SDK 3 reads none of the sampler, batch or propagator variables
 * itself, so the kit does, as SDK 2 did. OTEL_SDK_DISABLED=true keeps it off. The server, outbox,
 * consumer and webhook spans are the kit's own (telemetry.ts): they do not depend on load order and
 * cross the outbox and the delivery table, which no instrumentation knows. Express and pg add their
 * spans inside those; pg only within a trace, so the pollers make no root spans. An exporter given
 * here (tests, tools) receives each span as it ends.
 */
export function startTracing(serviceName: string, exporter?: SpanExporter): TracerProvider | null {
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!exporter && !endpoint) return null;
  if (process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const otel = load();
  const { api, resources, sdk } = otel;
  const resource = resources
    .detectResources({
      detectors: [resources.envDetector, resources.processDetector, resources.hostDetector],
    })
    .merge(resources.resourceFromAttributes({ 'service.name': serviceName }));
  const spanProcessor = exporter
    ? new sdk.SimpleSpanProcessor({ exporter })
    : new sdk.BatchSpanProcessor({
        ...batchOptionsFromEnv(process.env),
        exporter: new otel.otlp.OTLPTraceExporter({ url: `${endpoint?.replace(/\/$/, '')}/v1/traces` }),
      });
  const sampler = samplerFromEnv(process.env, otel);
  const current = new sdk.TracerProvider({ resource, sampler, spanProcessors: [spanProcessor] });

  const contextManager = new otel.context.AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
  const propagator = propagatorFromEnv(process.env, otel);
  if (propagator) api.propagation.setGlobalPropagator(propagator);
  api.trace.setGlobalTracerProvider(current);
  const unregisterInstrumentations = otel.instrumentation.registerInstrumentations({
    tracerProvider: current,
    instrumentations: [
      // Route handlers only: a span per middleware (request id, metrics, body parser) is noise.
      new otel.express.ExpressInstrumentation({
        ignoreLayersType: [otel.express.ExpressLayerType.MIDDLEWARE],
      }),
      new otel.pg.PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  provider = current;
  // Gives the globals back, so that a later start (tests, tools) can register again.
  unregister = () => {
    unregisterInstrumentations();
    api.trace.disable();
    api.propagation.disable();
    api.context.disable();
  };
  return current;
}

/**
 * OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as the specification (and SDK 2) read them:
 * `parentbased_always_on` by default and in place of an unknown name; a ratio outside [0, 1] or not a
 * number is 1.
 */
export function samplerFromEnv(
  env: Env,
  otel: Pick<ReturnType<typeof load>, 'api' | 'sdk'> = load(),
): Sampler {
  const { sdk } = otel;
  const ratio = (): number => {
    const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
    if (raw === undefined || raw === '') return 1;
    const value = Number(raw);
    if (Number.isFinite(value) && value >= 0 && value <= 1) return value;
    otel.api.diag.warn(`OTEL_TRACES_SAMPLER_ARG: "${raw}" is not a ratio between 0 and 1; using 1`);
    return 1;
  };
  const parentBased = (root: Sampler) => new sdk.ParentBasedSampler({ root });
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  switch (name) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return new sdk.TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_on':
      return parentBased(new sdk.AlwaysOnSampler());
    case 'parentbased_always_off':
      return parentBased(new sdk.AlwaysOffSampler());
    case 'parentbased_traceidratio':
      return parentBased(new sdk.TraceIdRatioBasedSampler(ratio()));
    default:
      otel.api.diag.warn(`OTEL_TRACES_SAMPLER: "${name}" is not supported; using parentbased_always_on`);
      return parentBased(new sdk.AlwaysOnSampler());
  }
}

/** OTEL_BSP_* as SDK 2 read them; a variable unset or not a positive integer keeps the SDK's default. */
export function batchOptionsFromEnv(env: Env): Omit<BatchSpanProcessorOptions, 'exporter'> {
  const read = (name: string): number | undefined => {
    const value = Number(env[name]?.trim() || NaN);
    return Number.isInteger(value) && value > 0 ? value : undefined;
  };
  const options = {
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: read('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

/** OTEL_PROPAGATORS as the Node SDK read it, for the propagators this kit ships; W3C by default. */
function propagatorFromEnv(env: Env, otel: ReturnType<typeof load>): TextMapPropagator | null {
  const names = (env.OTEL_PROPAGATORS ?? 'tracecontext,baggage')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (names.includes('none')) return null;
  const known: Record<string, () => TextMapPropagator> = {
    tracecontext: () => new otel.core.W3CTraceContextPropagator(),
    baggage: () => new otel.core.W3CBaggagePropagator(),
  };
  const propagators = names.flatMap((name) => {
    const make = known[name];
    if (make) return [make()];
    otel.api.diag.warn(`OTEL_PROPAGATORS: "${name}" is not supported (tracecontext, baggage, none)`);
    return [];
  });
  return new otel.core.CompositePropagator({ propagators });
}

export async function stopTracing(): Promise<void> {
  unregister?.();
  unregister = null;
  await provider?.shutdown().catch(() => undefined);
  provider = null;
}
