// Imported first by each service's main.ts, before express and pg are loaded, so their
// instrumentation can patch them. Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';

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
  sdk = new NodeSDK({
    serviceName,
    ...(exporter
      ? { spanProcessors: [new SimpleSpanProcessor(exporter)] }
      : { traceExporter: new OTLPTraceExporter({ url: `${endpoint?.replace(/\/$/, '')}/v1/traces` }) }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // Route handlers only: a span per middleware (request id, metrics, body parser) is noise.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  return sdk;
}

export async function stopTracing(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = null;
}
