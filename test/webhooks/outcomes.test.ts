import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import pino from 'pino';
import type { MikroORM } from '@seller-api/service-kit';
import { entities } from '../../services/webhook-dispatcher/src/db/entities';
import { SCHEMA, migrations } from '../../services/webhook-dispatcher/src/db/migrations';
import { type AttemptOutcome, outcomeQuery } from '../../services/webhook-dispatcher/src/db/delivery-claims';
import { openMigrated } from '../support/database';
import { testEnv } from '../support/env';

/*
 * The sender's outcome statement (db/delivery-claims.ts, OUTCOME_SQL) against the real table: an outcome
 * moves a delivery only from the attempt before it, and records its attempt only then, so a late or
 * repeated outcome changes nothing and two outcomes of one attempt record it once.
 */
const env = testEnv();
let orm: MikroORM;
let pool: Pool;

beforeAll(async () => {
  orm = await openMigrated(env, { schema: SCHEMA, entities, migrations, logger: pino({ level: 'silent' }) });
  pool = new Pool({ connectionString: env.DATABASE_URL as string, max: 3 });
});
afterAll(async () => {
  await pool?.end();
  await orm?.close();
});

/** A pending postback, leased, that has had `attempts` attempts: its id and created_at, as claimed. */
async function leasedDelivery(attempts: number): Promise<Claimed> {
  const id = randomUUID();
  const { rows } = await pool.query<{ created_at: string }>(
    `insert into webhooks.deliveries (id, event_id, webhook_id, order_id, seller_id, environment, event, url,
       signed, payload, occurred_at, status, attempts, next_attempt_at, lease_until, created_at)
     values ($1::uuid, 'evt_' || md5($1::text), null, gen_random_uuid(), gen_random_uuid(), 'test', 'order.created',
       'http://127.0.0.1:1/postback', false, '{}', now(), 'pending', $2, now(), now() + interval '1 minute', now())
     returning created_at::text`,
    [id, attempts],
  );
  return { id, created_at: rows[0]?.created_at as string };
}

type Claimed = Pick<AttemptOutcome, 'id' | 'created_at'>;

function outcome(claimed: Claimed, attempt: number, status: number, next: Date | null): AttemptOutcome {
  const delivered = status >= 200 && status < 300;
  return {
    ...claimed,
    attempt,
    started_at: new Date().toISOString(),
    duration_ms: 3,
    response_status: status,
    response_body: `answer ${status}`,
    error: null,
    status: delivered ? 'delivered' : next ? 'pending' : 'dead',
    next_attempt_at: next?.toISOString() ?? null,
    delivered,
  };
}

async function stateOf({ id }: Claimed) {
  const { rows } = await pool.query<{ status: string; attempts: number; lease_until: Date | null }>(
    `select status, attempts, lease_until from webhooks.deliveries where id = $1`,
    [id],
  );
  const attempts = await pool.query<{ attempt: number; response_status: number }>(
    `select attempt, response_status from webhooks.delivery_attempts where delivery_id = $1 order by attempt`,
    [id],
  );
  return { ...rows[0], recorded: attempts.rows };
}

test('an outcome moves its delivery and records its attempt; the same outcome again changes nothing', async () => {
  const retried = await leasedDelivery(0);
  const delivered = await leasedDelivery(2);
  const batch = [outcome(retried, 1, 503, new Date(Date.now() + 60_000)), outcome(delivered, 3, 200, null)];
  await pool.query(outcomeQuery(batch));
  expect(await stateOf(retried)).toEqual({
    status: 'pending',
    attempts: 1,
    lease_until: null,
    recorded: [{ attempt: 1, response_status: 503 }],
  });
  expect(await stateOf(delivered)).toEqual({
    status: 'delivered',
    attempts: 3,
    lease_until: null,
    recorded: [{ attempt: 3, response_status: 200 }],
  });
  // Repeated (the batch written again after a dropped connection, say): nothing moves, nothing is added.
  await pool.query(outcomeQuery(batch));
  expect((await stateOf(retried)).recorded).toHaveLength(1);
  expect(await stateOf(delivered)).toMatchObject({ status: 'delivered', attempts: 3 });
});

test('a late outcome, its delivery attempted again meanwhile, records nothing', async () => {
  const claimed = await leasedDelivery(0);
  await pool.query(outcomeQuery([outcome(claimed, 1, 200, null)]));
  // The first replica's answer to the same attempt, after its lease ran out.
  await pool.query(outcomeQuery([outcome(claimed, 1, 500, new Date())]));
  expect(await stateOf(claimed)).toEqual({
    status: 'delivered',
    attempts: 1,
    lease_until: null,
    recorded: [{ attempt: 1, response_status: 200 }],
  });
});

test('two outcomes of the same attempt written at once: one moves the delivery, and only its attempt is recorded', async () => {
  const ids = await Promise.all(Array.from({ length: 20 }, () => leasedDelivery(0)));
  // Two batches on two connections, each with every delivery's first attempt, in opposite orders.
  const first = ids.map((id) => outcome(id, 1, 200, null));
  const second = [...ids].reverse().map((id) => outcome(id, 1, 500, new Date()));
  const results = await Promise.allSettled([
    pool.query(outcomeQuery(first)),
    pool.query(outcomeQuery(second)),
  ]);
  // Opposite orders may deadlock; the sender writes a failed batch again outcome by outcome.
  for (const [index, result] of results.entries()) {
    if (result.status === 'rejected') {
      for (const single of index === 0 ? first : second) await pool.query(outcomeQuery([single]));
    }
  }
  for (const id of ids) {
    const state = await stateOf(id);
    expect(state.recorded).toHaveLength(1);
    expect(state.attempts).toBe(1);
    expect(state.status).toBe(state.recorded[0]?.response_status === 200 ? 'delivered' : 'pending');
  }
});
