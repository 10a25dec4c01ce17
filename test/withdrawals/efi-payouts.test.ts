import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PixKeyType } from '@seller-api/contracts';
import { testEnv } from '../support/env';
import { startEfiSimulator, type EfiSimulator } from '../support/efi-simulator';
import { LogCapture } from '../support/logs';
import { deleteQueues } from '../support/queues';
import { SERVICE_QUEUES } from '../support/system';
import { waitFor } from '../support/wait';
import { efiPayouts, idEnvioOf } from '../../services/withdrawals/src/clients/efi-payouts';
import { loadWithdrawalsConfig } from '../../services/withdrawals/src/config';
import { balanceOf } from '../../services/withdrawals/src/db/balances';
import {
  decideWithdrawal,
  getWithdrawal,
  requestWithdrawal,
} from '../../services/withdrawals/src/db/withdrawals';
import { startWithdrawals, type WithdrawalsService } from '../../services/withdrawals/src/service';
import { publishSale } from './helpers';

/**
 * The `efi` payout adapter, built from the configuration as in production, against the Efí
 * simulator, through the payout worker: approve, PROCESSING while Efí has the send EM_PROCESSAMENTO,
 * PAID or FAILED from polling its lookup; refusals, lost answers, repeats, token renewal and scopes.
 */

const PAYING_KEY = 'payouts@seller-api.example';
let efi: EfiSimulator;
let service: WithdrawalsService;
let env: NodeJS.ProcessEnv;
const logs = new LogCapture();

beforeAll(async () => {
  efi = await startEfiSimulator({
    clientId: 'payout-client',
    clientSecret: 'payout-secret',
    payingKey: PAYING_KEY,
  });
  env = testEnv({
    PAYOUT_PSP: 'efi',
    PAYOUT_PSP_API_URL: efi.url,
    PAYOUT_PSP_CLIENT_ID: 'payout-client',
    PAYOUT_PSP_CLIENT_SECRET: 'payout-secret',
    PAYOUT_PIX_KEY: PAYING_KEY,
    PAYOUT_PSP_TIMEOUT_MS: '2000',
    PAYOUT_INTERVAL_MS: '50',
    PAYOUT_RETRY_AFTER_MS: '150',
    LOG_LEVEL: 'info',
  });
  service = await startWithdrawals(loadWithdrawalsConfig(env), { metrics: false, logDestination: logs });
});
afterAll(async () => {
  await service?.stop();
  await efi?.close();
  await deleteQueues(env.AMQP_URL as string, env.AMQP_NAMESPACE as string, SERVICE_QUEUES);
});
afterEach(() => {
  efi.autoSettle = 'REALIZADO';
  efi.repeatAnswer = 409;
});

const em = () => service.runtime.orm.em.fork();
const callsOf = (id: string) =>
  efi.requests.filter((r) => r.path.endsWith(`/${idEnvioOf(id)}`)).map((r) => `${r.method} ${r.path}`);
const PUT = (id: string) => `PUT /v3/gn/pix/${idEnvioOf(id)}`;
const GET = (id: string) => `GET /v2/gn/pix/enviados/id-envio/${idEnvioOf(id)}`;

