import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, createMetrics, type Sql } from '@seller-api/service-kit';
import { createDispatcherMetrics } from '../metrics';
import { claimWindowSize } from '../db/delivery-claims';
import { DeliverySender, type SenderOptions } from './sender';
import { SecretBox } from '../domain/secret-box';

/*
 * DeliverySender.changing against a database stand-in: what a claim brings for a webhook being changed
 * is held (leased) until the change is written, then handed back; nothing of it is attempted.
 */
const WEBHOOK = '11111111-1111-4111-8111-111111111111';

function delivery(n: number, webhookId: string | null = WEBHOOK) {
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    webhook_id: webhookId,
    event_id: `evt_${n}`,
    event: 'order.created',
    // Refused before any connection (not a URL): an attempt ends at once, with its outcome written.
    url: 'not a url',
    signed: false,
    secret: null,
    environment: 'test',
    payload: '{}',
    occurred_at_ms: Date.now(),
    attempts: 0,
    max_attempts: 8,
    trace_context: null,
    lease: '2026-11-28 12:00:00.123456+00',
    created_at: '2026-11-28 11:59:59.5+00',
    scanned: 1,
    window_start_ms: Date.now(),
  };
}

/**
 * A pool whose claims answer when the test says; claims' limits and windows, hand-backs and outcomes
 * are recorded.
 */
/** The kit's `Sql` as the sender uses it: claims answered by the test, other statements at once. */
function fakeSql() {
  const claims: Array<(rows: unknown[]) => void> = [];
  const limits: number[] = [];
  const windows: number[] = [];
  const handedBack: string[][] = [];
  const attempted: string[] = [];
  const pool = {
    query(text: string, params?: unknown[]) {
      if (text.includes('webhooks.due_window')) {
        limits.push(Number(params?.[4]));
        windows.push(Number(params?.[1]));
        return new Promise((resolve) => claims.push((rows) => resolve(rows)));
      }
      if (text.startsWith('update webhooks.deliveries d set lease_until = null')) {
        handedBack.push((params?.[0] as string[]) ?? []);
      } else if (text.includes('insert into webhooks.delivery_attempts')) {
        for (const o of JSON.parse(String(params?.[0])) as Array<{ id: string }>) attempted.push(o.id);
      }
      return Promise.resolve([]);
    },
  };
  return { pool: pool as unknown as Sql, claims, limits, windows, handedBack, attempted };
}

function sender(pool: Sql, options: Partial<SenderOptions> = {}) {
  return new DeliverySender({
    sql: pool,
    logger: createLogger('sender-test', 'silent'),
    metrics: createDispatcherMetrics(createMetrics('sender-test')),
    schedule: [1000],
    attemptTimeoutMs: 1000,
    concurrency: 8,
    destinationConcurrency: 4,
    pollIntervalMs: 60_000,
    allowPrivateTargets: true,
    secrets: new SecretBox(randomBytes(32)),
    ...options,
  });
}

/**
 * Waits until `what` holds: for 200 turns of the event loop, or (`everyMs`) every few milliseconds for
 * 5 s when answers travel through real sockets.
 */
const until = async (what: () => boolean, everyMs = 0) => {
  const tries = everyMs > 0 ? 5000 / everyMs : 200;
  for (let i = 0; i < tries && !what(); i += 1) {
    await new Promise((r) => (everyMs > 0 ? setTimeout(r, everyMs) : setImmediate(r)));
  }
  if (!what()) throw new Error('condition not met');
};

/**
 * Stops `s` once the claims still unanswered find nothing: a freed slot may have sent one after the
 * outcome, and stop waits for the claims in flight.
 */
async function stop(db: ReturnType<typeof fakeSql>, s: DeliverySender) {
  const stopping = s.stop();
  for (const answer of db.claims.splice(0)) answer([]);
  await stopping;
}

/** A sender over a fake pool, its first claim sent and not yet answered. */
async function claiming() {
  const db = fakeSql();
  const s = sender(db.pool);
  s.wake();
  await until(() => db.claims.length === 1);
  return { db, s };
}

test('a claim sent before a change and back during it: held leased, then handed back, never attempted', async () => {
  const { db, s } = await claiming();
  let write = () => {};
  const change = s.changing(WEBHOOK, () => new Promise<void>((resolve) => (write = resolve)));
  // The claim sent before the change comes back while it is being written, with one of the
  // webhook's deliveries and a postback.
  db.claims.shift()?.([delivery(1), delivery(2, null)]);
  await until(() => db.attempted.includes(delivery(2).id));
  expect(db.handedBack).toEqual([]);
  write();
  await change;
  await until(() => db.handedBack.length === 1);
  expect(db.handedBack).toEqual([[delivery(1).id]]);
  expect(db.attempted).toEqual([delivery(2).id]);
  await stop(db, s);
});

test('a claim sent before a change that is back after it: handed back at once', async () => {
  const { db, s } = await claiming();
  await s.changing(WEBHOOK, () => Promise.resolve());
  db.claims.shift()?.([delivery(3)]);
  await until(() => db.handedBack.length === 1);
  expect(db.handedBack).toEqual([[delivery(3).id]]);
  expect(db.attempted).toEqual([]);
  await stop(db, s);
});

test('a claim sent after a change is written: its deliveries go out', async () => {
  const db = fakeSql();
  const s = sender(db.pool);
  await s.changing(WEBHOOK, () => Promise.resolve());
  s.wake();
  await until(() => db.claims.length === 1);
  db.claims.shift()?.([delivery(4)]);
  await until(() => db.attempted.includes(delivery(4).id));
  expect(db.handedBack).toEqual([]);
  await stop(db, s);
});

