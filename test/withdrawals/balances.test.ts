import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import type { Environment } from '@seller-api/contracts';
import { ensureDatabase, sqlOf, type MikroORM } from '@seller-api/service-kit';
import { entities } from '../../services/withdrawals/src/db/entities';
import { SCHEMA, migrations } from '../../services/withdrawals/src/db/migrations';
import { accountTotals } from '../../services/withdrawals/src/db/balances';
import type { FundsOwner } from '../../services/withdrawals/src/domain/balance';
import { recordOrderMessage } from '../../services/withdrawals/src/db/order-funds';
import type { OrderMessage } from '../../services/withdrawals/src/domain/order-funds';
import {
  claimPayouts,
  completePayout,
  decideWithdrawal,
  requestWithdrawal,
} from '../../services/withdrawals/src/db/withdrawals';
import { openMigrated } from '../support/database';
import { testEnv } from '../support/env';

/*
 * The balance rows (withdrawals.ledger_balances) against the journal they summarise, on the real
 * database: whatever posts lines, one at a time or concurrently, through the seller's lock or not,
 * every row equals the sum of its account's lines, and a transaction the journal refuses leaves them
 * as they were. The postings are the service's own transactions (domain/), without HTTP or RabbitMQ.
 */
const env = testEnv();
let orm: MikroORM;

beforeAll(async () => {
  // A fresh schema each run: the payout claim below takes any approved withdrawal in the database.
  await ensureDatabase(env.DATABASE_URL as string);
  const client = new Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  await client.query(`drop schema if exists ${SCHEMA} cascade`);
  await client.end();
  orm = await openMigrated(env, {
    schema: SCHEMA,
    entities,
    migrations,
    logger: pino({ level: 'silent' }),
    poolMax: 12,
  });
});
afterAll(() => orm?.close());

const db = () => orm.em.fork();

const SALE = { gross: 15000, fee: 599, net: 14401 };

/** Balance rows that differ from the sums of their lines, for these sellers (either side missing too). */
async function drift(sellerIds: string[]) {
  return db().execute<Array<Record<string, string | null>>>(
    `with b as (select seller_id, environment, account, amount from withdrawals.ledger_balances
                 where seller_id = any(?::uuid[])),
          l as (select seller_id, environment, account, sum(amount)::bigint as amount from withdrawals.ledger_lines
                 where seller_id = any(?::uuid[]) group by seller_id, environment, account)
     select seller_id, environment, account, b.amount as row_amount, l.amount as lines_amount
       from b full join l using (seller_id, environment, account)
      where b.amount is distinct from l.amount`,
    [`{${sellerIds.join(',')}}`, `{${sellerIds.join(',')}}`],
  );
}

async function balanceRows(owner: FundsOwner) {
  const rows = await db().execute<Array<{ account: string; amount: string }>>(
    `select account, amount from withdrawals.ledger_balances where seller_id = ? and environment = ? order by account`,
    [owner.sellerId, owner.environment],
  );
  return Object.fromEntries(rows.map((r) => [r.account, Number(r.amount)]));
}

/** One payments message applied as the ledger consumer applies it (its own transaction). */
function apply(owner: FundsOwner, orderId: string, message: OrderMessage) {
  return db().transactional((tx) => recordOrderMessage(tx, sqlOf(orm), owner, orderId, message, 'test'));
}

const paid = (owner: FundsOwner, orderId: string) =>
  apply(owner, orderId, { kind: 'payment', status: 'PAID', amounts: SALE });
const charge = (owner: FundsOwner, orderId: string, status: 'MED' | 'PAID' | 'REFUNDED', version: number) =>
  apply(owner, orderId, { kind: 'charge', status, version });

function newOwner(environment: Environment = 'test'): FundsOwner {
  return { sellerId: randomUUID(), environment };
}

const scopeOf = (owner: FundsOwner) => ({ ...owner, sellerName: 'Loja' });
const PIX = { pix_key: 'seller@example.com', pix_key_type: 'email' };
const payoutRules = { autoApproveBelow: 0, retryAfterMs: 60_000 };

