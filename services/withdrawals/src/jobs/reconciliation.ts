import { Environment, RECONCILIATION_PAGE_MAX } from '@seller-api/contracts';
import {
  sqlOf,
  startPeriodicJob,
  withReplicaLock,
  type Logger,
  type MikroORM,
  type PeriodicJob,
  type Sql,
} from '@seller-api/service-kit';
import type { PaidChargesSource } from '../clients/payments';
import type { FundsOwner } from '../domain/balance';
import type { EntryKind } from '../domain/ledger';
import { findLedgerOrders, replayCharge } from '../db/order-funds';
import {
  balancesDue,
  balanceSubject,
  checkCharge,
  checkReplayed,
  driftDetail,
  isDue,
  orderSubject,
  paidChargeOf,
  racesTheRun,
  runOutcome,
  windowOf,
  type BehindReason,
  type Finding,
  type LedgerOrder,
  type PaidCharge,
  type RunOutcome,
} from '../domain/reconciliation';
import {
  advanceCheckpoint,
  lastBalanceCheck,
  lastFinished,
  readCheckpoint,
  recordBalanceCheck,
} from '../db/reconciliation-checkpoints';
import {
  balanceDrifts,
  openFindings,
  resolveDriftsExcept,
  resolveFinding,
  saveFinding,
  settledDriftsExcept,
} from '../db/reconciliation-findings';
import type { ReconciliationMetrics } from '../metrics';

/**
 * One run at a time across replicas: a connection-level advisory lock (PostgreSQL calls it session
 * level), held on a connection of its own for the run, which ends with it (the kit's withReplicaLock).
 */
const LOCK_KEY = 'withdrawals.ledger_reconciliation';

export interface ReconciliationOptions {
  /** RECONCILE_INTERVAL_MS: how often a replica's timer tries a run; 0 schedules none. */
  intervalMs: number;
  /**
   * RECONCILE_DRIFT_INTERVAL_MS: how often a scheduled run also compares the balance rows with their
   * lines (it reads the whole journal); 0: never on the timer.
   */
  driftIntervalMs: number;
  /** RECONCILE_GRACE_MS: changes younger than this are left to a later run. */
  graceMs: number;
  pageSize?: number;
  now?: () => Date;
}

export interface RunOptions {
  trigger: 'schedule' | 'cli';
  /** Checks payments' changes from then instead of from the checkpoint. */
  since?: Date;
  /** How long to keep trying for the lock another run holds. */
  waitMs?: number;
  /**
   * A dry run: compares and reports what a run would heal and what it cannot, but posts no entry, moves
   * no checkpoint, and saves or closes no finding.
   */
  reportOnly?: boolean;
  /**
   * Whether to compare the balance rows with their lines. By default: always for the CLI, every
   * `driftIntervalMs` for the timer.
   */
  checkBalances?: boolean;
}

/** A charge the ledger had missed, and what replaying it posted (report only: would post). */
export interface HealedCharge {
  orderId: string;
  owner: FundsOwner;
  status: PaidCharge['status'];
  version: number;
  reason: BehindReason;
  posted: EntryKind[];
}

/** A mismatch open after the run; `recorded` false: found by a report-only run, and not stored. */
export type OpenMismatch = Finding & { recorded: boolean };

export interface ReconciliationRun {
  trigger: 'schedule' | 'cli';
  /** A dry run (RunOptions.reportOnly): `healed` is what a run would heal, nothing was changed. */
  reportOnly: boolean;
  startedAt: Date;
  finishedAt: Date;
  /** The windows of payments' changes checked, per environment (none when there was nothing new). */
  windows: Array<{ environment: Environment; from: Date | null; to: Date }>;
  /** Charges compared with the ledger: from the windows, and the open findings checked again. */
  checked: number;
  healed: HealedCharge[];
  /** Whether the balance rows were compared with their lines. */
  balancesChecked: boolean;
  /** Every mismatch open after the run, new or found earlier. */
  mismatches: OpenMismatch[];
  /** `stopped`: the service stopped it between two pages; the checkpoint keeps the pages done. */
  outcome: Exclude<RunOutcome, 'failed'>;
}

export type RunResult =
  | { ran: true; run: ReconciliationRun }
  /** Another replica (or the CLI) holds the lock, or a run finished less than half an interval ago. */
  | { ran: false; reason: 'busy' | 'not_due' };

