import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import amqp from 'amqplib';
import { Client } from 'pg';
import pino from 'pino';
import { migrate, openDatabase } from '@seller-api/service-kit';
import { devInternalKey } from '@seller-api/service-kit';
import { callKey } from '../support/keys';
import { testEnv } from '../support/env';
import { captureEvents } from '../support/events';
import { call } from '../support/system';
import { waitFor } from '../support/wait';
import { runCli } from '../../services/withdrawals/src/cli';
import { PaymentsClient, type PaidChargesSource } from '../../services/withdrawals/src/clients/payments';
import { entities } from '../../services/withdrawals/src/db/entities';
import { SCHEMA, migrations } from '../../services/withdrawals/src/db/migrations';
import { MAX_DRIFTS } from '../../services/withdrawals/src/db/reconciliation-findings';
import {
  LedgerReconciliation,
  type ReconciliationOptions,
  type ReconciliationRun,
} from '../../services/withdrawals/src/jobs/reconciliation';
import { LEDGER_QUEUE, PAYMENTS_EXCHANGE } from '../../services/withdrawals/src/events/topology';
import {
  act,
  balance,
  balanceBecomes,
  fund,
  newOrder,
  newSeller,
  useHarness,
  SALE_NET,
  type Seller,
} from './helpers';

/**
 * The ledger's reconciliation with payments, end to end: orders paid, refunded, disputed and charged
 * back through the gateway while the ledger's queue is unbound from payments' exchange, so their
 * messages reach no one and the ledger never sees them; the reconciliation then heals them through the
 * events' own path, exactly once, and reports what it cannot heal.
 */
const env = testEnv();

// A new database each run, dropped before the services start: checkpoints, findings and the journal
// (append-only) start empty.
beforeAll(async () => {
  const admin = new URL(env.DATABASE_URL as string);
  const name = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`drop database if exists "${name}" with (force)`);
  await client.end();
});
const h = useHarness({ RECONCILE_GRACE_MS: '0' });
let payments: Awaited<ReturnType<typeof captureEvents>>;
beforeAll(async () => {
  payments = await captureEvents(
    h.system.env.AMQP_URL as string,
    h.system.env.AMQP_NAMESPACE as string,
    'payments.events',
  );
});
afterAll(() => payments?.close());

const db = () => h.system.withdrawals.runtime.orm.em.fork();

/** A run of the service's own reconciliation (grace 0), as the CLI starts one. */
async function reconcile(): Promise<ReconciliationRun> {
  const result = await h.system.withdrawals.reconciliation.run({ trigger: 'cli' });
  if (!result.ran) throw new Error(`reconciliation did not run: ${result.reason}`);
  return result.run;
}

/** Another reconciliation on the service's database, for a test's own clock, grace or source. */
function reconciler(options: Partial<ReconciliationOptions> = {}, source?: PaidChargesSource) {
  return new LedgerReconciliation(
    h.system.withdrawals.runtime.orm,
    source ?? new PaymentsClient(h.system.services.payments, callKey('withdrawals', 'payments')),
    { intervalMs: 0, driftIntervalMs: 0, graceMs: 0, ...options },
    h.system.withdrawals.runtime.logger,
  );
}

/**
 * Runs `work` while payments' messages reach no ledger: the ledger's queue is unbound from payments'
 * exchange until `messages` (routing keys of `orderId`, or of the order `work` returns) have been
 * published, so the exchange has dropped them, then bound again as the service declared it.
 */
async function unheard<T extends string | void>(
  messages: string[],
  work: () => Promise<T>,
  orderId?: string,
): Promise<T> {
  const broker = h.system.withdrawals.runtime.broker;
  const queue = broker.queueNames(LEDGER_QUEUE).main;
  const exchange = broker.name(PAYMENTS_EXCHANGE);
  const patterns = ['payment.*', 'internal.charge.*'];
  const connection = await amqp.connect(h.system.env.AMQP_URL as string);
  try {
    const channel = await connection.createChannel();
    for (const pattern of patterns) await channel.unbindQueue(queue, exchange, pattern);
    const from = payments.messages.length;
    try {
      const result = await work();
      const order = orderId ?? (result as string);
      await waitFor(
        () =>
          payments.messages
            .slice(from)
            .filter((m) => m.headers['x-order-uuid'] === order && messages.includes(m.routingKey)).length >=
          messages.length,
        { what: `${messages.join(', ')} of ${order}` },
      );
      return result;
    } finally {
      for (const pattern of patterns) await channel.bindQueue(queue, exchange, pattern);
    }
  } finally {
    await connection.close();
  }
}

const PAID = ['payment.approved', 'internal.charge.paid'];

/** An order of `seller` paid while the ledger heard nothing of it. */
const paidUnheard = (seller: Seller) =>
  unheard(PAID, async () => {
    const order = await newOrder(h, seller.key);
    await act(h, seller.key, `/sandbox/orders/${order}/pay/`);
    return order;
  });

async function entries(orderId: string) {
  return db().execute<Array<{ kind: string; cause: string }>>(
    `select kind, cause from withdrawals.ledger_entries where order_id = ? order by created_at, id`,
    [orderId],
  );
}

