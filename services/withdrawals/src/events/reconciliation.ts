import { Environment, RECONCILIATION_PAGE_MAX } from '@seller-api/contracts';
import type { Logger, MikroORM } from '@seller-api/service-kit';
import type { PaidChargesSource } from '../clients/payments';
import type { FundsOwner } from '../domain/balance';
import type { EntryKind } from '../domain/ledger';
import { findLedgerOrders, replayCharge } from '../domain/order-ledger';
import {
  balanceSubject,
  checkCharge,
  checkReplayed,
  driftDetail,
  isDue,
  orderSubject,
  paidChargeOf,
  runOutcome,
  windowOf,
  type BehindReason,
  type LedgerOrder,
  type PaidCharge,
  type RunOutcome,
} from '../domain/reconciliation';
import {
  advanceCheckpoint,
  balanceDrifts,
  lastFinished,
  openFindings,
  readCheckpoint,
  resolveDriftsExcept,
  resolveFinding,
  saveFinding,
  type Finding,
} from '../domain/reconciliation-store';
import type { ReconciliationMetrics } from '../metrics';

/** One run at a time across replicas: a session lock, held on its own connection for the run. */
const LOCK_KEY = 'withdrawals.ledger_reconciliation';

export interface ReconciliationOptions {
  /** RECONCILE_INTERVAL_MS: how often a replica's timer tries a run; 0 schedules none. */
  intervalMs: number;
  /** RECONCILE_GRACE_MS: changes younger than this are left to a later run. */
  graceMs: number;
  pageSize?: number;
  now?: () => Date;
}

/** A charge the ledger had missed, and what replaying it posted. */
export interface HealedCharge {
  orderId: string;
  owner: FundsOwner;
  status: PaidCharge['status'];
  version: number;
  reason: BehindReason;
  posted: EntryKind[];
}

export interface ReconciliationRun {
  trigger: 'schedule' | 'cli';
  startedAt: Date;
  finishedAt: Date;
  /** The windows of payments' changes checked, per environment (none when there was nothing new). */
  windows: Array<{ environment: Environment; from: Date | null; to: Date }>;
  /** Charges compared with the ledger: from the windows, and the open findings checked again. */
  checked: number;
  healed: HealedCharge[];
  /** Every mismatch open after the run, new or found earlier. */
  mismatches: Finding[];
  outcome: Exclude<RunOutcome, 'failed'>;
}

export type RunResult =
  | { ran: true; run: ReconciliationRun }
  /** Another replica (or the CLI) holds the lock, or a run finished less than half an interval ago. */
  | { ran: false; reason: 'busy' | 'not_due' };

interface RunState {
  run: Omit<ReconciliationRun, 'finishedAt' | 'mismatches' | 'outcome'>;
  /** Orders checked against a listing this run: their open findings need no second look. */
  seen: Set<string>;
  /** Mismatches that may be a change racing the run: asked about again once the window is done. */
  racing: Array<{ charge: PaidCharge; fetchedAt: Date }>;
}

type Verdict = 'in_step' | 'healed' | 'mismatch' | 'racing';

interface PgConnection {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/**
 * The ledger's reconciliation with payments (docs/finance.md, "Reconciliation"). For each window of
 * payments' changes it pages through the paid charges (`GET /internal/transactions/`), compares each
 * with the ledger's record of its order (domain/reconciliation.ts) and, where the ledger is behind,
 * replays payments' view through the events' own idempotent path (order-ledger.replayCharge), then
 * checks the money reached where payments' status puts it. What it cannot heal is recorded as a
 * finding and reported, never corrected by hand-made entries; each balance row is also compared with
 * the sum of its lines. Runs on a timer (one replica at a time, incrementally from a checkpoint) and on
 * demand (`npm run cli -- reconcile`).
 */
export class LedgerReconciliation {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private current: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly orm: MikroORM,
    private readonly payments: PaidChargesSource,
    private readonly options: ReconciliationOptions,
    private readonly logger: Logger,
    private readonly metrics?: ReconciliationMetrics,
  ) {}

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Tries a run now and then every interval; nothing when the interval is 0. */
  start(): void {
    if (this.options.intervalMs <= 0) return;
    const tick = () => {
      if (this.stopped) return;
      this.current = this.run({ trigger: 'schedule' })
        .catch(() => undefined)
        .finally(() => {
          if (this.stopped) return;
          this.timer = setTimeout(tick, this.options.intervalMs);
          this.timer.unref();
        });
    };
    tick();
  }

