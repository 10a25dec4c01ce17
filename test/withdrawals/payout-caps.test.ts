import { OperatorWithdrawalResponse, type OperatorWithdrawal } from '@seller-api/contracts';
import {
  balance,
  fund,
  newOperator,
  newSeller,
  ops,
  requestWithdrawal,
  statusBecomes,
  useHarness,
  withdraw,
  SALE_NET,
  type Seller,
} from './helpers';

/**
 * The automatic approval's rolling 24 h caps per seller and environment (docs/finance.md, "Payout
 * controls"), through the gateway with the payout worker running: what the caps let through is paid
 * without an operator, the rest waits with its reasons.
 */
let operator: string;

const h = useHarness({
  WITHDRAWAL_AUTO_APPROVE_BELOW: '1000',
  WITHDRAWAL_MIN_AMOUNT: '50',
  WITHDRAWAL_AUTO_APPROVE_DAILY_COUNT: '3',
  WITHDRAWAL_AUTO_APPROVE_DAILY_AMOUNT: '2000',
});
beforeAll(async () => {
  operator = await newOperator(h);
});

const KEY = { pix_key: 'seller@example.com', pix_key_type: 'email' };

async function opsView(uuid: string): Promise<OperatorWithdrawal> {
  const res = await ops(h, operator, `${uuid}/`);
  if (res.status !== 200) throw new Error(`ops read: ${res.status} ${res.text}`);
  return OperatorWithdrawalResponse.parse(res.body).data;
}

/** Requests withdrawals one after the other; returns their ids. */
async function withdrawAll(seller: Seller, amounts: number[]): Promise<string[]> {
  const ids: string[] = [];
  for (const amount of amounts) ids.push((await withdraw(h, seller.key, { amount, ...KEY })).uuid);
  return ids;
}

/**
 * Resolves once the payout worker has run after this moment: another seller's cleared withdrawal,
 * requested now, is paid. The worker approves oldest first, so everything cleared before it was seen.
 */
async function workerPassed(): Promise<void> {
  const witness = await newSeller(h);
  await fund(h, witness);
  const w = await withdraw(h, witness.key, { amount: 50, ...KEY });
  await statusBecomes(h, witness.key, w.uuid, 'PAID');
}

/** Moves a seller's withdrawals back in time, as if requested `ms` earlier (the window is rolling). */
async function age(ids: string[], ms: number): Promise<void> {
  await h.system.withdrawals.runtime.orm.em
    .fork()
    .execute(
      `update withdrawals.withdrawals set created_at = created_at - (? * interval '1 millisecond') where id = any(?::uuid[])`,
      [ms, `{${ids.join(',')}}`],
    );
}

it('approves at most the count cap in 24 h without an operator; the next waits with daily_count_cap', async () => {
  const seller = await newSeller(h);
  await fund(h, seller);
  const cleared = await withdrawAll(seller, [100, 100, 100]);
  for (const id of cleared) await statusBecomes(h, seller.key, id, 'PAID');
  const [fourth] = await withdrawAll(seller, [100]);

  const waiting = await opsView(fourth as string);
  expect(waiting).toMatchObject({ status: 'PENDING', review_reasons: ['daily_count_cap'] });
  expect((await opsView(cleared[0] as string)).review_reasons).toEqual([]);
  await workerPassed();
  expect((await opsView(fourth as string)).status).toBe('PENDING');
  expect(await balance(h, seller.key)).toEqual({
    available_amount: SALE_NET - 400,
    pending_amount: 100,
    currency: 'BRL',
  });

  // An operator's approval is the review the cap asks for: the waiting one is paid, and counts for nothing.
  const approved = await ops(h, operator, `${fourth}/approve/`, { method: 'POST' });
  expect(approved.status).toBe(200);
  await statusBecomes(h, seller.key, fourth as string, 'PAID');
});

it('does not count what operators approved: the caps bound only what left without review', async () => {
  const seller = await newSeller(h);
  await fund(h, seller);
  // Three above the limit (1000), approved by an operator: more than the count cap, more than the
  // amount cap (2000) together.
  const reviewed = await withdrawAll(seller, [1000, 1000, 1000]);
  for (const id of reviewed) {
    expect((await ops(h, operator, `${id}/approve/`, { method: 'POST' })).status).toBe(200);
    await statusBecomes(h, seller.key, id, 'PAID');
  }
  const small = await withdrawAll(seller, [100, 100, 100]);
  for (const id of small) expect((await opsView(id)).review_reasons).toEqual([]);
  for (const id of small) await statusBecomes(h, seller.key, id, 'PAID');
});

