import { destinationOf } from '../../services/webhook-dispatcher/src/domain/destination';
import { startReceiver, type Receiver } from '../support/receiver';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

/*
 * A destination with a large old backlog and a free slot: each claim's window of the oldest due
 * deliveries is all its own. Small budgets (4 attempts in flight, 2 per destination, so a window of 100
 * deliveries) make the backlog far larger than the window.
 */
const t = useSystem({
  env: { WEBHOOK_CONCURRENCY: '4', WEBHOOK_DESTINATION_CONCURRENCY: '2' },
  receiver: true,
});
/** Another host (a destination is a host, not a URL). */
let otherReceiver: Receiver;

beforeAll(async () => {
  otherReceiver = await startReceiver();
  t.cleanup(() => otherReceiver.close());
  // This file's database outlives a run: a backlog an earlier run left (its receivers gone) must not
  // compete with this run's.
  await clearBacklog();
});

const BACKLOG = 3000;

/** Ends every pending delivery: what a test (or an earlier run) left behind is not another's backlog. */
async function clearBacklog() {
  await t.system.dispatcher.runtime.orm.em
    .fork()
    .execute(`update webhooks.deliveries set status = 'dead' where status = 'pending'`);
}

/**
 * A backlog: `count` copies of each delivered delivery to URLs like `pattern`, due since `dueAgo`.
 */
async function copyDelivered(pattern: string, count: number, dueAgo = '0 seconds') {
  await t.system.dispatcher.runtime.orm.em.fork().execute(
    `insert into webhooks.deliveries (id, event_id, webhook_id, order_id, seller_id, environment, event, url, signed,
       payload, occurred_at, status, next_attempt_at, created_at)
     select gen_random_uuid(), 'evt_' || md5(random()::text || n), webhook_id, order_id, seller_id, environment,
       event, url, signed, payload, occurred_at, 'pending', now() - ?::interval, now() - ?::interval
       from webhooks.deliveries d, generate_series(1, ?) n
      where d.url like ? and d.status = 'delivered'`,
    [dueAgo, dueAgo, count, pattern],
  );
}

/**
 * Waits until `count` deliveries to URLs like `pattern` are recorded as delivered: the backlogs below
 * are copies of them (a receiver has the request before the dispatcher has recorded its outcome).
 */
async function deliveredCount(pattern: string, count: number) {
  const em = t.system.dispatcher.runtime.orm.em.fork();
  await waitFor(
    async () => {
      const [row] = await em.execute<{ n: string }[]>(
        `select count(*) as n from webhooks.deliveries where url like ? and status = 'delivered'`,
        [pattern],
      );
      return Number(row?.n) >= count || null;
    },
    { what: `${count} deliveries recorded as delivered` },
  );
}

it("serves another destination while one destination's backlog fills every claim's window", async () => {
  const busy = await t.newKey();
  const other = await t.newKey();
  await register(t.url, busy.key, `${t.receiver.url}/busy`);
  await register(t.url, other.key, `${otherReceiver.url}/other`);
  await placeOrder(t.url, busy.key);
  await deliveredCount(`${t.receiver.url}/busy`, 1);
  // The busy destination's backlog: copies of its first delivery, all due a minute ago (older than any
  // new delivery), as after an outage of that receiver.
  await copyDelivered(`${t.receiver.url}/busy`, BACKLOG, '1 minute');
  const busyHits = () => t.receiver.received.filter((h) => h.path === '/busy').length;
  await waitFor(() => busyHits() > 20 || null, { what: 'the backlog being sent' });

  await placeOrder(t.url, other.key);
  await waitFor(() => otherReceiver.received.some((h) => h.path === '/other') || null, {
    what: "the other destination's delivery",
  });
  // It went out while most of the backlog was still waiting: not behind it.
  expect(busyHits()).toBeLessThan(BACKLOG / 2);
});

/** How long the slow receiver holds each delivery. */
const HOLD_MS = 100;

