// PSP_NOTIFICATION_HOST: the PSP's notification path answers only on the PSPs' hosts (those whose
// Ingress checks the client certificate), so the public host cannot be used to skip mTLS; there only,
// and only from PSP_INGRESS_ADDRESSES, is the ingress's verdict on the certificate believed and passed
// to payments, signed (services/gateway/src/http/psp-client.ts).
import { verifyPspClient } from '@seller-api/service-kit';
import { callerKeys } from '../support/keys';
import { json, startFakeUpstream } from '../support/fake-upstream';
import { call, createKey, requestWithHost, type RunningGateway } from '../support/system';
import { useSystem } from '../support/use-system';

// Its gateway guards the PSP path by host; `open` is a replica without PSP_NOTIFICATION_HOST.
const t = useSystem({ gateway: { PSP_NOTIFICATION_HOST: 'PSP.Seller.Example' } });
let open: RunningGateway;
beforeAll(async () => {
  open = await t.startGateway();
});

const request = requestWithHost;

const notification = JSON.stringify({ pix: [] });
const post = { method: 'POST', body: notification, headers: { 'content-type': 'application/json' } };

describe('with PSP_NOTIFICATION_HOST set', () => {
  it('answers the PSP path on the PSP host, with or without a port, in any case', async () => {
    for (const host of ['psp.seller.example', 'psp.seller.example:443', 'Psp.Seller.Example']) {
      const res = await request(`${t.url}/psp/webhook/pix`, host, post);
      // payments itself answers: no PSP secret is configured in the tests, so the credentials fail.
      expect({ host, status: res.status, code: res.body.code }).toEqual({
        host,
        status: 401,
        code: 'unauthorized',
      });
    }
  });

  it('answers 404, like an unknown route, on any other host', async () => {
    for (const host of ['api.seller.example', 'api.seller.example:443', 'psp.seller.example.evil.test']) {
      const res = await request(`${t.url}/psp/webhook/pix`, host, post);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        message: 'Route POST /api/v1/psp/webhook/pix not found.',
        code: 'not_found',
        request_id: expect.any(String),
      });
    }
    // Nor the gateway's own address, the Host that a client calling the pod directly sends.
    const direct = await call(`${t.url}/psp/webhook/pix`, { method: 'POST', rawBody: notification });
    expect(direct.status).toBe(404);
  });

  it('leaves every other route alone, whatever the host', async () => {
    const { key } = await t.newKey();
    const res = await request(`${t.url}/sellers/orders/`, 'api.seller.example', {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
  });
});

it('without it, the PSP path answers on any host', async () => {
  const res = await request(`${open.url}/psp/webhook/pix`, 'api.seller.example', post);
  expect(res.status).toBe(401);
});

it('refuses a PSP_NOTIFICATION_HOST that is not bare host names, and bad PSP_INGRESS_ADDRESSES', async () => {
  for (const value of [
    'https://psp.seller.example',
    'psp.seller.example:443',
    'psp.seller.example/x',
    'psp.seller.example,',
    'psp.seller.example,https://psp-homolog.seller.example',
  ])
    await expect(t.startGateway({ PSP_NOTIFICATION_HOST: value })).rejects.toThrow(/PSP_NOTIFICATION_HOST/);
  for (const value of ['ingress-nginx', '10.0.0.0/33', '127.0.0.1,not-an-address'])
    await expect(t.startGateway({ PSP_INGRESS_ADDRESSES: value })).rejects.toThrow(/PSP_INGRESS_ADDRESSES/);
});

describe('with two PSP hosts, one per PSP', () => {
  it('answers the PSP path on each, 404 elsewhere', async () => {
    const both = await t.startGateway({
      PSP_NOTIFICATION_HOST: 'psp.seller.example, PSP-Homolog.Seller.Example',
    });
    for (const host of ['psp.seller.example', 'psp-homolog.seller.example:443'])
      expect((await request(`${both.url}/psp/webhook/pix`, host, post)).status).toBe(401);
    expect((await request(`${both.url}/psp/webhook/pix`, 'api.seller.example', post)).status).toBe(404);
  });
});

