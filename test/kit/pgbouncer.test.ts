import { randomUUID } from 'node:crypto';
import { EntitySchema } from '@mikro-orm/core';
import { Migration } from '@mikro-orm/migrations';
import type { Client } from 'pg';
import {
  createLogger,
  databaseEnv,
  databaseOptionsOf,
  insertTogether,
  loadConfig,
  migrate,
  openDatabase,
  rowsOf,
  sqlOf,
  withReplicaLock,
  type DatabaseOptions,
  type MikroORM,
} from '@seller-api/service-kit';
import { useDatabase, withClient } from '../support/database';
import { usePgBouncer } from '../support/pgbouncer';
import { waitFor } from '../support/wait';

/*
 * The services behind PgBouncer in transaction mode (docs/deploy.md, "PgBouncer"), with the PgBouncer
 * Debian ships (1.18, which keeps no prepared statement across server connections): the kit's
 * statements sent unnamed (DATABASE_PREPARED_STATEMENTS=false) on fewer server connections than
 * clients, the session-level locks on the direct address (DATABASE_LOCK_URL), and transaction-scoped
 * locks through PgBouncer.
 */
const SCHEMA = 'kit_pgbouncer_test';
const CLIENTS = 10;
const SERVERS = 2;

class Init extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create schema if not exists ${SCHEMA}`);
    this.addSql(`create table ${SCHEMA}.ticks (id uuid primary key, client int not null, n int not null)`);
    this.addSql(`create table ${SCHEMA}.counters (name text primary key, value int not null)`);
    this.addSql(`create table ${SCHEMA}.migration_runs (id serial primary key, pid int not null)`);
  }
}

// Slow enough that two replicas migrating at once without a lock would both apply it.
class Slow extends Migration {
  override async up(): Promise<void> {
    this.addSql(`insert into ${SCHEMA}.migration_runs (pid) values (pg_backend_pid())`);
    this.addSql('select pg_sleep(0.5)');
  }
}

interface Tick {
  id: string;
  client: number;
  n: number;
}
const TickSchema = new EntitySchema<Tick>({
  name: 'Tick',
  tableName: 'ticks',
  properties: {
    id: { type: 'uuid', primary: true },
    client: { type: 'integer' },
    n: { type: 'integer' },
  },
});

const db = useDatabase({
  schema: SCHEMA,
  fresh: true,
  entities: [TickSchema],
  migrations: [{ name: 'Init', class: Init }],
});
const bouncer = usePgBouncer({ poolSize: SERVERS });
// One server connection: a session lock taken through it is on the session every client gets.
const single = usePgBouncer({ poolSize: 1 });

const opened: MikroORM[] = [];
afterAll(async () => {
  await Promise.all(opened.map((orm) => orm.close(true)));
});

/**
 * A replica as a service opens its database: its environment read by the kit's configuration, its
 * DATABASE_URL through `through` (PgBouncer), with `env` on top.
 */
async function replica(
  through: { via(url: string): string },
  env: Record<string, string> = {},
  migrations: DatabaseOptions['migrations'] = [{ name: 'Init', class: Init }],
): Promise<MikroORM> {
  const direct = db.env.DATABASE_URL as string;
  const config = loadConfig(databaseEnv, { DATABASE_URL: through.via(direct), ...env });
  const orm = await openDatabase({
    ...databaseOptionsOf(config),
    schema: SCHEMA,
    entities: [TickSchema],
    migrations,
    logger: createLogger('test-pgbouncer', 'silent'),
    poolMax: CLIENTS,
  });
  opened.push(orm);
  return orm;
}

const direct = <T>(work: (client: Client) => Promise<T>): Promise<T> =>
  withClient(db.env.DATABASE_URL as string, work);

/** The PostgreSQL process holding the advisory lock `key` (hashtext), if any. */
const lockHolder = (key: string) =>
  direct(async (c) => {
    const { rows } = await c.query<{ pid: number }>(
      `select pid from pg_locks where locktype = 'advisory' and objid = hashtext($1)::oid and granted`,
      [key],
    );
    return rows[0]?.pid;
  });

/** `rounds` of `run` on CLIENTS clients at once, each statement long enough that they all overlap. */
const onAllClients = (rounds: number, run: (client: number, round: number) => Promise<unknown>) =>
  Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let round = 0; round < rounds; round++) await run(client, round);
    }),
  );

test('with prepared statements on, the kit fails through PgBouncer 1.18: it keeps them per server connection', async () => {
  // The other PgBouncer: the prepared statements this leaves on its server connection stay there.
  const sql = sqlOf(await replica(single));
  const text = `select $1::int as n, pg_sleep(0.02) /* ${randomUUID()} */`;
  // Ten clients preparing one name on one server connection: the second meets it there already.
  await expect(onAllClients(3, (client) => sql.query(text, [client]))).rejects.toThrow(
    /prepared statement "sql_\w+" already exists/,
  );
});

test("with DATABASE_PREPARED_STATEMENTS=false the kit's statements run on fewer server connections than clients", async () => {
  const orm = await replica(bouncer, { DATABASE_PREPARED_STATEMENTS: 'false' });
  const sql = sqlOf(orm);
  const counter = randomUUID();
  await sql.query(`insert into ${SCHEMA}.counters (name, value) values ($1, 0)`, [counter]);
  const pids = new Set<number>();
  const ROUNDS = 6;
  await onAllClients(ROUNDS, async (client, n) => {
    const [row] = await sql.query<{ pid: number }>('select pg_backend_pid() as pid, pg_sleep(0.01)');
    if (row) pids.add(row.pid);
    await insertTogether(sql, [rowsOf(TickSchema, [{ id: randomUUID(), client, n }])]);
    await sql.transaction(`select 1`, async (_, query) => {
      const [locked] = await query<{ value: number }>(
        `select value from ${SCHEMA}.counters where name = $1 for update`,
        [counter],
      );
      await query(`update ${SCHEMA}.counters set value = $2 where name = $1`, [
        counter,
        (locked?.value ?? 0) + 1,
      ]);
    });
    const [seen] = await sql.query<{ n: number }>(
      `select count(*)::int as n from ${SCHEMA}.ticks where client = $1 and n <= $2`,
      [client, n],
    );
    expect(seen?.n).toBe(n + 1);
  });
  const pool = await orm.em.getConnection().getNativeClient();
  expect(pool.totalCount).toBe(CLIENTS);
  expect(pids.size).toBeGreaterThan(0);
  expect(pids.size).toBeLessThanOrEqual(SERVERS);
  const [total] = await sql.query<{ n: number }>(
    `select value as n from ${SCHEMA}.counters where name = $1`,
    [counter],
  );
  expect(total?.n).toBe(CLIENTS * ROUNDS);
  expect(await sql.query<{ name: string }>('select name from pg_prepared_statements')).toEqual([]);
});

test('migrate() from two replicas through PgBouncer applies a migration once, its lock on DATABASE_LOCK_URL', async () => {
  const env = { DATABASE_PREPARED_STATEMENTS: 'false', DATABASE_LOCK_URL: db.env.DATABASE_URL as string };
  const migrations = [
    { name: 'Init', class: Init },
    { name: 'Slow', class: Slow },
  ];
  const replicas = [await replica(bouncer, env, migrations), await replica(bouncer, env, migrations)];
  const lockKey = `migrate:${SCHEMA}`;
  const running = Promise.all(replicas.map((orm) => migrate(orm, SCHEMA)));
  // While one migrates, its lock is held on a connection that is none of PgBouncer's.
  const holder = await waitFor(() => lockHolder(lockKey), { what: 'the migration lock' });
  expect(await bouncer.serverPids()).not.toContain(holder);
  const applied = await running;
  expect(applied.map((names) => names.join()).sort()).toEqual(['', 'Slow']);
  const runs = await direct((c) => c.query(`select count(*)::int as n from ${SCHEMA}.migration_runs`));
  expect(runs.rows).toEqual([{ n: 1 }]);
});

test('withReplicaLock with DATABASE_LOCK_URL excludes another replica whose DATABASE_URL goes through PgBouncer', async () => {
  const env = { DATABASE_PREPARED_STATEMENTS: 'false', DATABASE_LOCK_URL: db.env.DATABASE_URL as string };
  const [a, b] = [await replica(bouncer, env), await replica(bouncer, env)] as [MikroORM, MikroORM];
  const key = `kit.pgbouncer_test.${randomUUID()}`;
  let inside = 0;
  let most = 0;
  const holders: Array<number | undefined> = [];
  const run = (orm: MikroORM) =>
    withReplicaLock(orm, { key, waitMs: 10_000 }, async () => {
      most = Math.max(most, ++inside);
      holders.push(await lockHolder(key));
      // The work's own statements go through PgBouncer.
      await sqlOf(orm).query('select pg_sleep(0.1)');
      inside--;
    });
  const results = await Promise.all([run(a), run(b), run(a), run(b)]);
  expect(results.every((r) => r.locked)).toBe(true);
  expect(most).toBe(1);
  const servers = await bouncer.serverPids();
  expect(holders.filter((pid) => pid === undefined || servers.includes(pid))).toEqual([]);

  // While one holds it, the other's try is refused; through PgBouncer instead, the other's try lands
  // on the session that holds it and is granted as well.
  const nested = async (lockEnv: Record<string, string>, through: { via(url: string): string }) => {
    const [first, second] = [await replica(through, lockEnv), await replica(through, lockEnv)];
    const held = await withReplicaLock(first, { key }, () =>
      withReplicaLock(second, { key }, async () => 'both'),
    );
    return held.locked ? held.value : null;
  };
  expect(await nested(env, single)).toEqual({ locked: false });
  expect(await nested({ DATABASE_PREPARED_STATEMENTS: 'false' }, single)).toEqual({
    locked: true,
    value: 'both',
  });
});

test('transaction-scoped advisory locks through PgBouncer exclude each other', async () => {
  const sql = sqlOf(await replica(bouncer, { DATABASE_PREPARED_STATEMENTS: 'false' }));
  const key = `kit.pgbouncer_test.${randomUUID()}`;
  const events: string[] = [];
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const locked = (name: string) =>
    sql.transaction('select 1', async (_, query) => {
      await query('select pg_advisory_xact_lock(hashtext($1))', [key]);
      events.push(`${name} locked`);
      if (name === 'first') await gate;
      events.push(`${name} commits`);
    });
  const first = locked('first');
  await waitFor(() => events.includes('first locked'), { what: 'the first lock' });
  const second = locked('second');
  // The second waits in PostgreSQL, on the other server connection.
  await waitFor(
    () =>
      direct(async (c) => {
        const { rows } = await c.query(
          `select 1 from pg_locks where locktype = 'advisory' and objid = hashtext($1)::oid and not granted`,
          [key],
        );
        return rows.length === 1;
      }),
    { what: 'the second lock to wait' },
  );
  expect(events).toEqual(['first locked']);
  release();
  await Promise.all([first, second]);
  expect(events).toEqual(['first locked', 'first commits', 'second locked', 'second commits']);
});
