import {
  ErrorBody,
  OperatorWithdrawalListResponse,
  OperatorWithdrawalResponse,
  WithdrawalReasonEventData,
  WithdrawalSuspensionListResponse,
  WithdrawalSuspensionResponse,
  type OperatorWithdrawal,
} from '@seller-api/contracts';
import { autoApprove, claimPayouts, completePayout } from '../../services/withdrawals/src/db/withdrawals';
import type { PayoutRules } from '../../services/withdrawals/src/domain/payouts';
import { call } from '../support/system';
import {
  balance,
  eventsOf,
  fund,
  newOperator,
  newSeller,
  ops,
  readWithdrawal,
  requestWithdrawal,
  useHarness,
  withdraw,
  SALE_NET,
  type Seller,
} from './helpers';

/**
 * What operators hold back (docs/finance.md, "Payout controls"): a seller's suspension, the review of
 * a PIX key never paid to, and the cancel of an APPROVED withdrawal before it is sent. The payout
 * worker of this system is stopped: the test moves payouts itself (autoApprove, claimPayouts,
 * completePayout, the worker's own steps), so an APPROVED withdrawal stays so until it does.
 */
let operator: string;

const RULES: PayoutRules = { autoApproveBelow: 1000, retryAfterMs: 60_000 };
const KEY = { pix_key: 'seller@example.com', pix_key_type: 'email' };
const em = () => h.system.withdrawals.runtime.orm.em.fork();

const h = useHarness({
  WITHDRAWAL_AUTO_APPROVE_BELOW: '1000',
  WITHDRAWAL_MIN_AMOUNT: '50',
  WITHDRAWAL_NEW_PIX_KEY_REVIEW: 'true',
});
beforeAll(async () => {
  await h.system.withdrawals.payouts.stop();
  operator = await newOperator(h);
});

async function opsView(uuid: string, key = operator): Promise<OperatorWithdrawal> {
  const res = await ops(h, key, `${uuid}/`);
  if (res.status !== 200) throw new Error(`ops read: ${res.status} ${res.text}`);
  return OperatorWithdrawalResponse.parse(res.body).data;
}

async function approve(uuid: string): Promise<void> {
  const res = await ops(h, operator, `${uuid}/approve/`, { method: 'POST' });
  if (res.status !== 200) throw new Error(`approve: ${res.status} ${res.text}`);
}

/** The worker's claim, for every payout due (rows of earlier runs of this file included). */
const claimAll = () => claimPayouts(em(), h.system.withdrawals.runtime.sql, RULES, 1000);

/** Pays a withdrawal out as the worker would: claim, then the PSP's answer "paid". */
async function payOut(uuid: string): Promise<void> {
  const claimed = (await claimAll()).find((w) => w.id === uuid);
  if (!claimed) throw new Error(`${uuid} was not claimed`);
  await completePayout(em(), h.system.withdrawals.runtime.sql, claimed, {
    status: 'paid',
    reference: `E2E${uuid.slice(0, 8)}`,
  });
}

/** A funded seller with KEY known: one withdrawal to it approved by an operator and paid. */
async function sellerWithKnownKey(): Promise<Seller> {
  const seller = await newSeller(h);
  await fund(h, seller);
  const first = await withdraw(h, seller.key, { amount: 100, ...KEY });
  await approve(first.uuid);
  await payOut(first.uuid);
  return seller;
}

const suspend = (sellerId: string, body: unknown, key = operator) =>
  call(`${h.gateway.url}/ops/withdrawals/sellers/${sellerId}/suspend/`, { method: 'POST', key, body });
const unsuspend = (sellerId: string, body: unknown, key = operator) =>
  call(`${h.gateway.url}/ops/withdrawals/sellers/${sellerId}/unsuspend/`, { method: 'POST', key, body });
const cancel = (uuid: string, body?: unknown) =>
  ops(h, operator, `${uuid}/cancel/`, { method: 'POST', body });