describe("the ingress's verdict on a client certificate", () => {
  const verdict = {
    'ssl-client-verify': 'SUCCESS',
    'ssl-client-subject-dn': 'CN=pix.psp.example,O=PSP,C=BR',
    'ssl-client-issuer-dn': 'CN=PSP CA,O=PSP,C=BR',
  };
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let behindIngress: RunningGateway;
  let notIngress: RunningGateway;

  beforeAll(async () => {
    upstream = await startFakeUpstream((_req, res) => json(res, 200, { message: 'ok', data: {} }));
    const to = {
      PAYMENTS_URL: upstream.url,
      ORDERS_URL: upstream.url,
      PSP_NOTIFICATION_HOST: 'psp.seller.example',
    };
    // These tests call from 127.0.0.1: as the ingress, or as anyone else.
    behindIngress = await t.startGateway({ ...to, PSP_INGRESS_ADDRESSES: '127.0.0.1' });
    notIngress = await t.startGateway({ ...to, PSP_INGRESS_ADDRESSES: '10.0.0.0/8' });
  });
  afterAll(() => upstream.close());

  const last = () => {
    const received = upstream.received[upstream.received.length - 1];
    if (!received) throw new Error('nothing reached the upstream');
    return received;
  };
  const headerNames = () => Object.keys(last().headers);

  it("reaches payments signed with the gateway's key, for that call only, from the ingress on a PSP host", async () => {
    const res = await request(`${behindIngress.url}/psp/webhook/pix?x=1`, 'psp.seller.example', {
      ...post,
      headers: { ...post.headers, ...verdict },
    });
    expect(res.status).toBe(200);
    const received = last();
    expect(headerNames().filter((name) => name.startsWith('ssl-client-'))).toEqual([]);
    const keys = callerKeys('payments');
    const certificate = verifyPspClient(keys, received.headers, 'POST', '/psp/webhook/pix?x=1', notification);
    expect(certificate).toEqual({
      subject: 'CN=pix.psp.example,O=PSP,C=BR',
      issuer: 'CN=PSP CA,O=PSP,C=BR',
      host: 'psp.seller.example',
    });
    expect(verifyPspClient(keys, received.headers, 'POST', '/psp/webhook/pix', notification)).toBeNull();
  });

  it('is dropped, never signed, unless it says SUCCESS with a subject, from the ingress, on a PSP host', async () => {
    const cases: Array<[RunningGateway, string, Record<string, string>]> = [
      [notIngress, 'psp.seller.example', verdict],
      [
        behindIngress,
        'psp.seller.example',
        { ...verdict, 'ssl-client-verify': 'FAILED:certificate has expired' },
      ],
      [behindIngress, 'psp.seller.example', { ...verdict, 'ssl-client-verify': 'NONE' }],
      [behindIngress, 'psp.seller.example', { ...verdict, 'ssl-client-subject-dn': '' }],
    ];
    for (const [gateway, host, headers] of cases) {
      const res = await request(`${gateway.url}/psp/webhook/pix`, host, {
        ...post,
        headers: { ...post.headers, ...headers },
      });
      expect(res.status).toBe(200);
      expect({ headers, names: headerNames().filter((n) => /^(ssl-client-|x-sa-psp)/.test(n)) }).toEqual({
        headers,
        names: [],
      });
    }
  });

  it('is dropped from every other route', async () => {
    const { key } = await createKey(behindIngress.service);
    const res = await request(`${behindIngress.url}/sellers/orders/`, 'psp.seller.example', {
      headers: { authorization: `Bearer ${key}`, ...verdict, 'x-sa-psp-client': 'forged' },
    });
    expect(res.status).toBe(200);
    expect(last().url).toBe('/sellers/orders/');
    expect(headerNames().filter((n) => /^(ssl-client-|x-sa-psp)/.test(n))).toEqual([]);
  });
});
