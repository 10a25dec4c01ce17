import { randomUUID } from 'node:crypto';
import { captureEvents } from '../support/events';
import { deleteQueues } from '../support/queues';
import { SERVICE_QUEUES } from '../support/system';
import { testEnv } from '../support/env';
import { waitFor } from '../support/wait';
import { loadWithdrawalsConfig } from '../../services/withdrawals/src/config';
import { balanceOf } from '../../services/withdrawals/src/db/balances';
import type {
  PayoutAdapter,
  PayoutOutcome,
  PayoutRequest,
} from '../../services/withdrawals/src/domain/payouts';
import {
  decideWithdrawal,
  getWithdrawal,
  requestWithdrawal,
} from '../../services/withdrawals/src/db/withdrawals';
import { startWithdrawals, type WithdrawalsService } from '../../services/withdrawals/src/service';
import { publishSale } from './helpers';

/**
 * The payout worker against a PSP that misbehaves: the service alone (no gateway), with an adapter
 * that first fails on the network, then answers "still processing", then pays. The withdrawal must stay
 * PROCESSING through all of it, be asked about again after its lease, and be paid out once.
 */
class ScriptedPsp implements PayoutAdapter {
  readonly name = 'scripted';
  readonly calls: PayoutRequest[] = [];
  constructor(private readonly script: Array<PayoutOutcome | Error>) {}
  async pay(request: PayoutRequest): Promise<PayoutOutcome> {
    this.calls.push(request);
    const next = this.script[Math.min(this.calls.length, this.script.length) - 1];
    if (!next) throw new Error('script is empty');
    if (next instanceof Error) throw next;
    return next;
  }
}

const env = testEnv({ PAYOUT_INTERVAL_MS: '50', PAYOUT_RETRY_AFTER_MS: '150' });
const psp = new ScriptedPsp([
  new Error('socket hang up'),
  { status: 'processing' },
  { status: 'paid', reference: 'E12345678202601011200abcdefghijk' },
]);
let service: WithdrawalsService;
let events: Awaited<ReturnType<typeof captureEvents>>;

beforeAll(async () => {
  // The scripted PSP stands in for both environments' adapters.
  service = await startWithdrawals(loadWithdrawalsConfig(env), {
    metrics: false,
    payouts: { live: psp, test: psp },
  });
  events = await captureEvents(env.AMQP_URL as string, env.AMQP_NAMESPACE as string, 'withdrawals.events');
});
afterAll(async () => {
  await events.close();
  await service.stop();
  await deleteQueues(env.AMQP_URL as string, env.AMQP_NAMESPACE as string, SERVICE_QUEUES);
});

it('keeps a payout PROCESSING through PSP errors, asks again after the lease, and pays it out once', async () => {
  const em = () => service.runtime.orm.em.fork();
  const scope = { sellerId: randomUUID(), environment: 'test' as const, sellerName: 'Loja' };
  await publishSale(env, { ...scope, name: 'Loja' }, 10000);
  await waitFor(async () => (await balanceOf(service.runtime.sql, scope)).available_amount === 10000);

  const w = await requestWithdrawal(
    em(),
    service.runtime.sql,
    scope,
    { amount: 4000, pix_key: '52998224725', pix_key_type: 'cpf' },
    { minAmount: 100 },
  );
  await decideWithdrawal(em(), service.runtime.sql, w.id, { action: 'approve' }, 'operator-1');
  service.payouts.kick();

  const paid = await waitFor(async () => {
    const row = await getWithdrawal(em(), scope, w.id);
    return row.status === 'PAID' ? row : null;
  });
  expect(psp.calls).toHaveLength(3);
  expect(new Set(psp.calls.map((c) => c.withdrawalId))).toEqual(new Set([w.id]));
  expect(psp.calls[0]).toMatchObject({ amount: 4000, pixKey: '52998224725', pixKeyType: 'cpf' });
  expect(paid).toMatchObject({ payoutAttempts: 3, payoutReference: 'E12345678202601011200abcdefghijk' });
  expect(await balanceOf(service.runtime.sql, scope)).toEqual({
    available_amount: 6000,
    pending_amount: 0,
    currency: 'BRL',
  });

  const mine = await events.waitFor(
    (m) => (m.payload.withdrawal as { uuid: string }).uuid === w.id && m.routingKey === 'withdrawal.paid',
  );
  expect(mine).toHaveLength(1);
  const names = events.messages
    .filter((m) => (m.payload.withdrawal as { uuid: string }).uuid === w.id)
    .map((m) => m.routingKey);
  // One processing event however many times the PSP was asked.
  expect(names.filter((n) => n === 'withdrawal.processing')).toHaveLength(1);
  expect(names.filter((n) => n === 'withdrawal.paid')).toHaveLength(1);
});

it('refuses a second decision once the payout started', async () => {
  const em = () => service.runtime.orm.em.fork();
  const scope = { sellerId: randomUUID(), environment: 'live' as const, sellerName: null };
  await publishSale(env, { ...scope, name: '' }, 500);
  await waitFor(async () => (await balanceOf(service.runtime.sql, scope)).available_amount === 500);
  const w = await requestWithdrawal(
    em(),
    service.runtime.sql,
    scope,
    { amount: 500, pix_key: 'a@example.com', pix_key_type: 'email' },
    { minAmount: 100 },
  );
  await decideWithdrawal(em(), service.runtime.sql, w.id, { action: 'approve' }, 'operator-1');
  await waitFor(async () => (await getWithdrawal(em(), scope, w.id)).status === 'PAID');
  await expect(
    decideWithdrawal(em(), service.runtime.sql, w.id, { action: 'deny', reason: null }, 'operator-1'),
  ).rejects.toMatchObject({
    status: 409,
    message: 'Only a PENDING withdrawal can be denied; this withdrawal is PAID.',
  });
});
