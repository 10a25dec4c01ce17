import { FORBIDDEN_TARGET_CODE, ForbiddenTargetError, TARGET_NOT_ALLOWED } from '@seller-api/service-kit';
import { retryAfterDelay, scheduledDelay } from './retry';

/** What a receiver answered to an attempt: its status, or none (an error, a refusal, a timeout). */
export interface AttemptAnswer {
  status: number | null;
  /** The answer's Retry-After header, as sent. */
  retryAfter: string | null;
}

/** Where an attempt leaves its delivery: delivered, due again after `delayMs`, or dead. */
export type DeliveryOutcome = { kind: 'delivered' } | { kind: 'retry'; delayMs: number } | { kind: 'dead' };

export interface RetryPolicy {
  /** The delays before attempts 2 to 8 (domain/retry.ts, parseSchedule). */
  schedule: readonly number[];
  /** The time the answer came, ms since the epoch (an HTTP-date Retry-After is read against it). */
  now: number;
  /** The jitter's source (domain/retry.ts, scheduledDelay). */
  random?: () => number;
}

/**
 * Attempt `attempt` (1-based) of a delivery allowed `maxAttempts`: any 2xx delivers it; anything else
 * (another status, no answer) retries it after the scheduled delay, which a Retry-After may lengthen up
 * to twice (docs/webhooks.md, "Retries"), until the attempts run out.
 */
export function classifyOutcome(
  answer: AttemptAnswer,
  attempt: number,
  maxAttempts: number,
  policy: RetryPolicy,
): DeliveryOutcome {
  if (answer.status !== null && answer.status >= 200 && answer.status < 300) return { kind: 'delivered' };
  if (attempt >= maxAttempts) return { kind: 'dead' };
  const scheduled = scheduledDelay(attempt, policy.schedule, policy.random);
  if (scheduled === null) return { kind: 'dead' };
  return { kind: 'retry', delayMs: retryAfterDelay(answer.retryAfter, scheduled, policy.now) };
}

/** The refusal of the kit's guarded lookup in an attempt's error (undici may wrap it as the cause). */
export function forbiddenTarget(err: unknown): ForbiddenTargetError | null {
  if (err instanceof ForbiddenTargetError) return err;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause instanceof ForbiddenTargetError ? cause : null;
}

/**
 * An attempt's error as the seller reads it in its attempts: a timeout, a refused target (which address
 * it resolved to is for operators' logs only), or the error's code and message. Stored as text, so
 * without NUL characters.
 */
export function describeAttemptError(err: unknown, timeoutMs: number): string {
  const e = err as {
    code?: string;
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  const code = e.code ?? e.cause?.code;
  let text: string;
  if (e.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    text = `timeout after ${timeoutMs} ms`;
  else if (code === FORBIDDEN_TARGET_CODE) text = TARGET_NOT_ALLOWED;
  else text = [code, e.message ?? e.cause?.message].filter(Boolean).join(': ') || 'network error';
  return text.replaceAll('\u0000', '');
}
