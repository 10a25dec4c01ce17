/**
 * The sender's slots: attempts in flight, at most `concurrency` in all and `destinationConcurrency` to one
 * destination (a scheme, host and port, whatever the path: domain/destination.ts), and the claimed
 * deliveries waiting for one of them.
 *
 * Why deliveries wait here at all: a claim is a database round trip, and under load the event loop makes
 * it several milliseconds. If a destination's freed slot had to wait for the next claim, it sat idle that
 * long. So a destination that answers fast is given places to wait in, filled by the claims like its
 * slots, and a freed slot starts the next waiting delivery at once. How many follows its pace: as many
 * as its slots get through in about `waitMs` (at most `waitingPlaces`), so a delivery seldom waits longer
 * than that, whether the destination answers in 2 ms or in 90. A slow
 * destination gets none: what it has not started stays in the database, where a pause or a new secret
 * reaches it. A waiting delivery that has not started after `maxWaitMs` is handed back all the same.
 * Only fast destinations' deliveries wait: the process takes no more than its free slots plus the
 * places of the destinations known to be fast, and a claimed delivery of another destination that
 * finds no slot is refused (handed back at once) rather than kept.
 */
export interface SlotOptions {
  concurrency: number;
  destinationConcurrency: number;
  /** Places to wait in per fast destination, at most; `concurrency * waitingShare` in all. */
  waitingPlaces: number;
  waitingShare: number;
  /** A destination is fast while its attempts' smoothed duration stays under this. */
  fastMs: number;
  /** How long a waiting delivery should take to reach a slot, at its destination's pace. */
  waitMs: number;
}

interface Waiting<T> {
  item: T;
  since: number;
}

// Weight of the newest attempt in a destination's smoothed duration.
const PACE_WEIGHT = 0.2;
// Destinations whose pace is kept, at most (the map is dropped whole beyond it).
const PACE_ENTRIES = 10_000;

export class DeliverySlots<T extends { destination: string }> {
  private inFlightCount = 0;
  private waitingCount = 0;
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Array<Waiting<T>>>();
  private readonly pace = new Map<string, number>();
  /** The places of the fast destinations, summed. */
  private placesTotal = 0;

  constructor(private readonly options: SlotOptions) {}

  /** Deliveries held: in flight, or claimed and waiting. */
  get total(): number {
    return this.inFlightCount + this.waitingCount;
  }

  get waitingTotal(): number {
    return this.waitingCount;
  }

  /** The most this process may hold at once: its slots, and the places of the fast destinations. */
  get capacity(): number {
    const places = Math.min(
      Math.floor(this.options.concurrency * this.options.waitingShare),
      this.placesTotal,
    );
    return this.options.concurrency + places;
  }

  /** Per destination, what it holds (in flight and waiting). */
  get heldPerDestination(): ReadonlyMap<string, number> {
    const held = new Map(this.inFlight);
    for (const [destination, queue] of this.waiting)
      held.set(destination, (held.get(destination) ?? 0) + queue.length);
    return held;
  }

  /**
   * What one destination may hold: its slots, and places to wait in once it is known to answer fast. A
   * destination nothing is known of (or nothing recent: it had nothing in flight when the claim was
   * planned) gets its slots only, so that a slow one never has deliveries claimed to wait in vain.
   */
  destinationCapacity(destination: string): number {
    return this.options.destinationConcurrency + this.placesFor(this.pace.get(destination));
  }

  /**
   * Takes a claimed delivery: `start` when it has a slot (taken for it), `wait` when it waits for one,
   * `refuse` when it has none and its destination is not known to be fast (the caller hands it back).
   */
  admit(item: T, now: number): 'start' | 'wait' | 'refuse' {
    const key = item.destination;
    if (this.hasSlot(key)) {
      this.occupy(key);
      return 'start';
    }
    if (!this.isFast(key)) return 'refuse';
    let queue = this.waiting.get(key);
    if (!queue) this.waiting.set(key, (queue = []));
    queue.push({ item, since: now });
    this.waitingCount += 1;
    return 'wait';
  }

