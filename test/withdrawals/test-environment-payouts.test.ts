import { randomUUID } from 'node:crypto';
import type { Environment } from '@seller-api/contracts';
import { testEnv } from '../support/env';
import { startEfiSimulator, type EfiSimulator } from '../support/efi-simulator';
import { deleteQueues } from '../support/queues';
import { SERVICE_QUEUES } from '../support/system';
import { waitFor } from '../support/wait';
import { idEnvioOf } from '../../services/withdrawals/src/clients/efi-payouts';
import { loadWithdrawalsConfig } from '../../services/withdrawals/src/config';
import { balanceOf } from '../../services/withdrawals/src/db/balances';
import { getWithdrawal, requestWithdrawal } from '../../services/withdrawals/src/db/withdrawals';
import { startWithdrawals, type WithdrawalsService } from '../../services/withdrawals/src/service';
import { publishSale } from './helpers';

/*
 * The payout worker picks each payout's PSP from its withdrawal's environment: with PAYOUT_PSP=efi
 * (the Efí simulator) and auto-approval on, a live and a test withdrawal paid out in the same run
 * go, the live one to Efí, the test one to the sandbox; with PAYOUT_PSP_TEST=efi naming Efí's
 * homologation (a second simulator), the test one goes there.
 */

let live: EfiSimulator;
let homologation: EfiSimulator;
let env: NodeJS.ProcessEnv;
let service: WithdrawalsService;

beforeAll(async () => {
  [live, homologation] = await Promise.all([
    startEfiSimulator({
      clientId: 'live-client',
      clientSecret: 'live-secret',
      payingKey: 'payouts@seller-api.example',
    }),
    startEfiSimulator({
      clientId: 'homologation-client',
      clientSecret: 'homologation-secret',
      payingKey: 'payouts-homologation@seller-api.example',
    }),
  ]);
  env = testEnv({
    PAYOUT_PSP: 'efi',
    PAYOUT_PSP_API_URL: live.url,
    PAYOUT_PSP_CLIENT_ID: 'live-client',
    PAYOUT_PSP_CLIENT_SECRET: 'live-secret',
    PAYOUT_PIX_KEY: 'payouts@seller-api.example',
    WITHDRAWAL_AUTO_APPROVE_BELOW: '50000',
    PAYOUT_INTERVAL_MS: '50',
    PAYOUT_RETRY_AFTER_MS: '100',
  });
});
afterEach(async () => {
  await service?.stop();
});
afterAll(async () => {
  await Promise.all([live?.close(), homologation?.close()]);
  await deleteQueues(env.AMQP_URL as string, env.AMQP_NAMESPACE as string, SERVICE_QUEUES);
});

const em = () => service.runtime.orm.em.fork();

/** A funded seller of `environment` and its withdrawal, left PENDING for the worker to auto-approve. */
async function pendingWithdrawal(environment: Environment, amount: number) {
  const scope = { sellerId: randomUUID(), environment, sellerName: 'Loja' };
  await publishSale(env, { ...scope, name: 'Loja' }, 10000);
  await waitFor(async () => (await balanceOf(service.runtime.sql, scope)).available_amount === 10000);
  const w = await requestWithdrawal(
    em(),
    service.runtime.sql,
    scope,
    { amount, pix_key: '52998224725', pix_key_type: 'cpf' },
    // The request clears it for the automatic approval (docs/finance.md, "Payout controls").
    {
      minAmount: 100,
      autoApproval: { autoApproveBelow: 50000, dailyCount: 0, dailyAmount: 0, reviewNewPixKey: false },
    },
  );
  return { scope, id: w.id };
}

async function paid(withdrawal: Awaited<ReturnType<typeof pendingWithdrawal>>) {
  return waitFor(
    async () => {
      const row = await getWithdrawal(em(), withdrawal.scope, withdrawal.id);
      return row.status === 'PAID' ? row : null;
    },
    { what: `withdrawal ${withdrawal.id} PAID` },
  );
}

it('pays a test withdrawal in the sandbox and a live one through the live PSP, in the same run', async () => {
  service = await startWithdrawals(loadWithdrawalsConfig(env), { metrics: false });
  const seen = live.requests.length;
  const [liveOne, testOne] = [await pendingWithdrawal('live', 4000), await pendingWithdrawal('test', 3000)];
  service.payouts.kick();
  const [livePaid, testPaid] = await Promise.all([paid(liveOne), paid(testOne)]);

  expect(live.sends.get(idEnvioOf(liveOne.id))).toMatchObject({ valor: '40.00', status: 'REALIZADO' });
  expect(livePaid.payoutReference).toBe(live.sends.get(idEnvioOf(liveOne.id))?.endToEndId);
  // The sandbox's reference (E + 8 zeros + a digest of the id); the live PSP never heard of it.
  expect(testPaid.payoutReference).toMatch(/^E00000000[0-9a-f]{23}$/);
  expect(live.sends.has(idEnvioOf(testOne.id))).toBe(false);
  const paths = live.requests.slice(seen).map((r) => r.path);
  expect(paths.filter((p) => p.includes(idEnvioOf(testOne.id)))).toEqual([]);
  expect(await balanceOf(service.runtime.sql, testOne.scope)).toMatchObject({
    available_amount: 7000,
    pending_amount: 0,
  });
});

it('pays a test withdrawal through the homologation PSP named by PAYOUT_PSP_TEST, never the live one', async () => {
  service = await startWithdrawals(
    loadWithdrawalsConfig({
      ...env,
      PAYOUT_PSP_TEST: 'efi',
      PAYOUT_PSP_TEST_API_URL: homologation.url,
      PAYOUT_PSP_TEST_CLIENT_ID: 'homologation-client',
      PAYOUT_PSP_TEST_CLIENT_SECRET: 'homologation-secret',
      PAYOUT_PIX_KEY_TEST: 'payouts-homologation@seller-api.example',
    }),
    { metrics: false },
  );
  const seen = { requests: live.requests.length, tokens: live.tokenRequests };
  const testOne = await pendingWithdrawal('test', 2500);
  service.payouts.kick();
  const done = await paid(testOne);
  const send = homologation.sends.get(idEnvioOf(testOne.id));
  expect(send).toMatchObject({
    valor: '25.00',
    chave: 'payouts-homologation@seller-api.example',
    favorecido: { chave: '52998224725' },
  });
  expect(done.payoutReference).toBe(send?.endToEndId);
  expect(live.requests.slice(seen.requests)).toEqual([]);
  expect(live.tokenRequests).toBe(seen.tokens);
});
