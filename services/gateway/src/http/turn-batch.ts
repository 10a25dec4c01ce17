/**
 * Runs the calls handed to it together, once the event loop has finished the I/O callbacks of its
 * current turn (setImmediate). Under load one turn parses several requests; the Redis commands they
 * issue from here leave in one pipelined write (ioredis pipelines what is issued in one tick) instead
 * of a write each, and a socket write costs more than anything else the gateway does. Alone, a call
 * waits for no one: the turn ends right away.
 */
export class TurnBatch {
  private queue: Array<() => void> = [];

  run<T>(call: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queue.push(() => call().then(resolve, reject)) === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const calls = this.queue;
    this.queue = [];
    for (const call of calls) call();
  }
}