  /** Stops the timer and waits for a run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current;
  }

  /**
   * One run, unless another holds the lock (`waitMs`: how long to keep trying) or, for the timer, one
   * finished recently. `since` checks payments' changes from then instead of from the checkpoint. A
   * failure (payments or the database unreachable) is counted, logged and thrown; the checkpoint keeps
   * the progress of the pages done, and the next run goes on from there.
   */
  async run(options: { trigger: 'schedule' | 'cli'; since?: Date; waitMs?: number }): Promise<RunResult> {
    const knex = this.orm.em.getConnection().getKnex();
    const connection = (await knex.client.acquireConnection()) as PgConnection;
    try {
      if (!(await this.lock(connection, options.waitMs ?? 0))) return { ran: false, reason: 'busy' };
      try {
        if (
          options.trigger === 'schedule' &&
          !isDue(await lastFinished(this.orm.em.fork()), this.now(), this.options.intervalMs)
        )
          return { ran: false, reason: 'not_due' };
        const run = await this.reconcile(options.trigger, options.since);
        this.metrics?.runFinished(run.outcome);
        this.logRun(run);
        return { ran: true, run };
      } catch (err) {
        this.metrics?.runFinished('failed');
        this.logger.warn(
          { err: (err as Error).message, trigger: options.trigger },
          'ledger reconciliation failed; the next run goes on from the checkpoint',
        );
        throw err;
      } finally {
        await connection.query('select pg_advisory_unlock(hashtext($1))', [LOCK_KEY]).catch(() => undefined);
      }
    } finally {
      await knex.client.releaseConnection(connection);
    }
  }

