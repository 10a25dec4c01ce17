import { randomUUID } from 'node:crypto';
import type { PixKeyType } from '@seller-api/contracts';
import { testEnv } from '../support/env';
import { startPspSimulator, type PspSimulator } from '../support/psp-simulator';
import { waitFor } from '../support/wait';
import { idEnvioOf } from '../../services/withdrawals/src/clients/bacen-api-pix-payouts';
import { loadWithdrawalsConfig } from '../../services/withdrawals/src/config';
import { balanceOf } from '../../services/withdrawals/src/domain/balance';
import {
  decideWithdrawal,
  getWithdrawal,
  requestWithdrawal,
} from '../../services/withdrawals/src/domain/withdrawals';
import { startWithdrawals, type WithdrawalsService } from '../../services/withdrawals/src/service';
import { deleteQueues } from '../support/queues';
import { SERVICE_QUEUES } from '../support/system';
import { publishSale } from './helpers';

/**
 * The `bacen-api-pix` payout adapter, built from the configuration as in production, against the PSP
 * simulator: OAuth2, the transfer, PSP refusals, transfers still in progress, a PSP that fails on its
 * side, and a repeated request after a crash (409 then GET).
 */

const PAYING_KEY = 'payouts@seller-api.example';
let psp: PspSimulator;
let service: WithdrawalsService;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  psp = await startPspSimulator({ clientId: 'payout-client', clientSecret: 'payout-secret' });
  env = testEnv({
    PAYOUT_PSP: 'bacen-api-pix',
    PAYOUT_PSP_API_URL: psp.url,
    PAYOUT_PSP_CLIENT_ID: 'payout-client',
    PAYOUT_PSP_CLIENT_SECRET: 'payout-secret',
    PAYOUT_PIX_KEY: PAYING_KEY,
    PAYOUT_PSP_TIMEOUT_MS: '2000',
    PAYOUT_INTERVAL_MS: '50',
    PAYOUT_RETRY_AFTER_MS: '150',
  });
  service = await startWithdrawals(loadWithdrawalsConfig(env), { metrics: false });
});
afterAll(async () => {
  await service?.stop();
  await psp?.close();
  await deleteQueues(env.AMQP_URL as string, env.AMQP_NAMESPACE as string, SERVICE_QUEUES);
});
afterEach(() => {
  psp.envioStatus = 'REALIZADO';
  psp.duplicateEnvioStatus = 409;
});

const em = () => service.runtime.orm.em.fork();

/**
 * A live seller with `available` in the ledger and an approved withdrawal of `amount` to `pixKey` (live:
 * PAYOUT_PSP is the live environment's PSP; test withdrawals stay in the sandbox).
 */
async function approvedWithdrawal(amount: number, pixKey: string, pixKeyType: PixKeyType, available = 10000) {
  const scope = { sellerId: randomUUID(), environment: 'live' as const, sellerName: 'Loja' };
  await publishSale(env, { ...scope, name: 'Loja' }, available);
  await waitFor(async () => (await balanceOf(em(), scope)).available_amount === available);
  const w = await requestWithdrawal(
    em(),
    scope,
    { amount, pix_key: pixKey, pix_key_type: pixKeyType },
    { minAmount: 100 },
  );
  await decideWithdrawal(em(), w.id, { action: 'approve' }, 'operator-1');
  service.payouts.kick();
  return { scope, id: w.id };
}

async function settled(scope: Parameters<typeof getWithdrawal>[1], id: string) {
  return waitFor(
    async () => {
      const row = await getWithdrawal(em(), scope, id);
      return row.status === 'PAID' || row.status === 'FAILED' ? row : null;
    },
    { what: `withdrawal ${id} settled` },
  );
}

it('sends the PIX with our paying key and records the end-to-end id as the reference', async () => {
  const { scope, id } = await approvedWithdrawal(4000, '52998224725', 'cpf');
  const done = await settled(scope, id);

  const envio = psp.envios.get(idEnvioOf(id));
  expect(envio).toMatchObject({
    valor: '40.00',
    pagador: { chave: PAYING_KEY },
    favorecido: { chave: '52998224725' },
    status: 'REALIZADO',
  });
  expect(done).toMatchObject({ status: 'PAID', payoutReference: envio?.e2eId });
  expect(done.payoutReference).toMatch(/^E\d{8}\d{12}[A-Za-z0-9]{11}$/);
  expect(await balanceOf(em(), scope)).toMatchObject({ available_amount: 6000, pending_amount: 0 });
  // The PSP was asked with an OAuth2 bearer token.
  const put = psp.requests.find((r) => r.method === 'PUT' && r.path === `/pix/envio/${idEnvioOf(id)}`);
  expect(put?.headers.authorization).toMatch(/^Bearer \S+$/);
});

it('fails the withdrawal with the PSP reason when the key does not exist, and releases the funds', async () => {
  psp.unknownKeys.add('nobody@example.com');
  const { scope, id } = await approvedWithdrawal(2500, 'nobody@example.com', 'email');
  const done = await settled(scope, id);
  expect(done).toMatchObject({
    status: 'FAILED',
    failureReason: 'Payout refused by the PSP: Chave Pix não encontrada.',
  });
  expect(await balanceOf(em(), scope)).toMatchObject({ available_amount: 10000, pending_amount: 0 });
});