interface RunState {
  run: Omit<ReconciliationRun, 'finishedAt' | 'balancesChecked' | 'mismatches' | 'outcome'>;
  /** Orders checked against a listing this run: their open findings need no second look. */
  seen: Set<string>;
  /** Mismatches that may be a change racing the run: asked about again once the window is done. */
  racing: Array<{ charge: PaidCharge; fetchedAt: Date }>;
  /** Report only: the subjects of mismatches found but not stored. */
  unrecorded: Set<string>;
  /** stop() was called, or the lock was lost: the run ended between two steps. */
  stopped: boolean;
  /** Aborted when the lock's connection ends: another replica may start a run, so this one stops. */
  lockLost: AbortSignal;
}

type Verdict = 'in_step' | 'healed' | 'mismatch' | 'racing';

/**
 * The ledger's reconciliation with payments (docs/finance.md, "Reconciliation"). For each window of
 * payments' changes it pages through the paid charges (`GET /internal/transactions/`), compares each
 * with the ledger's record of its order (domain/reconciliation.ts) and, where the ledger is behind,
 * replays payments' view through the events' own idempotent path (db/order-funds.ts, replayCharge), then
 * checks the money reached where payments' status puts it. What it cannot heal is recorded as a
 * finding and reported, never corrected by hand-made entries; each balance row is also compared with
 * the sum of its lines (on its own, longer schedule). Runs on a timer (one replica at a time,
 * incrementally from a checkpoint) and on demand (`npm run cli -- reconcile`, which can also only look).
 */
export class LedgerReconciliation {
  private job: PeriodicJob | null = null;
  private stopped = false;
  /** Runs in progress (the timer's and those asked for), for stop() to wait for. */
  private readonly running = new Set<Promise<void>>();
  private readonly sql: Sql;