async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const found = h.system.withdrawals.runtime.metrics.registry.getSingleMetric(name);
  if (!found) throw new Error(`no metric ${name}`);
  const { values } = await found.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
    .reduce((sum, v) => sum + v.value, 0);
}

/** What a run may change besides the journal: the checkpoints and the open findings, as stored. */
async function stored() {
  const [checkpoints, findings] = await Promise.all([
    db().execute(`select * from withdrawals.reconciliation_checkpoints order by environment`),
    db().execute(`select * from withdrawals.reconciliation_findings order by subject`),
  ]);
  return { checkpoints, findings };
}

/** Moves a balance row of `seller` by `by` cents, off its lines (a bug's trace). */
const driftRow = (seller: Seller, account: string, by: number) =>
  db().execute(
    `update withdrawals.ledger_balances set amount = amount + ? where seller_id = ? and environment = 'test' and account = ?`,
    [by, seller.sellerId, account],
  );

/** The withdrawals CLI against the service's database and payments, its output captured. */
async function runCliCapture(args: string[], extra: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env: { ...h.system.env, PAYMENTS_URL: h.system.services.payments, RECONCILE_GRACE_MS: '0', ...extra },
  });
  return { code, stdout, stderr };
}

describe('an order the ledger never heard of', () => {
  it('is credited by the reconciliation exactly once, and a second run heals nothing', async () => {
    const seller = await newSeller(h);
    const order = await paidUnheard(seller);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });
    const runsBefore = await metric('ledger_reconciliation_runs_total', { outcome: 'healed' });
    const creditsBefore = await metric('ledger_reconciliation_healed_postings_total', {
      kind: 'payment_credited',
    });

    const run = await reconcile();
    expect(run.healed.filter((x) => x.orderId === order)).toEqual([
      {
        orderId: order,
        owner: { sellerId: seller.sellerId, environment: 'test' },
        status: 'PAID',
        version: 1,
        reason: 'missing',
        posted: ['payment_credited'],
      },
    ]);
    expect(run.outcome).toBe('healed');
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET });
    expect(await entries(order)).toEqual([{ kind: 'payment_credited', cause: 'reconciliation PAID v1' }]);
    expect(await metric('ledger_reconciliation_runs_total', { outcome: 'healed' })).toBe(runsBefore + 1);
    expect(await metric('ledger_reconciliation_healed_postings_total', { kind: 'payment_credited' })).toBe(
      creditsBefore + 1,
    );

    // Everything is in step now: another run, even over all of history, posts nothing.
    const again = await h.system.withdrawals.reconciliation.run({ trigger: 'cli', since: new Date(0) });
    expect(again.ran && again.run).toMatchObject({ healed: [], mismatches: [], outcome: 'clean' });
    expect(again.ran && again.run.checked).toBeGreaterThanOrEqual(1);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET });
    expect(await entries(order)).toHaveLength(1);
    expect(await metric('ledger_reconciliation_last_success_timestamp_seconds')).toBeGreaterThan(
      Date.now() / 1000 - 60,
    );
  });

  it('is credited once when its lost messages arrive after all (as an operator replays them from the dead queue)', async () => {
    const seller = await newSeller(h);
    const order = await paidUnheard(seller);
    await reconcile();
    // The consumer applies the very messages it missed: the ledger already knows, nothing is posted.
    const lost = payments.messages.filter(
      (m) => m.headers['x-order-uuid'] === order && PAID.includes(m.routingKey),
    );
    const connection = await amqp.connect(h.system.env.AMQP_URL as string);
    try {
      const channel = await connection.createConfirmChannel();
      const exchange = h.system.withdrawals.runtime.broker.name(PAYMENTS_EXCHANGE);
      for (const m of lost)
        channel.publish(exchange, m.routingKey, Buffer.from(JSON.stringify(m.payload)), {
          messageId: m.messageId,
          headers: m.headers,
          type: m.routingKey,
          contentType: 'application/json',
        });
      await channel.waitForConfirms();
    } finally {
      await connection.close();
    }
    await waitFor(async () => {
      const rows = await db().execute<Array<{ n: string }>>(
        `select count(*) as n from withdrawals.processed_messages where message_id = any(?::text[])`,
        [`{${lost.map((m) => m.messageId).join(',')}}`],
      );
      return Number(rows[0]?.n) === lost.length;
    });
    expect(await entries(order)).toHaveLength(1);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET });
  });
});

