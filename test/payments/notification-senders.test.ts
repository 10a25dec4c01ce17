// Notifications as API Pix sends them: over mutual TLS, no Authorization header. Each PSP host has its
// own ingress (test/support/psp-ingress.ts) that verifies the client certificate against that PSP's CA;
// the gateway believes its verdict only on a PSP host and from the ingress's address, and payments
// decides from the certificate which environment's charges the notification may pay
// (docs/payments.md, "bacen-api-pix"; docs/deploy.md, "PSP notifications").
import { randomBytes } from 'node:crypto';
import { CreatedOrder, OrderDetail } from '@seller-api/contracts';
import { pspClientHeaders } from '@seller-api/service-kit';
import { callKey, gatewayKey } from '../support/keys';
import { createOrder, standaloneOrder } from '../orders/fixtures';
import { startPspIngress, type PspIngress } from '../support/psp-ingress';
import type { PspClientTls, PspSimulator } from '../support/psp-simulator';
import { call, requestWithHost } from '../support/system';
import { useSystem } from '../support/use-system';
import { createTestCa, type TestCertificate } from '../support/test-pki';
import { waitFor } from '../support/wait';

const LIVE_HOST = 't.psp.seller.test';
const TEST_HOST = 'psp-homolog.seller.test';
const LIVE_SECRET = 'live-psp-webhook-secret-0123';
const TEST_SECRET = 'test-psp-webhook-secret-0123';

const serverCa = createTestCa('/C=BR/O=Seller API Test/CN=Ingress CA');
const liveCa = createTestCa('/C=BR/O=Live PSP/CN=Live PSP Client CA');
const homologCa = createTestCa('/C=BR/O=Homolog PSP/CN=Homolog PSP Client CA');
const livePsp = liveCa.client('/C=BR/O=Live PSP/CN=pix.live-t.psp.test');
const homologPsp = homologCa.client('/C=BR/O=Homolog PSP/CN=pix.homolog-t.psp.test');
// Signed by the live PSP's CA, but not the certificate payments was told about.
const stranger = liveCa.client('/C=BR/O=Live PSP/CN=someone-else.live-t.psp.test');

const t = useSystem({
  env: {
    PSP_WEBHOOK_SECRET: LIVE_SECRET,
    PSP_TEST_WEBHOOK_SECRET: TEST_SECRET,
    PSP_CLIENT_CERT_SUBJECT: livePsp.subject,
    PSP_CLIENT_CERT_ISSUER: livePsp.issuer,
    PSP_TEST_CLIENT_CERT_SUBJECT: homologPsp.subject,
  },
  gateway: {
    PSP_NOTIFICATION_HOST: `${LIVE_HOST},${TEST_HOST}`,
    // The ingress connects from 127.0.0.2; a client on 127.0.0.1 is not the ingress.
    PSP_INGRESS_ADDRESSES: '127.0.0.2',
  },
  psp: { clientId: 'id', clientSecret: 'secret' },
  seller: true,
});
let gatewayOrigin: string;
let liveIngress: PspIngress;
let homologIngress: PspIngress;
let simulator: PspSimulator;
let key: string;
let testKey: string;

beforeAll(async () => {
  ({ liveKey: key, key: testKey } = t.seller);
  simulator = t.psp;
  gatewayOrigin = t.origin;
  [liveIngress, homologIngress] = await Promise.all([
    startPspIngress({ host: LIVE_HOST, clientCa: liveCa.cert, upstream: gatewayOrigin, serverCa }),
    startPspIngress({ host: TEST_HOST, clientCa: homologCa.cert, upstream: gatewayOrigin, serverCa }),
  ]);
  t.cleanup(() => Promise.all([liveIngress.close(), homologIngress.close()]));
});

async function newOrder(as: string) {
  return CreatedOrder.parse((await createOrder(t.url, as, standaloneOrder())).body.data);
}
const paymentStatus = async (uuid: string, as: string) =>
  OrderDetail.parse((await call(`${t.url}/sellers/orders/${uuid}/`, { key: as })).body.data).payment.status;
const e2e = () => `E12345678202611230200${randomBytes(8).toString('hex').slice(0, 11)}`;
const pixFor = (txid: string) => ({
  endToEndId: e2e(),
  txid,
  valor: '150.00',
  horario: new Date().toISOString(),
});

