import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import { ensureDatabase, migrate, openDatabase } from '@seller-api/service-kit';
import { entities } from '../../services/withdrawals/src/db/entities';
import { SCHEMA, migrations } from '../../services/withdrawals/src/db/migrations';
import { testEnv } from '../support/env';
import { waitFor } from '../support/wait';

/*
 * Migration20261205LedgerBalances on a database that already has a journal: it fills the balance rows
 * from the lines it finds, and no line is lost across it, neither one inserted by a transaction still
 * open when it starts nor one inserted while it runs.
 */
const env = testEnv();
const url = env.DATABASE_URL as string;
const BALANCES = 'Migration20261205LedgerBalances';
const beforeBalances = migrations.slice(
  0,
  migrations.findIndex((m) => m.name === BALANCES),
);
let admin: Client;

beforeAll(async () => {
  await ensureDatabase(url);
  admin = new Client({ connectionString: url });
  await admin.connect();
});
afterAll(() => admin?.end());

async function migrateWith(list: typeof migrations): Promise<string[]> {
  const orm = await openDatabase({
    url,
    schema: SCHEMA,
    entities,
    migrations: list,
    logger: pino({ level: 'silent' }),
    poolMax: 2,
  });
  try {
    return await migrate(orm, SCHEMA);
  } finally {
    await orm.close();
  }
}

/** The service's schema as it was before the balance rows. */
async function schemaBeforeBalances() {
  await admin.query(`drop schema if exists ${SCHEMA} cascade`);
  expect(await migrateWith(beforeBalances)).toEqual(beforeBalances.map((m) => m.name));
}

type Lines = Array<[account: string, amount: number]>;
const credit = (gross: number, fee: number): Lines => [
  ['psp_settlement', -gross],
  ['platform_fees', fee],
  ['seller_available', gross - fee],
];

/** Inserts one entry and its lines on `client`, in whatever transaction it has open. */
async function insertEntry(client: Client, sellerId: string, environment: string, lines: Lines) {
  const id = randomUUID();
  await client.query(
    `insert into withdrawals.ledger_entries (id, seller_id, environment, kind, order_id)
     values ($1, $2, $3, 'payment_credited', gen_random_uuid())`,
    [id, sellerId, environment],
  );
  await client.query(
    `insert into withdrawals.ledger_lines (entry_id, seller_id, environment, account, amount)
     select $1, $2, $3, account, amount from unnest($4::text[], $5::bigint[]) as l(account, amount)`,
    [id, sellerId, environment, lines.map((l) => l[0]), lines.map((l) => l[1])],
  );
}

async function committedEntry(sellerId: string, environment: string, lines: Lines) {
  await admin.query('begin');
  await insertEntry(admin, sellerId, environment, lines);
  await admin.query('commit');
}

/** Every (seller, environment, account) whose balance row differs from the sum of its lines. */
async function drift() {
  const { rows } = await admin.query(
    `with l as (select seller_id, environment, account, sum(amount)::bigint as amount
                  from withdrawals.ledger_lines group by seller_id, environment, account)
     select seller_id, environment, account, b.amount as row_amount, l.amount as lines_amount
       from withdrawals.ledger_balances b full join l using (seller_id, environment, account)
      where b.amount is distinct from l.amount`,
  );
  return rows;
}

async function rowsOf(sellerId: string, environment: string) {
  const { rows } = await admin.query<{ account: string; amount: string }>(
    `select account, amount from withdrawals.ledger_balances where seller_id = $1 and environment = $2`,
    [sellerId, environment],
  );
  return Object.fromEntries(rows.map((r) => [r.account, Number(r.amount)]));
}

