// Operator CLI of the withdrawals service: `npm run cli -- reconcile [--since <ISO datetime>]
// [--report-only] [--skip-balances]` (the root `cli` script sends `reconcile` here and everything else to
// the gateway's CLI). In an image: `node services/withdrawals/dist/cli.js reconcile`. The report goes to
// stdout, errors to stderr. It never creates or migrates anything: the service migrates its own schema.
import { parseArgs } from 'node:util';
import { datetimeInput } from '@seller-api/contracts';
import {
  ConfigError,
  callKeyOf,
  commonEnv,
  databaseEnv,
  databaseOptionsOf,
  createLogger,
  loadConfig,
  openDatabase,
  processIo,
  sqlOf,
  type CliIo,
  type MikroORM,
} from '@seller-api/service-kit';
import { PaymentsClient } from './clients/payments';
import { withdrawalsEnv } from './config';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import { LedgerReconciliation, type ReconciliationRun } from './jobs/reconciliation';

const USAGE = `usage:
  cli reconcile [--since <ISO 8601 datetime, e.g. 2026-12-01T00:00:00Z>] [--report-only] [--skip-balances]

Checks the ledger against payments' charges changed since --since (default: since the last run),
heals what the ledger missed and reports what it cannot heal; it also compares every balance row with
its journal lines unless --skip-balances. --report-only only looks: it reports what it would heal and
what it cannot, and posts nothing, moves no checkpoint, and saves or closes no finding. Exit code 0
when nothing is left unhealed, 1 when something is (or the run failed, or the service's schema is
missing), 2 for bad usage or configuration.`;

/** A run of a replica holds the lock for its duration; the CLI waits this long for it to finish. */
const LOCK_WAIT_MS = 60_000;

class UsageError extends Error {}

/** The service's schema is not there, or older than this CLI: nothing to check yet. */
class SchemaError extends Error {}

export interface ReconcileCommand {
  since?: Date;
  reportOnly: boolean;
  checkBalances: boolean;
}