describe('money moves the ledger missed', () => {
  it.each([
    {
      // The seller's refund reserved the net before the PSP was asked: the reversal takes it from there.
      what: 'a refund',
      lost: ['payment.refunded', 'internal.charge.refunded'],
      path: 'sellers/orders/{uuid}/refund/',
      status: 'REFUNDED',
      posted: ['payment_reversed'],
      before: 0,
      available: 0,
    },
    {
      what: 'a MED opened',
      lost: ['internal.charge.med'],
      path: 'sandbox/orders/{uuid}/med/',
      status: 'MED',
      posted: ['med_held'],
      before: SALE_NET,
      available: 0,
    },
    {
      what: 'a chargeback',
      lost: ['internal.charge.chargeback'],
      path: 'sandbox/orders/{uuid}/chargeback/',
      status: 'CHARGEBACK',
      posted: ['payment_reversed'],
      before: SALE_NET,
      available: 0,
    },
  ])('heals $what: posts $posted', async ({ lost, path: route, status, posted, before, available }) => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    await unheard(lost, () => act(h, seller.key, `/${route.replace('{uuid}', order)}`), order);
    expect((await balance(h, seller.key)).available_amount).toBe(before);
    const run = await reconcile();
    expect(run.healed.filter((x) => x.orderId === order)).toEqual([
      expect.objectContaining({ status, reason: 'short', posted }),
    ]);
    expect((await balance(h, seller.key)).available_amount).toBe(available);
    expect((await reconcile()).healed).toEqual([]);
  });

  it('heals a MED rejected while the ledger heard nothing: the hold is released', async () => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    await unheard(
      ['internal.charge.med', 'internal.charge.paid'],
      async () => {
        await act(h, seller.key, `/sandbox/orders/${order}/med/`);
        await act(h, seller.key, `/sandbox/orders/${order}/med/resolve/`, { outcome: 'rejected' });
      },
      order,
    );
    const run = await reconcile();
    // Same money as before (AVAILABLE), newer knowledge: the version moves, nothing is posted.
    expect(run.healed.filter((x) => x.orderId === order)).toEqual([
      expect.objectContaining({ status: 'PAID', version: 3, reason: 'older_version', posted: [] }),
    ]);
    const [row] = await db().execute<Array<{ charge_version: number; position: string }>>(
      `select charge_version, position from withdrawals.order_funds where order_id = ?`,
      [order],
    );
    expect(row).toEqual({ charge_version: 3, position: 'AVAILABLE' });
    expect((await balance(h, seller.key)).available_amount).toBe(SALE_NET);
  });

  it('heals a sale the ledger never heard of before it can be refunded: the refund waits, then is reversed', async () => {
    const seller = await newSeller(h);
    const order = await unheard(PAID, async () => {
      const uuid = await newOrder(h, seller.key);
      await act(h, seller.key, `/sandbox/orders/${uuid}/pay/`);
      return uuid;
    });
    // Orders' word that the sale is PAID puts no money in the ledger: the refund is a 503 to retry.
    const early = await call(`${h.gateway.url}/sellers/orders/${order}/refund/`, {
      method: 'POST',
      key: seller.key,
    });
    expect(early.status).toBe(503);
    expect(await entries(order)).toEqual([]);
    const run = await reconcile();
    expect(run.healed.filter((x) => x.orderId === order)).toEqual([
      expect.objectContaining({ posted: ['payment_credited'] }),
    ]);
    await act(h, seller.key, `/sellers/orders/${order}/refund/`);
    await waitFor(
      async () => ((await entries(order)).some((e) => e.kind === 'payment_reversed') ? true : null),
      {
        what: 'the refund reversed',
      },
    );
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0, pending_amount: 0 });
  });
});

describe('what the reconciliation cannot heal', () => {
  it.each([
    {
      what: 'amounts that differ from payments',
      tamper: `update withdrawals.order_funds set fee_amount = fee_amount + 1, net_amount = net_amount - 1 where order_id = ?`,
      restore: `update withdrawals.order_funds set fee_amount = fee_amount - 1, net_amount = net_amount + 1 where order_id = ?`,
      kind: 'amounts_differ',
      detail: 'the ledger has gross 15000, fee 600, net 14400; payments gross 15000, fee 599, net 14401',
    },
    {
      what: 'money reversed for a paid charge',
      tamper: `update withdrawals.order_funds set charge_status = 'REFUNDED', position = 'REVERSED' where order_id = ?`,
      restore: `update withdrawals.order_funds set charge_status = 'PAID', position = 'AVAILABLE' where order_id = ?`,
      kind: 'contradicts',
      detail: 'the ledger holds REFUNDED v1 (money REVERSED); payments says PAID v1 (money AVAILABLE)',
    },
  ])(
    'reports $what, posts nothing, and keeps it open until it is gone',
    async ({ tamper, restore, kind, detail }) => {
      const seller = await newSeller(h);
      const order = await fund(h, seller);
      // A bug's trace in the ledger's record of the order (the journal itself is append-only).
      await db().execute(tamper, [order]);
      try {
        const run = await reconcile();
        expect(run.outcome).toBe('mismatches');
        expect(run.mismatches.filter((m) => m.orderId === order)).toEqual([
          expect.objectContaining({ subject: `order:${order}`, kind, detail }),
        ]);
        expect(await entries(order)).toHaveLength(1);
        expect(await metric('ledger_reconciliation_mismatches', { kind })).toBe(1);
        // A later run's window no longer holds the order: the finding is checked again all the same.
        const later = await reconcile();
        expect(later.mismatches.map((m) => m.orderId)).toContain(order);
      } finally {
        await db().execute(restore, [order]);
      }
      const after = await reconcile();
      expect(after.mismatches).toEqual([]);
      expect(after.outcome).toBe('clean');
      expect(await metric('ledger_reconciliation_mismatches')).toBe(0);
      expect(await entries(order)).toHaveLength(1);
    },
  );

  it('reports a balance row that drifts from its lines, and never changes it', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const drift = (by: number) =>
      db().execute(
        `update withdrawals.ledger_balances set amount = amount + ? where seller_id = ? and environment = 'test' and account = 'seller_available'`,
        [by, seller.sellerId],
      );
    const runsBefore = await metric('ledger_reconciliation_runs_total', { outcome: 'mismatches' });
    await drift(7);
    try {
      const run = await reconcile();
      expect(run.mismatches).toEqual([
        expect.objectContaining({
          kind: 'balance_drift',
          owner: { sellerId: seller.sellerId, environment: 'test' },
          account: 'seller_available',
          detail: `the balance row of seller_available holds ${SALE_NET + 7}; its journal lines sum to ${SALE_NET}`,
        }),
      ]);
      expect(await metric('ledger_reconciliation_mismatches', { kind: 'balance_drift' })).toBe(1);
      expect(await metric('ledger_reconciliation_runs_total', { outcome: 'mismatches' })).toBe(
        runsBefore + 1,
      );
      expect((await balance(h, seller.key)).available_amount).toBe(SALE_NET + 7);
    } finally {
      await drift(-7);
    }
    expect((await reconcile()).mismatches).toEqual([]);
  });
});

