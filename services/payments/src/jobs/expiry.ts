import { startPeriodicJob, type Logger, type MikroORM, type PeriodicJob } from '@seller-api/service-kit';
import { expireDue } from '../db/charges';
import type { LifecycleDeps } from '../domain/lifecycle';

/**
 * Expires PENDING charges past their expiry: at start (catching up after downtime) and then every
 * `intervalMs`. Correct with several replicas: each batch is claimed with SKIP LOCKED.
 */
export class ExpiryScheduler {
  private job: PeriodicJob | null = null;
  private stopped = false;

  constructor(
    private readonly orm: MikroORM,
    private readonly deps: LifecycleDeps,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.job = startPeriodicJob({
      name: 'charge expiry',
      intervalMs: this.intervalMs,
      run: () => this.run(),
      logger: this.logger,
      failureMessage: 'expiry run failed; will retry',
    });
  }

  private async run(): Promise<void> {
    // A full batch means more may be due: keep going before sleeping.
    while (!this.stopped && (await expireDue(this.orm.em, this.deps)) === 100) {
      /* next batch */
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.job?.stop();
  }
}