it('keeps each destination host within its budget whatever its URLs, and sends each delivery once, with claims in flight together', async () => {
  await clearBacklog();
  // Three hosts (receivers on three ports), two URLs each (another path, a query): a host's URLs share
  // its budget (docs/webhooks.md, "Concurrency per host"). Each answers after a little while and keeps
  // count of the requests it holds at once.
  const current = new Map<string, number>();
  const highest = new Map<string, number>();
  let total = 0;
  let highestTotal = 0;
  const arrivals = new Map<string, number>();
  const slowHost = (host: string) =>
    startReceiver((hook) => {
      const id = String(hook.headers['x-webhook-event-id']);
      arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
      current.set(host, (current.get(host) ?? 0) + 1);
      highest.set(host, Math.max(highest.get(host) ?? 0, current.get(host) ?? 0));
      total += 1;
      highestTotal = Math.max(highestTotal, total);
      // Held long enough that the sender's next claims find it still in flight, even on a loaded machine.
      setTimeout(() => {
        current.set(host, (current.get(host) ?? 1) - 1);
        total -= 1;
      }, HOLD_MS - 1);
      // Counted down just before the answer leaves, so that the next request never overlaps it.
      return { status: 200, delayMs: HOLD_MS };
    });
  const hosts = ['a', 'b', 'c'];
  const receivers = await Promise.all(hosts.map(slowHost));
  try {
    const seller = await t.newKey();
    for (const slow of receivers) {
      await register(t.url, seller.key, `${slow.url}/hooks/one`);
      await register(t.url, seller.key, `${slow.url}/hooks/two?variant=2`);
    }
    await placeOrder(t.url, seller.key);
    const perUrl = 20;
    for (const slow of receivers) await deliveredCount(`${slow.url}/hooks/%`, 2);
    for (const slow of receivers) await copyDelivered(`${slow.url}/hooks/%`, perUrl);
    const expected = 6 + 6 * perUrl;
    await waitFor(() => (arrivals.size === expected ? true : null), { what: 'the whole backlog' });
    expect([...arrivals.values()].every((n) => n === 1)).toBe(true);
    // WEBHOOK_DESTINATION_CONCURRENCY 2 per host, not per URL, and WEBHOOK_CONCURRENCY 4: used, never
    // exceeded.
    expect(hosts.map((h) => highest.get(h))).toEqual([2, 2, 2]);
    expect(highestTotal).toBe(4);
    // And each host has as many connections as slots, its URLs sharing them.
    expect(receivers.map((r) => r.mostConnections() <= 2)).toEqual([true, true, true]);
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
  }
});

it('hands back the deliveries waiting for a destination that turns slow, and still sends each once', async () => {
  await clearBacklog();
  // Fast at first, so that the dispatcher keeps deliveries ready for it, then slower than the time a
  // ready delivery may wait (250 ms): those are handed back to the database and claimed again later.
  const arrivals = new Map<string, number>();
  let answered = 0;
  const turning = await startReceiver((hook) => {
    const id = String(hook.headers['x-webhook-event-id']);
    arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
    answered += 1;
    return { status: 200, delayMs: answered > 12 ? 600 : 0 };
  });
  try {
    const seller = await t.newKey();
    await register(t.url, seller.key, `${turning.url}/turning`);
    await placeOrder(t.url, seller.key);
    await deliveredCount(`${turning.url}/turning`, 1);
    const backlog = 24;
    await copyDelivered(`${turning.url}/turning`, backlog);
    await deliveredCount(`${turning.url}/turning`, 1 + backlog);
    expect(arrivals.size).toBe(1 + backlog);
    expect([...arrivals.values()].every((n) => n === 1)).toBe(true);
  } finally {
    await turning.close();
  }
});

/**
 * Registers a webhook at `receiver`, gives it a backlog of `backlog` copies of its first delivery, and
 * once the drain is under way makes `change` to it (answered `answer`). Nothing reaches the receiver
 * after the answer, and the dispatcher ends holding none of the webhook's deliveries: each was either
 * attempted (its outcome written) or handed back (its lease cleared).
 */
async function changeMidDrain(
  receiver: Receiver,
  backlog: number,
  change: (url: string, key: string) => ReturnType<typeof call>,
  answer: number,
) {
  const seller = await t.newKey();
  const hook = await register(t.url, seller.key, `${receiver.url}/quick`);
  await placeOrder(t.url, seller.key);
  await deliveredCount(`${receiver.url}/quick`, 1);
  await copyDelivered(`${receiver.url}/quick`, backlog);
  await waitFor(() => receiver.received.length > 40 || null, { what: 'the drain under way' });
  const changed = await change(`${t.url}/config/webhooks/${hook.id}/`, seller.key);
  expect(changed.status).toBe(answer);
  const changedAt = Date.now();
  const sentBefore = receiver.received.length;
  expect(sentBefore).toBeLessThan(1 + backlog);
  const em = t.system.dispatcher.runtime.orm.em.fork();
  await waitFor(
    async () => {
      const [row] = await em.execute<{ n: string }[]>(
        `select count(*) as n from webhooks.deliveries
          where webhook_id = ? and status = 'pending' and lease_until > now()`,
        [hook.id],
      );
      return Number(row?.n) === 0 || null;
    },
    { what: 'no delivery of the changed webhook held' },
  );
  expect(receiver.received.filter((h) => h.at > changedAt)).toEqual([]);
  return { hook, seller };
}

