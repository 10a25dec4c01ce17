import { WithdrawalEventData } from '@seller-api/contracts';
import {
  balance,
  eventsOf,
  fund,
  newSeller,
  readWithdrawal,
  useHarness,
  statusBecomes,
  withdraw,
  SALE_NET,
} from './helpers';

/** WITHDRAWAL_AUTO_APPROVE_BELOW: small withdrawals go to the PSP without an operator. */

const h = useHarness({ WITHDRAWAL_AUTO_APPROVE_BELOW: '1000', WITHDRAWAL_MIN_AMOUNT: '50' });

const KEY = { pix_key: 'seller@example.com', pix_key_type: 'email' };

it('approves and pays a withdrawal below the threshold by itself, and leaves the others to an operator', async () => {
  const seller = await newSeller(h);
  await fund(h, seller);
  // At the threshold: not below it, so it waits for an operator. Requested first, so the run that
  // approves the small one has seen it too.
  const large = await withdraw(h, seller.key, { amount: 1000, ...KEY });
  const small = await withdraw(h, seller.key, { amount: 50, ...KEY });
  expect(small.status).toBe('PENDING');
  const paid = await statusBecomes(h, seller.key, small.uuid, 'PAID');
  expect(paid.decided_at).toEqual(expect.any(String));
  const events = await eventsOf(h, small.uuid, [
    'withdrawal.requested',
    'withdrawal.approved',
    'withdrawal.processing',
    'withdrawal.paid',
  ]);
  const approved = WithdrawalEventData.parse(
    events.find((e) => e.routingKey === 'withdrawal.approved')?.payload,
  );
  expect(approved.withdrawal).toMatchObject({ status: 'APPROVED', decided_at: paid.decided_at });
  expect((await readWithdrawal(h, seller.key, large.uuid)).status).toBe('PENDING');
  expect(await balance(h, seller.key)).toEqual({
    available_amount: SALE_NET - 1050,
    pending_amount: 1000,
    currency: 'BRL',
  });
});

it('uses the configured minimum', async () => {
  const seller = await newSeller(h);
  await fund(h, seller);
  const res = await withdraw(h, seller.key, { amount: 50, ...KEY }).catch((err: Error) => err);
  expect(res).not.toBeInstanceOf(Error);
  await expect(withdraw(h, seller.key, { amount: 49, ...KEY })).rejects.toThrow(/400.*at least 50 cents/);
});