async function withdraw(owner: FundsOwner, amount: number) {
  return requestWithdrawal(db(), sqlOf(orm), scopeOf(owner), { amount, ...PIX }, { minAmount: 100 });
}

/** An approved withdrawal handed to the PSP and answered `outcome`. */
async function payOut(owner: FundsOwner, amount: number, outcome: 'paid' | 'failed') {
  const w = await withdraw(owner, amount);
  await decideWithdrawal(db(), sqlOf(orm), w.id, { action: 'approve' }, 'operator');
  const claimed = (await claimPayouts(db(), sqlOf(orm), payoutRules)).find((c) => c.id === w.id);
  if (!claimed) throw new Error(`withdrawal ${w.id} was not claimed`);
  const done = await completePayout(
    db(),
    sqlOf(orm),
    claimed,
    outcome === 'paid' ? { status: 'paid', reference: 'E2E' } : { status: 'failed', reason: 'refused' },
  );
  expect(done?.status).toBe(outcome === 'paid' ? 'PAID' : 'FAILED');
}

describe('balance rows', () => {
  it('equal the sums of their lines after postings of every kind', async () => {
    const owner = newOwner();
    const live: FundsOwner = { sellerId: owner.sellerId, environment: 'live' };
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];

    await paid(owner, a); // payment_credited
    await paid(owner, b);
    await charge(owner, b, 'MED', 2); // med_held
    await charge(owner, b, 'PAID', 3); // med_released
    const all = await withdraw(owner, 2 * SALE.net); // withdrawal_held: available 0
    await charge(owner, a, 'REFUNDED', 2); // payment_reversed into debt
    expect(await balanceRows(owner)).toMatchObject({ seller_available: 0, seller_debt: -SALE.net });
    await decideWithdrawal(db(), sqlOf(orm), all.id, { action: 'deny', reason: null }, 'operator'); // released, repays
    await payOut(owner, 10000, 'paid'); // withdrawal_paid
    await payOut(owner, SALE.net - 10000, 'failed'); // withdrawal_released
    await paid(owner, c);
    await charge(owner, c, 'MED', 2);
    await charge(owner, c, 'REFUNDED', 3); // payment_reversed from the hold
    await paid(live, randomUUID()); // the same seller's other environment

    const kinds = await db().execute<Array<{ kind: string }>>(
      `select distinct kind from withdrawals.ledger_entries where seller_id = ? order by kind`,
      [owner.sellerId],
    );
    expect(kinds.map((k) => k.kind)).toEqual([
      'med_held',
      'med_released',
      'payment_credited',
      'payment_reversed',
      'withdrawal_held',
      'withdrawal_paid',
      'withdrawal_released',
    ]);
    expect(await drift([owner.sellerId])).toEqual([]);
    // What the rows hold, account by account (an account that went back to zero keeps its row).
    expect(await balanceRows(owner)).toEqual({
      psp_settlement: -SALE.gross,
      platform_fees: SALE.fee,
      seller_available: SALE.net - 10000,
      seller_debt: 0,
      seller_held_med: 0,
      seller_paid_out: 10000,
      seller_withdrawals_pending: 0,
    });
    expect(await balanceRows(live)).toEqual({
      psp_settlement: -SALE.gross,
      platform_fees: SALE.fee,
      seller_available: SALE.net,
    });
    expect(await accountTotals(sqlOf(orm), owner)).toEqual({
      psp_settlement: -SALE.gross,
      platform_fees: SALE.fee,
      seller_available: SALE.net - 10000,
      seller_debt: 0,
      seller_held_med: 0,
      seller_held_refund: 0,
      seller_paid_out: 10000,
      seller_withdrawals_pending: 0,
    });
  });

  it('equal the sums after concurrent postings for one seller from several connections', async () => {
    const owner = newOwner();
    const workers = 8;
    const perWorker = 6;
    // Each worker its own connection (a transaction holds one); all of them credit the same seller.
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let i = 0; i < perWorker; i += 1) await paid(owner, randomUUID());
      }),
    );
    // Withdrawals and MED holds of that seller racing the credits of another batch.
    const orders = Array.from({ length: workers }, () => randomUUID());
    await Promise.all(orders.map((order) => paid(owner, order)));
    await Promise.all([
      ...orders.map((order) => charge(owner, order, 'MED', 2)),
      ...Array.from({ length: workers }, () => withdraw(owner, 1000)),
      ...Array.from({ length: workers }, () => paid(owner, randomUUID())),
    ]);

    expect(await drift([owner.sellerId])).toEqual([]);
    const credited = (workers * perWorker + 2 * workers) * SALE.net;
    expect(await balanceRows(owner)).toMatchObject({
      seller_available: credited - workers * SALE.net - workers * 1000,
      seller_held_med: workers * SALE.net,
      seller_withdrawals_pending: workers * 1000,
      platform_fees: (workers * perWorker + 2 * workers) * SALE.fee,
    });
  });

  it('equal the sums when lines are inserted concurrently without the seller lock (any build)', async () => {
    const owners = [newOwner(), newOwner()];
    // Raw balanced entries straight into the journal, as a build that knows nothing of the balance
    // rows would write them: 3 lines in one statement, 10 connections at once, two sellers.
    await Promise.all(
      Array.from({ length: 10 }, (_, worker) =>
        (async () => {
          for (let i = 0; i < 10; i += 1) {
            const owner = owners[(worker + i) % 2] as FundsOwner;
            await db().transactional(async (tx) => {
              const id = randomUUID();
              await tx.execute(
                `insert into withdrawals.ledger_entries (id, seller_id, environment, kind, order_id)
                 values (?, ?, ?, 'payment_credited', ?)`,
                [id, owner.sellerId, owner.environment, randomUUID()],
              );
              await tx.execute(
                `insert into withdrawals.ledger_lines (entry_id, seller_id, environment, account, amount)
                 values (?, ?, ?, 'psp_settlement', ?), (?, ?, ?, 'platform_fees', ?), (?, ?, ?, 'seller_available', ?)`,
                [
                  ...[id, owner.sellerId, owner.environment, -SALE.gross],
                  ...[id, owner.sellerId, owner.environment, SALE.fee],
                  ...[id, owner.sellerId, owner.environment, SALE.net],
                ],
              );
            });
          }
        })(),
      ),
    );
    expect(await drift(owners.map((o) => o.sellerId))).toEqual([]);
    for (const owner of owners) {
      expect(await balanceRows(owner)).toEqual({
        psp_settlement: -50 * SALE.gross,
        platform_fees: 50 * SALE.fee,
        seller_available: 50 * SALE.net,
      });
    }
  });

  it('are left as they were when the database refuses an unbalanced entry', async () => {
    const owner = newOwner();
    const order = randomUUID();
    await paid(owner, order);
    const before = await balanceRows(owner);
    const entryId = randomUUID();
    let inside: Record<string, number> = {};
    const unbalanced = db().transactional(async (tx) => {
      await tx.execute(
        `insert into withdrawals.ledger_entries (id, seller_id, environment, kind, order_id) values (?, ?, 'test', 'payment_credited', ?)`,
        [entryId, owner.sellerId, order],
      );
      await tx.execute(
        `insert into withdrawals.ledger_lines (entry_id, seller_id, environment, account, amount)
         values (?, ?, 'test', 'seller_available', 100), (?, ?, 'test', 'seller_held_med', 50)`,
        [entryId, owner.sellerId, entryId, owner.sellerId],
      );
      // The trigger moved the rows in the transaction (a new one for the held account)...
      const rows = await tx.execute<Array<{ account: string; amount: string }>>(
        `select account, amount from withdrawals.ledger_balances where seller_id = ?`,
        [owner.sellerId],
      );
      inside = Object.fromEntries(rows.map((r) => [r.account, Number(r.amount)]));
    });
    await expect(unbalanced).rejects.toThrow(/does not balance/);
    expect(inside).toMatchObject({ seller_available: SALE.net + 100, seller_held_med: 50 });
    // ...and the refusal at commit rolled them back with the lines.
    expect(await balanceRows(owner)).toEqual(before);
    expect(before).toEqual({
      psp_settlement: -SALE.gross,
      platform_fees: SALE.fee,
      seller_available: SALE.net,
    });
    expect(await drift([owner.sellerId])).toEqual([]);
  });
});
