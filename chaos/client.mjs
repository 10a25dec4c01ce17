// The integrators: calls through either gateway, each POST with an Idempotency-Key kept across its
// retries, retried on network errors, 5xx, 429 and "still being processed" (409 with Retry-After or
// that message), the way a careful client of a payments API retries. Every call's outcome is kept
// for the checks.
/* global fetch, AbortSignal */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

const ATTEMPT_TIMEOUT_MS = 15_000;

export class Client {
  constructor(gatewayUrls, { giveUpAfterMs }) {
    this.gatewayUrls = gatewayUrls;
    this.giveUpAfterMs = giveUpAfterMs;
    this.next = 0;
    this.stats = { attempts: 0, retried: 0, byStatus: new Map() };
  }

  /** One attempt on the next gateway; a network error is status 0. */
  async attempt(method, path, { key, body, idempotencyKey }) {
    const base = this.gatewayUrls[this.next++ % this.gatewayUrls.length];
    const headers = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    this.stats.attempts += 1;
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      const text = await res.text();
      let json = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = null;
      }
      this.count(res.status);
      return { status: res.status, body: json, text };
    } catch (err) {
      this.count(0);
      return { status: 0, body: null, text: err.cause?.code ?? err.message };
    }
  }

  count(status) {
    this.stats.byStatus.set(status, (this.stats.byStatus.get(status) ?? 0) + 1);
  }

  /**
   * Calls until an answer that is not worth retrying, or until `giveUpAfterMs` has passed since the
   * first attempt (then the last answer, with `gaveUp`). POSTs keep one Idempotency-Key throughout.
   */
  async call(method, path, options = {}) {
    const idempotencyKey = method === 'POST' ? (options.idempotencyKey ?? randomUUID()) : undefined;
    const started = Date.now();
    let delay = 200;
    for (let tries = 1; ; tries += 1) {
      const answer = await this.attempt(method, path, { ...options, idempotencyKey });
      if (!retryable(answer)) return { ...answer, tries, idempotencyKey };
      if (Date.now() - started > this.giveUpAfterMs)
        return { ...answer, tries, idempotencyKey, gaveUp: true };
      this.stats.retried += 1;
      await sleep(delay + Math.random() * delay);
      delay = Math.min(delay * 2, 3_000);
    }
  }
}

function retryable({ status, body }) {
  if (status === 0 || status >= 500 || status === 429) return true;
  return (
    status === 409 &&
    body?.code === 'idempotency_conflict' &&
    /still being processed/i.test(body?.message ?? '')
  );
}
