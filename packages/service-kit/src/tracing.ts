// Imported first by each service's main.ts, before express, pg or amqplib are loaded, so their
// instrumentation can patch them. Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { AmqplibInstrumentation } from '@opentelemetry/instrumentation-amqplib';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

let sdk: NodeSDK | null = null;

export function startTracing(serviceName: string, exporter?: SpanExporter): NodeSDK | null {
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!exporter && !endpoint) return null;
  sdk = new NodeSDK({
    serviceName,
    traceExporter: exporter ?? new OTLPTraceExporter({ url: `${endpoint?.replace(/\/$/, '')}/v1/traces` }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => /^\/(healthz|readyz)/.test(req.url ?? ''),
      }),
      new ExpressInstrumentation(),
      new PgInstrumentation(),
      new AmqplibInstrumentation(),
    ],
  });
  sdk.start();
  return sdk;
}

export async function stopTracing(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = null;
}
