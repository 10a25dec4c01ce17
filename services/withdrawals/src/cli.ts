// Operator CLI of the withdrawals service: `npm run cli -- reconcile [--since <ISO datetime>]` (the root
// `cli` script sends `reconcile` here and everything else to the gateway's CLI). In an image:
// `node services/withdrawals/dist/cli.js reconcile`. The report goes to stdout, errors to stderr.
import { parseArgs } from 'node:util';
import { datetimeInput } from '@seller-api/contracts';
import {
  ConfigError,
  commonEnv,
  createLogger,
  ensureDatabase,
  loadConfig,
  migrate,
  openDatabase,
  processIo,
  type CliIo,
} from '@seller-api/service-kit';
import { PaymentsClient } from './clients/payments';
import { withdrawalsEnv } from './config';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import { LedgerReconciliation, type ReconciliationRun } from './events/reconciliation';

const USAGE = `usage:
  cli reconcile [--since <ISO 8601 datetime, e.g. 2026-12-01T00:00:00Z>]

Checks the ledger against payments' charges changed since --since (default: since the last run),
heals what the ledger missed and reports what it cannot heal. Exit code 0 when nothing is left
unhealed, 1 when something is (or the run failed), 2 for bad usage or configuration.`;

/** A run of a replica holds the lock for its duration; the CLI waits this long for it to finish. */
const LOCK_WAIT_MS = 60_000;

class UsageError extends Error {}

export function parse(argv: string[], now = new Date()): { since?: Date } {
  let values: { since?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { since: { type: 'string' } },
    }));
  } catch (err) {
    // An unknown option, or --since without a value.
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  if (positionals.length !== 1 || positionals[0] !== 'reconcile') throw new UsageError(USAGE);
  if (values.since === undefined) return {};
  if (!datetimeInput.safeParse(values.since).success)
    throw new UsageError(
      `--since must be an ISO 8601 datetime with a time zone, such as 2026-12-01T00:00:00Z (got "${values.since}")`,
    );
  const since = new Date(values.since);
  if (since.getTime() > now.getTime()) throw new UsageError('--since must not be in the future');
  return { since };
}

/** Runs one command; returns the exit code (0 clean, 1 unhealed or failed, 2 usage or configuration). */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  try {
    const run = await reconcile(parse(argv), io.env);
    if (!run) {
      io.stderr('A reconciliation is running on a replica and did not finish within a minute; try again.\n');
      return 1;
    }
    io.stdout(formatReport(run));
    return run.mismatches.length > 0 ? 1 : 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      io.stderr(`${err.message}\n`);
      return 2;
    }
    io.stderr(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

async function reconcile(
  command: { since?: Date },
  env: NodeJS.ProcessEnv,
): Promise<ReconciliationRun | null> {
  const config = loadConfig(
    {
      DATABASE_URL: commonEnv.DATABASE_URL,
      NODE_ENV: commonEnv.NODE_ENV,
      INTERNAL_SECRET: commonEnv.INTERNAL_SECRET,
      PAYMENTS_URL: withdrawalsEnv.PAYMENTS_URL,
      RECONCILE_GRACE_MS: withdrawalsEnv.RECONCILE_GRACE_MS,
    },
    env,
  );
  const logger = createLogger('withdrawals-cli', 'silent');
  if (config.NODE_ENV !== 'production') await ensureDatabase(config.DATABASE_URL);
  const orm = await openDatabase({
    url: config.DATABASE_URL,
    schema: SCHEMA,
    entities,
    migrations,
    logger,
    poolMax: 3,
  });
  try {
    await migrate(orm, SCHEMA);
    const reconciliation = new LedgerReconciliation(
      orm,
      new PaymentsClient(config.PAYMENTS_URL, config.INTERNAL_SECRET),
      { intervalMs: 0, graceMs: config.RECONCILE_GRACE_MS },
      logger,
    );
    const result = await reconciliation.run({ trigger: 'cli', since: command.since, waitMs: LOCK_WAIT_MS });
    return result.ran ? result.run : null;
  } finally {
    await orm.close(true);
  }
}

const iso = (d: Date | null) => (d ? d.toISOString() : 'the beginning');

/** The run as an operator reads it: what was checked, what was healed, what is still wrong and why. */
export function formatReport(run: ReconciliationRun): string {
  const lines = [`Ledger reconciliation, ${run.startedAt.toISOString()}: ${run.outcome}`];
  if (run.windows.length === 0) lines.push('No new changes of payments to check.');
  for (const w of run.windows)
    lines.push(`Checked ${w.environment} charges changed from ${iso(w.from)} to ${w.to.toISOString()}.`);
  lines.push(`Charges checked: ${run.checked}`);
  lines.push(`Healed: ${run.healed.length}`);
  for (const h of run.healed) {
    const posted =
      h.posted.length > 0 ? `posted ${h.posted.join(', ')}` : 'posted nothing (status brought up to date)';
    lines.push(
      `  order ${h.orderId} (${h.owner.environment}, seller ${h.owner.sellerId}): ${h.status} v${h.version}, ${h.reason}; ${posted}`,
    );
  }
  lines.push(`Not healed: ${run.mismatches.length}`);
  for (const m of run.mismatches) {
    const what = m.orderId ? `order ${m.orderId}` : `balance ${m.account}`;
    lines.push(
      `  ${what} (${m.owner.environment}, seller ${m.owner.sellerId}): ${m.kind}: ${m.detail} (open since ${m.firstSeenAt.toISOString()})`,
    );
  }
  return `${lines.join('\n')}\n`;
}

if (require.main === module) {
  void runCli(process.argv.slice(2)).then((code) => process.exit(code));
}
