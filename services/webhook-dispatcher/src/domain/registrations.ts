import { randomBytes } from 'node:crypto';
import {
  HttpError,
  badRequest,
  checkTarget,
  conflict,
  defaultResolver,
  type Logger,
  type Resolver,
  type Scope,
} from '@seller-api/service-kit';
import type { WebhookRow } from '../db/entities';

/** Registrations that count: not deleted, not retired by a rotation. */
export const LIVE: WebhookRow['status'][] = ['ACTIVE', 'DISABLED'];

export interface TargetPolicy {
  allowPrivate: boolean;
  /** A locally run system: `test` webhooks may reach loopback (localTargets). */
  allowLoopback?: boolean;
  resolve?: Resolver;
  /** Where a refusal's detail (the host's address and range) goes: never into the answer. */
  logger?: Logger;
}

/** Registered webhooks (ACTIVE or paused) a seller may have in one environment (docs/webhooks.md). */
export const MAX_WEBHOOKS = 50;

export const limitReached = () =>
  new HttpError(
    409,
    'limit_reached',
    `At most ${MAX_WEBHOOKS} webhooks per environment: delete one before registering another.`,
  );

/** `whsec_` + 32 random bytes in standard base64 (docs/webhooks.md); shown once, at registration. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * How long a registration waits for DNS. A slower answer counts as "does not resolve yet", which is
 * accepted because every delivery checks the target again when it connects: a resolver kept busy (by
 * the deliveries' own lookups, or a slow name server) never turns a registration into a 504.
 */
export const REGISTRATION_DNS_TIMEOUT_MS = 3_000;

export function withDeadline(resolve: Resolver, timeoutMs: number): Resolver {
  return (hostname) =>
    new Promise((done, fail) => {
      const timer = setTimeout(
        () => fail(Object.assign(new Error(`DNS lookup of ${hostname} timed out`), { code: 'EAI_AGAIN' })),
        timeoutMs,
      );
      resolve(hostname).then(
        (addresses) => {
          clearTimeout(timer);
          done(addresses);
        },
        (err: unknown) => {
          clearTimeout(timer);
          fail(err);
        },
      );
    });
}

/** A URL a webhook of this environment may target (docs/webhooks.md); a 400 on `field` otherwise. */
export async function assertTarget(
  url: string,
  scope: Scope,
  policy: TargetPolicy,
  field = 'url',
): Promise<void> {
  const verdict = await checkTarget(url, {
    environment: scope.environment,
    allowPrivate: policy.allowPrivate,
    allowLoopback: policy.allowLoopback,
    resolve: withDeadline(policy.resolve ?? defaultResolver, REGISTRATION_DNS_TIMEOUT_MS),
  });
  if (!verdict.ok) {
    if (verdict.detail)
      policy.logger?.info({ seller_id: scope.sellerId, detail: verdict.detail }, 'webhook target refused');
    throw badRequest('Invalid webhook URL.', { [field]: [verdict.reason] });
  }
}

/** A retired webhook is read, never changed: nothing sends its deliveries any more (409). */
export function assertSendable(webhook: WebhookRow): WebhookRow {
  if (webhook.status === 'RETIRED') {
    throw conflict(
      'This webhook was retired by a newer registration of its URL and event: change that one, and ' +
        'resend its pending and dead deliveries from there.',
    );
  }
  return webhook;
}

/**
 * Wraps the write of a change to a webhook, once it is known to be the seller's and valid: the
 * dispatcher's sender holds back what it claimed of that webhook meanwhile (jobs/sender.ts,
 * DeliverySender.changing).
 */
export type ChangeGuard = <R>(webhookId: string, write: () => Promise<R>) => Promise<R>;
