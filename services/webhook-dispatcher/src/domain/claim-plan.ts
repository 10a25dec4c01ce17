/**
 * Which slots a new claim of due deliveries may take, when other claims may be in flight beside it.
 *
 * A claim is a database round trip of a few milliseconds. With one at a time, the slots freed meanwhile
 * sat idle until it was back; with several, each must take only slots no other has been promised, or
 * two claims would both fill a destination's last slot and one would have to hand rows back.
 *
 * So every claim is promised its slots when it is sent, and keeps them until it is back: at most
 * `limit` deliveries, and of each destination listed in `budgets` that many. One claim in flight at a
 * time may be `open`: it may also take a whole per-destination budget of any destination it does not
 * list (a destination nothing is known of yet). Claims sent beside an open one are closed: they take
 * only the destinations they list.
 */
export interface ClaimPlan {
  limit: number;
  open: boolean;
  budgets: ReadonlyMap<string, number>;
}

export interface ClaimState {
  /** Attempts in flight in this process at most, and to one destination URL at most. */
  concurrency: number;
  destinationConcurrency: number;
  /** Attempts in flight now, in all and per destination. */
  inFlight: number;
  perDestination: ReadonlyMap<string, number>;
  /** The claims sent and not yet back. */
  claims: Iterable<ClaimPlan>;
  /** The fewest slots worth a claim beside one already in flight (a round trip for a delivery or two is not). */
  minOverlap: number;
}

/** The next claim's plan, or null when no slot is left that is neither in use nor promised. */
export function planClaim(state: ClaimState): ClaimPlan | null {
  const { concurrency, destinationConcurrency: perDestination } = state;
  const claims = [...state.claims];
  let limit = concurrency - state.inFlight;
  let openInFlight = false;
  for (const claim of claims) {
    limit -= claim.limit;
    openInFlight ||= claim.open;
  }
  if (limit <= 0 || (claims.length > 0 && limit < state.minOverlap)) return null;
  // Every destination something is known of (in use here, or listed by a claim in flight), with its
  // slots in use or promised.
  const known = new Set(state.perDestination.keys());
  for (const claim of claims) for (const url of claim.budgets.keys()) known.add(url);
  const budgets = new Map<string, number>();
  for (const url of known) {
    let taken = state.perDestination.get(url) ?? 0;
    for (const claim of claims) taken += claim.budgets.get(url) ?? (claim.open ? perDestination : 0);
    const budget = Math.max(0, perDestination - taken);
    // An open claim lists every destination it knows of, those without a free slot included (it would
    // take them whole otherwise); a closed one lists only what it may take.
    if (budget > 0 || !openInFlight) budgets.set(url, budget);
  }
  if (openInFlight && budgets.size === 0) return null;
  return { limit, open: !openInFlight, budgets };
}
