import {
  startHttpClientSpan,
  tracingEnabled,
  w3cTraceHeaders,
  type Logger,
  type SharedDeadline,
  type WriteBatch,
} from '@seller-api/service-kit';
import type { AttemptOutcome, ClaimedDelivery } from '../../db/delivery-claims';
import { classifyOutcome, describeAttemptError, forbiddenTarget } from '../../domain/delivery-outcome';
import { buildRequest } from '../../domain/delivery-request';
import { SecretOpenError, type SecretBox } from '../../domain/secret-box';
import type { DispatcherMetrics } from '../../metrics';
import { postDelivery } from './delivery-post';
import type { DeliveryTargets } from './delivery-targets';
import type { DestinationPools } from './destination-pools';

// Opened secrets kept, at most (dropped whole beyond): opening costs a cipher's set-up per attempt.
const OPENED_SECRETS = 10_000;

/** What an attempt records when its webhook's secret cannot be opened: nothing is sent unsigned. */
const SECRET_UNAVAILABLE = 'Signing secret unavailable';

export interface AttemptOptions {
  logger: Logger;
  metrics: DispatcherMetrics;
  schedule: number[];
  attemptTimeoutMs: number;
  secrets: SecretBox;
}

/**
 * One attempt of a claimed delivery (the sender's, jobs/sender.ts, which gives it its slot): opens the
 * webhook's secret, signs and posts the request, classifies the answer and submits the outcome to the
 * sender's batch (db/delivery-claims.ts, recordOutcomes). `wakeAt` tells the sender when a retry is due.
 */
export class DeliveryAttempts {
  /** Opened secrets, by webhook and stored (sealed) text. */
  private readonly opened = new Map<string, string>();

  constructor(
    private readonly options: AttemptOptions,
    private readonly targets: DeliveryTargets,
    private readonly pools: DestinationPools,
    private readonly outcomes: WriteBatch<AttemptOutcome, void>,
    private readonly wakeAt: (at: number) => void,
  ) {}

  async attempt(
    delivery: ClaimedDelivery,
    deadline: SharedDeadline,
    free: (durationMs: number | null) => void,
  ): Promise<void> {
    const number = delivery.attempts + 1;
    let secret: string | null = null;
    let unopened = false;
    try {
      secret = this.openSecret(delivery);
    } catch (err) {
      if (!(err instanceof SecretOpenError)) throw err;
      unopened = true;
      // The reason only (which key id, or a failed tag): never the stored text.
      this.options.logger.error(
        { delivery: delivery.id, webhook: delivery.webhook_id, err: err.message },
        'webhook secret cannot be opened',
      );
    }
    const { headers, body } = buildRequest({ ...delivery, secret }, Date.now());
    // Each attempt is a CLIENT span in the trace of the event that caused it, and tells the receiver
    // (W3C traceparent, docs/webhooks.md).
    const traced = tracingEnabled()
      ? startHttpClientSpan('POST', delivery.trace_context, {
          'webhook.event': delivery.event,
          'webhook.event_id': delivery.event_id,
          'webhook.delivery_attempt': number,
        })
      : null;
    if (traced) Object.assign(headers, w3cTraceHeaders(traced.context));
    const startedAt = new Date();
    let status: number | null = null;
    let excerpt: string | null = null;
    let error: string | null = null;
    let retryAfter: string | null = null;
    const target = this.targets.of(delivery.url);
    // Host only: a receiver's path or query can hold its own token.
    if (target.hostname) traced?.span.setAttribute('server.address', target.hostname);
    const refusal = target.refusal[delivery.environment];
    if (unopened) {
      error = SECRET_UNAVAILABLE;
    } else if (refusal) {
      error = refusal;
      this.options.logger.info(
        { delivery: delivery.id, host: target.hostname },
        'delivery refused: a literal address webhooks may not target',
      );
    } else {
      const answer = await postDelivery(
        this.pools.for(delivery.environment, target.destination, target.origin),
        target,
        headers,
        body,
        this.options.attemptTimeoutMs,
        deadline,
      );
      status = answer.status;
      retryAfter = answer.retryAfter;
      excerpt = answer.excerpt;
      if (answer.error) {
        error = describeAttemptError(answer.error, this.options.attemptTimeoutMs);
        // The attempt (which the seller reads) says only that the target is not allowed; which
        // address the host resolved to is for operators.
        const forbidden = forbiddenTarget(answer.error);
        if (forbidden)
          this.options.logger.info({ delivery: delivery.id, detail: forbidden.detail }, 'delivery refused');
      }
    }
    const durationMs = Date.now() - startedAt.getTime();
    traced?.end(status, error);
    free(status === null ? null : durationMs);
    if (number === 1)
      this.options.metrics.firstAttemptLag.observe((startedAt.getTime() - delivery.occurred_at_ms) / 1000);
    const now = Date.now();
    const outcome = classifyOutcome({ status, retryAfter }, number, delivery.max_attempts, {
      schedule: this.options.schedule,
      now,
    });
    const nextAttemptAt = outcome.kind === 'retry' ? now + outcome.delayMs : null;
    this.options.metrics.deliveries.inc({ outcome: outcome.kind });
    this.options.metrics.attemptDuration.observe(durationMs / 1000);
    this.outcomes
      .submit({
        id: delivery.id,
        created_at: delivery.created_at,
        attempt: number,
        started_at: startedAt.toISOString(),
        duration_ms: durationMs,
        response_status: status,
        response_body: excerpt,
        error,
        status: outcome.kind === 'retry' ? 'pending' : outcome.kind,
        next_attempt_at: nextAttemptAt === null ? null : new Date(nextAttemptAt).toISOString(),
        delivered: outcome.kind === 'delivered',
      })
      .catch((err: unknown) =>
        this.options.logger.error({ err, delivery: delivery.id }, 'recording a delivery attempt failed'),
      );
    if (nextAttemptAt !== null) this.wakeAt(nextAttemptAt);
  }

  /** The clear secret of a signed delivery's webhook (null for a postback); throws SecretOpenError. */
  private openSecret(delivery: ClaimedDelivery): string | null {
    if (delivery.secret === null || delivery.webhook_id === null) return null;
    const cacheKey = `${delivery.webhook_id}\n${delivery.secret}`;
    let secret = this.opened.get(cacheKey);
    if (secret === undefined) {
      secret = this.options.secrets.open(delivery.secret, delivery.webhook_id);
      if (this.opened.size >= OPENED_SECRETS) this.opened.clear();
      this.opened.set(cacheKey, secret);
    }
    return secret;
  }
}
