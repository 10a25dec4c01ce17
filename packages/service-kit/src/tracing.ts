// Imported first by each service's main.ts, before express and pg are loaded, so their
// instrumentation can patch them. Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; off, the SDK is not
// even loaded (it and its instrumentations add about 35 MB to each process's memory).
import type { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand, synchronously (see above) */
const load = () => ({
  sdk: require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node'),
  otlp: require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http'),
  express:
    require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express'),
  pg: require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg'),
  base: require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base'),
});
/* eslint-enable @typescript-eslint/no-require-imports */

let sdk: NodeSDK | null = null;

/**
 * Registers the OpenTelemetry SDK for traces only (metrics are Prometheus, logs are stdout). The
 * server, outbox, consumer and webhook spans are the kit's own (telemetry.ts): they do not depend on
 * load order and cross the outbox and the delivery table, which no instrumentation knows. Express and
 * pg add their spans inside those; pg only within a trace, so the pollers make no root spans.
 * An exporter given here (tests, tools) receives each span as it ends.
 */
export function startTracing(serviceName: string, exporter?: SpanExporter): NodeSDK | null {
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!exporter && !endpoint) return null;
  const otel = load();
  const { ExpressLayerType } = otel.express;
  sdk = new otel.sdk.NodeSDK({
    serviceName,
    ...(exporter
      ? { spanProcessors: [new otel.base.SimpleSpanProcessor(exporter)] }
      : {
          traceExporter: new otel.otlp.OTLPTraceExporter({
            url: `${endpoint?.replace(/\/$/, '')}/v1/traces`,
          }),
        }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // Route handlers only: a span per middleware (request id, metrics, body parser) is noise.
      new otel.express.ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      new otel.pg.PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  return sdk;
}

export async function stopTracing(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = null;
}