const tlsFor = (ingress: PspIngress, certificate: TestCertificate): PspClientTls => ({
  cert: certificate.cert,
  key: certificate.key,
  ca: ingress.ca,
  host: ingress.host,
});
/** A PSP's notification through its ingress, as the simulator sends it. */
const notifyVia = (
  ingress: PspIngress,
  certificate: TestCertificate,
  pix: unknown[],
  secret: string | null = null,
) =>
  simulator.notify(
    { pix },
    {
      webhookUrl: `${ingress.origin}/api/v1/psp/webhook`,
      secret,
      tls: tlsFor(ingress, certificate),
    },
  );

/** A plain HTTP request to the gateway from 127.0.0.1, with any Host and headers. */
const direct = (
  host: string,
  headers: Record<string, string>,
  body = JSON.stringify({ pix: [] }),
  path = '/api/v1/psp/webhook/pix',
) =>
  requestWithHost(new URL(path, gatewayOrigin).href, host, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });

const forged = (certificate: TestCertificate) => ({
  'ssl-client-verify': 'SUCCESS',
  'ssl-client-subject-dn': certificate.subject,
  'ssl-client-issuer-dn': certificate.issuer,
});

describe('over mutual TLS, as API Pix sends them', () => {
  it("pays a live charge with the live PSP's certificate, and never a test charge", async () => {
    const [live, test] = await Promise.all([newOrder(key), newOrder(testKey)]);
    const res = await notifyVia(liveIngress, livePsp, [
      pixFor(live.pix.qr_code_id),
      pixFor(test.pix.qr_code_id),
    ]);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).data).toEqual({ outcomes: ['applied', 'unknown_txid'] });
    await waitFor(async () => (await paymentStatus(live.uuid, key)) === 'PAID' || null, {
      what: 'live PAID',
    });
    expect(await paymentStatus(test.uuid, testKey)).toBe('PENDING');
  });

  it("pays a test charge with the homologation PSP's certificate, and never a live charge", async () => {
    const [live, test] = await Promise.all([newOrder(key), newOrder(testKey)]);
    const res = await notifyVia(homologIngress, homologPsp, [
      pixFor(live.pix.qr_code_id),
      pixFor(test.pix.qr_code_id),
    ]);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).data).toEqual({ outcomes: ['unknown_txid', 'applied'] });
    await waitFor(async () => (await paymentStatus(test.uuid, testKey)) === 'PAID' || null, {
      what: 'test PAID',
    });
    expect(await paymentStatus(live.uuid, key)).toBe('PENDING');
  });

  it('is refused at the ingress without a certificate, or with one its PSP CA did not sign', async () => {
    const order = await newOrder(key);
    const before = liveIngress.refused;
    // The homologation PSP's certificate at the live PSP's host: another CA.
    const wrongCa = await notifyVia(liveIngress, homologPsp, [pixFor(order.pix.qr_code_id)]);
    expect(wrongCa.status).toBe(400);
    const none = await simulator.notify(
      { pix: [pixFor(order.pix.qr_code_id)] },
      {
        webhookUrl: `${liveIngress.origin}/api/v1/psp/webhook`,
        secret: null,
        tls: { ...tlsFor(liveIngress, livePsp), cert: '', key: '' },
      },
    );
    expect(none.status).toBe(400);
    expect(liveIngress.refused).toBe(before + 2);
    expect(await paymentStatus(order.uuid, key)).toBe('PENDING');
  });

  it("is refused by payments with a certificate of the PSP's CA that is not the PSP's", async () => {
    const order = await newOrder(key);
    const res = await notifyVia(liveIngress, stranger, [pixFor(order.pix.qr_code_id)]);
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'unauthorized' });
    expect(await paymentStatus(order.uuid, key)).toBe('PENDING');
  });

  it("accepts the PSP's secret beside its certificate unless they name different environments", async () => {
    const order = await newOrder(key);
    const both = await notifyVia(liveIngress, livePsp, [pixFor(order.pix.qr_code_id)], LIVE_SECRET);
    expect(JSON.parse(both.body).data).toEqual({ outcomes: ['applied'] });
    const other = await newOrder(testKey);
    // The live PSP's certificate with the homologation PSP's secret: which PSP is it? Neither.
    const clash = await notifyVia(liveIngress, livePsp, [pixFor(other.pix.qr_code_id)], TEST_SECRET);
    expect(clash.status).toBe(401);
    expect(await paymentStatus(other.uuid, testKey)).toBe('PENDING');
    // A certificate payments does not know yet (the PSP is changing it) is left to the secret.
    const changing = await newOrder(key);
    const renewed = await notifyVia(liveIngress, stranger, [pixFor(changing.pix.qr_code_id)], LIVE_SECRET);
    expect(JSON.parse(renewed.body).data).toEqual({ outcomes: ['applied'] });
  });
});

