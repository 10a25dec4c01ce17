import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpError } from '@seller-api/service-kit';
import { RefundHoldsClient } from './refund-holds';

// What withdrawals' answers to a refund hold become for orders: only withdrawals' own "no such order" is
// the order's 404; a 404 for the route (a withdrawals older than holds, mid-deploy) is a 503 to retry.

const identity = {
  user_id: '0b0e8a52-7a2b-4f4e-9d39-3a6f8a1b2c3d',
  seller_id: '1c1e8a52-7a2b-4f4e-9d39-3a6f8a1b2c3d',
  environment: 'test' as const,
  role: 'seller' as const,
  seller_name: 'Loja',
};
const orderId = '2d2e8a52-7a2b-4f4e-9d39-3a6f8a1b2c3d';
const known = {
  gross_amount: 1000,
  fee_amount: 99,
  net_amount: 901,
  charge_status: 'PAID' as const,
  version: 1,
};

let answer: { status: number; body: unknown } = { status: 200, body: {} };
let server: http.Server;
let client: RefundHoldsClient;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  client = new RefundHoldsClient(
    `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    { caller: 'orders', callee: 'withdrawals', key: 'k'.repeat(43) },
    2000,
  );
});
afterAll(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

async function holdError(): Promise<HttpError> {
  const err = await client.hold(identity, orderId, known).then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof HttpError)) throw new Error(`expected an HttpError, got ${String(err)}`);
  return err;
}

describe('refund holds client', () => {
  it('passes withdrawals\' "order not found" through as the order\'s 404', async () => {
    answer = { status: 404, body: { code: 'not_found', message: 'Order not found.' } };
    expect(await holdError()).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('answers 503 for a 404 of the route itself, as a withdrawals older than holds gives', async () => {
    answer = {
      status: 404,
      body: { code: 'not_found', message: `Route POST /internal/refund-holds/${orderId}/ not found.` },
    };
    expect(await holdError()).toMatchObject({ status: 503 });
  });

  it('passes insufficient_balance through as a 409', async () => {
    answer = { status: 409, body: { code: 'insufficient_balance', message: 'Not enough.' } };
    expect(await holdError()).toMatchObject({ status: 409, code: 'insufficient_balance' });
  });

  it('returns the hold withdrawals made', async () => {
    answer = {
      status: 200,
      body: { message: 'Held.', data: { order_uuid: orderId, held: true, charge_status: 'PAID' } },
    };
    expect(await client.hold(identity, orderId, known)).toEqual({
      order_uuid: orderId,
      held: true,
      charge_status: 'PAID',
    });
  });
});