describe('balance rows', () => {
  // Seller ids that sort before and after every real one: the list of drifts is cut at MAX_DRIFTS in
  // their order.
  const LAST_SELLER = 'ffffffff-ffff-4fff-bfff-ffffffffffff';
  const lastSubject = `balance:${LAST_SELLER}:test:seller_available`;
  const removeRows = () =>
    db().execute(
      `delete from withdrawals.ledger_balances where seller_id = ? or seller_id::text like '00000000-0000-4000-8000-%'`,
      [LAST_SELLER],
    );

  it('keeps open a drift left off a list cut short at MAX_DRIFTS, and closes it once it is gone', async () => {
    // A row without lines is a drift too (its lines sum to 0).
    await db().execute(
      `insert into withdrawals.ledger_balances (seller_id, environment, account, amount) values (?, 'test', 'seller_available', 5)`,
      [LAST_SELLER],
    );
    try {
      expect((await reconcile()).mismatches.map((m) => m.subject)).toEqual([lastSubject]);
      // MAX_DRIFTS more, all listed before it: it is no longer among those listed, yet still drifts.
      await db().execute(
        `insert into withdrawals.ledger_balances (seller_id, environment, account, amount)
         select ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, 'test', 'seller_available', 1
           from generate_series(1, ?) g`,
        [MAX_DRIFTS],
      );
      const run = await reconcile();
      expect(run.mismatches).toHaveLength(MAX_DRIFTS + 1);
      expect(run.mismatches.map((m) => m.subject)).toContain(lastSubject);
      const [open] = await db().execute<Array<{ n: string }>>(
        `select count(*) as n from withdrawals.reconciliation_findings where subject = ?`,
        [lastSubject],
      );
      expect(Number(open?.n)).toBe(1);
      expect(await metric('ledger_reconciliation_mismatches', { kind: 'balance_drift' })).toBe(
        MAX_DRIFTS + 1,
      );
    } finally {
      await removeRows();
    }
    const after = await reconcile();
    expect(after.mismatches).toEqual([]);
    expect(await metric('ledger_reconciliation_mismatches')).toBe(0);
  });

  it('are compared by a scheduled run every RECONCILE_DRIFT_INTERVAL_MS, and by the CLI every time', async () => {
    // The CLI's run compares them, and notes when.
    expect((await reconcile()).balancesChecked).toBe(true);
    // A timer of 1 ms: due as soon as the clock has moved on from the last run's end.
    const scheduled = (driftIntervalMs: number) =>
      waitFor(
        async () => {
          const result = await reconciler({ intervalMs: 1, driftIntervalMs }).run({ trigger: 'schedule' });
          return result.ran && result.run;
        },
        { what: 'a scheduled run' },
      );
    expect((await scheduled(3_600_000)).balancesChecked).toBe(false);
    // A drift found earlier stays open between two checks.
    const seller = await newSeller(h);
    await fund(h, seller);
    await driftRow(seller, 'seller_available', 3);
    try {
      expect((await scheduled(1)).mismatches).toEqual([
        expect.objectContaining({
          kind: 'balance_drift',
          owner: { sellerId: seller.sellerId, environment: 'test' },
        }),
      ]);
      const between = await scheduled(3_600_000);
      expect(between.balancesChecked).toBe(false);
      expect(between.mismatches).toHaveLength(1);
    } finally {
      await driftRow(seller, 'seller_available', -3);
    }
    expect((await scheduled(0)).mismatches).toHaveLength(1);
    const checked = await scheduled(1);
    expect(checked.balancesChecked).toBe(true);
    expect(checked.mismatches).toEqual([]);
  });
});

