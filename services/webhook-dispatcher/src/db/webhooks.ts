import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CreateWebhookRequest, ListQuery, UpdateWebhookRequest } from '@seller-api/contracts';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import {
  assertOwned,
  conflict,
  listOwned,
  sqlInTransaction,
  type Scope,
  type Sql,
} from '@seller-api/service-kit';
import {
  LIVE,
  MAX_WEBHOOKS,
  assertSendable,
  assertTarget,
  generateSecret,
  limitReached,
  type ChangeGuard,
  type TargetPolicy,
} from '../domain/registrations';
import type { SecretBox } from '../domain/secret-box';
import { WebhookSchema, type WebhookRow } from './entities';

/**
 * The webhook registrations (`webhooks.webhooks`): registering (a rotation moves the retired one's
 * deliveries in the same transaction), reading, changing and deleting them; the rules are
 * domain/registrations.ts. `sql` runs the hand-written statements; inside a transaction, on its
 * connection (sqlInTransaction).
 */

/**
 * PostgreSQL's deadlock_detected (one of two transactions waiting on each other was cancelled) and
 * serialization_failure: either way the statement may simply be run again.
 */
const RETRYABLE = new Set(['40P01', '40001']);

/**
 * Registers a webhook whose target the caller has checked (assertTarget: a DNS lookup, done before a
 * keyed request's transaction so that none is held open for it). The same (url, event) again retires
 * the previous registration and its secret (a rotation, docs/webhooks.md): its pending and dead
 * deliveries move to the new one in the same transaction, so that the pending ones are signed with the
 * new secret from then on and the dead ones can be re-sent from the new webhook; the delivered ones stay
 * with the retired webhook, its history. Answers the new webhook, its secret in clear (stored sealed
 * with `secrets`), and the id of the one it retired.
 * A seller has at most MAX_WEBHOOKS registered per environment (a rotation replaces one, so it does not
 * count twice): 409 `limit_reached` beyond.
 *
 * A delivery of the old webhook that the sender has claimed keeps its lease through the move: its
 * attempt in flight (signed with the old secret) goes out once and its outcome is recorded on the moved
 * row; one claimed but not started is handed back by the sender (http/routes.ts runs the registration
 * as a change of the old webhook) and claimed again under the new one.
 */
export async function registerWebhook(
  em: EntityManager,
  sql: Sql,
  scope: Scope,
  input: CreateWebhookRequest,
  secrets: SecretBox,
): Promise<{ webhook: WebhookRow; secret: string; retiredId: string | null }> {
  return em.transactional(async (tx) => {
    // Serialise the registrations of one seller and environment: two of one (url, event) at once cannot
    // both stay live, and concurrent ones cannot count the same free places (MAX_WEBHOOKS).
    await sqlInTransaction(sql, tx).query('select pg_advisory_xact_lock(hashtext($1))', [
      `webhooks:${scope.sellerId}:${scope.environment}`,
    ]);
    const live = { sellerId: scope.sellerId, environment: scope.environment, status: { $in: LIVE } };
    const previous = await tx.findOne(WebhookSchema, { ...live, url: input.url, event: input.event });
    if (!previous && (await tx.count(WebhookSchema, live)) >= MAX_WEBHOOKS) throw limitReached();
    const now = new Date();
    if (previous) {
      previous.status = 'RETIRED';
      previous.updatedAt = now;
      await tx.flush();
    }
    const id = randomUUID();
    // Stored sealed only (docs/webhooks.md, "Secrets at rest"); the clear one goes to the answer.
    const secret = generateSecret();
    const webhook = tx.create(WebhookSchema, {
      id,
      sellerId: scope.sellerId,
      environment: scope.environment,
      url: input.url,
      event: input.event,
      description: input.description ?? null,
      status: 'ACTIVE',
      secret: null,
      secretSealed: secrets.seal(secret, id),
      createdAt: now,
      updatedAt: now,
    });
    await tx.persist(webhook).flush();
    if (previous) await moveDeliveries(tx, sql, previous.id, webhook.id);
    return { webhook, secret, retiredId: previous?.id ?? null };
  });
}

// Each row is locked in the order of the primary key. The sender's claims skip locked rows and never
// wait for this; an outcome batch (db/delivery-claims.ts, recordOutcomes) locks its rows in its own
// order and may deadlock with it. PostgreSQL then cancels one of the two, and that one is tried again: the
// outcomes one by one, this move from its savepoint (moveDeliveries).
const MOVE_DELIVERIES = `update webhooks.deliveries d set webhook_id = $1
   from (select id from webhooks.deliveries
          where webhook_id = $2 and status in ('pending', 'dead') order by id for update) moving
  where d.id = moving.id`;
/** Tries of the move before a rotation gives up on a run of deadlocks. */
const MOVE_TRIES = 5;

/** Moves the pending and dead deliveries of a retired webhook to its successor (registerWebhook). */
async function moveDeliveries(tx: EntityManager, sql: Sql, from: string, to: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      // A savepoint: a deadlock gives back this statement's locks only, and the move is tried again.
      await tx.transactional((inner) => sqlInTransaction(sql, inner).query(MOVE_DELIVERIES, [to, from]));
      return;
    } catch (err) {
      if (!RETRYABLE.has(String((err as { code?: unknown }).code)) || attempt >= MOVE_TRIES) throw err;
    }
  }
}

