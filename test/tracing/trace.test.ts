import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { startTracing, stopTracing } from '@seller-api/service-kit/tracing';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from '../webhooks/helpers';

// The SDK is registered before any service starts; the services read that when they build their apps.
// Auto-instrumentation cannot patch modules under jest's registry, so what is shown here is the kit's
// own spans and the propagation between them, which is what production runs too.
const exporter = new InMemorySpanExporter();
startTracing('seller-api-test', exporter);

const t = useSystem({ receiver: true });
// After the services are stopped: they end their spans as they stop.
afterAll(() => stopTracing());

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

function byId(spans: ReadableSpan[], spanId: string | undefined): ReadableSpan | undefined {
  return spanId ? spans.find((s) => s.spanContext().spanId === spanId) : undefined;
}

/** The span and its ancestors, nearest first, as far as they have been exported. */
function ancestry(spans: ReadableSpan[], spanId: string): ReadableSpan[] {
  const chain: ReadableSpan[] = [];
  let span = byId(spans, spanId);
  while (span) {
    chain.push(span);
    span = byId(spans, span.parentSpanContext?.spanId);
  }
  return chain;
}

const describeSpan = (s: ReadableSpan) => `${SpanKind[s.kind]} ${s.name}`;

describe('one trace from the API call to the webhook POST', () => {
  it('links gateway, orders, outbox publish, dispatcher consumer and the webhook POST, and tells the receiver', async () => {
    const { key } = await t.newKey();
    await register(t.url, key, `${t.receiver.url}/traced`, 'order.created');
    const order = await placeOrder(t.url, key);
    const hit = await waitFor(
      () =>
        t.receiver.received.find(
          (h) =>
            h.body.event === 'order.created' &&
            (h.body.data.order as { uuid?: string } | undefined)?.uuid === order,
        ),
      { what: 'the order.created webhook' },
    );

    // The receiver gets the POST's own span as parent.
    const match = TRACEPARENT.exec(String(hit.headers.traceparent));
    expect(match).not.toBeNull();
    const [, traceId, postSpanId] = match as RegExpExecArray;

    // Five hops up from the POST to a root: wait until every one of them has ended and been exported
    // (or show how far the chain got).
    const chainOf = () => ancestry(exporter.getFinishedSpans(), postSpanId as string);
    const chain = await waitFor(
      () => {
        const found = chainOf();
        return found.length >= 5 && !found.at(-1)?.parentSpanContext ? found : null;
      },
      { what: 'the whole chain of spans', timeoutMs: 5_000 },
    ).catch(chainOf);
    expect(chain.map(describeSpan)).toEqual([
      'CLIENT POST',
      'CONSUMER process webhooks.intake',
      expect.stringMatching(/^PRODUCER publish /),
      'SERVER POST /sellers/orders/',
      'SERVER POST /api/v1/sellers/orders/',
    ]);
    for (const span of chain) expect(span.spanContext().traceId).toBe(traceId);

    const [post, consumer, publish, orders, entry] = chain as [
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
    ];
    expect(post.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'webhook.event': 'order.created',
      'webhook.event_id': hit.headers['x-webhook-event-id'],
      'webhook.delivery_attempt': 1,
    });
    expect(consumer.attributes).toMatchObject({
      'messaging.rabbitmq.destination.routing_key': 'order.created',
      'messaging.message.id': expect.any(String),
    });
    expect(publish.attributes).toMatchObject({
      'messaging.system': 'rabbitmq',
      'messaging.rabbitmq.destination.routing_key': 'order.created',
      'messaging.message.id': consumer.attributes['messaging.message.id'],
    });
    expect(orders.attributes).toMatchObject({ 'http.response.status_code': 201 });
    expect(entry.attributes).toMatchObject({ 'http.response.status_code': 201 });
    // Time runs down the chain: the publish follows the request's commit, the POST follows the intake.
    const start = (s: ReadableSpan) => s.startTime[0] * 1e9 + s.startTime[1];
    expect(start(publish)).toBeGreaterThan(start(orders));
    expect(start(post)).toBeGreaterThan(start(consumer));

    // The charge orders asked payments for while creating the order is in the same trace, under orders.
    const charge = exporter
      .getFinishedSpans()
      .find(
        (s) =>
          s.kind === SpanKind.SERVER &&
          s.parentSpanContext?.spanId === orders.spanContext().spanId &&
          String(s.attributes['http.route']).startsWith('/internal/charges'),
      );
    expect(charge?.spanContext().traceId).toBe(traceId);
  });

  it("starts a trace of its own at the gateway, linked to a caller's traceparent, and passes none of the caller's context on", async () => {
    const { key } = await t.newKey();
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const res = await fetch(`${t.url}/sellers/orders/`, {
      headers: {
        authorization: `Bearer ${key}`,
        // Not sampled, with state and baggage: none of it may steer or ride along our trace.
        traceparent: `00-${callerTrace}-${callerSpan}-00`,
        tracestate: 'evil=1',
        baggage: 'role=operator',
      },
    });
    expect(res.status).toBe(200);
    const [entry, list] = await waitFor(
      () => {
        const spans = exporter.getFinishedSpans();
        const first = spans.find((s) => s.links.some((l) => l.context.spanId === callerSpan));
        const second = first && spans.find((s) => s.parentSpanContext?.spanId === first.spanContext().spanId);
        return first && second ? ([first, second] as const) : null;
      },
      { what: 'the gateway span linked to the caller, and its orders child' },
    );
    expect(describeSpan(entry)).toBe('SERVER GET /api/v1/sellers/orders/');
    expect(entry.parentSpanContext).toBeUndefined();
    expect(entry.spanContext().traceId).not.toBe(callerTrace);
    expect(entry.links[0]?.context.traceId).toBe(callerTrace);
    // Recorded although the caller said "not sampled"; the orders span is in the gateway's trace.
    expect(describeSpan(list)).toBe('SERVER GET /sellers/orders/');
    expect(list.spanContext().traceId).toBe(entry.spanContext().traceId);
    expect(list.spanContext().traceState).toBeUndefined();
  });
});