describe('the balance rows migration', () => {
  it('fills the rows from the lines that were there before it ran', async () => {
    await schemaBeforeBalances();
    const [big, small] = [randomUUID(), randomUUID()];
    // 300 credits for one seller in one statement pair, as a journal that grew for a while.
    await admin.query('begin');
    await admin.query(
      `with e as (
         insert into withdrawals.ledger_entries (id, seller_id, environment, kind, order_id)
         select gen_random_uuid(), $1, 'test', 'payment_credited', gen_random_uuid() from generate_series(1, 300)
         returning id)
       insert into withdrawals.ledger_lines (entry_id, seller_id, environment, account, amount)
       select e.id, $1, 'test', l.account, l.amount from e
        cross join (values ('psp_settlement', -15000), ('platform_fees', 599), ('seller_available', 14401)) l(account, amount)`,
      [big],
    );
    await admin.query('commit');
    await committedEntry(small, 'test', credit(10000, 399));
    await committedEntry(small, 'test', [
      ['seller_available', -9601],
      ['seller_held_med', 9601],
    ]);
    await committedEntry(small, 'test', [
      ['seller_held_med', -9601],
      ['seller_available', 9601],
    ]);
    await committedEntry(small, 'live', credit(5000, 200));

    const applied = await migrateWith(migrations);
    expect(applied[0]).toBe(BALANCES);
    expect(await drift()).toEqual([]);
    expect(await rowsOf(big, 'test')).toEqual({
      psp_settlement: -300 * 15000,
      platform_fees: 300 * 599,
      seller_available: 300 * 14401,
    });
    // An account whose lines went back to zero has a row of zero; environments stay apart.
    expect(await rowsOf(small, 'test')).toEqual({
      psp_settlement: -10000,
      platform_fees: 399,
      seller_available: 9601,
      seller_held_med: 0,
    });
    expect(await rowsOf(small, 'live')).toEqual({
      psp_settlement: -5000,
      platform_fees: 200,
      seller_available: 4800,
    });

    // From then on, the trigger keeps them.
    await committedEntry(small, 'live', credit(5000, 200));
    expect(await drift()).toEqual([]);
    expect((await rowsOf(small, 'live')).seller_available).toBe(9600);
  });

  it('loses no line inserted by a transaction open when it starts, or inserted while it runs', async () => {
    await schemaBeforeBalances();
    const seller = randomUUID();
    await committedEntry(seller, 'test', credit(10000, 399));
    const early = new Client({ connectionString: url, application_name: 'early_writer' });
    const late = new Client({ connectionString: url, application_name: 'late_writer' });
    await early.connect();
    await late.connect();
    try {
      // A posting in flight: its lines are inserted, its transaction not committed yet.
      await early.query('begin');
      await insertEntry(early, seller, 'test', credit(20000, 798));
      const migrating = migrateWith(migrations);
      // (On its first statement; a migration without that lock would wait at \`create trigger\`, after
      // its backfill, and lose the lines.)
      await waitFor(() => waitingOnLock('withdrawals'), { what: 'the migration waiting' });
      // A posting that starts while the migration waits queues behind it.
      await late.query('begin');
      const lateInsert = insertEntry(late, seller, 'test', credit(30000, 1197));
      await waitFor(() => waitingOnLock('late_writer', 'insert into withdrawals.ledger_lines'), {
        what: 'the late writer waiting',
      });
      await early.query('commit');
      expect((await migrating)[0]).toBe(BALANCES);
      await lateInsert;
      await late.query('commit');
    } finally {
      await early.end();
      await late.end();
    }
    expect(await drift()).toEqual([]);
    expect(await rowsOf(seller, 'test')).toEqual({
      psp_settlement: -60000,
      platform_fees: 399 + 798 + 1197,
      seller_available: 60000 - (399 + 798 + 1197),
    });
  });
});

/** Whether a connection of `application` is waiting on a lock (in a statement that starts with `query`). */
async function waitingOnLock(application: string, query = ''): Promise<boolean> {
  const { rows } = await admin.query(
    `select 1 from pg_stat_activity
      where datname = current_database() and application_name = $1
        and wait_event_type = 'Lock' and ltrim(query) like $2 || '%'`,
    [application, query],
  );
  return rows.length > 0;
}