/**
 * How long after a rotation its retired webhook is checked for stranded deliveries: a day, so a
 * dispatcher down for a while (a rolling deploy) still moves them when it comes back.
 */
export const STRANDED_WINDOW_MINUTES = 24 * 60;

// The fan-out reads the active webhooks in one statement and stores the deliveries in the next (it holds
// no lock between them): a rotation committed in between leaves a pending delivery on the webhook it
// retired, which nothing sends. Those are moved to the successor like the rotation's own. Only
// webhooks retired in the last STRANDED_WINDOW_MINUTES are looked at (webhooks_retired_idx), and only
// their deliveries created from a few minutes before the rotation on (a stranded one is stored after
// it; the margin covers clocks and a statement under way), read through deliveries_list_idx rather
// than the webhook's whole history. Rows another statement holds are skipped (taken on the next run),
// so this never waits nor deadlocks.
const MOVE_STRANDED = `update webhooks.deliveries d set webhook_id = moving.successor
   from (select s.id, n.id as successor
           from webhooks.webhooks o
           join webhooks.webhooks n
             on n.seller_id = o.seller_id and n.environment = o.environment and n.url = o.url
            and n.event = o.event and n.status in ('ACTIVE', 'DISABLED')
           join webhooks.deliveries s
             on s.webhook_id = o.id and s.created_at >= o.updated_at - interval '5 minutes'
            and s.status = 'pending'
          where o.status = 'RETIRED' and o.updated_at > now() - make_interval(mins => $1)
          order by s.id
            for update of s skip locked) moving
  where d.id = moving.id`;

/**
 * Moves the pending deliveries a fan-out stored on a webhook a rotation had just retired to its live
 * successor; answers how many moved. Run periodically (jobs/stranded-deliveries.ts).
 */
export async function moveStrandedDeliveries(sql: Sql): Promise<number> {
  const rows = await sql.query<{ n: number }>(
    `with moved as (${MOVE_STRANDED} returning 1) select count(*)::int as n from moved`,
    [STRANDED_WINDOW_MINUTES],
  );
  return rows[0]?.n ?? 0;
}

/**
 * The live webhook of one (url, event), if any: the one a registration of them would retire. Read before
 * the registration's transaction, so that the sender can hold that webhook's claimed deliveries
 * meanwhile (http/routes.ts); the registration finds it again under its lock.
 */
export async function liveWebhookOf(
  em: EntityManager,
  scope: Scope,
  input: Pick<CreateWebhookRequest, 'url' | 'event'>,
): Promise<string | null> {
  const row = await em.findOne(
    WebhookSchema,
    {
      sellerId: scope.sellerId,
      environment: scope.environment,
      url: input.url,
      event: input.event,
      status: { $in: LIVE },
    },
    { fields: ['id'] },
  );
  return row?.id ?? null;
}

/**
 * A webhook of the seller: ACTIVE, DISABLED or RETIRED (replaced by a rotation, still readable with its
 * delivered history). A deleted one is gone: 404.
 */
export async function getWebhook(em: EntityManager, scope: Scope, id: string): Promise<WebhookRow> {
  const row = await em.findOne(WebhookSchema, { id, status: { $in: [...LIVE, 'RETIRED'] } });
  return assertOwned(row, scope, 'Webhook');
}

/** Live registrations only, newest first: retired and deleted ones are not listed (docs/webhooks.md). */
export function listWebhooks(em: EntityManager, scope: Scope, query: ListQuery) {
  return listOwned(em, WebhookSchema, scope, query, { status: { $in: LIVE } });
}

/** Pause (DISABLED: no new deliveries, pending ones wait), resume, or point at another URL. */
export async function updateWebhook(
  em: EntityManager,
  sql: Sql,
  scope: Scope,
  id: string,
  input: UpdateWebhookRequest,
  policy: TargetPolicy,
  guard: ChangeGuard,
): Promise<WebhookRow> {
  const webhook = assertSendable(await getWebhook(em, scope, id));
  if (input.url !== undefined && input.url !== webhook.url) {
    await assertTarget(input.url, scope, policy);
    webhook.url = input.url;
  }
  if (input.status !== undefined) webhook.status = input.status;
  webhook.updatedAt = new Date();
  return guard(webhook.id, () => writeUpdate(em, sql, webhook, input));
}

async function writeUpdate(
  em: EntityManager,
  sql: Sql,
  webhook: WebhookRow,
  input: UpdateWebhookRequest,
): Promise<WebhookRow> {
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      throw conflict(
        `Another webhook for ${webhook.event} already targets this URL; register it again to rotate instead.`,
      );
    }
    throw err;
  }
  if (input.url !== undefined) {
    // Pending deliveries keep the URL they will be posted to: the sender skips a destination that is
    // full by that stored URL (db/migrations.ts, due_window), so one left at the old URL would wait
    // while the old URL is busy. Done on every PATCH with a url, so that repeating one mends a failure.
    await sql.query(
      `update webhooks.deliveries set url = $1 where webhook_id = $2 and status = 'pending' and url <> $3`,
      [webhook.url, webhook.id, webhook.url],
    );
  }
  return webhook;
}

export async function deleteWebhook(
  em: EntityManager,
  scope: Scope,
  id: string,
  guard: ChangeGuard,
): Promise<void> {
  const webhook = assertSendable(await getWebhook(em, scope, id));
  webhook.status = 'DELETED';
  webhook.updatedAt = new Date();
  await guard(webhook.id, () => em.flush());
}