it('approves at most the amount cap in 24 h: reaching it exactly passes, one cent over waits', async () => {
  const seller = await newSeller(h);
  await fund(h, seller);
  const [a, b] = await withdrawAll(seller, [900, 900]);
  const over = await withdraw(h, seller.key, { amount: 201, ...KEY });
  const exact = await withdraw(h, seller.key, { amount: 200, ...KEY });
  expect((await opsView(over.uuid)).review_reasons).toEqual(['daily_amount_cap']);
  expect((await opsView(exact.uuid)).review_reasons).toEqual([]);
  for (const id of [a, b, exact.uuid]) await statusBecomes(h, seller.key, id as string, 'PAID');
  await workerPassed();
  expect((await opsView(over.uuid)).status).toBe('PENDING');
  // The count cap (3) is reached now too: the next one, however small, waits for both reasons.
  const next = await withdraw(h, seller.key, { amount: 50, ...KEY });
  expect((await opsView(next.uuid)).review_reasons).toEqual(['daily_count_cap', 'daily_amount_cap']);
});

it('counts over a rolling 24 hours: what left more than 24 h ago no longer counts, what left inside does', async () => {
  const seller = await newSeller(h);
  await fund(h, seller);
  const ids = await withdrawAll(seller, [100, 100, 100]);
  for (const id of ids) await statusBecomes(h, seller.key, id, 'PAID');
  // Two of the three a minute inside the window, one a minute outside it.
  await age(ids.slice(0, 2), 24 * 3600_000 - 60_000);
  await age(ids.slice(2), 24 * 3600_000 + 60_000);
  const fits = await withdraw(h, seller.key, { amount: 100, ...KEY });
  expect((await opsView(fits.uuid)).review_reasons).toEqual([]);
  await statusBecomes(h, seller.key, fits.uuid, 'PAID');
  const waits = await withdraw(h, seller.key, { amount: 100, ...KEY });
  expect((await opsView(waits.uuid)).review_reasons).toEqual(['daily_count_cap']);
});

it('lets no two simultaneous requests both slip under the cap', async () => {
  const seller = await newSeller(h);
  await fund(h, seller);
  const answers = await Promise.all(
    Array.from({ length: 6 }, () => requestWithdrawal(h, seller.key, { amount: 100, ...KEY })),
  );
  expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201]);
  const views = await Promise.all(answers.map((a) => opsView((a.body.data as { uuid: string }).uuid)));
  const cleared = views.filter((v) => v.review_reasons.length === 0);
  expect(cleared).toHaveLength(3);
  expect(views.filter((v) => v.review_reasons.includes('daily_count_cap'))).toHaveLength(3);
  for (const v of cleared) await statusBecomes(h, seller.key, v.uuid, 'PAID');
  expect(await balance(h, seller.key)).toEqual({
    available_amount: SALE_NET - 600,
    pending_amount: 300,
    currency: 'BRL',
  });
});

it('does not review a new PIX key when WITHDRAWAL_NEW_PIX_KEY_REVIEW is off (the default)', async () => {
  const seller = await newSeller(h);
  await fund(h, seller);
  const w = await withdraw(h, seller.key, {
    amount: 100,
    pix_key: '7d9f2c1a-4b3e-4f6a-9c2d-1e8b5a3f6d40',
    pix_key_type: 'random',
  });
  expect((await opsView(w.uuid)).review_reasons).toEqual([]);
  await statusBecomes(h, seller.key, w.uuid, 'PAID');
});

it('keeps the amount limit: at or above WITHDRAWAL_AUTO_APPROVE_BELOW waits, with its reason', async () => {
  const seller = await newSeller(h);
  await fund(h, seller);
  const w = await withdraw(h, seller.key, { amount: 1000, ...KEY });
  expect(await opsView(w.uuid)).toMatchObject({
    status: 'PENDING',
    review_reasons: ['amount_over_auto_limit'],
    seller: { id: seller.sellerId, suspension: null },
  });
});
