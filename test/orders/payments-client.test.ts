import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Charge, CreateChargeRequest, CreateChargesRequest, Identity } from '@seller-api/contracts';
import { HttpError, verifyIdentity, verifySignedIdentity } from '@seller-api/service-kit';
import { callKey, callerKeys } from '../support/keys';
import { PaymentsClient } from '../../services/orders/src/clients/payments';

const KEY = callKey('orders', 'payments');
const KEYS = callerKeys('payments');

/** A stand-in for payments: records each call, answers as `answer` says. */
async function fakePayments(
  answer: (path: string, body: unknown, res: http.ServerResponse) => void,
): Promise<{
  url: string;
  calls: Array<{ path: string; body: unknown; identityOk: boolean }>;
  close(): Promise<void>;
}> {
  const calls: Array<{ path: string; body: unknown; identityOk: boolean }> = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      const path = req.url ?? '/';
      const body = JSON.parse(text) as unknown;
      const identityOk = verifyIdentity(KEYS, req.headers, 'POST', path, text) !== null;
      calls.push({ path, body, identityOk });
      answer(path, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const identity = (): Identity => ({
  user_id: randomUUID(),
  seller_id: randomUUID(),
  environment: 'test',
  role: 'seller',
  seller_name: 'Loja',
});

const request = (gross: number): CreateChargeRequest => ({
  order_uuid: randomUUID(),
  gross_amount: gross,
  expires_at: new Date(Date.now() + 3600_000).toISOString(),
  seller_name: null,
  debtor_name: null,
  debtor_document: null,
});

const chargeOf = (input: CreateChargeRequest): Charge => ({
  transaction_uuid: randomUUID(),
  order_uuid: input.order_uuid,
  status: 'CREATED',
  method: 'PIX',
  txid: 'TX1',
  copy_and_paste: `code-${input.gross_amount}`,
  qr_code_image_base64: 'iVBORw0KGgo=',
  gross_amount: input.gross_amount,
  fee_amount: 1,
  net_amount: input.gross_amount - 1,
  expires_at: input.expires_at,
  created_at: new Date().toISOString(),
});

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('the payments client', () => {
  let fake: Awaited<ReturnType<typeof fakePayments>> | undefined;
  let client: PaymentsClient | undefined;
  afterEach(async () => {
    await client?.close();
    await fake?.close();
  });

  it('sends the charges of concurrent creates in one call, each signed for its own seller, and maps the answers back', async () => {
    fake = await fakePayments((_path, body, res) => {
      const { charges } = body as CreateChargesRequest;
      json(res, 200, {
        message: 'Charges processed.',
        data: {
          results: charges.map(({ charge }) =>
            charge.gross_amount === 409
              ? { status: 409, code: 'conflict', message: 'Another seller.' }
              : { status: 201, charge: chargeOf(charge) },
          ),
        },
      });
    });
    client = new PaymentsClient(fake.url, KEY, 2_000);
    const sellers = [identity(), identity(), identity()];
    const inputs = [request(100), request(409), request(300)];
    const outcomes = await Promise.allSettled(
      inputs.map((input, i) => client!.createCharge(sellers[i]!, input)),
    );

    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]).toMatchObject({ path: '/internal/charges/batch/', identityOk: true });
    const sent = (fake.calls[0]?.body as CreateChargesRequest).charges;
    expect(sent.map((c) => c.charge)).toEqual(inputs);
    // Each charge carries the identity its own call would have had, checked as payments checks it.
    // Signed over the body that call would send: the charge as JSON.
    sent.forEach((c, i) => {
      const body = JSON.stringify(c.charge);
      expect(verifySignedIdentity(KEYS, c.signed, 'POST', '/internal/charges/', body)).toEqual({
        caller: 'orders',
        identity: sellers[i],
      });
      expect(verifySignedIdentity(KEYS, c.signed, 'POST', '/internal/charges/', '{}')).toBeNull();
    });
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[0] as PromiseFulfilledResult<Charge>).value.gross_amount).toBe(100);
    expect((outcomes[2] as PromiseFulfilledResult<Charge>).value.order_uuid).toBe(inputs[2]?.order_uuid);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ status: 503 });
  });

  it('calls a payments build without the batch route one charge at a time, and keeps doing so', async () => {
    fake = await fakePayments((path, body, res) => {
      if (path === '/internal/charges/batch/')
        return json(res, 404, { message: 'Route not found.', code: 'not_found' });
      json(res, 201, { message: 'Charge created.', data: chargeOf(body as CreateChargeRequest) });
    });
    client = new PaymentsClient(fake.url, KEY, 2_000);
    const first = await Promise.all(
      [request(1), request(2)].map((input) => client!.createCharge(identity(), input)),
    );
    expect(first.map((c) => c.gross_amount)).toEqual([1, 2]);
    const later = await client.createCharge(identity(), request(3));
    expect(later.gross_amount).toBe(3);
    expect(fake.calls.map((c) => c.path)).toEqual([
      '/internal/charges/batch/',
      '/internal/charges/',
      '/internal/charges/',
      '/internal/charges/',
    ]);
    expect(fake.calls.every((c) => c.identityOk)).toBe(true);
  });

  it('answers 503 within its deadline when payments does not answer, or answers what it cannot read', async () => {
    fake = await fakePayments((_path, body, res) => {
      const { charges } = body as CreateChargesRequest;
      if (charges[0]?.charge.gross_amount === 1) return; // never answers
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>proxy error</html>');
    });
    client = new PaymentsClient(fake.url, KEY, 300);
    const started = Date.now();
    const silent = await client.createCharge(identity(), request(1)).catch((err: unknown) => err);
    expect(silent).toBeInstanceOf(HttpError);
    expect(silent).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(Date.now() - started).toBeLessThan(2_000);
    const unreadable = await client.createCharge(identity(), request(2)).catch((err: unknown) => err);
    expect(unreadable).toMatchObject({ status: 503 });
  });
});
