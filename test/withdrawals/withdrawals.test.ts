import { randomUUID } from 'node:crypto';
import {
  Withdrawal,
  WithdrawalEventData,
  WithdrawalListResponse,
  type WithdrawalList,
} from '@seller-api/contracts';
import { call, createKey } from '../support/system';
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
  statusBecomes,
  withdraw,
  SALE_NET,
  type Seller,
} from './helpers';

/** The seller's side: requesting, reading and listing withdrawals, and what is refused. */
let rich: Seller;

const RANDOM_KEY = '7d9f2c1a-4b3e-4f6a-9c2d-1e8b5a3f6d40';

const h = useHarness();
beforeAll(async () => {
  rich = await newSeller(h);
  for (let i = 0; i < 3; i += 1) await fund(h, rich);
});

describe('requesting a withdrawal', () => {
  it('answers 201 PENDING with the key masked, holds the amount at once and emits withdrawal.requested', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const res = await requestWithdrawal(h, seller.key, {
      amount: 5000,
      pix_key: RANDOM_KEY.toUpperCase(),
      pix_key_type: 'random',
    });
    expect(res.status).toBe(201);
    const w = Withdrawal.parse(res.body.data);
    expect(w).toMatchObject({
      status: 'PENDING',
      amount: 5000,
      pix_key: '7d9f****************************6d40',
      pix_key_type: 'random',
      decided_at: null,
      paid_at: null,
      failure_reason: null,
      deny_reason: null,
    });
    expect(res.text).not.toContain(RANDOM_KEY);
    // The hold commits with the withdrawal: the very next read shows it.
    expect(await balance(h, seller.key)).toEqual({
      available_amount: SALE_NET - 5000,
      pending_amount: 5000,
      currency: 'BRL',
    });
    const [requested] = await eventsOf(h, w.uuid, ['withdrawal.requested']);
    expect(requested?.headers).toMatchObject({ 'x-seller-id': seller.sellerId, 'x-environment': 'test' });
    expect(WithdrawalEventData.parse(requested?.payload)).toEqual({
      withdrawal: {
        uuid: w.uuid,
        status: 'PENDING',
        gross_amount: 5000,
        requested_at: w.requested_at,
        decided_at: null,
      },
      bank_data: { pix_key: '7d9f****************************6d40', pix_key_type: 'random' },
      seller: { name: seller.email },
    });
  });

  it.each([
    ['cpf', '529.982.247-25', '529.***.***-25', '52998224725'],
    ['phone', '+5511987654321', '+5511*****4321', '+5511987654321'],
    ['email', 'seller@example.com', 'sel***@example.com', 'seller@example.com'],
  ])('masks a %s key by its type and stores it clean', async (type, key, masked, stored) => {
    const w = await withdraw(h, rich.key, { amount: 100, pix_key: key, pix_key_type: type });
    expect(w.pix_key).toBe(masked);
    expect((await readWithdrawal(h, rich.key, w.uuid)).pix_key).toBe(masked);
    const [row] = await h.system.payments.runtime.orm.em
      .fork()
      .execute<Array<{ pix_key: string }>>(`select pix_key from withdrawals.withdrawals where id = ?`, [
        w.uuid,
      ]);
    expect(row?.pix_key).toBe(stored);
    const [event] = await eventsOf(h, w.uuid, ['withdrawal.requested']);
    expect((event?.payload.bank_data as { pix_key: string }).pix_key).toBe(masked);
  });
});

