import type { Logger, MikroORM } from '@seller-api/service-kit';
import { expireDue, type LifecycleDeps } from '../domain/lifecycle';

/**
 * Expires PENDING charges past their expiry: at start (catching up after downtime) and then every
 * `intervalMs`. Correct with several replicas: each batch is claimed with SKIP LOCKED.
 */
export class ExpiryScheduler {
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly orm: MikroORM,
    private readonly deps: LifecycleDeps,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.tick();
  }

  private tick(): void {
    if (this.stopped) return;
    this.current = this.run().finally(() => {
      if (this.stopped) return;
      this.timer = setTimeout(() => this.tick(), this.intervalMs);
      this.timer.unref();
    });
  }

  private async run(): Promise<void> {
    try {
      // A full batch means more may be due: keep going before sleeping.
      while (!this.stopped && (await expireDue(this.orm.em, this.deps)) === 100) {
        /* next batch */
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'expiry run failed; will retry');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current;
  }
}