it('sends nothing to a webhook paused in the middle of a fast drain once the pause is answered, and all of it once resumed', async () => {
  await clearBacklog();
  // A receiver fast enough for the dispatcher to keep claimed deliveries waiting for its slots.
  const quick = await startReceiver();
  try {
    const backlog = 400;
    const { hook, seller } = await changeMidDrain(
      quick,
      backlog,
      (url, key) => call(url, { method: 'PATCH', key, body: { status: 'DISABLED' } }),
      200,
    );
    const resumed = await call(`${t.url}/config/webhooks/${hook.id}/`, {
      method: 'PATCH',
      key: seller.key,
      body: { status: 'ACTIVE' },
    });
    expect(resumed.status).toBe(200);
    await deliveredCount(`${quick.url}/quick`, 1 + backlog);
    const ids = quick.received.map((h) => String(h.headers['x-webhook-event-id']));
    expect(new Set(ids).size).toBe(1 + backlog);
    expect(ids.length).toBe(1 + backlog);
  } finally {
    await quick.close();
  }
});

it('sends nothing to a webhook deleted in the middle of a fast drain once the deletion is answered', async () => {
  await clearBacklog();
  const quick = await startReceiver();
  try {
    await changeMidDrain(quick, 400, (url, key) => call(url, { method: 'DELETE', key }), 204);
  } finally {
    await quick.close();
  }
});

it('moves the pending deliveries of a webhook pointed at another URL, even while the old URL is busy', async () => {
  await clearBacklog();
  // The old URL holds every request for 8 s: its two slots stay busy long after the change of URL. The
  // new URL is on another host, whose slots are its own.
  const moving = await startReceiver((hook) => ({ status: 200, delayMs: hook.path === '/old' ? 8000 : 0 }));
  const moved = await startReceiver();
  try {
    const seller = await t.newKey();
    const hook = await register(t.url, seller.key, `${moving.url}/old`);
    await placeOrder(t.url, seller.key);
    await waitFor(() => moving.received.some((h) => h.path === '/old') || null, { what: 'a first attempt' });
    // A backlog behind it, stored with the old URL as the fan-out wrote it.
    await t.system.dispatcher.runtime.orm.em.fork().execute(
      `insert into webhooks.deliveries (id, event_id, webhook_id, order_id, seller_id, environment, event, url, signed,
         payload, occurred_at, status, next_attempt_at, created_at)
       select gen_random_uuid(), 'evt_' || md5(random()::text || n), webhook_id, order_id, seller_id, environment,
         event, url, signed, payload, occurred_at, 'pending', now(), now()
         from webhooks.deliveries d, generate_series(1, 5) n
        where d.webhook_id = ?`,
      [hook.id],
    );
    await waitFor(() => moving.received.filter((h) => h.path === '/old').length >= 2 || null, {
      what: 'the old URL busy',
    });
    const changed = await call(`${t.url}/config/webhooks/${hook.id}/`, {
      method: 'PATCH',
      key: seller.key,
      body: { url: `${moved.url}/new` },
    });
    expect(changed.status).toBe(200);
    const movedAt = Date.now();
    // Five copies, one of them in flight to the old URL with the first delivery: four left to move.
    await waitFor(() => moved.received.filter((h) => h.path === '/new').length >= 4 || null, {
      what: 'the backlog at the new URL',
    });
    // Well before the old URL's attempts end (8 s): the backlog did not wait for them.
    expect(Date.now() - movedAt).toBeLessThan(4000);
  } finally {
    await moving.close();
    await moved.close();
  }
});

it('refuses to delete deliveries (their attempts have no foreign key to them)', async () => {
  await expect(
    t.system.dispatcher.runtime.orm.em.fork().execute(`delete from webhooks.deliveries where false`),
  ).rejects.toThrow(/never deleted/);
});

it("groups a claim's candidates by the destination the sender counts them against", async () => {
  const urls = [
    'https://hooks.example.com/a',
    'https://HOOKS.example.com:443/b?x=1#f',
    'https://user:p@ss@hooks.example.com./c',
    'http://hooks.example.com/d',
    'http://hooks.example.com:8080',
    'http://127.0.0.1:3000/x?y=z',
    'http://[::1]:3000/x',
    'https://[2001:db8::1]/x',
    'HTTPS://Example.COM',
    'http://example.com:/x',
  ];
  const rows = await t.system.dispatcher.runtime.sql.query<{ url: string; destination: string }>(
    'select u as url, webhooks.destination_of(u) as destination from unnest($1::text[]) u',
    [urls],
  );
  expect(rows).toEqual(urls.map((url) => ({ url, destination: destinationOf(url) })));
});
