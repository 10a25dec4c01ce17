import { planClaim, type ClaimPlan, type ClaimState } from './claim-plan';

const state = (over: Partial<ClaimState> = {}): ClaimState => ({
  capacity: 16,
  destinationCapacity: () => 4,
  defaultDestinationCapacity: 4,
  held: 0,
  heldPerDestination: new Map(),
  claims: [],
  minOverlap: 2,
  minLimit: 1,
  ...over,
});

describe('planClaim', () => {
  it('gives a claim with nothing in flight every slot, open to any destination', () => {
    expect(planClaim(state())).toEqual({ limit: 16, open: true, budgets: new Map(), unlisted: 4 });
  });

  it('lists the destinations in use with what they have left, a full one with none', () => {
    const plan = planClaim(
      state({
        held: 6,
        heldPerDestination: new Map([
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
      unlisted: 4,
    });
  });

  it('waits for at least minLimit places, in flight beside another claim or not', () => {
    expect(planClaim(state({ held: 10, minLimit: 8 }))).toBeNull();
    expect(planClaim(state({ held: 8, minLimit: 8 }))).toMatchObject({ limit: 8, open: true });
    const open: ClaimPlan = { limit: 4, open: true, budgets: new Map([['a', 1]]), unlisted: 4 };
    const a = new Map([['a', 1]]);
    expect(planClaim(state({ held: 5, heldPerDestination: a, claims: [open], minLimit: 8 }))).toBeNull();
    expect(planClaim(state({ held: 4, heldPerDestination: a, claims: [open], minLimit: 8 }))).toMatchObject({
      limit: 8,
      open: false,
    });
  });

  it('is null when every slot is in use', () => {
    expect(planClaim(state({ held: 16 }))).toBeNull();
  });

  it('gives a destination with places to wait in its larger capacity, never more to one nothing is known of', () => {
    const destinationCapacity = (url: string) => (url === 'fast' ? 6 : 4);
    const open: ClaimPlan = { limit: 4, open: true, budgets: new Map([['fast', 2]]), unlisted: 4 };
    const plan = planClaim(
      state({ destinationCapacity, held: 4, heldPerDestination: new Map([['fast', 4]]), claims: [open] }),
    );
    // fast: 6 places, 4 held, 2 promised to the open claim; new: the open claim's whole.
    expect(plan).toBeNull();
    const alone = planClaim(
      state({ destinationCapacity, held: 4, heldPerDestination: new Map([['fast', 4]]) }),
    );
    expect(alone).toEqual({ limit: 12, open: true, budgets: new Map([['fast', 2]]), unlisted: 4 });
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
      unlisted: 4,
    };
    const plan = planClaim(
      state({
        held: 2,
        heldPerDestination: new Map([
          ['a', 1],
          ['b', 1],
        ]),
        claims: [open],
      }),
    );
    // a is listed without a budget: the window of due deliveries leaves its backlog out.
    expect(plan).toEqual({
      limit: 3,
      open: false,
      budgets: new Map([
        ['a', 0],
        ['b', 3],
      ]),
      unlisted: 0,
    });
  });

  it('never promises one slot to two claims in flight', () => {
    const open: ClaimPlan = { limit: 8, open: true, budgets: new Map([['a', 2]]), unlisted: 4 };
    const closed: ClaimPlan = { limit: 4, open: false, budgets: new Map([['b', 4]]), unlisted: 0 };
    const perDestination = new Map([['a', 2]]);
    // b's slots are the closed claim's, a's the open one's, any other destination the open one's.
    expect(
      planClaim(state({ held: 2, heldPerDestination: perDestination, claims: [open, closed] })),
    ).toBeNull();
  });

  it('sends no claim beside another for fewer slots than the overlap minimum', () => {
    const open: ClaimPlan = { limit: 15, open: true, budgets: new Map(), unlisted: 4 };
    const perDestination = new Map([['a', 1]]);
    expect(
      planClaim(state({ held: 1, heldPerDestination: perDestination, claims: [open], minOverlap: 2 })),
    ).toBeNull();
  });

  it('opens the next claim once no open claim is in flight, with the closed ones still promised', () => {
    const closed: ClaimPlan = { limit: 3, open: false, budgets: new Map([['a', 3]]), unlisted: 0 };
    const plan = planClaim(state({ held: 1, heldPerDestination: new Map([['a', 1]]), claims: [closed] }));
    expect(plan).toEqual({ limit: 12, open: true, budgets: new Map([['a', 0]]), unlisted: 4 });
  });
});
