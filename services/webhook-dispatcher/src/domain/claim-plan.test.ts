import { planClaim, type ClaimPlan, type ClaimState } from './claim-plan';

const state = (over: Partial<ClaimState> = {}): ClaimState => ({
  concurrency: 16,
  destinationConcurrency: 4,
  inFlight: 0,
  perDestination: new Map(),
  claims: [],
  minOverlap: 2,
  ...over,
});

describe('planClaim', () => {
  it('gives a claim with nothing in flight every slot, open to any destination', () => {
    expect(planClaim(state())).toEqual({ limit: 16, open: true, budgets: new Map() });
  });

  it('lists the destinations in use with what they have left, a full one with none', () => {
    const plan = planClaim(
      state({
        inFlight: 6,
        perDestination: new Map([
          ['a', 4],
          ['b', 2],
        ]),
      }),
    );
    expect(plan).toEqual({
      limit: 10,
      open: true,
      budgets: new Map([
        ['a', 0],
        ['b', 2],
      ]),
    });
  });

  it('is null when every slot is in use', () => {
    expect(planClaim(state({ inFlight: 16 }))).toBeNull();
  });

  it('beside an open claim, takes only the slots freed since, destination by destination', () => {
    // The open claim was sent when a had 1 attempt in flight and b 4; since then b freed 3 and c
    // (unknown to that claim, so promised to it whole) freed its last.
    const open: ClaimPlan = {
      limit: 11,
      open: true,
      budgets: new Map([
        ['a', 3],
        ['b', 0],
      ]),
    };
    const plan = planClaim(
      state({
        inFlight: 2,
        perDestination: new Map([
          ['a', 1],
          ['b', 1],
        ]),
        claims: [open],
      }),
    );
    expect(plan).toEqual({ limit: 3, open: false, budgets: new Map([['b', 3]]) });
  });

  it('never promises one slot to two claims in flight', () => {
    const open: ClaimPlan = { limit: 8, open: true, budgets: new Map([['a', 2]]) };
    const closed: ClaimPlan = { limit: 4, open: false, budgets: new Map([['b', 4]]) };
    const perDestination = new Map([['a', 2]]);
    // b's slots are the closed claim's, a's the open one's, any other destination the open one's.
    expect(planClaim(state({ inFlight: 2, perDestination, claims: [open, closed] }))).toBeNull();
  });

  it('sends no claim beside another for fewer slots than the overlap minimum', () => {
    const open: ClaimPlan = { limit: 15, open: true, budgets: new Map() };
    const perDestination = new Map([['a', 1]]);
    expect(planClaim(state({ inFlight: 1, perDestination, claims: [open], minOverlap: 2 }))).toBeNull();
  });

  it('opens the next claim once no open claim is in flight, with the closed ones still promised', () => {
    const closed: ClaimPlan = { limit: 3, open: false, budgets: new Map([['a', 3]]) };
    const plan = planClaim(state({ inFlight: 1, perDestination: new Map([['a', 1]]), claims: [closed] }));
    expect(plan).toEqual({ limit: 12, open: true, budgets: new Map([['a', 0]]) });
  });
});
