/**
 * Hands back the claimed deliveries that waited for a slot longer than the sender allows (jobs/sender.ts,
 * MAX_WAIT_MS), so that they are due again in the database rather than held here. It runs only while
 * something waits: started when a claim leaves deliveries waiting, it stops itself once none do.
 */
export class WaitingSweep {
  private timer: NodeJS.Timeout | null = null;

  /** `sweep` hands back what waited too long and answers whether anything still waits. */
  constructor(
    private readonly everyMs: number,
    private readonly sweep: () => boolean,
  ) {}

  /** Starts the sweep unless it runs already. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (!this.sweep() && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    }, this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