export function parse(argv: string[], now = new Date()): ReconcileCommand {
  let values: { since?: string; 'report-only'?: boolean; 'skip-balances'?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        since: { type: 'string' },
        'report-only': { type: 'boolean' },
        'skip-balances': { type: 'boolean' },
      },
    }));
  } catch (err) {
    // An unknown option, or --since without a value.
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  if (positionals.length !== 1 || positionals[0] !== 'reconcile') throw new UsageError(USAGE);
  const command = {
    reportOnly: values['report-only'] === true,
    checkBalances: values['skip-balances'] !== true,
  };
  if (values.since === undefined) return command;
  if (!datetimeInput.safeParse(values.since).success)
    throw new UsageError(
      `--since must be an ISO 8601 datetime with a time zone, such as 2026-12-01T00:00:00Z (got "${values.since}")`,
    );
  const since = new Date(values.since);
  if (since.getTime() > now.getTime()) throw new UsageError('--since must not be in the future');
  return { ...command, since };
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
    return run.mismatches.length > 0 || run.outcome === 'stopped' ? 1 : 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      io.stderr(`${err.message}\n`);
      return 2;
    }
    if (err instanceof SchemaError) {
      io.stderr(`${err.message}\n`);
      return 1;
    }
    io.stderr(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

async function reconcile(
  command: ReconcileCommand,
  env: NodeJS.ProcessEnv,
): Promise<ReconciliationRun | null> {
  const config = loadConfig(
    {
      ...databaseEnv,
      NODE_ENV: commonEnv.NODE_ENV,
      // The run reads payments as withdrawals does: signed with withdrawals' key.
      INTERNAL_KEY: commonEnv.INTERNAL_KEY,
      INTERNAL_SECRET: commonEnv.INTERNAL_SECRET,
      PAYMENTS_URL: withdrawalsEnv.PAYMENTS_URL,
      PAYMENTS_INTERNAL_SECRET: withdrawalsEnv.PAYMENTS_INTERNAL_SECRET,
      RECONCILE_GRACE_MS: withdrawalsEnv.RECONCILE_GRACE_MS,
    },
    env,
    { service: 'withdrawals', signs: true, verifiesIdentities: false },
  );
  const logger = createLogger('withdrawals-cli', 'silent');
  const database = decodeURIComponent(new URL(config.DATABASE_URL).pathname.slice(1));
  const orm = await openDatabase({
    ...databaseOptionsOf(config),
    schema: SCHEMA,
    entities,
    migrations,
    logger,
    poolMax: 3,
  });
  try {
    await checkSchema(orm, database);
    const reconciliation = new LedgerReconciliation(
      orm,
      new PaymentsClient(
        config.PAYMENTS_URL,
        callKeyOf(config, 'withdrawals', 'payments', config.PAYMENTS_INTERNAL_SECRET),
      ),
      // No timer: the drift interval is the schedule's, and this run is told whether to check.
      { intervalMs: 0, driftIntervalMs: 0, graceMs: config.RECONCILE_GRACE_MS },
      logger,
    );
    const result = await reconciliation.run({
      trigger: 'cli',
      since: command.since,
      waitMs: LOCK_WAIT_MS,
      reportOnly: command.reportOnly,
      checkBalances: command.checkBalances,
    });
    return result.ran ? result.run : null;
  } finally {
    await orm.close(true);
  }
}

const DEPLOY_FIRST =
  'deploy the withdrawals service first: it migrates its own schema (its migrations Job, or MIGRATE_ON_START)';

/**
 * Refuses a database whose withdrawals schema is missing or behind this build (a migration it knows is
 * not applied): the reconciliation's tables, or the ledger's, would be absent or old. Reads only.
 */
async function checkSchema(orm: MikroORM, database: string): Promise<void> {
  const sql = sqlOf(orm);
  let applied: Set<string>;
  try {
    const [table] = await sql.query<{ found: string | null }>(`select to_regclass($1) as found`, [
      `${SCHEMA}.schema_migrations`,
    ]);
    if (!table?.found)
      throw new SchemaError(`The ${SCHEMA} schema is missing from database "${database}": ${DEPLOY_FIRST}.`);
    const rows = await sql.query<{ name: string }>(`select name from ${SCHEMA}.schema_migrations`);
    applied = new Set(rows.map((row) => row.name));
  } catch (err) {
    // 3D000 invalid_catalog_name: no such database.
    if ((err as { code?: string }).code === '3D000')
      throw new SchemaError(`Database "${database}" does not exist: ${DEPLOY_FIRST}.`);
    throw err;
  }
  const missing = migrations.map((m) => m.name).filter((name) => !applied.has(name));
  if (missing.length > 0)
    throw new SchemaError(
      `The ${SCHEMA} schema of database "${database}" is behind this CLI (not applied: ${missing.join(', ')}): ${DEPLOY_FIRST}.`,
    );
}

const iso = (d: Date | null) => (d ? d.toISOString() : 'the beginning');

const OUTCOME_TEXT: Record<ReconciliationRun['outcome'], [run: string, look: string]> = {
  clean: ['clean', 'clean'],
  healed: ['healed', 'would heal'],
  mismatches: ['mismatches', 'mismatches'],
  stopped: ['stopped', 'stopped'],
};

/** The run as an operator reads it: what was checked, what was healed, what is still wrong and why. */
export function formatReport(run: ReconciliationRun): string {
  const look = run.reportOnly;
  const outcome = OUTCOME_TEXT[run.outcome][look ? 1 : 0];
  const lines = [
    `Ledger reconciliation${look ? ' (report only)' : ''}, ${run.startedAt.toISOString()}: ${outcome}`,
  ];
  if (look)
    lines.push(
      'Report only (a dry run): nothing was posted, no checkpoint moved, no finding saved or closed.',
    );
  if (run.outcome === 'stopped')
    lines.push('Stopped before its end (the service is stopping); the next run goes on from the checkpoint.');
  if (run.windows.length === 0) lines.push('No new changes of payments to check.');
  for (const w of run.windows)
    lines.push(`Checked ${w.environment} charges changed from ${iso(w.from)} to ${w.to.toISOString()}.`);
  lines.push(`Charges checked: ${run.checked}`);
  lines.push(
    run.balancesChecked
      ? 'Balance rows compared with their journal lines.'
      : 'Balance rows not compared with their journal lines this run.',
  );
  lines.push(`${look ? 'Would heal' : 'Healed'}: ${run.healed.length}`);
  for (const h of run.healed) {
    const verb = look ? 'would post' : 'posted';
    const posted =
      h.posted.length > 0 ? `${verb} ${h.posted.join(', ')}` : `${verb} nothing (status brought up to date)`;
    lines.push(
      `  order ${h.orderId} (${h.owner.environment}, seller ${h.owner.sellerId}): ${h.status} v${h.version}, ${h.reason}; ${posted}`,
    );
  }
  lines.push(`Not healed: ${run.mismatches.length}`);
  for (const m of run.mismatches) {
    const what = m.orderId ? `order ${m.orderId}` : `balance ${m.account}`;
    const since = m.recorded ? `open since ${m.firstSeenAt.toISOString()}` : 'new; not recorded, report only';
    lines.push(
      `  ${what} (${m.owner.environment}, seller ${m.owner.sellerId}): ${m.kind}: ${m.detail} (${since})`,
    );
  }
  return `${lines.join('\n')}\n`;
}

if (require.main === module) {
  void runCli(process.argv.slice(2)).then((code) => process.exit(code));
}
