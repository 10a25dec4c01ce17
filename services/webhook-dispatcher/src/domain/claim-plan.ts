/**
 * Which due deliveries a new claim may take, when other claims may be in flight beside it.
 *
 * A claim is a database round trip of a few milliseconds. With one at a time, the slots freed meanwhile
 * sat idle until it was back; with several, each must take only places no other has been promised, or
 * two claims would both fill a destination's last place and one would have to hand rows back.
 *
 * So every claim is promised its places when it is sent, and keeps them until it is back: at most
 * `limit` deliveries, and of each destination listed in `budgets` that many. One claim in flight at a
 * time may be `open`: it may also take up to `defaultDestinationCapacity` of any destination it does not
 * list (a destination nothing is known of yet). Claims sent beside an open one are closed: they take
 * only the destinations they list with a budget.
 */
export interface ClaimPlan {
  limit: number;
  open: boolean;
  budgets: ReadonlyMap<string, number>;
  /** What it may take of each destination it does not list: `defaultDestinationCapacity` if open, else 0. */
  unlisted: number;
}

export interface ClaimState {
  /** Deliveries this process may hold at once (in flight, or claimed and waiting for a slot). */
  capacity: number;
  /** What one destination may hold; `defaultDestinationCapacity` for one nothing is known of. */
  destinationCapacity: (url: string) => number;
  defaultDestinationCapacity: number;
  /** Deliveries held now, in all and per destination. */
  held: number;
  heldPerDestination: ReadonlyMap<string, number>;
  /** The claims sent and not yet back. */
  claims: Iterable<ClaimPlan>;
  /** The fewest places worth a claim beside one already in flight (a round trip for a delivery or two is not). */
  minOverlap: number;
  /**
   * The fewest places worth any claim now: more than 1 while enough deliveries wait for a slot to keep
   * the slots busy during a claim's round trip, so that claims come bigger and fewer.
   */
  minLimit: number;
}

/** The next claim's plan, or null when no place is left that is neither held nor promised. */
export function planClaim(state: ClaimState): ClaimPlan | null {
  const claims = [...state.claims];
  let limit = state.capacity - state.held;
  let openInFlight = false;
  for (const claim of claims) {
    limit -= claim.limit;
    openInFlight ||= claim.open;
  }
  const fewest = Math.max(state.minLimit, claims.length > 0 ? state.minOverlap : 1);
  if (limit < fewest) return null;
  // Every destination something is known of (held here, or listed by a claim in flight), with its
  // places held or promised.
  const known = new Set(state.heldPerDestination.keys());
  for (const claim of claims) for (const url of claim.budgets.keys()) known.add(url);
  const budgets = new Map<string, number>();
  let free = false;
  for (const url of known) {
    let taken = state.heldPerDestination.get(url) ?? 0;
    for (const claim of claims) {
      taken += claim.budgets.get(url) ?? claim.unlisted;
    }
    const budget = Math.max(0, state.destinationCapacity(url) - taken);
    // Every destination known is listed, those without a free place included: an open claim would
    // take them whole otherwise, and any claim's window of due deliveries leaves them out (a full
    // destination's backlog would hide the others').
    budgets.set(url, budget);
    free ||= budget > 0;
  }
  // Beside an open claim, a claim takes only listed destinations: none with a free place, no claim.
  if (openInFlight && !free) return null;
  const open = !openInFlight;
  return { limit, open, budgets, unlisted: open ? state.defaultDestinationCapacity : 0 };
}
