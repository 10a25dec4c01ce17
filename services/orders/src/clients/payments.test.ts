import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpError } from '@seller-api/service-kit';
import { PaymentsClient } from './payments';

// What payments' answers become for the orders' client: a proxy's HTML page or a body that is not the
// contract is a 503 (the service's trouble), never a 500; payments' refusals pass through.

const identity = {
  user_id: '0b0e8a52-7a2b-4f4e-9d39-3a6f8a1b2c3d',
  seller_id: '1c1e8a52-7a2b-4f4e-9d39-3a6f8a1b2c3d',
  environment: 'test' as const,
  role: 'seller' as const,
  seller_name: 'Loja',
};
const charge = {
  order_uuid: '2d2e8a52-7a2b-4f4e-9d39-3a6f8a1b2c3d',
  gross_amount: 1000,
  expires_at: '2030-01-01T00:00:00.000Z',
  seller_name: 'Loja',
  debtor_name: null,
  debtor_document: null,
};

let answer: { status: number; body: string } = { status: 200, body: '' };
let server: http.Server;
let client: PaymentsClient;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(answer.status, { 'content-type': 'text/html' }).end(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  client = new PaymentsClient(
    `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    { caller: 'orders', callee: 'payments', key: 'k'.repeat(43) },
    2000,
  );
});
afterAll(async () => {
  await client.close();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(promise: Promise<unknown>): Promise<HttpError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof HttpError)) throw new Error(`expected an HttpError, got ${String(err)}`);
  return err;
}

describe('payments client', () => {
  it.each([
    { status: 201, body: '<html>Bad gateway</html>' },
    { status: 201, body: '{"data":{"unexpected":true}}' },
    { status: 201, body: 'null' },
    { status: 502, body: '<html>Bad gateway</html>' },
  ])('answers 503 to a charge answer it cannot read ($status $body)', async (given) => {
    answer = given;
    expect((await failure(client.createCharge(identity, charge))).status).toBe(503);
  });

  it.each([
    { status: 200, body: '<html>oops</html>' },
    { status: 200, body: '{"message":"ok","data":{"status":"NOT_A_STATUS"}}' },
    { status: 502, body: '<html>Bad gateway</html>' },
  ])('answers 503 to an action answer it cannot read ($status $body)', async (given) => {
    answer = given;
    expect((await failure(client.act(identity, charge.order_uuid, 'cancel'))).status).toBe(503);
  });

  it("passes payments' 400 refusal of a charge on with its message", async () => {
    answer = {
      status: 200,
      body: JSON.stringify({
        message: 'Charges processed.',
        data: { results: [{ status: 400, code: 'validation_error', message: 'Not taken.' }] },
      }),
    };
    const err = await failure(client.createCharge(identity, charge));
    expect(err).toMatchObject({ status: 400, code: 'validation_error', message: 'Not taken.' });
  });

  it('names payment.due_date on a 400 refusal of a due-date charge', async () => {
    const refusal = 'Due-date charges are not available in this environment.';
    answer = {
      status: 200,
      body: JSON.stringify({
        message: 'Charges processed.',
        data: { results: [{ status: 400, code: 'validation_error', message: refusal }] },
      }),
    };
    const dueDate = {
      due_date: '2030-01-01',
      days_after_due: 30,
      fine: null,
      interest: null,
      rebate: null,
      discount: null,
      calendar: null,
    };
    const err = await failure(client.createCharge(identity, { ...charge, due_date: dueDate }));
    expect(err).toMatchObject({
      status: 400,
      code: 'validation_error',
      message: refusal,
      data: { 'payment.due_date': [refusal] },
    });
  });

  it.each([
    { status: 500, code: 'internal_error', message: 'Internal server error.' },
    { status: 401, code: 'unauthorized', message: 'Bad signature.' },
    { status: 400, code: 'conflict', message: 'A code that does not go with its status.' },
    { status: 409, code: 'conflict', message: 'Another seller holds this order id.' },
    { status: 403, code: 'forbidden', message: 'Not this caller.' },
  ])("answers 503 to a charge result that is payments' own trouble ($status $code)", async (result) => {
    answer = {
      status: 200,
      body: JSON.stringify({ message: 'Charges processed.', data: { results: [result] } }),
    };
    expect((await failure(client.createCharge(identity, charge))).status).toBe(503);
  });

  it("passes payments' refusals on with their message", async () => {
    answer = { status: 409, body: '{"message":"This order is PAID.","code":"conflict"}' };
    const err = await failure(client.act(identity, charge.order_uuid, 'cancel'));
    expect(err).toMatchObject({ status: 409, code: 'conflict', message: 'This order is PAID.' });
  });
});