describe('a report-only run', () => {
  it('reports what it would heal and what it cannot, and changes nothing; a normal run then heals', async () => {
    await reconcile();
    // A finding open from an earlier run whose row is right again: a run would close it.
    const fixed = await newSeller(h);
    await fund(h, fixed);
    await driftRow(fixed, 'seller_available', 7);
    try {
      expect((await reconcile()).mismatches).toHaveLength(1);
    } finally {
      await driftRow(fixed, 'seller_available', -7);
    }
    // A credit the ledger missed, and a drift nobody has seen yet.
    const seller = await newSeller(h);
    const order = await paidUnheard(seller);
    const drifted = await newSeller(h);
    await fund(h, drifted);
    await driftRow(drifted, 'platform_fees', 1);
    const runsBefore = await metric('ledger_reconciliation_runs_total');
    const before = await stored();
    try {
      const result = await h.system.withdrawals.reconciliation.run({ trigger: 'cli', reportOnly: true });
      if (!result.ran) throw new Error('the report-only run did not run');
      const { run } = result;
      expect(run.reportOnly).toBe(true);
      expect(run.healed).toEqual([
        {
          orderId: order,
          owner: { sellerId: seller.sellerId, environment: 'test' },
          status: 'PAID',
          version: 1,
          reason: 'missing',
          posted: ['payment_credited'],
        },
      ]);
      // The fixed row's finding would be closed; the new drift would be recorded.
      expect(run.mismatches).toEqual([
        expect.objectContaining({
          kind: 'balance_drift',
          owner: { sellerId: drifted.sellerId, environment: 'test' },
          account: 'platform_fees',
          recorded: false,
        }),
      ]);
      expect(run.outcome).toBe('mismatches');

      // The CLI's look says so, and changes nothing either.
      const look = await runCliCapture(['reconcile', '--report-only']);
      expect(look.stderr).toBe('');
      expect(look.code).toBe(1);
      expect(look.stdout).toMatch(/^Ledger reconciliation \(report only\), \S+: mismatches$/m);
      expect(look.stdout).toContain(
        'Report only (a dry run): nothing was posted, no checkpoint moved, no finding saved or closed.\n',
      );
      expect(look.stdout).toContain('Would heal: 1\n');
      expect(look.stdout).toContain(
        `  order ${order} (test, seller ${seller.sellerId}): PAID v1, missing; would post payment_credited\n`,
      );
      expect(look.stdout).toContain('Not healed: 1\n');
      expect(look.stdout).toContain(
        `  balance platform_fees (test, seller ${drifted.sellerId}): balance_drift: the balance row of platform_fees holds 600; its journal lines sum to 599 (new; not recorded, report only)\n`,
      );

      // Balance, journal, checkpoints, findings and the run counters: all as they were.
      expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });
      expect(await entries(order)).toEqual([]);
      expect(await stored()).toEqual(before);
      expect(await metric('ledger_reconciliation_runs_total')).toBe(runsBefore);
    } finally {
      await driftRow(drifted, 'platform_fees', -1);
    }

    // A run heals what the look reported, from the checkpoint the look left where it was.
    const run = await reconcile();
    expect(run.reportOnly).toBe(false);
    expect(run.healed.map((x) => x.orderId)).toEqual([order]);
    expect(run.mismatches).toEqual([]);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET });
    expect(await entries(order)).toEqual([{ kind: 'payment_credited', cause: 'reconciliation PAID v1' }]);
  });
});