describe('new PIX key review (WITHDRAWAL_NEW_PIX_KEY_REVIEW=true)', () => {
  it('holds a payout to a key the seller was never paid to, and clears the same key once paid', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const first = await withdraw(h, seller.key, { amount: 100, ...KEY });
    expect(await opsView(first.uuid)).toMatchObject({ status: 'PENDING', review_reasons: ['new_pix_key'] });
    await autoApprove(em(), h.system.withdrawals.runtime.sql, RULES);
    expect((await readWithdrawal(h, seller.key, first.uuid)).status).toBe('PENDING');

    await approve(first.uuid);
    await payOut(first.uuid);
    const again = await withdraw(h, seller.key, { amount: 100, ...KEY });
    expect((await opsView(again.uuid)).review_reasons).toEqual([]);
    await autoApprove(em(), h.system.withdrawals.runtime.sql, RULES);
    expect((await readWithdrawal(h, seller.key, again.uuid)).status).toBe('APPROVED');

    // Known per key: another key of the same seller is new again.
    const other = await withdraw(h, seller.key, {
      amount: 100,
      pix_key: '+5511987654321',
      pix_key_type: 'phone',
    });
    expect((await opsView(other.uuid)).review_reasons).toEqual(['new_pix_key']);
  });
});

describe('seller suspension', () => {
  it('refuses new withdrawals, holds pending and approved ones, keeps the reason, and lets them go when lifted', async () => {
    const seller = await sellerWithKnownKey();
    const cleared = await withdraw(h, seller.key, { amount: 100, ...KEY });
    const large = await withdraw(h, seller.key, { amount: 1000, ...KEY });
    await approve(large.uuid);
    const before = await balance(h, seller.key);

    const res = await suspend(seller.sellerId, { reason: '  Chargeback spike  ' });
    expect(res.status).toBe(200);
    const suspension = WithdrawalSuspensionResponse.parse(res.body).data;
    expect(suspension).toMatchObject({
      seller: { id: seller.sellerId, name: seller.email },
      environment: 'test',
      reason: 'Chargeback spike',
      suspended_by: expect.any(String),
      lifted_at: null,
    });
    const twice = await suspend(seller.sellerId, { reason: 'again' });
    expect(twice.status).toBe(409);
    expect(ErrorBody.parse(twice.body).code).toBe('conflict');

    const refused = await requestWithdrawal(h, seller.key, { amount: 100, ...KEY });
    expect(refused.status).toBe(403);
    expect(ErrorBody.parse(refused.body)).toMatchObject({ code: 'withdrawals_suspended' });
    expect(await balance(h, seller.key)).toEqual(before);

    // Held: not approved automatically, nor by an operator; the approved one is not sent.
    await autoApprove(em(), h.system.withdrawals.runtime.sql, RULES);
    expect((await claimAll()).map((w) => w.id)).not.toContain(large.uuid);
    expect((await readWithdrawal(h, seller.key, cleared.uuid)).status).toBe('PENDING');
    expect((await readWithdrawal(h, seller.key, large.uuid)).status).toBe('APPROVED');
    const blocked = await ops(h, operator, `${cleared.uuid}/approve/`, { method: 'POST' });
    expect(blocked.status).toBe(409);
    expect(blocked.body.message).toMatch(/suspended/);

    // The operators' queue and the list of suspensions show it, with the reason.
    const queue = await ops(h, operator, '?status=PENDING&limit=100');
    const listed = OperatorWithdrawalListResponse.parse(queue.body).data.results.find(
      (w) => w.uuid === cleared.uuid,
    );
    expect(listed?.seller.suspension).toEqual({
      reason: 'Chargeback spike',
      suspended_at: suspension.suspended_at,
      suspended_by: suspension.suspended_by,
    });
    const active = await ops(h, operator, `suspensions/?seller_id=${seller.sellerId}`);
    expect(WithdrawalSuspensionListResponse.parse(active.body).data.results.map((s) => s.id)).toEqual([
      suspension.id,
    ]);

    const lifted = await unsuspend(seller.sellerId, { reason: 'Reviewed: legitimate sales' });
    expect(lifted.status).toBe(200);
    expect(WithdrawalSuspensionResponse.parse(lifted.body).data).toMatchObject({
      id: suspension.id,
      reason: 'Chargeback spike',
      lifted_at: expect.any(String),
      lifted_by: expect.any(String),
      lift_reason: 'Reviewed: legitimate sales',
    });
    expect((await unsuspend(seller.sellerId, { reason: 'again' })).status).toBe(409);
    const history = await ops(h, operator, `suspensions/?seller_id=${seller.sellerId}&active=false`);
    expect(WithdrawalSuspensionListResponse.parse(history.body).data.results).toHaveLength(1);
    const none = await ops(h, operator, `suspensions/?seller_id=${seller.sellerId}`);
    expect(WithdrawalSuspensionListResponse.parse(none.body).data.results).toEqual([]);

    // What waited for automatic approval during the suspension waits for an operator now: lifting a
    // suspension never lets it out unreviewed.
    await autoApprove(em(), h.system.withdrawals.runtime.sql, RULES);
    expect((await readWithdrawal(h, seller.key, cleared.uuid)).status).toBe('PENDING');
    expect((await opsView(cleared.uuid)).review_reasons).toEqual(['seller_suspended']);
    await approve(cleared.uuid);
    const claimed = (await claimAll()).map((w) => w.id);
    expect(claimed).toEqual(expect.arrayContaining([cleared.uuid, large.uuid]));
    expect((await requestWithdrawal(h, seller.key, { amount: 100, ...KEY })).status).toBe(201);
  });

  it('suspends in the operator key’s environment only', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const live = await newOperator(h, 'live');
    expect((await suspend(seller.sellerId, { reason: 'live risk' }, live)).status).toBe(200);
    expect((await requestWithdrawal(h, seller.key, { amount: 100, ...KEY })).status).toBe(201);
    const listed = await ops(h, operator, `suspensions/?seller_id=${seller.sellerId}`);
    expect(WithdrawalSuspensionListResponse.parse(listed.body).data.results).toEqual([]);
    expect((await unsuspend(seller.sellerId, { reason: 'cleared' }, live)).status).toBe(200);
  });
});