  private async lock(connection: PgConnection, waitMs: number): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const { rows } = await connection.query('select pg_try_advisory_lock(hashtext($1)) as locked', [
        LOCK_KEY,
      ]);
      if (rows[0]?.locked === true) return true;
      if (Date.now() >= deadline || this.stopped) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(500, deadline - Date.now())));
    }
  }

  private async reconcile(
    trigger: ReconciliationRun['trigger'],
    since: Date | undefined,
  ): Promise<ReconciliationRun> {
    const em = this.orm.em.fork();
    const state: RunState = {
      run: { trigger, startedAt: this.now(), windows: [], checked: 0, healed: [] },
      seen: new Set(),
      racing: [],
    };
    const findings = new Map((await openFindings(em)).map((f) => [f.subject, f]));

    for (const environment of Environment.options) {
      const checkpoint = await readCheckpoint(em, environment);
      const window = windowOf(
        checkpoint?.checkedBefore ?? null,
        since,
        state.run.startedAt,
        this.options.graceMs,
      );
      if (window) {
        state.run.windows.push({ environment, from: window.from, to: window.to });
        let cursor: string | undefined;
        do {
          const fetchedAt = this.now();
          const page = await this.payments.paidCharges({
            environment,
            changed_after: window.from?.toISOString(),
            changed_before: window.to.toISOString(),
            cursor,
            limit: this.options.pageSize ?? RECONCILIATION_PAGE_MAX,
          });
          const charges = page.results.map(paidChargeOf);
          if (charges.some((c) => c.owner.environment !== environment))
            throw new Error(`payments listed charges of another environment than ${environment}`);
          await this.checkAll(state, charges, fetchedAt, findings, true);
          const last = charges[charges.length - 1];
          // The pages come oldest change first: everything up to this one is done, should a later page
          // fail (unless a charge is still to be asked about again).
          if (window.advances && last && state.racing.length === 0)
            await advanceCheckpoint(em, environment, last.changedAt);
          cursor = page.next_cursor ?? undefined;
        } while (cursor);
        await this.checkRacing(state, environment, findings);
      }
      // Done to the end of the window from the checkpoint: the time the staleness alert watches.
      if (window?.advances) await advanceCheckpoint(em, environment, window.to, this.now());
      else if (!window && since === undefined && checkpoint)
        await advanceCheckpoint(em, environment, checkpoint.checkedBefore, this.now());
    }

    // Findings of orders no window met this time are checked again against payments' view stored with them.
    for (const finding of [...findings.values()]) {
      if (!finding.orderId || !finding.charge || state.seen.has(finding.orderId)) continue;
      await this.checkAll(state, [finding.charge], this.now(), findings, false);
    }
    await this.checkBalances(findings);

    return {
      ...state.run,
      finishedAt: this.now(),
      mismatches: [...findings.values()],
      outcome: runOutcome({ healed: state.run.healed.length, mismatches: findings.size }),
    };
  }

  /** Compares charges with the ledger's records of their orders, healing or recording each. */
  private async checkAll(
    state: RunState,
    charges: PaidCharge[],
    fetchedAt: Date,
    findings: Map<string, Finding>,
    mayRace: boolean,
  ): Promise<void> {
    const ledger = await findLedgerOrders(
      this.orm.em.fork(),
      charges.map((c) => c.orderId),
    );
    for (const charge of charges) {
      state.seen.add(charge.orderId);
      state.run.checked += 1;
      const verdict = await this.checkOne(
        state,
        charge,
        ledger.get(charge.orderId) ?? null,
        fetchedAt,
        findings,
        mayRace,
      );
      if (verdict === 'racing') state.racing.push({ charge, fetchedAt });
    }
  }

  private async checkOne(
    state: RunState,
    charge: PaidCharge,
    before: (LedgerOrder & { updatedAt: Date }) | null,
    fetchedAt: Date,
    findings: Map<string, Finding>,
    mayRace: boolean,
  ): Promise<Verdict> {
    const em = this.orm.em.fork();
    const subject = orderSubject(charge.orderId);
    let check = checkCharge(charge, before);
    const replayed = check.verdict === 'behind';
    if (check.verdict === 'behind') {
      const { reason } = check;
      const { posted, ledger } = await replayCharge(this.orm.em, charge);
      // Recorded whatever the check after it says: these entries are posted.
      const { orderId, owner, status, version } = charge;
      state.run.healed.push({ orderId, owner, status, version, reason, posted });
      this.metrics?.posted(posted);
      this.logger.info(
        { order_uuid: orderId, status, version, reason, entries: posted },
        'ledger reconciliation replayed an order the ledger had missed',
      );
      check = checkReplayed(charge, ledger);
    }
    if (check.verdict === 'in_step') {
      if (findings.delete(subject)) await resolveFinding(em, subject);
      return replayed ? 'healed' : 'in_step';
    }
    if (check.verdict === 'behind') throw new Error('unreachable: a replayed charge is checked again');
    // The ledger took a message after payments was read: payments may have moved since (a refund in the
    // middle of the run). Asked again at the end of the run rather than reported now.
    if (
      mayRace &&
      before !== null &&
      (check.kind === 'ledger_ahead' || check.kind === 'contradicts') &&
      before.updatedAt.getTime() > fetchedAt.getTime()
    )
      return 'racing';
    const known = findings.get(subject);
    const finding = await saveFinding(
      em,
      {
        subject,
        kind: check.kind,
        owner: charge.owner,
        orderId: charge.orderId,
        account: null,
        detail: check.detail,
        charge,
      },
      this.now(),
    );
    findings.set(subject, finding);
    if (!known || known.kind !== finding.kind)
      this.logger.warn(
        { order_uuid: charge.orderId, kind: finding.kind, detail: finding.detail },
        'ledger reconciliation found a mismatch it cannot heal',
      );
    return 'mismatch';
  }

  /** The racing mismatches, against payments' newest view of them (or the same one, if it did not move). */
  private async checkRacing(
    state: RunState,
    environment: Environment,
    findings: Map<string, Finding>,
  ): Promise<void> {
    const racing = state.racing;
    if (racing.length === 0) return;
    state.racing = [];
    const earliest = Math.min(...racing.map((r) => r.fetchedAt.getTime()));
    const newer = new Map<string, PaidCharge>();
    const fetchedAt = this.now();
    let cursor: string | undefined;
    do {
      // Changes since the first of them was read, the grace period earlier for the clocks' skew.
      const page = await this.payments.paidCharges({
        environment,
        changed_after: new Date(earliest - this.options.graceMs).toISOString(),
        cursor,
        limit: this.options.pageSize ?? RECONCILIATION_PAGE_MAX,
      });
      for (const c of page.results.map(paidChargeOf)) newer.set(c.orderId, c);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    const charges = racing.map((r) => newer.get(r.charge.orderId) ?? r.charge);
    // Counted once: they were counted when first read.
    state.run.checked -= charges.length;
    await this.checkAll(state, charges, fetchedAt, findings, false);
  }

  /** Balance rows against the sums of their lines: reported, never corrected (a drift is a bug). */
  private async checkBalances(findings: Map<string, Finding>): Promise<void> {
    const em = this.orm.em.fork();
    const drifts = await balanceDrifts(em);
    const subjects = new Set<string>();
    for (const drift of drifts) {
      const subject = balanceSubject(drift.owner, drift.account);
      subjects.add(subject);
      const known = findings.get(subject);
      const finding = await saveFinding(
        em,
        {
          subject,
          kind: 'balance_drift',
          owner: drift.owner,
          orderId: null,
          account: drift.account,
          detail: driftDetail(drift),
          charge: null,
        },
        this.now(),
      );
      findings.set(subject, finding);
      if (!known)
        this.logger.error(
          {
            seller_id: drift.owner.sellerId,
            environment: drift.owner.environment,
            account: drift.account,
            detail: finding.detail,
          },
          'ledger balance row drifted from its lines',
        );
    }
    await resolveDriftsExcept(em, [...subjects]);
    for (const [subject, finding] of findings)
      if (finding.kind === 'balance_drift' && !subjects.has(subject)) findings.delete(subject);
  }

  private logRun(run: ReconciliationRun): void {
    const summary = {
      trigger: run.trigger,
      outcome: run.outcome,
      checked: run.checked,
      healed: run.healed.length,
      mismatches: run.mismatches.length,
      duration_ms: run.finishedAt.getTime() - run.startedAt.getTime(),
    };
    if (run.outcome === 'mismatches')
      this.logger.warn(summary, 'ledger reconciliation finished with mismatches');
    else this.logger.info(summary, 'ledger reconciliation finished');
  }
}