/** A live seller with `available` in the ledger and an approved withdrawal of `amount` to `pixKey`. */
async function approvedWithdrawal(amount: number, pixKey: string, pixKeyType: PixKeyType, available = 10000) {
  const scope = { sellerId: randomUUID(), environment: 'live' as const, sellerName: 'Loja' };
  await publishSale(env, { ...scope, name: 'Loja' }, available);
  await waitFor(async () => (await balanceOf(service.runtime.sql, scope)).available_amount === available);
  const w = await requestWithdrawal(
    em(),
    service.runtime.sql,
    scope,
    { amount, pix_key: pixKey, pix_key_type: pixKeyType },
    { minAmount: 100 },
  );
  await decideWithdrawal(em(), service.runtime.sql, w.id, { action: 'approve' }, 'operator-1');
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

it('sends once, keeps the payout PROCESSING while Efí processes it, and pays it from the lookup', async () => {
  efi.autoSettle = null;
  const { scope, id } = await approvedWithdrawal(4000, '52998224725', 'cpf');
  const send = await waitFor(() => efi.sends.get(idEnvioOf(id)));
  expect(send).toMatchObject({
    valor: '40.00',
    chave: PAYING_KEY,
    favorecido: { chave: '52998224725' },
    status: 'EM_PROCESSAMENTO',
  });
  // Polled with the lookup, never sent again.
  await waitFor(() => callsOf(id).filter((c) => c === GET(id)).length >= 2);
  expect((await getWithdrawal(em(), scope, id)).status).toBe('PROCESSING');
  expect(await balanceOf(service.runtime.sql, scope)).toMatchObject({
    available_amount: 6000,
    pending_amount: 4000,
  });

  efi.settle(idEnvioOf(id), 'REALIZADO');
  const done = await settled(scope, id);
  expect(done).toMatchObject({ status: 'PAID', payoutReference: send.endToEndId });
  expect(done.payoutReference).toMatch(/^E09089356\d{12}API[a-z0-9]{8}$/);
  expect(callsOf(id).filter((c) => c.startsWith('PUT'))).toEqual([PUT(id)]);
  expect(await balanceOf(service.runtime.sql, scope)).toMatchObject({
    available_amount: 6000,
    pending_amount: 0,
  });
  // Asked with a bearer token obtained for the send and read scopes.
  const put = efi.requests.find((r) => `${r.method} ${r.path}` === PUT(id));
  expect(put?.headers.authorization).toMatch(/^Bearer \S+$/);
  expect(efi.requestedScopes).toContain('pix.send gn.pix.send.read');
});

it('fails a send Efí gives up on after accepting it, and releases the funds', async () => {
  efi.autoSettle = 'NAO_REALIZADO';
  const { scope, id } = await approvedWithdrawal(1200, 'closed@example.com', 'email');
  const done = await settled(scope, id);
  expect(done).toMatchObject({
    status: 'FAILED',
    failureReason: 'Payout refused by the PSP (NAO_REALIZADO)',
  });
  expect(efi.sends.get(idEnvioOf(id))?.status).toBe('NAO_REALIZADO');
  expect(await balanceOf(service.runtime.sql, scope)).toMatchObject({
    available_amount: 10000,
    pending_amount: 0,
  });
});

it('fails a send Efí refuses in the request, with its words, once the lookup finds none', async () => {
  efi.unknownKeys.add('nobody@example.com');
  const { scope, id } = await approvedWithdrawal(2500, 'nobody@example.com', 'email');
  const done = await settled(scope, id);
  expect(done).toMatchObject({
    status: 'FAILED',
    failureReason: 'Payout refused by the PSP (400: chave_invalida; A chave do favorecido é inválida)',
  });
  expect(callsOf(id)).toEqual([PUT(id), GET(id)]);
  expect(await balanceOf(service.runtime.sql, scope)).toMatchObject({
    available_amount: 10000,
    pending_amount: 0,
  });
});

it('masks the PIX key where Efí quotes it in a refusal', async () => {
  efi.failNext(400, 1, { nome: 'chave_invalida', mensagem: 'Chave 529.982.247-25 bloqueada pelo titular' });
  const { scope, id } = await approvedWithdrawal(1300, '52998224725', 'cpf');
  const done = await settled(scope, id);
  expect(done.failureReason).toBe(
    'Payout refused by the PSP (400: chave_invalida; Chave 529.***.***-25 bloqueada pelo titular)',
  );
});

// Someone's CPF (spaced), e-mail key and phone key, as a PSP may quote them in its error body.
const QUOTED = {
  nome: 'erro_aplicacao',
  mensagem: 'Chave maria.souza@example.com.br e +55 11 98765-4321 de 123 456 789 09 indisponíveis',
};
const CLEAR = ['maria.souza', 'souza@', '98765', '4321 de', '456 789', '456.789'];

it("logs a retried payout's PSP error with its status and the PSP's words scrubbed", async () => {
  efi.failNext(500, 1, QUOTED);
  const { scope, id } = await approvedWithdrawal(1400, randomUUID(), 'random');
  expect(await settled(scope, id)).toMatchObject({ status: 'PAID' });
  const line = logs.lines.find((l) => l.includes(id) && l.includes('payout attempt failed'));
  expect(line).toBeDefined();
  expect(JSON.parse(line as string)).toMatchObject({
    level: 'warn',
    psp_status: 500,
    err: expect.stringContaining(
      '500: erro_aplicacao; Chave m***@example.com.br e +55*********21 de 123.***.***-09',
    ),
  });
  for (const piece of CLEAR) expect(logs.text()).not.toContain(piece);
});

it("stores a refusal's other personal data scrubbed, the withdrawal's own key masked by its type", async () => {
  efi.failNext(400, 1, { nome: 'chave_invalida', mensagem: `${QUOTED.mensagem}; favorecido 52998224725` });
  const { scope, id } = await approvedWithdrawal(1600, '52998224725', 'cpf');
  const done = await settled(scope, id);
  expect(done.failureReason).toBe(
    'Payout refused by the PSP (400: chave_invalida; Chave m***@example.com.br e +55*********21 de ' +
      '123.***.***-09 indisponíveis; favorecido 529.***.***-25)',
  );
  for (const piece of CLEAR) expect(logs.text()).not.toContain(piece);
});

it('keeps the payout PROCESSING while Efí fails on its side, then pays it once', async () => {
  efi.failNext(500, 2);
  const { scope, id } = await approvedWithdrawal(1500, randomUUID(), 'random');
  const done = await settled(scope, id);
  expect(done).toMatchObject({ status: 'PAID' });
  expect(done.payoutAttempts).toBeGreaterThanOrEqual(2);
  expect([...efi.sends.values()].filter((s) => s.idEnvio === idEnvioOf(id))).toHaveLength(1);
  expect(await balanceOf(service.runtime.sql, scope)).toMatchObject({
    available_amount: 8500,
    pending_amount: 0,
  });
});

it('pays once after a lost answer: the retry reads the send Efí made instead of sending again', async () => {
  efi.loseAnswerNext(1);
  const { scope, id } = await approvedWithdrawal(2000, 'lost@example.com', 'email');
  const done = await settled(scope, id);
  expect(done).toMatchObject({ status: 'PAID', payoutReference: efi.sends.get(idEnvioOf(id))?.endToEndId });
  expect(callsOf(id)).toEqual([PUT(id), GET(id)]);
  expect(await balanceOf(service.runtime.sql, scope)).toMatchObject({
    available_amount: 8000,
    pending_amount: 0,
  });
});

it('renews a revoked token and carries on', async () => {
  const before = efi.tokenRequests;
  efi.revokeTokens();
  const { scope, id } = await approvedWithdrawal(1100, 'renewed@example.com', 'email');
  expect(await settled(scope, id)).toMatchObject({ status: 'PAID' });
  expect(efi.tokenRequests).toBeGreaterThan(before);
  const unauthorised = efi.requests.filter((r) => r.path.endsWith(idEnvioOf(id)) && r.method === 'PUT');
  // The PUT refused with 401 was made again with the new token: Efí has one send.
  expect(unauthorised.length).toBe(2);
  expect(efi.sends.get(idEnvioOf(id))?.status).toBe('REALIZADO');
});

describe('the adapter alone, over HTTP', () => {
  const request = (withdrawalId: string) => ({
    withdrawalId,
    amount: 3000,
    pixKey: 'seller@example.com',
    pixKeyType: 'email' as const,
    environment: 'live' as const,
  });
  const adapter = (sim: EfiSimulator, clientSecret = 'payout-secret') =>
    efiPayouts({
      apiUrl: sim.url,
      tokenUrl: sim.tokenUrl,
      clientId: 'payout-client',
      clientSecret,
      pixKey: PAYING_KEY,
      timeoutMs: 2000,
    });

  it('answers a repeated idEnvio (409 id_envio_duplicado) with the send Efí has', async () => {
    const psp = adapter(efi);
    try {
      efi.autoSettle = null;
      const withdrawalId = randomUUID();
      expect(await psp.pay(request(withdrawalId))).toEqual({ status: 'processing' });
      // A worker that lost track sends it again as a first attempt: the 409 makes it a lookup.
      expect(await psp.pay(request(withdrawalId))).toEqual({ status: 'processing' });
      efi.settle(idEnvioOf(withdrawalId), 'REALIZADO');
      expect(await psp.pay(request(withdrawalId))).toEqual({
        status: 'paid',
        reference: efi.sends.get(idEnvioOf(withdrawalId))?.endToEndId,
      });
      expect(callsOf(withdrawalId)).toEqual([
        PUT(withdrawalId),
        PUT(withdrawalId),
        GET(withdrawalId),
        PUT(withdrawalId),
        GET(withdrawalId),
      ]);
    } finally {
      await psp.close();
    }
  });

  it('never fails a send Efí made when it refuses the repeat for another reason (a 422)', async () => {
    const psp = adapter(efi);
    try {
      efi.repeatAnswer = 422;
      const withdrawalId = randomUUID();
      expect(await psp.pay(request(withdrawalId))).toEqual({ status: 'processing' });
      expect(await psp.pay(request(withdrawalId))).toMatchObject({ status: 'paid' });
    } finally {
      await psp.close();
    }
  });

  it('waits, never fails, when the application lacks the pix.send scope', async () => {
    const noSend = await startEfiSimulator({
      clientId: 'payout-client',
      clientSecret: 'payout-secret',
      payingKey: PAYING_KEY,
      scopes: ['cob.read', 'gn.pix.send.read'],
    });
    const psp = adapter(noSend);
    try {
      await expect(psp.pay(request(randomUUID()))).rejects.toMatchObject({
        retryable: true,
        status: 403,
        message: expect.stringContaining('pix.send scope'),
      });
      expect(noSend.sends.size).toBe(0);
    } finally {
      await psp.close();
      await noSend.close();
    }
  });

  it('waits, never fails, on credentials Efí refuses', async () => {
    const psp = adapter(efi, 'wrong-secret');
    try {
      await expect(psp.pay(request(randomUUID()))).rejects.toMatchObject({ retryable: true });
    } finally {
      await psp.close();
    }
  });
});

describe('mutual TLS', () => {
  // A CA, Efí's server certificate for 127.0.0.1 and our client certificate, made for this test.
  let dir: string;
  let pem: (name: string) => Buffer;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'efi-mtls-'));
    const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const key = (name: string) =>
      run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`);
    key('ca');
    run('req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=test-ca', '-days', '1', '-out', 'ca.crt');
    for (const [name, extra] of [
      ['server', 'subjectAltName=IP:127.0.0.1'],
      ['client', 'extendedKeyUsage=clientAuth'],
    ] as const) {
      key(name);
      writeFileSync(path.join(dir, `${name}.ext`), `${extra}\n`);
      run('req', '-new', '-key', `${name}.key`, '-subj', `/CN=${name}`, '-out', `${name}.csr`);
      run(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '1',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.crt`,
      );
    }
    pem = (name: string) => readFileSync(path.join(dir, name));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('presents the client certificate on the token request and on the send; a call without one gets nowhere', async () => {
    const secure = await startEfiSimulator({
      clientId: 'payout-client',
      clientSecret: 'payout-secret',
      payingKey: PAYING_KEY,
      tls: { cert: pem('server.crt'), key: pem('server.key'), ca: pem('ca.crt') },
    });
    const options = {
      apiUrl: secure.url,
      tokenUrl: secure.tokenUrl,
      clientId: 'payout-client',
      clientSecret: 'payout-secret',
      pixKey: PAYING_KEY,
      timeoutMs: 2000,
    };
    const request = {
      withdrawalId: randomUUID(),
      amount: 700,
      pixKey: 'seller@example.com',
      pixKeyType: 'email' as const,
      environment: 'live' as const,
    };
    const withCert = efiPayouts({
      ...options,
      tls: { cert: pem('client.crt'), key: pem('client.key'), ca: pem('ca.crt') },
    });
    const without = efiPayouts({
      ...options,
      tls: { cert: Buffer.alloc(0), key: Buffer.alloc(0), ca: pem('ca.crt') },
    });
    try {
      expect(await withCert.pay(request)).toEqual({ status: 'processing' });
      expect(secure.requests.map((r) => [r.method, r.clientCertificate])).toEqual([
        ['POST', true],
        ['PUT', true],
      ]);
      await expect(without.pay({ ...request, withdrawalId: randomUUID() })).rejects.toMatchObject({
        retryable: true,
      });
      // Refused at the handshake: not one more request reached the API.
      expect(secure.requests).toHaveLength(2);
      expect(secure.sends.size).toBe(1);
    } finally {
      await Promise.all([withCert.close(), without.close()]);
      await secure.close();
    }
  });
});