  constructor(
    private readonly orm: MikroORM,
    private readonly payments: PaidChargesSource,
    private readonly options: ReconciliationOptions,
    private readonly logger: Logger,
    private readonly metrics?: ReconciliationMetrics,
  ) {
    this.sql = sqlOf(orm);
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Tries a run now and then every interval; nothing when the interval is 0. */
  start(): void {
    this.job = startPeriodicJob({
      name: 'ledger reconciliation',
      intervalMs: this.options.intervalMs,
      // A run logs and counts its own failure (runHoldingLock).
      run: () => this.run({ trigger: 'schedule' }).catch(() => undefined),
      logger: this.logger,
    });
  }

  /**
   * Stops the timer, and a run in progress at its next page (its checkpoint keeps the pages done), and
   * waits for it.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.job?.stop();
    await Promise.all([...this.running]);
  }

  /**
   * One run, unless another holds the lock (`waitMs`: how long to keep trying) or, for the timer, one
   * finished recently. A failure (payments or the database unreachable) is counted, logged and thrown;
   * the checkpoint keeps the progress of the pages done, and the next run goes on from there.
   */
  run(options: RunOptions): Promise<RunResult> {
    const result = this.runLocked(options);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
    return result;
  }

  private async runLocked(options: RunOptions): Promise<RunResult> {
    const result = await withReplicaLock(
      this.orm,
      {
        key: LOCK_KEY,
        waitMs: options.waitMs ?? 0,
        givingUp: () => this.stopped,
        onReleaseFailed: (err) =>
          this.logger.warn(
            { err: err.message },
            'ledger reconciliation could not release its lock; its connection is closed instead',
          ),
      },
      (lockLost) => this.runHoldingLock(options, lockLost),
    );
    return result.locked ? result.value : { ran: false, reason: 'busy' };
  }

  private async runHoldingLock(options: RunOptions, lockLost: AbortSignal): Promise<RunResult> {
    const reportOnly = options.reportOnly === true;
    try {
      if (
        options.trigger === 'schedule' &&
        !isDue(await lastFinished(this.sql), this.now(), this.options.intervalMs)
      )
        return { ran: false, reason: 'not_due' };
      const run = await this.reconcile(options, lockLost);
      // A look changes nothing, and counts as no run.
      if (!reportOnly) this.metrics?.runFinished(run.outcome);
      this.logRun(run);
      return { ran: true, run };
    } catch (err) {
      if (!reportOnly) this.metrics?.runFinished('failed');
      this.logger.warn(
        { err: (err as Error).message, trigger: options.trigger, report_only: reportOnly },
        'ledger reconciliation failed; the next run goes on from the checkpoint',
      );
      throw err;
    }
  }

  private async reconcile(options: RunOptions, lockLost: AbortSignal): Promise<ReconciliationRun> {
    const { trigger, since } = options;
    const reportOnly = options.reportOnly === true;
    const state: RunState = {
      run: { trigger, reportOnly, startedAt: this.now(), windows: [], checked: 0, healed: [] },
      seen: new Set(),
      racing: [],
      unrecorded: new Set(),
      stopped: false,
      lockLost,
    };
    const findings = new Map((await openFindings(this.sql)).map((f) => [f.subject, f]));
    // Decided at the start: a run the service stops before the balance rows leaves them to the next.
    const checkBalances =
      options.checkBalances ??
      (trigger === 'cli' ||
        balancesDue(await lastBalanceCheck(this.sql), state.run.startedAt, this.options.driftIntervalMs));
    let balancesChecked = false;

    for (const environment of Environment.options) {
      if (this.interrupted(state)) break;
      const checkpoint = await readCheckpoint(this.sql, environment);
      const window = windowOf(
        checkpoint?.checkedBefore ?? null,
        since,
        state.run.startedAt,
        this.options.graceMs,
      );
      if (window) {
        state.run.windows.push({ environment, from: window.from, to: window.to });
        const done = await this.checkWindow(state, environment, window, findings);
        if (!done) break;
      }
      if (reportOnly) continue;
      // Done to the end of the window from the checkpoint: the time the staleness alert watches.
      if (window?.advances) await advanceCheckpoint(this.sql, environment, window.to, this.now());
      else if (!window && since === undefined && checkpoint)
        await advanceCheckpoint(this.sql, environment, checkpoint.checkedBefore, this.now());
    }

    // Findings of orders no window met this time are checked again against payments' view stored with them.
    for (const finding of [...findings.values()]) {
      if (!finding.orderId || !finding.charge || state.seen.has(finding.orderId)) continue;
      if (this.interrupted(state)) break;
      await this.checkAll(state, [finding.charge], this.now(), findings, false);
    }
    if (checkBalances && !this.interrupted(state)) {
      await this.checkBalances(state, findings);
      balancesChecked = true;
    }

    return {
      ...state.run,
      finishedAt: this.now(),
      balancesChecked,
      mismatches: [...findings.values()].map((f) => ({ ...f, recorded: !state.unrecorded.has(f.subject) })),
      outcome: state.stopped
        ? 'stopped'
        : runOutcome({ healed: state.run.healed.length, mismatches: findings.size }),
    };
  }

  /** Whether stop() was called or the lock lost; the run then ends at this step. */
  private interrupted(state: RunState): boolean {
    if (!state.stopped && state.lockLost.aborted) {
      this.logger.warn(
        { trigger: state.run.trigger },
        'ledger reconciliation lost its lock; the run stops here',
      );
    }
    if (this.stopped || state.lockLost.aborted) state.stopped = true;
    return state.stopped;
  }

  /**
   * Pages through one environment's window, oldest change first; false when stop() ended it between two
   * pages (the checkpoint is where the last page done put it).
   */
  private async checkWindow(
    state: RunState,
    environment: Environment,
    window: { from: Date | null; to: Date; advances: boolean },
    findings: Map<string, Finding>,
  ): Promise<boolean> {
    let cursor: string | undefined;
    do {
      if (this.interrupted(state)) return false;
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
      // fail or the run be stopped (unless a charge is still to be asked about again).
      if (window.advances && last && state.racing.length === 0 && !state.run.reportOnly)
        await advanceCheckpoint(this.sql, environment, last.changedAt);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    await this.checkRacing(state, environment, findings);
    return true;
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
    const { reportOnly } = state.run;
    const subject = orderSubject(charge.orderId);
    const { orderId, owner, status, version } = charge;
    let check = checkCharge(charge, before);
    if (check.verdict === 'behind' && reportOnly) {
      // What a run would post; the replay's rules are the check's own (domain/reconciliation.ts).
      state.run.healed.push({ orderId, owner, status, version, reason: check.reason, posted: check.entries });
      findings.delete(subject);
      return 'healed';
    }
    const replayed = check.verdict === 'behind';
    if (check.verdict === 'behind') {
      const { reason } = check;
      const { posted, ledger } = await replayCharge(this.orm.em, this.sql, charge);
      // Recorded whatever the check after it says: these entries are posted.
      state.run.healed.push({ orderId, owner, status, version, reason, posted });
      this.metrics?.posted(posted);
      this.logger.info(
        { order_uuid: orderId, status, version, reason, entries: posted },
        'ledger reconciliation replayed an order the ledger had missed',
      );
      check = checkReplayed(charge, ledger);
    }
    if (check.verdict === 'in_step') {
      if (findings.delete(subject) && !reportOnly) await resolveFinding(this.sql, subject);
      return replayed ? 'healed' : 'in_step';
    }
    if (check.verdict === 'behind') throw new Error('unreachable: a replayed charge is checked again');
    // The ledger took a message after payments was read: payments may have moved since (a refund in the
    // middle of the run). Asked again at the end of the run rather than reported now.
    if (mayRace && before !== null && racesTheRun(check.kind, before.updatedAt, fetchedAt)) return 'racing';
    const known = findings.get(subject);
    const finding = await this.record(state, known, {
      subject,
      kind: check.kind,
      owner: charge.owner,
      orderId: charge.orderId,
      account: null,
      detail: check.detail,
      charge,
    });
    findings.set(subject, finding);
    if (!reportOnly && (!known || known.kind !== finding.kind))
      this.logger.warn(
        { order_uuid: charge.orderId, kind: finding.kind, detail: finding.detail },
        'ledger reconciliation found a mismatch it cannot heal',
      );
    return 'mismatch';
  }

  /** Stores a finding seen now; report only, keeps it in the run alone. */
  private async record(
    state: RunState,
    known: Finding | undefined,
    finding: Omit<Finding, 'firstSeenAt' | 'lastSeenAt'>,
  ): Promise<Finding> {
    const now = this.now();
    if (!state.run.reportOnly) return saveFinding(this.sql, finding, now);
    if (!known) state.unrecorded.add(finding.subject);
    return { ...finding, firstSeenAt: known?.firstSeenAt ?? now, lastSeenAt: now };
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

  /**
   * Balance rows against the sums of their lines: reported, never corrected (a drift is a bug; its
   * repair is the Mismatch runbook's). Reads the whole journal.
   */
  private async checkBalances(state: RunState, findings: Map<string, Finding>): Promise<void> {
    const { reportOnly } = state.run;
    const drifts = await balanceDrifts(this.sql);
    const listed = new Set<string>();
    for (const drift of drifts) {
      const subject = balanceSubject(drift.owner, drift.account);
      listed.add(subject);
      const known = findings.get(subject);
      const finding = await this.record(state, known, {
        subject,
        kind: 'balance_drift',
        owner: drift.owner,
        orderId: null,
        account: drift.account,
        detail: driftDetail(drift),
        charge: null,
      });
      findings.set(subject, finding);
      if (!known && !reportOnly)
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
    // Only those found in step again are closed: a list cut short at MAX_DRIFTS leaves some out.
    const settled = reportOnly
      ? await settledDriftsExcept(this.sql, [...listed])
      : await resolveDriftsExcept(this.sql, [...listed]);
    for (const subject of settled) findings.delete(subject);
    if (!reportOnly) await recordBalanceCheck(this.sql, this.now());
  }

  private logRun(run: ReconciliationRun): void {
    const summary = {
      trigger: run.trigger,
      report_only: run.reportOnly,
      outcome: run.outcome,
      checked: run.checked,
      healed: run.healed.length,
      mismatches: run.mismatches.length,
      balances_checked: run.balancesChecked,
      duration_ms: run.finishedAt.getTime() - run.startedAt.getTime(),
    };
    if (run.outcome === 'mismatches' || run.outcome === 'stopped')
      this.logger.warn(
        summary,
        run.outcome === 'stopped'
          ? 'ledger reconciliation stopped before its end; the next run goes on from the checkpoint'
          : 'ledger reconciliation finished with mismatches',
      );
    else this.logger.info(summary, 'ledger reconciliation finished');
  }
}
