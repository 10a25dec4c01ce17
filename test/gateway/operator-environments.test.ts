import { randomUUID } from 'node:crypto';
import { PanelSessionResponse } from '@seller-api/contracts';
import { login, originOf, panelCall, panelUser } from '../panel/helpers';
import {
  balanceBecomes,
  fund,
  newOperator,
  newSeller,
  ops,
  publishLiveSale,
  readWithdrawal,
  useHarness,
  withdraw,
  type Seller,
} from '../withdrawals/helpers';

/**
 * Operators see and decide the withdrawals of their own environment only: an operator
 * key, or a panel session, of `test` never lists, reads, approves or denies a `live` withdrawal, nor the
 * reverse. One of the other environment answers exactly as an id that does not exist.
 */
let testSeller: Seller;
let liveSeller: Seller;

const RANDOM_KEY = '7d9f2c1a-4b3e-4f6a-9c2d-1e8b5a3f6d40';

const h = useHarness();
beforeAll(async () => {
  testSeller = await newSeller(h);
  await fund(h, testSeller);
  liveSeller = await newSeller(h, 'live');
  // The sandbox routes are test only: the live sale arrives as payments announces a PSP's payment.
  await publishLiveSale(h, liveSeller, 20000);
  await balanceBecomes(h, liveSeller.key, { available_amount: 20000 });
});

/** A PENDING withdrawal of each environment. */
async function pendingPair() {
  const t = await withdraw(h, testSeller.key, { amount: 700, pix_key: RANDOM_KEY, pix_key_type: 'random' });
  const l = await withdraw(h, liveSeller.key, { amount: 800, pix_key: RANDOM_KEY, pix_key_type: 'random' });
  return { t, l };
}

const uuidsOf = (body: Record<string, unknown>) =>
  (body.data as { results: Array<{ uuid: string }> }).results.map((r) => r.uuid);

describe('operator keys', () => {
  it('list, read, approve and deny only withdrawals of their own environment', async () => {
    const { t, l } = await pendingPair();
    const testOperator = await newOperator(h, 'test');
    const liveOperator = await newOperator(h, 'live');
    const unknown = await ops(h, testOperator, `${randomUUID()}/`);
    expect(unknown.status).toBe(404);

    // Lists: each sees its own environment's queue only.
    const testList = await ops(h, testOperator, '?limit=100');
    expect(testList.status).toBe(200);
    expect(uuidsOf(testList.body)).toContain(t.uuid);
    expect(uuidsOf(testList.body)).not.toContain(l.uuid);
    const liveList = await ops(h, liveOperator, '?limit=100');
    expect(uuidsOf(liveList.body)).toContain(l.uuid);
    expect(uuidsOf(liveList.body)).not.toContain(t.uuid);
    expect((await ops(h, testOperator, '?environment=test&limit=100')).status).toBe(200);
    const otherFilter = await ops(h, testOperator, '?environment=live&limit=100');
    expect(otherFilter.status).toBe(403);
    expect(otherFilter.body.code).toBe('forbidden');
    for (const status of ['PENDING', 'APPROVED', 'DENIED', 'PAID']) {
      const res = await ops(h, testOperator, `?status=${status}&limit=100`);
      expect((res.body.data as { results: Array<{ environment: string }> }).results).not.toContainEqual(
        expect.objectContaining({ environment: 'live' }),
      );
    }

    // Reads: the own environment's, with environment and seller; the other's is unknown.
    const read = await ops(h, testOperator, `${t.uuid}/`);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ uuid: t.uuid, environment: 'test', status: 'PENDING' });
    for (const [operator, other] of [
      [testOperator, l.uuid],
      [liveOperator, t.uuid],
    ] as const) {
      const res = await ops(h, operator, `${other}/`);
      expect(res.status).toBe(404);
      expect({ ...res.body, request_id: undefined }).toEqual({ ...unknown.body, request_id: undefined });
      // Decisions: the other environment's withdrawal does not exist for this key.
      const approve = await ops(h, operator, `${other}/approve/`, { method: 'POST' });
      const deny = await ops(h, operator, `${other}/deny/`, { method: 'POST', body: { reason: 'x' } });
      const keyed = await ops(h, operator, `${other}/approve/`, {
        method: 'POST',
        headers: { 'idempotency-key': randomUUID() },
      });
      for (const refused of [approve, deny, keyed]) {
        expect(refused.status).toBe(404);
        expect(refused.body).toMatchObject({ code: 'not_found', message: 'Withdrawal not found.' });
      }
    }
    // Nothing moved: both are still PENDING, each seller's money still held.
    expect((await readWithdrawal(h, testSeller.key, t.uuid)).status).toBe('PENDING');
    expect((await readWithdrawal(h, liveSeller.key, l.uuid)).status).toBe('PENDING');

    // Each decides its own.
    expect((await ops(h, liveOperator, `${l.uuid}/deny/`, { method: 'POST' })).status).toBe(200);
    expect((await ops(h, testOperator, `${t.uuid}/deny/`, { method: 'POST' })).status).toBe(200);
    expect((await readWithdrawal(h, liveSeller.key, l.uuid)).status).toBe('DENIED');
  });
});

describe('panel sessions of an operator', () => {
  it('see and decide the withdrawals of the session’s environment only', async () => {
    const { t, l } = await pendingPair();
    const origin = originOf(h.gateway.url);
    const user = await panelUser(h.gateway.service, 'operator');
    const session = await login(origin, user.email, user.password);
    expect(session.status).toBe(200);
    const list = () => panelCall(origin, '/panel/api/v1/ops/withdrawals/?limit=100', session);
    const decide = (uuid: string, action: 'approve' | 'deny') =>
      panelCall(origin, `/panel/api/v1/ops/withdrawals/${uuid}/${action}/`, session, {
        method: 'POST',
        body: {},
      });

    // A session starts in test.
    let res = await list();
    expect(res.status).toBe(200);
    expect(uuidsOf(res.body)).toContain(t.uuid);
    expect(uuidsOf(res.body)).not.toContain(l.uuid);
    expect((await panelCall(origin, `/panel/api/v1/ops/withdrawals/${l.uuid}/`, session)).status).toBe(404);
    expect((await decide(l.uuid, 'approve')).status).toBe(404);
    expect((await decide(l.uuid, 'deny')).status).toBe(404);
    expect((await readWithdrawal(h, liveSeller.key, l.uuid)).status).toBe('PENDING');

    // Switched to live, the other way round.
    const live = await panelCall(origin, '/panel/api/session/environment', session, {
      method: 'POST',
      body: { environment: 'live' },
    });
    expect(PanelSessionResponse.parse(live.body).data.environment).toBe('live');
    res = await list();
    expect(uuidsOf(res.body)).toContain(l.uuid);
    expect(uuidsOf(res.body)).not.toContain(t.uuid);
    expect((await decide(t.uuid, 'approve')).status).toBe(404);
    expect((await decide(t.uuid, 'deny')).status).toBe(404);
    expect((await readWithdrawal(h, testSeller.key, t.uuid)).status).toBe('PENDING');
    const denied = await decide(l.uuid, 'deny');
    expect(denied.status).toBe(200);
    expect(denied.body.data).toMatchObject({ uuid: l.uuid, status: 'DENIED', environment: 'live' });
  });
});