describe('windows, checkpoints and turns', () => {
  it('leaves a change younger than the grace period to the next run', async () => {
    await reconcile();
    const seller = await newSeller(h);
    const order = await paidUnheard(seller);
    const [row] = await h.system.payments.runtime.orm.em
      .fork()
      .execute<Array<{ status_changed_at: Date }>>(
        `select status_changed_at from payments.transactions where order_id = ?`,
        [order],
      );
    const changedAt = new Date(row?.status_changed_at as Date).getTime();
    // Its change is 1 ms younger than the grace period when this run starts.
    const now = new Date();
    const young = reconciler({ graceMs: now.getTime() - changedAt + 1, now: () => now });
    const skipped = await young.run({ trigger: 'cli' });
    expect(skipped.ran && skipped.run.windows.find((w) => w.environment === 'test')?.to.getTime()).toBe(
      changedAt - 1,
    );
    expect(skipped.ran && skipped.run.healed).toEqual([]);
    expect((await balance(h, seller.key)).available_amount).toBe(0);
    // The next run starts where that one stopped.
    const next = await reconcile();
    expect(next.windows.find((w) => w.environment === 'test')?.from?.getTime()).toBe(changedAt - 1);
    expect(next.healed.map((x) => x.orderId)).toEqual([order]);
  });

  it('runs on its timer, and one at a time across replicas', async () => {
    const lock = new Client({ connectionString: h.system.env.DATABASE_URL });
    await lock.connect();
    try {
      await lock.query(`select pg_advisory_lock(hashtext('withdrawals.ledger_reconciliation'))`);
      expect(await reconciler().run({ trigger: 'cli' })).toEqual({ ran: false, reason: 'busy' });
      await lock.query(`select pg_advisory_unlock(hashtext('withdrawals.ledger_reconciliation'))`);
    } finally {
      await lock.end();
    }
    // A timer's run right after another's leaves it at that.
    await reconcile();
    expect(await reconciler({ intervalMs: 3_600_000 }).run({ trigger: 'schedule' })).toEqual({
      ran: false,
      reason: 'not_due',
    });

    const seller = await newSeller(h);
    const scheduled = reconciler({ intervalMs: 200 });
    scheduled.start();
    try {
      await paidUnheard(seller);
      await balanceBecomes(h, seller.key, { available_amount: SALE_NET });
    } finally {
      await scheduled.stop();
    }
  });

  it('checks a charge that moves while the run reads it against its newest state, not as a mismatch', async () => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    const client = new PaymentsClient(h.system.services.payments, callKey('withdrawals', 'payments'));
    let refunded = false;
    // Payments is read (PAID v1), then the order is refunded and the ledger applies it before the run
    // compares: the ledger is ahead of what was read.
    const racing: PaidChargesSource = {
      async paidCharges(query) {
        const page = await client.paidCharges(query);
        if (!refunded && page.results.some((c) => c.order_uuid === order)) {
          refunded = true;
          await act(h, seller.key, `/sellers/orders/${order}/refund/`);
          await waitFor(async () => (await entries(order)).some((e) => e.kind === 'payment_reversed'), {
            what: 'the reversal',
          });
        }
        return page;
      },
    };
    const result = await reconciler({}, racing).run({ trigger: 'cli', since: new Date(Date.now() - 60_000) });
    expect(refunded).toBe(true);
    expect(result.ran && result.run.mismatches).toEqual([]);
    expect(result.ran && result.run.healed).toEqual([]);
    expect(await entries(order)).toEqual([
      expect.objectContaining({ kind: 'payment_credited' }),
      expect.objectContaining({ kind: 'refund_held' }),
      expect.objectContaining({ kind: 'payment_reversed' }),
    ]);
  });

  it('stops between two pages when the service stops: the checkpoint keeps the pages done', async () => {
    await reconcile();
    const sellers = [await newSeller(h), await newSeller(h), await newSeller(h)];
    const orders: string[] = [];
    for (const seller of sellers) orders.push(await paidUnheard(seller));
    const before = await db().execute<Array<{ finished_at: Date }>>(
      `select finished_at from withdrawals.reconciliation_checkpoints where environment = 'test'`,
    );
    const client = new PaymentsClient(h.system.services.payments, callKey('withdrawals', 'payments'));
    const stops: Array<Promise<void>> = [];
    let firstChange = '';
    // The service stops while the first page with a charge is being checked.
    const source: PaidChargesSource = {
      async paidCharges(query) {
        const page = await client.paidCharges(query);
        if (stops.length === 0 && page.results[0]) {
          firstChange = page.results[0].status_changed_at;
          stops.push(reconciliation.stop());
        }
        return page;
      },
    };
    const reconciliation = reconciler({ pageSize: 1 }, source);
    const result = await reconciliation.run({ trigger: 'cli' });
    await Promise.all(stops);
    if (!result.ran) throw new Error('the run did not run');
    expect(result.run.outcome).toBe('stopped');
    expect(result.run.healed.map((x) => x.orderId)).toEqual([orders[0]]);
    expect(result.run.balancesChecked).toBe(false);
    // Up to the first order's change, and not finished (the staleness alert's time did not move).
    const after = await db().execute<Array<{ checked_before: string; finished_at: string }>>(
      `select checked_before, finished_at from withdrawals.reconciliation_checkpoints where environment = 'test'`,
    );
    expect(after.map((row) => [new Date(row.checked_before).toISOString(), row.finished_at])).toEqual([
      [new Date(firstChange).toISOString(), before[0]?.finished_at],
    ]);
    expect((await balance(h, (sellers[1] as Seller).key)).available_amount).toBe(0);

    // The next run goes on from there.
    const next = await reconcile();
    expect(next.healed.map((x) => x.orderId)).toEqual(orders.slice(1));
    for (const seller of sellers) expect((await balance(h, seller.key)).available_amount).toBe(SALE_NET);
  });

  it('stops between two pages when its lock connection is lost, since another replica may start', async () => {
    await reconcile();
    const sellers = [await newSeller(h), await newSeller(h), await newSeller(h)];
    const orders: string[] = [];
    for (const seller of sellers) orders.push(await paidUnheard(seller));
    const client = new PaymentsClient(h.system.services.payments, callKey('withdrawals', 'payments'));
    let terminated = false;
    // The server ends the lock's session while the first page with a charge is being checked.
    const source: PaidChargesSource = {
      async paidCharges(query) {
        const page = await client.paidCharges(query);
        if (!terminated && page.results[0]) {
          terminated = true;
          await db().execute(
            `select pg_terminate_backend(l.pid) from pg_locks l
              where l.locktype = 'advisory' and l.objid = hashtext('withdrawals.ledger_reconciliation')::oid
                and l.granted`,
          );
          // Another replica could take the lock now.
          await waitFor(async () => {
            const [row] = await db().execute<Array<{ free: boolean }>>(
              `select not exists (select 1 from pg_locks where locktype = 'advisory'
                and objid = hashtext('withdrawals.ledger_reconciliation')::oid and granted) as free`,
            );
            return row?.free === true;
          });
        }
        return page;
      },
    };
    const result = await reconciler({ pageSize: 1 }, source).run({ trigger: 'cli' });
    if (!result.ran) throw new Error('the run did not run');
    expect(terminated).toBe(true);
    expect(result.run.outcome).toBe('stopped');
    expect(result.run.healed.map((x) => x.orderId)).toEqual([orders[0]]);

    // The next run goes on from the checkpoint.
    const next = await reconcile();
    expect(next.healed.map((x) => x.orderId)).toEqual(orders.slice(1));
  });

  it('closes the connection holding its lock when the unlock fails, which releases the lock', async () => {
    const orm = await openDatabase({
      url: h.system.env.DATABASE_URL as string,
      schema: SCHEMA,
      entities,
      migrations,
      logger: pino({ level: 'silent' }),
      poolMax: 2,
    });
    // Whether another connection can take the run's lock (then gives it back).
    const lockFree = async () => {
      const other = new Client({ connectionString: h.system.env.DATABASE_URL });
      await other.connect();
      try {
        const { rows } = await other.query<{ locked: boolean }>(
          `select pg_try_advisory_lock(hashtext('withdrawals.ledger_reconciliation')) as locked`,
        );
        if (rows[0]?.locked)
          await other.query(`select pg_advisory_unlock(hashtext('withdrawals.ledger_reconciliation'))`);
        return rows[0]?.locked === true;
      } finally {
        await other.end();
      }
    };
    // The first run's unlock fails on a connection that stays alive (the kit's lock runs on pg's Client).
    const query = Client.prototype.query as (this: Client, ...args: unknown[]) => unknown;
    let lockHolder: number | null = null;
    const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (
      this: Client & { processID: number },
      ...args: unknown[]
    ) {
      const text = args[0];
      if (typeof text === 'string' && text.includes('pg_try_advisory_lock') && lockHolder === null)
        lockHolder = this.processID;
      if (typeof text === 'string' && text.includes('pg_advisory_unlock') && this.processID === lockHolder)
        return Promise.reject(new Error('unlock failed'));
      return query.apply(this, args);
    } as never);
    try {
      const empty: PaidChargesSource = { paidCharges: async () => ({ results: [], next_cursor: null }) };
      const run = () =>
        new LedgerReconciliation(
          orm,
          empty,
          { intervalMs: 0, driftIntervalMs: 0, graceMs: 0 },
          h.system.withdrawals.runtime.logger,
        ).run({ trigger: 'cli', checkBalances: false });
      expect((await run()).ran).toBe(true);
      expect(lockHolder).not.toBeNull();
      // Closed: its backend is gone, and with it the lock.
      await waitFor(
        async () => {
          const [row] = await db().execute<Array<{ n: number }>>(
            'select count(*)::int as n from pg_stat_activity where pid = ?',
            [lockHolder],
          );
          return row?.n === 0;
        },
        { what: "the lock's connection closed" },
      );
      spy.mockRestore();
      expect(await lockFree()).toBe(true);
      // The next run takes the lock and releases it.
      expect((await run()).ran).toBe(true);
      expect(await lockFree()).toBe(true);
    } finally {
      spy.mockRestore();
      await orm.close(true);
    }
  });
});

