import { HttpError } from '@seller-api/service-kit';
import { hashPassword, verifyPassword } from '../domain/accounts';

const RETRY_AFTER_SECONDS = 1;

/**
 * The panel's password checks, a few at a time. Each is a 32 MiB scrypt on libuv's threadpool, which
 * proxied requests need too (undici's DNS lookups): a login flood must not take every thread. Logins
 * past the running ones wait in a short queue; past the queue they get 503 at once.
 */
export class PasswordChecks {
  private running = 0;
  private readonly queue: Array<() => void> = [];
  // Unknown e-mails cost a scrypt too, so the answer's timing does not tell which e-mails exist.
  // Made at the first such login, not at start: scrypt takes 32 MiB and a noticeable CPU slice.
  private dummyHash: Promise<string> | null = null;

  constructor(
    readonly concurrency: number,
    readonly queueLimit: number,
  ) {}

  /** Checks running now. */
  get active(): number {
    return this.running;
  }

  /** Checks waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Whether `password` matches `storedHash`; a missing hash (unknown e-mail, user without a password)
   * is checked against a dummy hash and never matches. `admit` runs once a slot is held, before the
   * hash: what it spends (rate limits) is not spent by a login refused with 503.
   */
  async verify(
    password: string,
    storedHash: string | null,
    admit: () => Promise<void> = () => Promise.resolve(),
  ): Promise<boolean> {
    return this.run(async () => {
      await admit();
      if (storedHash) return verifyPassword(password, storedHash);
      await verifyPassword(password, await this.dummy());
      return false;
    });
  }

  /** Runs `task` while holding a slot; 503 when every slot is taken and the queue is full. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    if (this.queue.length >= this.queueLimit) {
      return Promise.reject(
        new HttpError(
          503,
          'service_unavailable',
          `Too many logins at once. Retry after ${RETRY_AFTER_SECONDS} s.`,
          undefined,
          { 'Retry-After': String(RETRY_AFTER_SECONDS) },
        ),
      );
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  private release(): void {
    const next = this.queue.shift();
    // The slot passes to the next waiter as it is: `running` stays the same.
    if (next) next();
    else this.running -= 1;
  }

  private dummy(): Promise<string> {
    this.dummyHash ??= hashPassword('not-a-real-password').catch((err: unknown) => {
      this.dummyHash = null;
      throw err;
    });
    return this.dummyHash;
  }
}