  /**
   * Frees the slot of an attempt that has its answer (durationMs) or failed (null). Returns the waiting
   * delivery that now has a slot, taken for it: the next of the same destination or, when the
   * process-wide budget was what held another destination's back, that one.
   */
  free(destination: string, durationMs: number | null, takeNext = true): T | null {
    this.inFlightCount -= 1;
    const left = (this.inFlight.get(destination) ?? 1) - 1;
    if (left <= 0) this.inFlight.delete(destination);
    else this.inFlight.set(destination, left);
    if (durationMs !== null) this.notePace(destination, durationMs);
    if (this.waitingCount === 0 || !takeNext) return null;
    const next = this.takeWaiting(destination);
    if (next) return next;
    for (const other of this.waiting.keys()) {
      const item = this.takeWaiting(other);
      if (item) return item;
    }
    return null;
  }

  /** Removes and returns the waiting deliveries that `matches` picks, whatever their wait. */
  takeWaitingWhere(matches: (item: T) => boolean): T[] {
    const out: T[] = [];
    for (const [destination, queue] of this.waiting) {
      const kept = queue.filter((entry) => !matches(entry.item));
      if (kept.length === queue.length) continue;
      for (const entry of queue) if (matches(entry.item)) out.push(entry.item);
      this.waitingCount -= queue.length - kept.length;
      if (kept.length === 0) this.waiting.delete(destination);
      else this.waiting.set(destination, kept);
    }
    return out;
  }

  /** Removes and returns the deliveries that have waited `maxWaitMs` or more. */
  expired(now: number, maxWaitMs: number): T[] {
    const out: T[] = [];
    for (const [destination, queue] of this.waiting) {
      let n = 0;
      while (n < queue.length && now - (queue[n]?.since ?? now) >= maxWaitMs) n += 1;
      if (n === 0) continue;
      for (const { item } of queue.splice(0, n)) out.push(item);
      this.waitingCount -= n;
      if (queue.length === 0) this.waiting.delete(destination);
      // Its own slots stayed busy all that time: slow, whatever its last answers said. (Waiting for a
      // process-wide slot says nothing about it.)
      const ownSlotsBusy = (this.inFlight.get(destination) ?? 0) >= this.options.destinationConcurrency;
      if (Number.isFinite(now) && ownSlotsBusy)
        this.setPace(destination, Math.max(this.pace.get(destination) ?? 0, maxWaitMs));
    }
    return out;
  }

  /** Removes and returns every waiting delivery (the sender is stopping). */
  takeAllWaiting(): T[] {
    return this.expired(Infinity, 0);
  }

  private hasSlot(destination: string): boolean {
    return (
      this.inFlightCount < this.options.concurrency &&
      (this.inFlight.get(destination) ?? 0) < this.options.destinationConcurrency
    );
  }

  private occupy(destination: string): void {
    this.inFlightCount += 1;
    this.inFlight.set(destination, (this.inFlight.get(destination) ?? 0) + 1);
  }

  private takeWaiting(destination: string): T | null {
    const queue = this.waiting.get(destination);
    if (!queue || !this.hasSlot(destination)) return null;
    const next = queue.shift();
    if (!next) return null;
    if (queue.length === 0) this.waiting.delete(destination);
    this.waitingCount -= 1;
    this.occupy(destination);
    return next.item;
  }

  private isFast(destination: string): boolean {
    return this.placesFor(this.pace.get(destination)) > 0;
  }

  /**
   * Places to wait in at a destination's pace: what its slots get through in `waitMs`, at least one, at
   * most `waitingPlaces`; none for a destination that is not fast, or not known.
   */
  private placesFor(pace: number | undefined): number {
    if (pace === undefined || pace > this.options.fastMs) return 0;
    const { destinationConcurrency, waitMs, waitingPlaces } = this.options;
    return Math.min(
      waitingPlaces,
      Math.max(1, Math.floor((destinationConcurrency * waitMs) / Math.max(pace, 1))),
    );
  }

  private notePace(destination: string, durationMs: number): void {
    const before = this.pace.get(destination);
    this.setPace(
      destination,
      before === undefined ? durationMs : before + PACE_WEIGHT * (durationMs - before),
    );
  }

  private setPace(destination: string, pace: number): void {
    if (!this.pace.has(destination) && this.pace.size >= PACE_ENTRIES) {
      this.pace.clear();
      this.placesTotal = 0;
    }
    this.placesTotal += this.placesFor(pace) - this.placesFor(this.pace.get(destination));
    this.pace.set(destination, pace);
  }
}
