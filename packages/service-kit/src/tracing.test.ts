import { ROOT_CONTEXT, context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { batchOptionsFromEnv, samplerFromEnv, startTracing, stopTracing } from './tracing';

const root = (name: string) => `ParentBased{root=${name}, remoteParentSampled=AlwaysOnSampler`;

describe('samplerFromEnv', () => {
  it.each([
    [{}, root('AlwaysOnSampler')],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_always_on' }, root('AlwaysOnSampler')],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, root('AlwaysOffSampler')],
    [
      { OTEL_TRACES_SAMPLER: 'PARENTBASED_TRACEIDRATIO', OTEL_TRACES_SAMPLER_ARG: '0.1' },
      root('TraceIdRatioBased{0.1}'),
    ],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio' }, root('TraceIdRatioBased{1}')],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }, 'TraceIdRatioBased{0.25}'],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }, 'TraceIdRatioBased{1}'],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }, 'TraceIdRatioBased{1}'],
    [{ OTEL_TRACES_SAMPLER: 'always_on' }, 'AlwaysOnSampler'],
    [{ OTEL_TRACES_SAMPLER: ' always_off ' }, 'AlwaysOffSampler'],
    [{ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, root('AlwaysOnSampler')],
  ])('%j builds %s', (env, expected) => {
    expect(samplerFromEnv(env).toString().startsWith(expected)).toBe(true);
  });
});

describe('batchOptionsFromEnv', () => {
  it('reads the OTEL_BSP_* integers and leaves out what is unset or invalid', () => {
    expect(
      batchOptionsFromEnv({
        OTEL_BSP_SCHEDULE_DELAY: '1000',
        OTEL_BSP_EXPORT_TIMEOUT: 'soon',
        OTEL_BSP_MAX_QUEUE_SIZE: '-5',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: ' 256 ',
      }),
    ).toEqual({ scheduledDelayMillis: 1000, maxExportBatchSize: 256 });
    expect(batchOptionsFromEnv({})).toEqual({});
  });
});

describe('startTracing', () => {
  const saved = { ...process.env };
  afterEach(async () => {
    await stopTracing();
    process.env = { ...saved };
  });

  it('registers the provider, the async context and the W3C propagators, and gives them back on stop', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = startTracing('kit-test', exporter);
    expect(provider).not.toBeNull();
    const tracer = trace.getTracer('kit-test');
    await tracer.startActiveSpan('outer', async (outer) => {
      await new Promise((resolve) => setImmediate(resolve));
      // The active span survives the await: the AsyncLocalStorage context manager is in place.
      expect(trace.getActiveSpan()).toBe(outer);
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      expect(carrier.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      outer.end();
    });
    await provider?.forceFlush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('outer');
    expect(span?.resource.attributes['service.name']).toBe('kit-test');

    await stopTracing();
    const carrier: Record<string, string> = {};
    trace.getTracer('kit-test').startActiveSpan('after', (after) => {
      expect(after.isRecording()).toBe(false);
      propagation.inject(context.active(), carrier);
      after.end();
    });
    expect(carrier).toEqual({});
  });

  it('samples as OTEL_TRACES_SAMPLER says', async () => {
    process.env.OTEL_TRACES_SAMPLER = 'always_off';
    const exporter = new InMemorySpanExporter();
    const provider = startTracing('kit-test', exporter);
    const span = trace.getTracer('kit-test').startSpan('dropped', {}, ROOT_CONTEXT);
    expect(span.isRecording()).toBe(false);
    span.end();
    await provider?.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('propagates nothing with OTEL_PROPAGATORS=none', () => {
    process.env.OTEL_PROPAGATORS = 'none';
    startTracing('kit-test', new InMemorySpanExporter());
    const carrier: Record<string, string> = {};
    trace.getTracer('kit-test').startActiveSpan('quiet', (span) => {
      expect(span.isRecording()).toBe(true);
      propagation.inject(context.active(), carrier);
      span.end();
    });
    expect(carrier).toEqual({});
  });

  it('stays off without an endpoint or exporter, and with OTEL_SDK_DISABLED=true', () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    expect(startTracing('kit-test')).toBeNull();
    process.env.OTEL_SDK_DISABLED = 'true';
    expect(startTracing('kit-test', new InMemorySpanExporter())).toBeNull();
  });
});