describe('refusals', () => {
  it('refuses an amount above the available balance with 409 insufficient_balance, as a refund', async () => {
    const seller = await newSeller(h);
    const broke = await requestWithdrawal(h, seller.key, {
      amount: 1000,
      pix_key: RANDOM_KEY,
      pix_key_type: 'random',
    });
    expect(broke.status).toBe(409);
    expect(broke.body).toEqual({
      code: 'insufficient_balance',
      message: 'The available balance (0 cents) does not cover this withdrawal (1000 cents).',
      request_id: expect.any(String),
    });
    await fund(h, seller);
    const over = await requestWithdrawal(h, seller.key, {
      amount: SALE_NET + 1,
      pix_key: RANDOM_KEY,
      pix_key_type: 'random',
    });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({
      code: 'insufficient_balance',
      message: `The available balance (${SALE_NET} cents) does not cover this withdrawal (${SALE_NET + 1} cents).`,
    });
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET, pending_amount: 0 });
    const all = await requestWithdrawal(h, seller.key, {
      amount: SALE_NET,
      pix_key: RANDOM_KEY,
      pix_key_type: 'random',
    });
    expect(all.status).toBe(201);
  });

  it('refuses an amount under WITHDRAWAL_MIN_AMOUNT, reporting a bad key with it', async () => {
    const res = await requestWithdrawal(h, rich.key, { amount: 99, pix_key: 'nope', pix_key_type: 'email' });
    expect(res.status).toBe(400);
    expect(res.body.data).toEqual({
      amount: ['Must be at least 100 cents.'],
      pix_key: ['Must be a valid e-mail address.'],
    });
  });

  it.each([
    ['email', 'not-an-email'],
    ['cpf', '529.982.247-24'],
    ['cpf', '111.111.111-11'],
    ['phone', '11987654321'],
    ['phone', '+55119876'],
    ['phone', '+1 202 555 0100'],
    ['random', 'abc'],
    ['random', '52998224725'],
  ])('refuses a %s key %s with a 400 on pix_key', async (type, key) => {
    const res = await requestWithdrawal(h, rich.key, { amount: 100, pix_key: key, pix_key_type: type });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.data as object)).toEqual(['pix_key']);
  });

  it('refuses an unknown key type, a missing field and a non-integer amount', async () => {
    const res = await requestWithdrawal(h, rich.key, {
      amount: 10.5,
      pix_key: RANDOM_KEY,
      pix_key_type: 'iban',
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.data as object).sort()).toEqual(['amount', 'pix_key_type']);
    const empty = await requestWithdrawal(h, rich.key, {});
    expect(Object.keys(empty.body.data as object).sort()).toEqual(['amount', 'pix_key', 'pix_key_type']);
  });

  it('refuses operator keys on /finance/ (gateway, 403)', async () => {
    const { key } = await createKey(h.gateway.service, { role: 'operator' });
    expect((await call(`${h.gateway.url}/finance/balance/`, { key })).status).toBe(403);
    const res = await requestWithdrawal(h, key, { amount: 100, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });
});