test('a change that fails still hands back what it held', async () => {
  const { db, s } = await claiming();
  let fail = (_err: Error) => {};
  const change = s.changing(WEBHOOK, () => new Promise<void>((_resolve, reject) => (fail = reject)));
  // A postback beside it shows when the claim has been dealt with.
  db.claims.shift()?.([delivery(5), delivery(6, null)]);
  await until(() => db.attempted.includes(delivery(6).id));
  expect(db.handedBack).toEqual([]);
  fail(new Error('conflict'));
  await expect(change).rejects.toThrow('conflict');
  await until(() => db.handedBack.length === 1);
  expect(db.handedBack).toEqual([[delivery(5).id]]);
  expect(db.attempted).toEqual([delivery(6).id]);
  await stop(db, s);
});

/** A loopback receiver that answers 200 at once, or holds its answers while `hold` is set. */
async function gatedReceiver() {
  const held: Array<() => void> = [];
  const state = { hold: false, received: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.received += 1;
      const answer = () => res.end();
      if (state.hold) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    state,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    release() {
      state.hold = false;
      for (const answer of held.splice(0)) answer();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

test('while a round of the slots waits, a claim waits until it may take twice the slots; answers that free them send it', async () => {
  const db = fakeSql();
  const { limits } = db;
  // Two destinations: two hosts (a host's URLs share its slots).
  const receivers = { '/a': await gatedReceiver(), '/b': await gatedReceiver() };
  const all = Object.values(receivers);
  const received = () => all.reduce((sum, r) => sum + r.state.received, 0);
  // 8 slots, 4 per destination: a destination known to answer fast may hold 16 more waiting.
  const s = sender(db.pool);
  try {
    const to = (n: number, path: '/a' | '/b') => ({ ...delivery(n, null), url: receivers[path].url(path) });
    let n = 100;
    const batch = (path: '/a' | '/b', count: number) =>
      Array.from({ length: count }, () => to((n += 1), path));
    // Both destinations answer at once: known fast.
    s.wake();
    await until(() => db.claims.length === 1, 5);
    db.claims.shift()?.([...batch('/a', 4), ...batch('/b', 4)]);
    await until(() => db.attempted.length === 8, 5);
    // Then they hold their answers: 8 in flight and 24 waiting, every place of theirs claimed (the
    // claims their first answers woke get the deliveries, or nothing).
    for (const r of all) r.state.hold = true;
    s.wake();
    await until(() => db.claims.length > 0, 5);
    db.claims.shift()?.([...batch('/a', 16), ...batch('/b', 16)]);
    await until(() => received() === 16, 5);
    const settle = async () => {
      for (let i = 0; i < 20; i += 1) {
        await new Promise((r) => setImmediate(r));
        db.claims.shift()?.([]);
      }
    };
    await settle();
    // A new delivery: 24 waiting is more than a round of the slots, so no claim for the 8 places left.
    const claimsBefore = limits.length;
    s.wake();
    await settle();
    expect(limits.length).toBe(claimsBefore);
    // The answers come: the freed slots start the waiting deliveries, and once fewer wait the claim
    // goes out (the poll is a minute away).
    for (const r of all) r.release();
    await until(() => db.claims.length > 0, 5);
    // For the places the answers freed: at least 16.
    expect(limits[claimsBefore]).toBeGreaterThanOrEqual(16);
  } finally {
    for (const answer of db.claims.splice(0)) answer([]);
    for (const r of all) r.release();
    await s.stop();
    await Promise.all(all.map((r) => r.close()));
  }
});

test("many URLs of one host share the host's slots: the rest of a claim is handed back", async () => {
  const db = fakeSql();
  const receiver = await gatedReceiver();
  receiver.state.hold = true;
  // 8 slots, 4 per destination host.
  const s = sender(db.pool);
  try {
    s.wake();
    await until(() => db.claims.length === 1, 5);
    // Six URLs of one host (other paths, queries), nothing known of it yet: four start, two are
    // handed back.
    const paths = ['/1', '/2?x=1', '/3', '/4?y=2', '/5', '/6'];
    db.claims.shift()?.(paths.map((path, i) => ({ ...delivery(200 + i, null), url: receiver.url(path) })));
    await until(() => receiver.state.received === 4 && db.handedBack.length === 1, 5);
    await settleTurns();
    expect(receiver.state.received).toBe(4);
    expect(db.handedBack[0]).toHaveLength(2);
  } finally {
    for (const answer of db.claims.splice(0)) answer([]);
    receiver.release();
    await s.stop();
    await receiver.close();
  }
});

/** A few turns of the event loop, for anything more to happen that would. */
async function settleTurns() {
  for (let i = 0; i < 20; i += 1) await new Promise((r) => setImmediate(r));
}

test('a claim reads a quarter more due deliveries than it may take, and at least 50', async () => {
  expect(claimWindowSize(41)).toBe(52);
  expect(claimWindowSize(8)).toBe(50);
  // The sender sends that window: its first claim may fill every slot.
  const db = fakeSql();
  const s = sender(db.pool, { concurrency: 256, destinationConcurrency: 8 });
  s.wake();
  await until(() => db.claims.length === 1);
  expect(db.limits).toEqual([256]);
  expect(db.windows).toEqual([320]);
  db.claims.shift()?.([]);
  await stop(db, s);
});
