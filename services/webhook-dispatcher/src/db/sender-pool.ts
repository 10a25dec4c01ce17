import { Pool } from 'pg';

/**
 * A plain `pg` pool for the sender's own statements (claim, release, outcomes): one claim and one
 * outcome batch at a time, plus the release of what a stopping round hands back. No settings at
 * connection time: a connection pooler in transaction mode (docs/deploy.md) would refuse or drop them.
 */
export function createSenderPool(databaseUrl: string): Pool {
  return new Pool({
    connectionString: databaseUrl,
    max: 3,
    application_name: 'webhook-dispatcher-sender',
  });
}
