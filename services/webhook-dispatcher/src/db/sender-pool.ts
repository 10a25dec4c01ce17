import { Pool } from 'pg';

/**
 * The sender's connections' settings. Every statement of the sender finds its rows by key or reads the
 * due index in order, and each is prepared once per connection and keeps the plan PostgreSQL settles on
 * after five runs for the connection's life. Planned while `webhooks.deliveries` was small (a new
 * deployment, the first orders), the claim's update joined its rows by scanning the whole table, at
 * every claim, as the table grew without end (a third of PostgreSQL's time in a drain of 40,000,
 * bench/README.md): no sequential scan is planned on these connections.
 */
export const SENDER_CONNECTION_OPTIONS = '-c enable_seqscan=off';

/**
 * A plain `pg` pool for the sender's own statements (claim, release, outcomes): one claim and one
 * outcome batch at a time, plus the release of what a stopping round hands back.
 */
export function createSenderPool(databaseUrl: string): Pool {
  return new Pool({
    connectionString: databaseUrl,
    max: 3,
    application_name: 'webhook-dispatcher-sender',
    options: SENDER_CONNECTION_OPTIONS,
  });
}
