import type { Sql } from '@seller-api/service-kit';
import { Environment, ReconciliationCharge } from '@seller-api/contracts';
import type { Account } from '../domain/ledger';
import {
  paidChargeOf,
  reconciliationChargeOf,
  type BalanceDrift,
  type Finding,
  type MismatchKind,
} from '../domain/reconciliation';

/**
 * The mismatches the reconciliation could not heal (docs/finance.md, "Reconciliation"), every one still
 * open (`reconciliation_findings`), so one found in an earlier window stays reported, and is checked
 * again, until it is gone; and the read of the balance rows against their lines that finds drifts.
 */

interface FindingRow {
  subject: string;
  kind: MismatchKind;
  seller_id: string;
  environment: Environment;
  order_id: string | null;
  account: Account | null;
  detail: string;
  charge: unknown;
  first_seen_at: Date | string;
  last_seen_at: Date | string;
}

function toFinding(row: FindingRow): Finding {
  const raw: unknown = typeof row.charge === 'string' ? JSON.parse(row.charge) : row.charge;
  const charge = raw === null ? null : ReconciliationCharge.safeParse(raw);
  return {
    subject: row.subject,
    kind: row.kind,
    owner: { sellerId: row.seller_id, environment: row.environment },
    orderId: row.order_id,
    account: row.account,
    detail: row.detail,
    charge: charge?.success ? paidChargeOf(charge.data) : null,
    firstSeenAt: new Date(row.first_seen_at),
    lastSeenAt: new Date(row.last_seen_at),
  };
}

/** Every open finding, oldest first. */
export async function openFindings(sql: Sql): Promise<Finding[]> {
  const rows =
    await sql.query<FindingRow>(`select subject, kind, seller_id, environment, order_id, account, detail, charge, first_seen_at, last_seen_at
       from withdrawals.reconciliation_findings order by first_seen_at, subject`);
  return rows.map(toFinding);
}

/** Records a finding seen now; one already open keeps when it was first seen. Returns it as stored. */
export async function saveFinding(
  sql: Sql,
  finding: Omit<Finding, 'firstSeenAt' | 'lastSeenAt'>,
  now: Date,
): Promise<Finding> {
  const [row] = await sql.query<FindingRow>(
    `insert into withdrawals.reconciliation_findings as f
       (subject, kind, seller_id, environment, order_id, account, detail, charge, first_seen_at, last_seen_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10)
     on conflict (subject) do update
       set kind = excluded.kind, detail = excluded.detail, charge = coalesce(excluded.charge, f.charge),
           last_seen_at = excluded.last_seen_at
     returning subject, kind, seller_id, environment, order_id, account, detail, charge, first_seen_at,
               last_seen_at`,
    [
      finding.subject,
      finding.kind,
      finding.owner.sellerId,
      finding.owner.environment,
      finding.orderId,
      finding.account,
      finding.detail,
      finding.charge ? JSON.stringify(reconciliationChargeOf(finding.charge)) : null,
      now.toISOString(),
      now.toISOString(),
    ],
  );
  return toFinding(row as FindingRow);
}

/** Closes a finding that is gone (healed, or the ledger now agrees). */
export async function resolveFinding(sql: Sql, subject: string): Promise<void> {
  await sql.query(`delete from withdrawals.reconciliation_findings where subject = $1`, [subject]);
}

// The balance findings (`f`) not among the drifts listed (`$1`) whose row equals the sum of its lines
// now: the row and its lines read in one statement, one snapshot (the trigger moves a row in the
// transaction of its lines).
const SETTLED_DRIFTS = `from withdrawals.reconciliation_findings f
  where f.kind = 'balance_drift' and not (f.subject = any($1::text[]))
    and coalesce((select b.amount from withdrawals.ledger_balances b
                   where b.seller_id = f.seller_id and b.environment = f.environment and b.account = f.account), 0)
      = coalesce((select sum(l.amount) from withdrawals.ledger_lines l
                   where l.seller_id = f.seller_id and l.environment = f.environment and l.account = f.account), 0)`;

const textArray = (values: string[]) => `{${values.map((v) => `"${v}"`).join(',')}}`;

/**
 * Closes the balance findings whose rows no longer drift, and returns their subjects. `listed`: the
 * drifts the check just listed, which stay open. Every other open one is checked again on its own row
 * and lines before it is closed: past MAX_DRIFTS the list is cut short, and a row left off it may still
 * drift (closing its finding would make the alert flap).
 */
export async function resolveDriftsExcept(sql: Sql, listed: string[]): Promise<string[]> {
  const rows = await sql.query<{ subject: string }>(`delete ${SETTLED_DRIFTS} returning f.subject`, [
    textArray(listed),
  ]);
  return rows.map((row) => row.subject);
}

/** The balance findings resolveDriftsExcept would close, closing none (a report-only run). */
export async function settledDriftsExcept(sql: Sql, listed: string[]): Promise<string[]> {
  const rows = await sql.query<{ subject: string }>(`select f.subject ${SETTLED_DRIFTS}`, [
    textArray(listed),
  ]);
  return rows.map((row) => row.subject);
}

/** At most this many drifts are reported: more means the balance rows are broken as a whole. */
export const MAX_DRIFTS = 1000;

/**
 * Every balance row that is not the sum of its journal lines, and every account with lines but no row:
 * one statement, so one snapshot (the trigger moves a row in the transaction of its lines). It reads
 * the whole journal: a drift is a bug, and the point is to find one wherever it is.
 */
export async function balanceDrifts(sql: Sql): Promise<BalanceDrift[]> {
  const rows = await sql.query<{
    seller_id: string;
    environment: Environment;
    account: Account;
    stored: string;
    summed: string;
  }>(
    `select coalesce(b.seller_id, s.seller_id) as seller_id, coalesce(b.environment, s.environment) as environment,
            coalesce(b.account, s.account) as account, coalesce(b.amount, 0) as stored,
            coalesce(s.total, 0) as summed
       from withdrawals.ledger_balances b
       full join (select seller_id, environment, account, sum(amount) as total
                    from withdrawals.ledger_lines group by seller_id, environment, account) s
         on s.seller_id = b.seller_id and s.environment = b.environment and s.account = b.account
      where coalesce(b.amount, 0) <> coalesce(s.total, 0)
      order by 1, 2, 3
      limit $1`,
    [MAX_DRIFTS],
  );
  return rows.map((row) => ({
    owner: { sellerId: row.seller_id, environment: row.environment },
    account: row.account,
    stored: Number(row.stored),
    summed: Number(row.summed),
  }));
}
