import { randomUUID } from 'node:crypto';
import { customer, standaloneOrder } from '../orders/fixtures';
import { call, type RunningGateway } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';

/**
 * Idempotency-Key on order creation, end to end: the gateway checks the key, orders keeps it in its own
 * schema with the order, in the order's transaction. Neither Redis nor the gateway that took the first
 * request is needed for a retry to get the first answer.
 */
const t = useSystem({ seller: true });
let other: RunningGateway;
let key: string;
beforeAll(async () => {
  key = t.seller.key;
  // A second replica, with a short upstream timeout: it gives up on a slow request (a 504), as a
  // gateway that dies after forwarding would.
  other = await t.startGateway({ UPSTREAM_TIMEOUT_MS: '300' });
});
const db = () => t.system.orders.runtime.orm.em.fork();

/** An order body whose customer e-mail marks it, to count the orders it made. */
function marked() {
  const email = `idem-${randomUUID()}@example.com`;
  return { email, body: standaloneOrder({ customer: customer({ email }) }) };
}

async function ordersOf(email: string): Promise<number> {
  const rows = await db().execute<Array<{ n: string }>>(
    'select count(*) as n from orders.orders where customer_email = ?',
    [email],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Charges payments made for an order that does not exist: what a racing duplicate must not leave. */
async function chargesWithoutOrder(): Promise<number> {
  const rows = await db().execute<Array<{ n: string }>>(
    `select count(*) as n from payments.transactions t
      where not exists (select 1 from orders.orders o where o.id = t.order_id)`,
  );
  return Number(rows[0]?.n ?? 0);
}

// Every test: whatever its duplicates and failures, no charge is left without its order (counted
// from before the test: the database outlives runs of this file).
let orphansBefore = 0;
beforeEach(async () => {
  orphansBefore = await chargesWithoutOrder();
});
afterEach(async () => {
  expect(await chargesWithoutOrder()).toBe(orphansBefore);
});

const create = (url: string, body: unknown, idem: string, k = key) =>
  call(`${url}/sellers/orders/`, { method: 'POST', key: k, body, headers: { 'idempotency-key': idem } });

/** Holds an exclusive lock on orders' customers table: every order creation waits at its write. */
async function holdOrderWrites() {
  const em = db();
  await em.begin();
  await em.execute('lock table orders.customers in access exclusive mode');
  return { release: () => em.commit() };
}

describe('Idempotency-Key on POST /sellers/orders/', () => {
  it('replays the first answer byte for byte, on any gateway, and creates one order', async () => {
    const { email, body } = marked();
    const idem = randomUUID();
    const first = await create(t.url, body, idem);
    const again = await create(other.url, body, idem);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await ordersOf(email)).toBe(1);
  });

  it('answers 409 idempotency_conflict when the same key comes with another body', async () => {
    const idem = randomUUID();
    const a = marked();
    const b = marked();
    expect((await create(t.url, a.body, idem)).status).toBe(201);
    const res = await create(t.url, b.body, idem);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: 'idempotency_conflict',
      message: expect.stringMatching(/different/),
    });
    expect(await ordersOf(b.email)).toBe(0);
  });

  it('creates one order from concurrent duplicates; the others wait (409, Retry-After: 1) or replay', async () => {
    const { email, body } = marked();
    const idem = randomUUID();
    const answers = await Promise.all(Array.from({ length: 6 }, () => create(t.url, body, idem)));
    for (const res of answers) {
      if (res.status === 409) {
        expect(res.body.code).toBe('idempotency_conflict');
        expect(res.headers.get('retry-after')).toBe('1');
      } else expect(res.status).toBe(201);
    }
    const created = answers.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.text)).size).toBe(1);
    expect(await ordersOf(email)).toBe(1);
  });

  it('answers a retry through another gateway with the first answer, once the first has finished', async () => {
    const { email, body } = marked();
    const idem = randomUUID();
    const lock = await holdOrderWrites();
    let first: Awaited<ReturnType<typeof create>>;
    try {
      // The replica with the short timeout gives up while orders still works on it.
      first = await create(other.url, body, idem);
      expect(first.status).toBe(504);
      // Still running: the retry is told to come back in a second.
      const early = await create(t.url, body, idem);
      expect(early.status).toBe(409);
      expect(early.headers.get('retry-after')).toBe('1');
    } finally {
      await lock.release();
    }
    const retried = await waitFor(
      async () => {
        const res = await create(t.url, body, idem);
        return res.status === 201 ? res : null;
      },
      { what: 'the first answer replayed' },
    );
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(await ordersOf(email)).toBe(1);
  });

  it('leaves nothing when the first request dies before its commit: the retry creates the one order', async () => {
    const { email, body } = marked();
    const idem = randomUUID();
    const lock = await holdOrderWrites();
    try {
      const pending = create(t.url, body, idem);
      // The keyed transaction waits at its write; its connection dies, as with a killed service.
      const victim = await waitFor(
        async () => {
          const rows = await db().execute<Array<{ pid: number }>>(
            `select pid from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock' and query ilike '%orders.customers%'`,
          );
          return rows[0]?.pid ?? null;
        },
        { what: 'the keyed transaction waiting' },
      );
      await db().execute('select pg_terminate_backend(?)', [victim]);
      expect((await pending).status).toBeGreaterThanOrEqual(500);
    } finally {
      await lock.release();
    }
    expect(await ordersOf(email)).toBe(0);
    const retried = await create(t.url, body, idem);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await ordersOf(email)).toBe(1);
  });

  it('keeps working without Redis: a keyed create succeeds and replays', async () => {
    const noRedis = await t.startGateway({ REDIS_URL: 'redis://127.0.0.1:1' });
    const { email, body } = marked();
    const idem = randomUUID();
    const first = await create(noRedis.url, body, idem);
    expect(first.status).toBe(201);
    const again = await create(noRedis.url, body, idem);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(await ordersOf(email)).toBe(1);
  });

  it('scopes keys to the user, the environment and the route', async () => {
    const idem = randomUUID();
    const { email } = await t.newKey({ email: `both-${randomUUID()}@example.com` });
    const test = await t.newKey({ email, environment: 'test' });
    const live = await t.newKey({ email, environment: 'live' });
    const someoneElse = await t.newKey();
    const order = marked();
    const inTest = await create(t.url, order.body, idem, test.key);
    const inLive = await create(t.url, order.body, idem, live.key);
    const theirs = await create(t.url, order.body, idem, someoneElse.key);
    const product = await call(`${t.url}/sellers/products/`, {
      method: 'POST',
      key: test.key,
      headers: { 'idempotency-key': idem },
      body: { name: 'Caneca', price: 3000, type: 'DIGITAL', images: ['https://cdn.example.com/c.png'] },
    });
    expect([inTest.status, inLive.status, theirs.status, product.status]).toEqual([201, 201, 201, 201]);
    expect(new Set([inTest.text, inLive.text, theirs.text, product.text]).size).toBe(4);
    expect(await ordersOf(order.email)).toBe(3);
  });

  it('does not keep a refusal: the same key runs again once the request is right', async () => {
    const idem = randomUUID();
    const { email, body } = marked();
    const refused = await create(t.url, { ...body, payment: { gross_amount: -1 } }, idem);
    expect(refused.status).toBe(400);
    // Another body under the same key is not a conflict: nothing was kept for the refusal.
    const created = await create(t.url, body, idem);
    expect(created.status).toBe(201);
    expect(await ordersOf(email)).toBe(1);
  });

  it('refuses a malformed key with 400 before anything runs', async () => {
    const { email, body } = marked();
    const res = await create(t.url, body, 'x'.repeat(256));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_error');
    expect(await ordersOf(email)).toBe(0);
  });
});