it('fails the withdrawal on a PSP refusal (4xx), with its words', async () => {
  psp.failNext(422, 1);
  const { scope, id } = await approvedWithdrawal(1000, '+5511987654321', 'phone');
  const done = await settled(scope, id);
  expect(done.status).toBe('FAILED');
  expect(done.failureReason).toBe('Payout refused by the PSP (422: ServicoIndisponivel; Injected failure.)');
  expect(psp.envios.has(idEnvioOf(id))).toBe(false);
  expect(await balanceOf(em(), scope)).toMatchObject({ available_amount: 10000 });
});

it('keeps the withdrawal PROCESSING while the PSP fails on its side, then pays it once', async () => {
  psp.failNext(503, 2);
  const { scope, id } = await approvedWithdrawal(1500, randomUUID(), 'random');
  const done = await settled(scope, id);
  expect(done).toMatchObject({ status: 'PAID' });
  expect(done.payoutAttempts).toBeGreaterThanOrEqual(2);
  expect(psp.envios.get(idEnvioOf(id))?.status).toBe('REALIZADO');
  expect(await balanceOf(em(), scope)).toMatchObject({ available_amount: 8500, pending_amount: 0 });
});

it('asks again about a transfer in progress (409, then GET) and pays when the PSP settles it', async () => {
  psp.envioStatus = 'EM_PROCESSAMENTO';
  const { scope, id } = await approvedWithdrawal(3000, 'seller@example.com', 'email');
  const idEnvio = idEnvioOf(id);
  await waitFor(() => psp.envios.get(idEnvio)?.status === 'EM_PROCESSAMENTO');
  // Asked again after the lease: the repeated PUT is a 409 and the adapter reads the transfer.
  await waitFor(() => psp.requests.some((r) => r.method === 'GET' && r.path === `/pix/envio/${idEnvio}`));
  expect((await getWithdrawal(em(), scope, id)).status).toBe('PROCESSING');
  expect(await balanceOf(em(), scope)).toMatchObject({ available_amount: 7000, pending_amount: 3000 });

  const envio = psp.settleEnvio(idEnvio, 'REALIZADO');
  const done = await settled(scope, id);
  expect(done).toMatchObject({ status: 'PAID', payoutReference: envio.e2eId });
  expect(
    psp.requests.filter((r) => r.method === 'PUT' && r.path === `/pix/envio/${idEnvio}`).length,
  ).toBeGreaterThanOrEqual(2);
});

it('fails a transfer the PSP gives up on after accepting it', async () => {
  psp.envioStatus = 'EM_PROCESSAMENTO';
  const { scope, id } = await approvedWithdrawal(1200, 'closed@example.com', 'email');
  await waitFor(() => psp.envios.get(idEnvioOf(id))?.status === 'EM_PROCESSAMENTO');
  psp.settleEnvio(idEnvioOf(id), 'NAO_REALIZADO', 'Conta do recebedor encerrada.');
  const done = await settled(scope, id);
  expect(done).toMatchObject({
    status: 'FAILED',
    failureReason: 'Payout refused by the PSP: Conta do recebedor encerrada.',
  });
  expect(await balanceOf(em(), scope)).toMatchObject({ available_amount: 10000, pending_amount: 0 });
});

it('masks the PIX key where the PSP quotes it in its reason', async () => {
  psp.envioStatus = 'EM_PROCESSAMENTO';
  const { scope, id } = await approvedWithdrawal(1300, '52998224725', 'cpf');
  await waitFor(() => psp.envios.get(idEnvioOf(id))?.status === 'EM_PROCESSAMENTO');
  psp.settleEnvio(idEnvioOf(id), 'NAO_REALIZADO', 'Chave 529.982.247-25 bloqueada pelo titular.');
  const done = await settled(scope, id);
  expect(done).toMatchObject({
    status: 'FAILED',
    failureReason: 'Payout refused by the PSP: Chave 529.***.***-25 bloqueada pelo titular.',
  });
});

it('never fails a payout the PSP made: a lost answer, then a refusal of the repeated PUT, reads the transfer', async () => {
  // The first PUT pays but its answer is lost; the PSP refuses the repeat with a 422 (it checks the
  // balance before its idempotency). The adapter asks for the transfer and finds it paid.
  psp.loseAnswerNext(1);
  psp.duplicateEnvioStatus = 422;
  const { scope, id } = await approvedWithdrawal(2000, 'lost@example.com', 'email');
  const done = await settled(scope, id);
  const envio = psp.envios.get(idEnvioOf(id));
  expect(done).toMatchObject({ status: 'PAID', payoutReference: envio?.e2eId });
  const calls = psp.requests.filter((r) => r.path === `/pix/envio/${idEnvioOf(id)}`).map((r) => r.method);
  expect(calls).toEqual(['PUT', 'PUT', 'GET']);
  expect(await balanceOf(em(), scope)).toMatchObject({ available_amount: 8000, pending_amount: 0 });
});
