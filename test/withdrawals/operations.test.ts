import { randomUUID } from 'node:crypto';
import { WithdrawalEventData, WithdrawalReasonEventData } from '@seller-api/contracts';
import { call } from '../support/system';
import {
  balance,
  balanceBecomes,
  eventsOf,
  fund,
  newOperator,
  newSeller,
  ops,
  publishLiveSale,
  readWithdrawal,
  useHarness,
  statusBecomes,
  withdraw,
  SALE_NET,
} from './helpers';

/** Operators' decisions, payouts through the sandbox PSP and the events of every status. */
let operator: string;

const RANDOM_KEY = '7d9f2c1a-4b3e-4f6a-9c2d-1e8b5a3f6d40';
const STATUS_OF: Record<string, string> = {
  'withdrawal.requested': 'PENDING',
  'withdrawal.approved': 'APPROVED',
  'withdrawal.processing': 'PROCESSING',
  'withdrawal.paid': 'PAID',
};

const h = useHarness();
beforeAll(async () => {
  operator = await newOperator(h);
});

describe('approval and payout', () => {
  it('approves: APPROVED, then PROCESSING and PAID from the PSP, each with its event; the hold is paid out', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const w = await withdraw(h, seller.key, { amount: 5000, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    const res = await ops(h, operator, `${w.uuid}/approve/`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      uuid: w.uuid,
      status: 'APPROVED',
      decided_at: expect.any(String),
      pix_key: '7d9f****************************6d40',
      environment: 'test',
      seller: { id: seller.sellerId, name: seller.email },
    });
    const paid = await statusBecomes(h, seller.key, w.uuid, 'PAID');
    expect(paid.paid_at).toEqual(expect.any(String));
    expect(paid.decided_at).toBe((res.body.data as { decided_at: string }).decided_at);
    expect(await balance(h, seller.key)).toEqual({
      available_amount: SALE_NET - 5000,
      pending_amount: 0,
      currency: 'BRL',
    });

    const names = ['withdrawal.requested', 'withdrawal.approved', 'withdrawal.processing', 'withdrawal.paid'];
    const events = await eventsOf(h, w.uuid, names);
    expect(events.map((e) => e.routingKey).sort()).toEqual([...names].sort());
    for (const event of events) {
      expect(event.headers).toMatchObject({ 'x-seller-id': seller.sellerId, 'x-environment': 'test' });
      const data = WithdrawalEventData.parse(event.payload);
      expect(data.withdrawal.status).toBe(STATUS_OF[event.routingKey]);
      expect(data.bank_data.pix_key).toBe('7d9f****************************6d40');
    }
    // withdrawal.paid exactly as docs/events.md shows it: nothing more, nothing less.
    const paidEvent = events.find((e) => e.routingKey === 'withdrawal.paid');
    expect(paidEvent?.payload).toEqual({
      withdrawal: {
        uuid: w.uuid,
        status: 'PAID',
        gross_amount: 5000,
        requested_at: w.requested_at,
        decided_at: paid.decided_at,
      },
      bank_data: { pix_key: '7d9f****************************6d40', pix_key_type: 'random' },
      seller: { name: seller.email },
    });
  });

  it('fails the payout to fail@example.com: FAILED with the reason, withdrawal.failed, funds released', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const w = await withdraw(h, seller.key, {
      amount: 3000,
      pix_key: 'fail@example.com',
      pix_key_type: 'email',
    });
    expect((await ops(h, operator, `${w.uuid}/approve/`, { method: 'POST' })).status).toBe(200);
    const failed = await statusBecomes(h, seller.key, w.uuid, 'FAILED');
    expect(failed).toMatchObject({
      failure_reason: 'Payout refused by the PSP: PIX key not found',
      paid_at: null,
      pix_key: 'fai*@example.com',
    });
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET, pending_amount: 0 });
    const events = await eventsOf(h, w.uuid, ['withdrawal.processing', 'withdrawal.failed']);
    const data = WithdrawalReasonEventData.parse(
      events.find((e) => e.routingKey === 'withdrawal.failed')?.payload,
    );
    expect(data.withdrawal).toMatchObject({
      status: 'FAILED',
      reason: 'Payout refused by the PSP: PIX key not found',
    });
    expect(data.bank_data).toEqual({ pix_key: 'fai*@example.com', pix_key_type: 'email' });
    expect(events.some((e) => e.routingKey === 'withdrawal.paid')).toBe(false);
  });
});