describe('suspension history', () => {
  it('keeps every suspension of a seller, newest first, in keyset pages', async () => {
    const seller = await newSeller(h);
    for (const reason of ['first', 'second']) {
      expect((await suspend(seller.sellerId, { reason })).status).toBe(200);
      expect((await unsuspend(seller.sellerId, { reason: `lift ${reason}` })).status).toBe(200);
    }
    const path = `suspensions/?seller_id=${seller.sellerId}&active=false&limit=1`;
    const page1 = WithdrawalSuspensionListResponse.parse((await ops(h, operator, path)).body).data;
    expect(page1.results.map((r) => [r.reason, r.lift_reason])).toEqual([['second', 'lift second']]);
    expect(page1.next_cursor).toEqual(expect.any(String));
    const page2 = WithdrawalSuspensionListResponse.parse(
      (await ops(h, operator, `${path}&cursor=${page1.next_cursor}`)).body,
    ).data;
    expect(page2.results.map((r) => [r.reason, r.lift_reason])).toEqual([['first', 'lift first']]);
    expect(page2.next_cursor).toBeNull();
  });
});

describe('operator cancel', () => {
  it('cancels an APPROVED withdrawal: the hold returns to the balance with withdrawal.canceled', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const w = await withdraw(h, seller.key, { amount: 4000, ...KEY });
    await approve(w.uuid);
    expect(await balance(h, seller.key)).toEqual({
      available_amount: SALE_NET - 4000,
      pending_amount: 4000,
      currency: 'BRL',
    });

    const res = await cancel(w.uuid, { reason: 'Seller asked by phone' });
    expect(res.status).toBe(200);
    expect(OperatorWithdrawalResponse.parse(res.body).data).toMatchObject({
      status: 'CANCELED',
      canceled_at: expect.any(String),
      cancel_reason: 'Seller asked by phone',
    });
    expect(await balance(h, seller.key)).toEqual({
      available_amount: SALE_NET,
      pending_amount: 0,
      currency: 'BRL',
    });
    const events = await eventsOf(h, w.uuid, ['withdrawal.canceled']);
    const canceled = events.filter((e) => e.routingKey === 'withdrawal.canceled');
    expect(canceled).toHaveLength(1);
    expect(WithdrawalReasonEventData.parse(canceled[0]?.payload).withdrawal).toMatchObject({
      uuid: w.uuid,
      status: 'CANCELED',
      reason: 'Seller asked by phone',
    });
    expect(await readWithdrawal(h, seller.key, w.uuid)).toMatchObject({
      status: 'CANCELED',
      cancel_reason: 'Seller asked by phone',
    });
    expect((await claimAll()).map((c) => c.id)).not.toContain(w.uuid);

    // Once only: the second cancel is a 409 and releases nothing more.
    const again = await cancel(w.uuid);
    expect(again.status).toBe(409);
    expect(again.body.message).toBe(
      'Only an APPROVED withdrawal can be canceled; this withdrawal is CANCELED.',
    );
    expect((await balance(h, seller.key)).available_amount).toBe(SALE_NET);
  });

  it('accepts an empty body, and replays a keyed cancel without a second event', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const w = await withdraw(h, seller.key, { amount: 2000, ...KEY });
    await approve(w.uuid);
    const headers = { 'Idempotency-Key': `cancel-${w.uuid}` };
    const first = await ops(h, operator, `${w.uuid}/cancel/`, { method: 'POST', headers });
    const replay = await ops(h, operator, `${w.uuid}/cancel/`, { method: 'POST', headers });
    expect([first.status, replay.status]).toEqual([200, 200]);
    expect(replay.body).toEqual(first.body);
    expect((first.body.data as { cancel_reason: unknown }).cancel_reason).toBeNull();
    await eventsOf(h, w.uuid, ['withdrawal.canceled']);
    expect(await balance(h, seller.key)).toEqual({
      available_amount: SALE_NET,
      pending_amount: 0,
      currency: 'BRL',
    });
    // Another event of the same withdrawal would have been published with the first: it is not there.
    const later = await withdraw(h, seller.key, { amount: 100, ...KEY });
    await eventsOf(h, later.uuid, ['withdrawal.requested']);
    expect(
      h.events.messages.filter(
        (m) =>
          m.routingKey === 'withdrawal.canceled' &&
          (m.payload.withdrawal as { uuid: string }).uuid === w.uuid,
      ),
    ).toHaveLength(1);
  });

  it('refuses with 409 a withdrawal that is PENDING, sent (PROCESSING) or PAID, and moves no money', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const pending = await withdraw(h, seller.key, { amount: 1000, ...KEY });
    const processing = await withdraw(h, seller.key, { amount: 1000, ...KEY });
    const paid = await withdraw(h, seller.key, { amount: 1000, ...KEY });
    await approve(paid.uuid);
    await payOut(paid.uuid);
    await approve(processing.uuid);
    expect((await claimAll()).map((w) => w.id)).toContain(processing.uuid);
    const before = await balance(h, seller.key);
    expect(before).toEqual({ available_amount: SALE_NET - 3000, pending_amount: 2000, currency: 'BRL' });

    for (const [w, status] of [
      [pending, 'PENDING'],
      [processing, 'PROCESSING'],
      [paid, 'PAID'],
    ] as const) {
      const res = await cancel(w.uuid, { reason: 'too late' });
      expect({ status: res.status, body: res.body }).toMatchObject({
        status: 409,
        body: {
          code: 'conflict',
          message: `Only an APPROVED withdrawal can be canceled; this withdrawal is ${status}.`,
        },
      });
    }
    expect(await balance(h, seller.key)).toEqual(before);
  });

  it('lets exactly one of a cancel and the payout claim win, for every withdrawal', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const amounts = [100, 200, 300, 400, 500, 600, 700, 800];
    const ids: string[] = [];
    for (const amount of amounts) {
      const w = await withdraw(h, seller.key, { amount: amount + 1000, ...KEY });
      await approve(w.uuid);
      ids.push(w.uuid);
    }
    // The cancels take the seller's lock one after the other; the claims, which take no seller lock,
    // start once the first cancel has answered, so they meet the cancels still waiting.
    const cancels = ids.map((id) => cancel(id, { reason: 'race' }));
    const first = await Promise.race(cancels.map((c, i) => c.then((answer) => ({ i, answer }))));
    expect(first.answer.status).toBe(200);
    const claims = Array.from({ length: 3 }, () => claimAll());
    const [claimed, answers] = await Promise.all([Promise.all(claims), Promise.all(cancels)]);
    const claimedIds = new Set(claimed.flat().map((w) => w.id));
    let pending = 0;
    const expected = new Map<string, string>();
    for (const [i, id] of ids.entries()) {
      const status = (await readWithdrawal(h, seller.key, id)).status;
      const answer = answers[i]?.status;
      if (status === 'CANCELED') {
        expect({ id, answer, claimed: claimedIds.has(id) }).toEqual({ id, answer: 200, claimed: false });
        expected.set(id, 'withdrawal.canceled');
      } else {
        expect({ id, status, answer, claimed: claimedIds.has(id) }).toEqual({
          id,
          status: 'PROCESSING',
          answer: 409,
          claimed: true,
        });
        expected.set(id, 'withdrawal.processing');
        pending += (amounts[i] as number) + 1000;
      }
    }
    expect(await balance(h, seller.key)).toEqual({
      available_amount: SALE_NET - pending,
      pending_amount: pending,
      currency: 'BRL',
    });
    // Each withdrawal has the event of the move that won, and not the other's.
    for (const [id, name] of expected) {
      const names = (await eventsOf(h, id, [name])).map((m) => m.routingKey);
      const other = name === 'withdrawal.canceled' ? 'withdrawal.processing' : 'withdrawal.canceled';
      expect({ id, names }).toEqual({ id, names: expect.not.arrayContaining([other]) });
    }
  });
});

