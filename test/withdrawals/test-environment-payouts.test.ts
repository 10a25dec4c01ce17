import { randomUUID } from 'node:crypto';
import type { Environment } from '@seller-api/contracts';
import { testEnv } from '../support/env';
import { startPspSimulator, type PspSimulator } from '../support/psp-simulator';
import { deleteQueues } from '../support/queues';
import { SERVICE_QUEUES } from '../support/system';
import { waitFor } from '../support/wait';
import { idEnvioOf } from '../../services/withdrawals/src/clients/bacen-api-pix-payouts';
import { loadWithdrawalsConfig } from '../../services/withdrawals/src/config';
import { balanceOf } from '../../services/withdrawals/src/domain/balance';
import { getWithdrawal, requestWithdrawal } from '../../services/withdrawals/src/domain/withdrawals';
import { startWithdrawals, type WithdrawalsService } from '../../services/withdrawals/src/service';
import { publishSale } from './helpers';

/*
 * The payout worker picks each payout's PSP from its withdrawal's environment: with PAYOUT_PSP the
 * real PSP (the simulator) and auto-approval on, a live and a test withdrawal paid out in the same run
 * go, the live one to the PSP, the test one to the sandbox; with PAYOUT_PSP_TEST naming a homologation
 * PSP (a second simulator), the test one goes there.
 */

let live: PspSimulator;
let homologation: PspSimulator;
let env: NodeJS.ProcessEnv;
let service: WithdrawalsService;

beforeAll(async () => {
  [live, homologation] = await Promise.all([
    startPspSimulator({ clientId: 'live-client', clientSecret: 'live-secret' }),
    startPspSimulator({ clientId: 'homologation-client', clientSecret: 'homologation-secret' }),
  ]);
  env = testEnv({
    PAYOUT_PSP: 'bacen-api-pix',
    PAYOUT_PSP_API_URL: live.url,
    PAYOUT_PSP_CLIENT_ID: 'live-client',
    PAYOUT_PSP_CLIENT_SECRET: 'live-secret',
    PAYOUT_PIX_KEY: 'payouts@seller-api.example',
    WITHDRAWAL_AUTO_APPROVE_BELOW: '50000',
    PAYOUT_INTERVAL_MS: '50',
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
  await waitFor(async () => (await balanceOf(em(), scope)).available_amount === 10000);
  const w = await requestWithdrawal(
    em(),
    scope,
    { amount, pix_key: '52998224725', pix_key_type: 'cpf' },
    { minAmount: 100 },
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

  expect(live.envios.get(idEnvioOf(liveOne.id))).toMatchObject({ valor: '40.00', status: 'REALIZADO' });
  expect(livePaid.payoutReference).toBe(live.envios.get(idEnvioOf(liveOne.id))?.e2eId);
  // The sandbox's reference (E + 8 zeros + a digest of the id); the live PSP never heard of it.
  expect(testPaid.payoutReference).toMatch(/^E00000000[0-9a-f]{23}$/);
  expect(live.envios.has(idEnvioOf(testOne.id))).toBe(false);
  const paths = live.requests.slice(seen).map((r) => r.path);
  expect(paths.filter((p) => p.includes(idEnvioOf(testOne.id)))).toEqual([]);
  expect(await balanceOf(em(), testOne.scope)).toMatchObject({ available_amount: 7000, pending_amount: 0 });
});

it('pays a test withdrawal through the homologation PSP named by PAYOUT_PSP_TEST, never the live one', async () => {
  service = await startWithdrawals(
    loadWithdrawalsConfig({
      ...env,
      PAYOUT_PSP_TEST: 'bacen-api-pix',
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
  const envio = homologation.envios.get(idEnvioOf(testOne.id));
  expect(envio).toMatchObject({
    valor: '25.00',
    pagador: { chave: 'payouts-homologation@seller-api.example' },
    favorecido: { chave: '52998224725' },
  });
  expect(done.payoutReference).toBe(envio?.e2eId);
  expect(live.requests.slice(seen.requests)).toEqual([]);
  expect(live.tokenRequests).toBe(seen.tokens);
});