describe('the ingress verdict, from anyone but the ingress', () => {
  it('is not believed from a client calling the gateway directly on a PSP host', async () => {
    const order = await newOrder(key);
    const body = JSON.stringify({ pix: [pixFor(order.pix.qr_code_id)] });
    const res = await direct(LIVE_HOST, forged(livePsp), body);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
    expect(await paymentStatus(order.uuid, key)).toBe('PENDING');
  });

  it('answers 404 on the public host, headers or not', async () => {
    const res = await direct('api.seller.test', forged(livePsp));
    expect(res.status).toBe(404);
  });

  it("never lets a client's own signed-certificate headers through the gateway", async () => {
    const order = await newOrder(key);
    const body = JSON.stringify({ pix: [pixFor(order.pix.qr_code_id)] });
    // Even signed with the gateway's key (a leaked one): the gateway drops every x-sa-* header.
    const signed = pspClientHeaders(
      gatewayKey('payments'),
      { subject: livePsp.subject, issuer: livePsp.issuer, host: LIVE_HOST },
      'POST',
      '/psp/webhook/pix',
      body,
    );
    const res = await direct(LIVE_HOST, signed, body);
    expect(res.status).toBe(401);
    expect(await paymentStatus(order.uuid, key)).toBe('PENDING');
  });

  it('is not believed by payments, which reads only what the gateway signed', async () => {
    const order = await newOrder(key);
    const body = JSON.stringify({ pix: [pixFor(order.pix.qr_code_id)] });
    const post = (headers: Record<string, string>) =>
      fetch(`${t.system.services.payments}/psp/webhook/pix`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    expect((await post(forged(livePsp))).status).toBe(401);
    // Signed by orders, whose key payments knows but whose word on a PSP it does not take.
    const signed = pspClientHeaders(
      callKey('orders', 'payments'),
      { subject: livePsp.subject, issuer: livePsp.issuer, host: LIVE_HOST },
      'POST',
      '/psp/webhook/pix',
      body,
    );
    expect((await post(signed)).status).toBe(401);
    expect((await post({ ...signed, 'x-sa-psp-client-ts': '1' })).status).toBe(401);
    expect(await paymentStatus(order.uuid, key)).toBe('PENDING');
  });
});

it("keeps the PSP's secret working, on its own, for the environment it names", async () => {
  const [live, test] = await Promise.all([newOrder(key), newOrder(testKey)]);
  const pay = (secret: string, txid: string) =>
    call(`${t.url}/psp/webhook/pix`, {
      method: 'POST',
      body: { pix: [pixFor(txid)] },
      // Through a PSP host's ingress would do too; the gateway's own address is not a PSP host.
      headers: { authorization: `Bearer ${secret}` },
    });
  const open = await t.startGateway();
  const through = (secret: string, txid: string) =>
    call(`${open.url}/psp/webhook/pix`, {
      method: 'POST',
      body: { pix: [pixFor(txid)] },
      headers: { authorization: `Bearer ${secret}` },
    });
  // Behind PSP_NOTIFICATION_HOST, the path answers only on the PSP hosts.
  expect((await pay(LIVE_SECRET, live.pix.qr_code_id)).status).toBe(404);
  expect((await through(LIVE_SECRET, test.pix.qr_code_id)).body.data).toEqual({ outcomes: ['unknown_txid'] });
  expect((await through(LIVE_SECRET, live.pix.qr_code_id)).body.data).toEqual({ outcomes: ['applied'] });
  expect((await through(TEST_SECRET, test.pix.qr_code_id)).body.data).toEqual({ outcomes: ['applied'] });
  expect((await through('wrong-secret-0123456789', live.pix.qr_code_id)).status).toBe(401);
});