describe('reading and listing', () => {
  it('lists the seller’s withdrawals newest first, a page at a time, filtered by status', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const made: string[] = [];
    for (const amount of [100, 200, 300]) {
      made.push(
        (await withdraw(h, seller.key, { amount, pix_key: RANDOM_KEY, pix_key_type: 'random' })).uuid,
      );
    }
    const list = (query: string) =>
      call(`${h.gateway.url}/finance/withdrawals/${query}`, { key: seller.key });
    const first = WithdrawalListResponse.parse((await list('?limit=2')).body).data;
    expect(first.results.map((w) => w.uuid)).toEqual([made[2], made[1]]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = WithdrawalListResponse.parse(
      (await list(`?limit=2&cursor=${first.next_cursor}`)).body,
    ).data;
    expect(second).toEqual({ results: [expect.objectContaining({ uuid: made[0] })], next_cursor: null });
    expect(second.results[0]?.pix_key).toBe('7d9f****************************6d40');
    expect(WithdrawalListResponse.parse((await list('?status=PAID')).body).data.results).toEqual([]);
    expect((await list('?cursor=garbage')).status).toBe(400);
    expect((await list('?status=DONE')).status).toBe(400);
    // Another seller sees none of them.
    const other = await newSeller(h);
    const theirs = await call(`${h.gateway.url}/finance/withdrawals/`, { key: other.key });
    expect(WithdrawalListResponse.parse(theirs.body).data.results).toEqual([]);
  });

  it('filters by several statuses at once, through pages, and still by one', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const operator = await newOperator(h);
    const make = async (amount: number) =>
      (await withdraw(h, seller.key, { amount, pix_key: RANDOM_KEY, pix_key_type: 'random' })).uuid;
    const paid = await make(100);
    const denied = await make(200);
    const pending = await make(300);
    expect((await ops(h, operator, `${paid}/approve/`, { method: 'POST' })).status).toBe(200);
    expect((await ops(h, operator, `${denied}/deny/`, { method: 'POST' })).status).toBe(200);
    await statusBecomes(h, seller.key, paid, 'PAID');

    const list = (query: string) =>
      call(`${h.gateway.url}/finance/withdrawals/${query}`, { key: seller.key });
    const uuids = async (query: string) =>
      WithdrawalListResponse.parse((await list(query)).body).data.results.map((w) => w.uuid);
    // Under way: every status that is not final yet.
    expect(await uuids('?status=PENDING,APPROVED,PROCESSING')).toEqual([pending]);
    expect(await uuids('?status=PAID,DENIED')).toEqual([denied, paid]);
    expect(await uuids('?status=PAID, DENIED,PAID')).toEqual([denied, paid]);
    expect(await uuids('?status=PENDING')).toEqual([pending]);
    expect(await uuids('?status=FAILED')).toEqual([]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: WithdrawalList = WithdrawalListResponse.parse(
        (await list(`?status=PENDING,DENIED,PAID&limit=1${cursor ? `&cursor=${cursor}` : ''}`)).body,
      ).data;
      expect(page.results.length).toBeLessThanOrEqual(1);
      seen.push(...page.results.map((w) => w.uuid));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([pending, denied, paid]);
    for (const query of [
      '?status=PENDING,DONE',
      '?status=',
      '?status=PENDING,',
      '?status=pending',
      '?status=PENDING&status=PAID',
    ]) {
      const res = await list(query);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.data).toHaveProperty(['status']);
    }
  });

  it('reads one: 403 for another seller’s, 404 from the other environment, 404 unknown, 400 bad id', async () => {
    const w = await withdraw(h, rich.key, { amount: 100, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    expect((await readWithdrawal(h, rich.key, w.uuid)).uuid).toBe(w.uuid);
    const path = (id: string) => `${h.gateway.url}/finance/withdrawals/${id}/`;
    const other = await newSeller(h);
    const forbidden = await call(path(w.uuid), { key: other.key });
    expect(forbidden.status).toBe(403);
    // The same seller's live key: objects of the other environment do not exist for it.
    const live = await createKey(h.gateway.service, { email: rich.email, environment: 'live' });
    expect(live.sellerId).toBe(rich.sellerId);
    expect((await call(path(w.uuid), { key: live.key })).status).toBe(404);
    expect((await call(path(randomUUID()), { key: rich.key })).status).toBe(404);
    expect((await call(path('not-a-uuid'), { key: rich.key })).status).toBe(400);
  });
});

describe('concurrency', () => {
  it('never lets withdrawals sent at the same moment spend more than the balance', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    // 14401 available: five requests of 4000 at once, only three fit.
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        requestWithdrawal(h, seller.key, { amount: 4000, pix_key: RANDOM_KEY, pix_key_type: 'random' }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 409, 409]);
    expect(await balance(h, seller.key)).toEqual({
      available_amount: SALE_NET - 12000,
      pending_amount: 12000,
      currency: 'BRL',
    });
  });

  it('never lets two withdrawals of most of the balance both through', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const body = { amount: 10000, pix_key: RANDOM_KEY, pix_key_type: 'random' };
    const [a, b] = await Promise.all([
      requestWithdrawal(h, seller.key, body),
      requestWithdrawal(h, seller.key, body),
    ]);
    expect([a?.status, b?.status].sort()).toEqual([201, 409]);
    expect((await balance(h, seller.key)).available_amount).toBe(SALE_NET - 10000);
  });
});