describe('bad input', () => {
  it('answers 4xx in the documented shape, never 500', async () => {
    const seller = await newSeller(h);
    const missing = await suspend(seller.sellerId, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ code: 'validation_error', data: { reason: [expect.any(String)] } });
    const blank = await suspend(seller.sellerId, { reason: '   ' });
    expect(blank.status).toBe(400);
    const long = await suspend(seller.sellerId, { reason: 'x'.repeat(501) });
    expect(long.status).toBe(400);
    const badId = await suspend('not-a-uuid', { reason: 'x' });
    expect(badId.status).toBe(400);
    expect(badId.body).toMatchObject({ code: 'validation_error', data: { seller_id: [expect.any(String)] } });
    const noBody = await call(`${h.gateway.url}/ops/withdrawals/sellers/${seller.sellerId}/unsuspend/`, {
      method: 'POST',
      key: operator,
    });
    expect(noBody.status).toBe(400);
    const notJson = await call(`${h.gateway.url}/ops/withdrawals/sellers/${seller.sellerId}/suspend/`, {
      method: 'POST',
      key: operator,
      rawBody: '{"reason": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);

    const badReason = await cancel('9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', { reason: 42 });
    expect(badReason.status).toBe(400);
    expect(badReason.body).toMatchObject({
      code: 'validation_error',
      data: { reason: [expect.any(String)] },
    });
    const unknown = await cancel('9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d');
    expect(unknown.status).toBe(404);
    expect((await cancel('nope')).status).toBe(400);

    const badActive = await ops(h, operator, 'suspensions/?active=maybe');
    expect(badActive.status).toBe(400);
    expect(badActive.body).toMatchObject({
      code: 'validation_error',
      data: { active: [expect.any(String)] },
    });
    const badCursor = await ops(h, operator, 'suspensions/?cursor=garbage');
    expect(badCursor.status).toBe(400);
    const badSeller = await ops(h, operator, 'suspensions/?seller_id=nope');
    expect(badSeller.status).toBe(400);

    // Seller keys never reach operator routes.
    expect((await suspend(seller.sellerId, { reason: 'self' }, seller.key)).status).toBe(403);
    expect((await cancel('9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d')).status).toBe(404);
  });

  it('does not show or cancel another environment’s withdrawal (404)', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const w = await withdraw(h, seller.key, { amount: 1000, ...KEY });
    await approve(w.uuid);
    const live = await newOperator(h, 'live');
    const res = await ops(h, live, `${w.uuid}/cancel/`, { method: 'POST' });
    expect(res.status).toBe(404);
    expect((await opsView(w.uuid)).status).toBe('APPROVED');
  });
});
