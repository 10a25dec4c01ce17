import type { Client } from 'pg';
import { withReplicaLock } from '@seller-api/service-kit';
import { useDatabase, withClient } from '../support/database';

/*
 * The kit's lock across replicas (replica-lock.ts): one holder at a time, held on a connection of its
 * own that ends with the work, so a lost connection or a crash releases it.
 */
const SCHEMA = 'kit_replica_lock_test';
const KEY = `kit.replica_lock_test.${process.pid}`;
const db = useDatabase({ schema: SCHEMA, poolMax: 1 });

const other = <T>(work: (client: Client) => Promise<T>): Promise<T> =>
  withClient(db.env.DATABASE_URL as string, work);
const tryLock = (client: Client) =>
  client
    .query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [KEY])
    .then((r) => r.rows[0]?.locked === true);

test('runs the work holding the lock, on a connection beside the pool, and releases it after', async () => {
  const held = await withReplicaLock(db.orm, { key: KEY }, async () => {
    // The pool's one connection stays free for the work's own statements.
    await db.orm.em.getConnection().execute('select 1');
    return other(tryLock);
  });
  expect(held).toEqual({ locked: true, value: false });
  expect(await other(async (c) => (await tryLock(c)) && (await c.query('select 1'), true))).toBe(true);
});

test('answers locked: false while another holds it, after trying for waitMs', async () => {
  await other(async (c) => {
    expect(await tryLock(c)).toBe(true);
    const started = Date.now();
    const work = jest.fn(async () => 1);
    expect(await withReplicaLock(db.orm, { key: KEY, waitMs: 300 }, work)).toEqual({ locked: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(work).not.toHaveBeenCalled();
    // Giving up stops the wait at once.
    const quick = Date.now();
    expect(await withReplicaLock(db.orm, { key: KEY, waitMs: 10_000, givingUp: () => true }, work)).toEqual({
      locked: false,
    });
    expect(Date.now() - quick).toBeLessThan(2_000);
  });
});

test('a connection lost during the work releases the lock, tells the work, and reports the release', async () => {
  const failures: string[] = [];
  const result = await withReplicaLock(
    db.orm,
    { key: KEY, onReleaseFailed: (err) => failures.push(err.message) },
    async (lost) => {
      expect(lost.aborted).toBe(false);
      // The lock's connection is the one other than ours holding the advisory lock on KEY.
      await other(async (c) => {
        await c.query(
          `select pg_terminate_backend(l.pid) from pg_locks l
            where l.locktype = 'advisory' and l.objid = hashtext($1)::oid and l.granted`,
          [KEY],
        );
      });
      await new Promise<void>((resolve) =>
        lost.aborted ? resolve() : lost.addEventListener('abort', () => resolve()),
      );
      return 'done';
    },
  );
  expect(result).toEqual({ locked: true, value: 'done' });
  expect(failures).toHaveLength(1);
  expect(await other(tryLock)).toBe(true);
});
