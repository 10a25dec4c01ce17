// Imported first by each service's main.ts, before express and pg are loaded, so their
// instrumentation can patch them. Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; off, the SDK is not
// even loaded (it and its instrumentations add memory to each process).
import type { TextMapPropagator } from '@opentelemetry/api';
import type { NodeTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-node';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand, synchronously (see above) */
const load = () => ({
  api: require('@opentelemetry/api') as typeof import('@opentelemetry/api'),
  core: require('@opentelemetry/core') as typeof import('@opentelemetry/core'),
  node: require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node'),
  resources: require('@opentelemetry/resources') as typeof import('@opentelemetry/resources'),
  otlp: require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http'),
  instrumentation:
    require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation'),
  express:
    require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express'),
  pg: require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg'),
});
/* eslint-enable @typescript-eslint/no-require-imports */

let provider: NodeTracerProvider | null = null;
let unregisterInstrumentations: (() => void) | null = null;

/**
 * Registers an OpenTelemetry tracer provider for traces only (metrics are Prometheus, logs are
 * stdout), built from the pieces used rather than the whole Node SDK: the Node tracer provider
 * (AsyncLocalStorage context; OTEL_TRACES_SAMPLER, OTEL_BSP_* read by it), the OTLP/HTTP exporter
 * (OTEL_EXPORTER_OTLP_HEADERS read by it), resource attributes from OTEL_RESOURCE_ATTRIBUTES, the
 * host and the process, and the propagators of OTEL_PROPAGATORS (`tracecontext`, `baggage`, `none`).
 * OTEL_SDK_DISABLED=true keeps it off. The server, outbox, consumer and webhook spans are the kit's
 * own (telemetry.ts): they do not depend on load order and cross the outbox and the delivery table,
 * which no instrumentation knows. Express and pg add their spans inside those; pg only within a
 * trace, so the pollers make no root spans. An exporter given here (tests, tools) receives each span
 * as it ends.
 */
export function startTracing(serviceName: string, exporter?: SpanExporter): NodeTracerProvider | null {
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!exporter && !endpoint) return null;
  if (process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const otel = load();
  const { resources } = otel;
  const resource = resources
    .detectResources({
      detectors: [resources.envDetector, resources.processDetector, resources.hostDetector],
    })
    .merge(resources.resourceFromAttributes({ 'service.name': serviceName }));
  const spanProcessor = exporter
    ? new otel.node.SimpleSpanProcessor(exporter)
    : new otel.node.BatchSpanProcessor(
        new otel.otlp.OTLPTraceExporter({ url: `${endpoint?.replace(/\/$/, '')}/v1/traces` }),
      );
  provider = new otel.node.NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register({ propagator: propagatorFromEnv(otel) });
  const { ExpressLayerType } = otel.express;
  unregisterInstrumentations = otel.instrumentation.registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // Route handlers only: a span per middleware (request id, metrics, body parser) is noise.
      new otel.express.ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      new otel.pg.PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  return provider;
}

/** OTEL_PROPAGATORS as the Node SDK read it, for the propagators this kit ships; W3C by default. */
function propagatorFromEnv(otel: ReturnType<typeof load>): TextMapPropagator | null {
  const names = (process.env.OTEL_PROPAGATORS ?? 'tracecontext,baggage')
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
  unregisterInstrumentations?.();
  unregisterInstrumentations = null;
  await provider?.shutdown().catch(() => undefined);
  provider = null;
}