describe('npm run cli -- reconcile', () => {
  const cli = runCliCapture;

  it('prints what it healed and exits 0 when nothing is left unhealed', async () => {
    const seller = await newSeller(h);
    const order = await paidUnheard(seller);
    const res = await cli(['reconcile']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Ledger reconciliation, \S+: healed$/m);
    expect(res.stdout).toMatch(/^Checked test charges changed from (the beginning|\S+) to \S+\.$/m);
    expect(res.stdout).toContain('Healed: 1\n');
    expect(res.stdout).toContain(
      `  order ${order} (test, seller ${seller.sellerId}): PAID v1, missing; posted payment_credited\n`,
    );
    expect(res.stdout).toContain('Not healed: 0\n');
    expect((await balance(h, seller.key)).available_amount).toBe(SALE_NET);
  });

  it('checks again from --since, and exits 1 naming what it cannot heal', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    const seller = await newSeller(h);
    await fund(h, seller);
    const drift = (by: number) =>
      db().execute(
        `update withdrawals.ledger_balances set amount = amount + ? where seller_id = ? and account = 'platform_fees'`,
        [by, seller.sellerId],
      );
    await drift(1);
    try {
      const res = await cli(['reconcile', '--since', since]);
      expect(res.code).toBe(1);
      expect(res.stdout).toContain(`Checked test charges changed from ${since} to `);
      expect(res.stdout).toMatch(/^Charges checked: [1-9]\d*$/m);
      expect(res.stdout).toContain('Not healed: 1\n');
      expect(res.stdout).toContain(
        `  balance platform_fees (test, seller ${seller.sellerId}): balance_drift: the balance row of platform_fees holds 600; its journal lines sum to 599 (open since `,
      );
    } finally {
      await drift(-1);
    }
    expect((await cli(['reconcile'])).code).toBe(0);
  });

  it('explains bad usage with exit code 2, and changes nothing', async () => {
    for (const [args, message] of [
      [
        ['reconcile', '--since', 'yesterday'],
        /--since must be an ISO 8601 datetime with a time zone.*"yesterday"/,
      ],
      [['reconcile', '--since', '2026-12-01'], /--since must be an ISO 8601 datetime/],
      [['reconcile', '--since', '2999-01-01T00:00:00Z'], /--since must not be in the future/],
      [['reconcile', '--since'], /--since/],
      [['reconcile', '--until', '2026-12-01T00:00:00Z'], /Unknown option '--until'/],
      [['reconcile', 'now'], /usage:\n {2}cli reconcile/],
      [[], /usage:/],
    ] as const) {
      const res = await cli([...args]);
      expect({ args, code: res.code, stdout: res.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(res.stderr).toMatch(message);
    }
    const bad = await cli(['reconcile'], { PAYMENTS_URL: 'not a url' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/PAYMENTS_URL/);
  });

  it('refuses a database whose withdrawals schema is missing or behind, and creates or migrates nothing', async () => {
    const url = new URL(h.system.env.DATABASE_URL as string);
    const name = `${decodeURIComponent(url.pathname.slice(1))}_cli`;
    url.pathname = `/${name}`;
    const admin = new URL(url);
    admin.pathname = '/postgres';
    const server = new Client({ connectionString: admin.toString() });
    await server.connect();
    const inDatabase = async (sql: string) => {
      const client = new Client({ connectionString: url.toString() });
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    };
    const deployFirst = 'deploy the withdrawals service first: it migrates its own schema';
    try {
      await server.query(`drop database if exists "${name}" with (force)`);
      const none = await cli(['reconcile'], { DATABASE_URL: url.toString() });
      expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 1, stdout: '' });
      expect(none.stderr).toContain(`Database "${name}" does not exist: ${deployFirst}`);
      expect((await server.query(`select 1 from pg_database where datname = $1`, [name])).rows).toEqual([]);

      await server.query(`create database "${name}"`);
      const empty = await cli(['reconcile', '--report-only'], { DATABASE_URL: url.toString() });
      expect({ code: empty.code, stdout: empty.stdout }).toEqual({ code: 1, stdout: '' });
      expect(empty.stderr).toContain(
        `The withdrawals schema is missing from database "${name}": ${deployFirst}`,
      );
      expect(await inDatabase(`select 1 from pg_namespace where nspname = 'withdrawals'`)).toEqual([]);

      // Migrated by an older build, before the reconciliation's tables.
      const older = migrations.slice(
        0,
        migrations.findIndex((m) => m.name === 'Migration20261206LedgerReconciliation'),
      );
      const orm = await openDatabase({
        url: url.toString(),
        schema: SCHEMA,
        entities,
        migrations: older,
        logger: pino({ level: 'silent' }),
        poolMax: 2,
      });
      try {
        await migrate(orm, SCHEMA);
      } finally {
        await orm.close(true);
      }
      const behind = await cli(['reconcile'], { DATABASE_URL: url.toString() });
      expect({ code: behind.code, stdout: behind.stdout }).toEqual({ code: 1, stdout: '' });
      expect(behind.stderr).toContain(
        `The withdrawals schema of database "${name}" is behind this CLI (not applied: Migration20261206LedgerReconciliation, `,
      );
      expect(behind.stderr).toContain(deployFirst);
      expect(
        await inDatabase(`select to_regclass('withdrawals.reconciliation_checkpoints')::text as found`),
      ).toEqual([{ found: null }]);
      expect(
        (await inDatabase(`select name from withdrawals.schema_migrations`)).map(
          (r: { name: string }) => r.name,
        ),
      ).toEqual(older.map((m) => m.name));
    } finally {
      await server.query(`drop database if exists "${name}" with (force)`);
      await server.end();
    }
  });

  it('exits 1 with the reason when payments cannot be reached, and never shows the secret', async () => {
    const res = await cli(['reconcile'], { PAYMENTS_URL: 'http://127.0.0.1:1' });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^error: payments did not answer \/internal\/transactions\//);
    expect(res.stderr).not.toContain(devInternalKey('withdrawals'));
  });

  it('is what the root script runs for reconcile; everything else goes to the gateway CLI', () => {
    const target = (args: string[]) =>
      JSON.parse(
        execFileSync(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `import { cliOf } from ${JSON.stringify(pathToFileURL(path.resolve(__dirname, '../../scripts/cli.mjs')).href)};` +
              `console.log(JSON.stringify(cliOf(${JSON.stringify(args)})));`,
          ],
          { encoding: 'utf8' },
        ),
      ) as { entry: string };
    expect(target(['reconcile', '--since', '2026-12-01T00:00:00Z']).entry).toBe(
      'services/withdrawals/dist/cli.js',
    );
    expect(target(['keys', 'create', '--email', 'a@example.com']).entry).toBe('services/gateway/dist/cli.js');
    expect(target(['users', 'create']).entry).toBe('services/gateway/dist/cli.js');
  });
});
