export interface WriteBatchOptions {
  /** Batches being written at once (each holds one database connection). */
  maxInFlight?: number;
  /** Items in one batch at most. */
  maxBatch?: number;
  /**
   * A failed batch's items are written again one after another, on the batch's one connection, rather
   * than all at once (each holding a connection of its own); a lone item that failed is written once
   * more too (a deadlock or a dropped connection then costs a retry, not the item).
   */
  retryOneAtATime?: boolean;
}

interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(reason: unknown): void;
}

/**
 * Group commit for a hot path's writes. What callers submit while earlier batches are being written
 * goes out together in the next one, so under load N requests cost one statement, one round trip and
 * one commit instead of N (on this kind of machine a socket write costs more than the SQL). Alone, an
 * item is written at the end of the current event-loop turn and waits for no one.
 *
 * `write` gets the items and answers one result per item, in order. A batch that fails is written
 * again one item at a time, so one bad item fails only its own caller. `write` must therefore be
 * all-or-nothing for a batch (one statement, or one transaction).
 */
export class WriteBatch<I, O> {
  private queue: Array<Waiting<I, O>> = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxInFlight: number;
  private readonly maxBatch: number;
  private readonly retryOneAtATime: boolean;
  /** The batches being written. */
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    options: WriteBatchOptions = {},
  ) {
    this.maxInFlight = options.maxInFlight ?? 2;
    this.maxBatch = options.maxBatch ?? 100;
    this.retryOneAtATime = options.retryOneAtATime ?? false;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once everything submitted so far is written (or failed to be). */
  async settled(): Promise<void> {
    while (this.scheduled || this.running.size > 0) {
      if (this.running.size > 0) await Promise.allSettled([...this.running]);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // After the I/O callbacks of this turn: the requests parsed together go together.
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
        this.inFlight += 1;
        const running: Promise<void> = this.run(this.queue.splice(0, this.maxBatch)).finally(() => {
          this.inFlight -= 1;
          this.running.delete(running);
          this.schedule();
        });
        this.running.add(running);
      }
    });
  }

  private async run(batch: Array<Waiting<I, O>>): Promise<void> {
    try {
      const results = await this.write(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i] as O));
    } catch (err) {
      if (batch.length === 1 && !this.retryOneAtATime) {
        batch[0]?.reject(err);
        return;
      }
      const alone = async (w: Waiting<I, O>) => {
        try {
          const [result] = await this.write([w.item]);
          w.resolve(result as O);
        } catch (failed) {
          w.reject(failed);
        }
      };
      if (this.retryOneAtATime) for (const w of batch) await alone(w);
      else await Promise.all(batch.map(alone));
    }
  }
}
