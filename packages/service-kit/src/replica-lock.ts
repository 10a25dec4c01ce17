import type { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { lockConnectionConfig } from './pg-connections';

export interface ReplicaLockOptions {
  /** Names the lock; PostgreSQL hashes it (`hashtext`) into the advisory lock's key. */
  key: string;
  /** How long to keep trying while another holds the lock; 0 (the default): one try. */
  waitMs?: number;
  /** Checked between tries: true gives up waiting (a service stopping). */
  givingUp?: () => boolean;
  /** The release failed; the connection is closed instead, which releases the lock. */
  onReleaseFailed?: (err: Error) => void;
}

export type ReplicaLocked<T> = { locked: true; value: T } | { locked: false };

// Between two tries for a lock another holds.
const RETRY_MS = 500;

/**
 * Runs `work` holding a connection-level advisory lock (PostgreSQL calls it session level), so one
 * replica at a time runs it (a periodic job's run: docs/finance.md, "Reconciliation"). The lock is held
 * on a connection of its own, opened for it with the ORM's connection settings (to the direct lock
 * address, DATABASE_LOCK_URL, when the ORM's goes through a pooler) and closed after: the
 * lock ends with that connection, so a crash or a lost connection releases it, and a connection that may
 * still hold it never goes back to a pool. It is one connection beside the ORM's pool while a run lasts.
 * `{ locked: false }` when another held it for `waitMs`.
 *
 * `lost` is aborted the moment that connection ends (the server ended the session, a network fault):
 * the lock is gone then, another replica may take it, and the work should stop at its next step.
 */
export async function withReplicaLock<T>(
  orm: MikroORM,
  options: ReplicaLockOptions,
  work: (lost: AbortSignal) => Promise<T>,
): Promise<ReplicaLocked<T>> {
  const client = new Client(lockConnectionConfig(orm));
  const lost = new AbortController();
  // A connection lost while idle reports here, not to a query; its lock is gone with it, and the next
  // statement (the release) fails and says so.
  client.on('error', () => lost.abort());
  client.on('end', () => lost.abort());
  try {
    await client.connect();
    if (!(await tryLock(client, options))) return { locked: false };
    try {
      return { locked: true, value: await work(lost.signal) };
    } finally {
      await client.query('select pg_advisory_unlock(hashtext($1))', [options.key]).catch((err: unknown) => {
        options.onReleaseFailed?.(err instanceof Error ? err : new Error(String(err)));
      });
    }
  } finally {
    // Also when the lock was asked for and the answer lost: it may have been granted all the same.
    await client.end().catch(() => undefined);
  }
}

async function tryLock(client: Client, options: ReplicaLockOptions): Promise<boolean> {
  const deadline = Date.now() + (options.waitMs ?? 0);
  for (;;) {
    const { rows } = await client.query<{ locked: boolean }>(
      'select pg_try_advisory_lock(hashtext($1)) as locked',
      [options.key],
    );
    if (rows[0]?.locked === true) return true;
    if (Date.now() >= deadline || options.givingUp?.() === true) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MS, deadline - Date.now())));
  }
}