describe('denial', () => {
  it('denies with a reason: DENIED, withdrawal.denied with it, the hold back in the available balance', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const w = await withdraw(h, seller.key, {
      amount: 2000,
      pix_key: '+5511987654321',
      pix_key_type: 'phone',
    });
    expect(await balance(h, seller.key)).toMatchObject({
      available_amount: SALE_NET - 2000,
      pending_amount: 2000,
    });
    const res = await ops(h, operator, `${w.uuid}/deny/`, {
      method: 'POST',
      body: { reason: 'PIX key holder does not match the seller' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      status: 'DENIED',
      deny_reason: 'PIX key holder does not match the seller',
      decided_at: expect.any(String),
    });
    // The release commits with the denial.
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET, pending_amount: 0 });
    const events = await eventsOf(h, w.uuid, ['withdrawal.denied']);
    const denied = WithdrawalReasonEventData.parse(
      events.find((e) => e.routingKey === 'withdrawal.denied')?.payload,
    );
    expect(denied.withdrawal).toMatchObject({
      status: 'DENIED',
      reason: 'PIX key holder does not match the seller',
    });
    expect(denied.bank_data.pix_key).toBe('+5511*****4321');
    expect((await readWithdrawal(h, seller.key, w.uuid)).status).toBe('DENIED');
  });

  it('denies with an empty body, with or without Content-Type: reason null', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const a = await withdraw(h, seller.key, { amount: 100, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    const b = await withdraw(h, seller.key, { amount: 100, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    const bare = await ops(h, operator, `${a.uuid}/deny/`, { method: 'POST' });
    expect(bare.status).toBe(200);
    expect(bare.body.data).toMatchObject({ status: 'DENIED', deny_reason: null });
    const typed = await ops(h, operator, `${b.uuid}/deny/`, {
      method: 'POST',
      rawBody: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(typed.status).toBe(200);
    const events = await eventsOf(h, a.uuid, ['withdrawal.denied']);
    expect(
      WithdrawalReasonEventData.parse(events.find((e) => e.routingKey === 'withdrawal.denied')?.payload)
        .withdrawal.reason,
    ).toBeNull();
    await balanceBecomes(h, seller.key, { available_amount: SALE_NET, pending_amount: 0 });
  });

  it('refuses a reason that is not a short text', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const w = await withdraw(h, seller.key, { amount: 100, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    const res = await ops(h, operator, `${w.uuid}/deny/`, {
      method: 'POST',
      body: { reason: 'x'.repeat(501) },
    });
    expect(res.status).toBe(400);
    expect(res.body.data).toHaveProperty('reason');
    expect((await readWithdrawal(h, seller.key, w.uuid)).status).toBe('PENDING');
  });
});

describe('wrong moves and access', () => {
  it('answers 409 naming the status for a move the withdrawal cannot make, 404 for an unknown one', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const w = await withdraw(h, seller.key, { amount: 100, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    expect((await ops(h, operator, `${w.uuid}/deny/`, { method: 'POST' })).status).toBe(200);
    for (const action of ['approve', 'deny']) {
      const res = await ops(h, operator, `${w.uuid}/${action}/`, { method: 'POST' });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('this withdrawal is DENIED'),
      });
    }
    const paid = await withdraw(h, seller.key, { amount: 100, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    await ops(h, operator, `${paid.uuid}/approve/`, { method: 'POST' });
    await statusBecomes(h, seller.key, paid.uuid, 'PAID');
    const late = await ops(h, operator, `${paid.uuid}/deny/`, { method: 'POST' });
    expect(late.status).toBe(409);
    expect(late.body.message).toBe('Only a PENDING withdrawal can be denied; this withdrawal is PAID.');
    expect((await ops(h, operator, `${randomUUID()}/approve/`, { method: 'POST' })).status).toBe(404);
    expect((await ops(h, operator, `nope/approve/`, { method: 'POST' })).status).toBe(400);
  });

  it('refuses seller keys on operator routes (gateway, 403)', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const w = await withdraw(h, seller.key, { amount: 100, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    for (const [path, method] of [
      ['', 'GET'],
      [`${w.uuid}/approve/`, 'POST'],
      [`${w.uuid}/deny/`, 'POST'],
    ] as const) {
      const res = await ops(h, seller.key, path, { method });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    expect((await readWithdrawal(h, seller.key, w.uuid)).status).toBe('PENDING');
  });
});

describe('the operators’ queue', () => {
  it('lists PENDING withdrawals of every seller of the key’s environment, newest first', async () => {
    const testSeller = await newSeller(h);
    await fund(h, testSeller);
    const otherSeller = await newSeller(h);
    await fund(h, otherSeller);
    const liveSeller = await newSeller(h, 'live');
    await publishLiveSale(h, liveSeller, 20000);
    await balanceBecomes(h, liveSeller.key, { available_amount: 20000 });
    const t = await withdraw(h, testSeller.key, { amount: 700, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    const o = await withdraw(h, otherSeller.key, {
      amount: 600,
      pix_key: RANDOM_KEY,
      pix_key_type: 'random',
    });
    const l = await withdraw(h, liveSeller.key, { amount: 800, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    const decided = await withdraw(h, testSeller.key, {
      amount: 900,
      pix_key: RANDOM_KEY,
      pix_key_type: 'random',
    });
    await ops(h, operator, `${decided.uuid}/deny/`, { method: 'POST' });

    const uuids = async (query: string, key = operator) => {
      const res = await ops(h, key, query);
      expect(res.status).toBe(200);
      return (res.body.data as { results: Array<{ uuid: string }> }).results.map((r) => r.uuid);
    };
    const all = await uuids('?limit=100');
    expect(all.indexOf(t.uuid)).toBeGreaterThanOrEqual(0);
    // Newest first, across sellers.
    expect(all.indexOf(o.uuid)).toBeLessThan(all.indexOf(t.uuid));
    expect(all).not.toContain(decided.uuid);
    // A test key sees test withdrawals only (test/gateway/operator-environments.test.ts has the rest).
    expect(all).not.toContain(l.uuid);
    expect(await uuids('?environment=test&limit=100')).toEqual(all);
    expect(await uuids('?status=DENIED&limit=100')).toContain(decided.uuid);
    const one = await ops(h, operator, '?limit=1');
    expect((one.body.data as { next_cursor: string | null }).next_cursor).toEqual(expect.any(String));
    expect((await ops(h, operator, '?environment=prod')).status).toBe(400);
    // A live operator key sees and decides the live queue.
    const liveOperator = await newOperator(h, 'live');
    expect(await uuids('?limit=100', liveOperator)).toContain(l.uuid);
    expect((await ops(h, liveOperator, `${l.uuid}/approve/`, { method: 'POST' })).status).toBe(200);
    await statusBecomes(h, liveSeller.key, l.uuid, 'PAID');
    expect(await balance(h, liveSeller.key)).toMatchObject({ available_amount: 19200, pending_amount: 0 });
  });
});

describe('bypassing the gateway', () => {
  it('refuses operator routes without the gateway’s signed identity', async () => {
    const res = await call(`${h.system.services.withdrawals}/ops/withdrawals/`);
    expect(res.status).toBe(401);
  });
});
