import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_PIX_KEY, loadPaymentsConfig } from '../config';
import { parseBrCode } from '../domain/brcode';
import type { PspAdapters } from '../domain/psp';
import { pspsFromConfig } from './psp-factory';

const LIVE = {
  PIX_PSP: 'bacen-api-pix',
  PSP_API_URL: 'https://pix.example-psp.com/api/v2',
  PSP_CLIENT_ID: 'client-id',
  PSP_CLIENT_SECRET: 'client-secret',
  PSP_WEBHOOK_SECRET: 'webhook-secret-0123456789',
  PIX_KEY: 'pix@seller.example',
};
const HOMOLOGATION = {
  PIX_PSP_TEST: 'bacen-api-pix',
  PSP_TEST_API_URL: 'https://homolog.example-psp.com/api/v2',
  PSP_TEST_CLIENT_ID: 'homolog-id',
  PSP_TEST_CLIENT_SECRET: 'homolog-secret',
  PSP_TEST_WEBHOOK_SECRET: 'homolog-webhook-secret-0123',
  PIX_KEY_TEST: 'pix-homolog@seller.example',
};

const built: PspAdapters[] = [];
const build = (source: NodeJS.ProcessEnv) => {
  const psps = pspsFromConfig(loadPaymentsConfig(source));
  built.push(psps);
  return psps;
};
afterAll(async () => {
  const adapters = built.flatMap((psps) => [psps.live, psps.test]);
  await Promise.all(adapters.map((psp) => (psp as { close?: () => Promise<void> }).close?.()));
});

const charge = {
  txid: 'AbC123dEf456GhI789jKl0MnO',
  amountCents: 15000,
  expiresAt: new Date('2030-01-01T00:00:00.000Z'),
  debtorName: null,
  debtorDocument: null,
};

describe('the PSP of each environment', () => {
  it('gives the test environment the sandbox, with the sandbox key, when the live PSP is real', async () => {
    const psps = build(LIVE);
    expect([psps.live.name, psps.live.remote]).toEqual(['bacen-api-pix', true]);
    expect([psps.test.name, psps.test.remote]).toEqual(['sandbox', false]);
    // A test BR Code never names the live merchant's key: no payer can pay real money into it.
    const { copyAndPaste } = await psps.test.createCharge(charge);
    expect(copyAndPaste).toContain(DEFAULT_PIX_KEY);
    expect(copyAndPaste).not.toContain(LIVE.PIX_KEY);
  });

  it('gives the test environment the homologation PSP only when PIX_PSP_TEST names one', () => {
    const psps = build({ ...LIVE, ...HOMOLOGATION });
    expect([psps.live.name, psps.test.name]).toEqual(['bacen-api-pix', 'bacen-api-pix']);
    expect(psps.test).not.toBe(psps.live);
    const sandboxLive = build(HOMOLOGATION);
    expect([sandboxLive.live.name, sandboxLive.test.name]).toEqual(['sandbox', 'bacen-api-pix']);
  });

  it('refuses a hand-made configuration that lacks the homologation credentials, naming them', () => {
    const config = loadPaymentsConfig({ ...LIVE, ...HOMOLOGATION });
    expect(() => pspsFromConfig({ ...config, PSP_TEST_CLIENT_SECRET: undefined })).toThrow(
      'PSP_TEST_CLIENT_SECRET: Required when PIX_PSP_TEST is bacen-api-pix',
    );
  });

  it('offers due-date charges at a PSP only with PIX_DUE_DATE_CHARGES(_TEST), in the sandbox always', () => {
    const off = build({ ...LIVE, ...HOMOLOGATION });
    expect(off.live.createDueDateCharge).toBeUndefined();
    expect(off.live.cancelDueDateCharge).toBeUndefined();
    expect(off.test.createDueDateCharge).toBeUndefined();
    const on = build({
      ...LIVE,
      ...HOMOLOGATION,
      PIX_DUE_DATE_CHARGES: 'true',
      PIX_DUE_DATE_CHARGES_TEST: 'false',
    });
    expect(on.live.createDueDateCharge).toEqual(expect.any(Function));
    expect(on.live.cancelDueDateCharge).toEqual(expect.any(Function));
    expect(on.test.createDueDateCharge).toBeUndefined();
    const sandbox = build({});
    expect(sandbox.live.createDueDateCharge).toEqual(expect.any(Function));
    expect(sandbox.test.cancelDueDateCharge).toEqual(expect.any(Function));
  });

  it('asks the cobv scopes too when due-date charges are on', async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push(body);
        res.writeHead(req.url === '/oauth/token' ? 200 : 201, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            req.url === '/oauth/token' ? { access_token: 't', expires_in: 60 } : { location: 'psp.example/qr/1' },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const psps = build({ ...LIVE, PSP_API_URL: url, PIX_DUE_DATE_CHARGES: 'true' });
      await psps.live.createCharge({ ...charge, txid: 'B'.repeat(35) });
      expect(new URLSearchParams(seen[0]).get('scope')).toBe(
        'cob.write cob.read pix.write pix.read cobv.write cobv.read',
      );
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("asks the PSP for the charge adapter's scopes and writes the merchant into a code built from location", async () => {
    const seen: { path: string; body: string }[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ path: req.url ?? '', body });
        const answer =
          req.url === '/oauth/token'
            ? { access_token: 't', expires_in: 60 }
            : { location: 'psp.example/qr/1' };
        res.writeHead(req.url === '/oauth/token' ? 200 : 201, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const psps = build({
        ...LIVE,
        PSP_API_URL: url,
        PIX_MERCHANT_NAME: 'Loja Teste',
        PIX_MERCHANT_CITY: 'Recife',
      });
      const { copyAndPaste } = await psps.live.createCharge({ ...charge, txid: 'A'.repeat(35) });
      expect(new URLSearchParams(seen[0]?.body).get('scope')).toBe('cob.write cob.read pix.write pix.read');
      expect(parseBrCode(copyAndPaste).fields).toMatchObject({
        '26': { '25': 'psp.example/qr/1' },
        '59': 'Loja Teste',
        '60': 'Recife',
      });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
