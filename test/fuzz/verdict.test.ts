import type { FuzzRequest } from '../../fuzz/requests';
import { strictInputProblems } from '../../fuzz/runner';
import { problemsOf } from '../../fuzz/verdict';

const json = 'application/json; charset=utf-8';

describe("the fuzzer's verdict on an answer", () => {
  it('accepts documented errors and successes', () => {
    expect(problemsOf({ status: 200, contentType: json, text: '{"message":"ok"}' })).toEqual([]);
    expect(
      problemsOf({
        status: 404,
        contentType: json,
        text: '{"message":"Not found.","code":"not_found","request_id":"r"}',
      }),
    ).toEqual([]);
    expect(
      problemsOf({
        status: 400,
        contentType: json,
        text: '{"message":"Invalid.","code":"validation_error","data":{"items.0.quantity":["Must be at most 2147483647."],"items.0.x":["This field is not accepted."]}}',
      }),
    ).toEqual([]);
  });

  it('flags a 5xx, a stack trace, SQL and every 4xx outside the error shape', () => {
    const problems = (status: number, text: string, contentType = json) =>
      problemsOf({ status, contentType, text }).join('; ');
    expect(problems(500, '{"message":"x","code":"internal_error"}')).toMatch(/status 500/);
    expect(
      problems(
        400,
        '{"message":"Error: x\\n    at handler (/app/dist/routes.js:10:5)","code":"invalid_json"}',
      ),
    ).toMatch(/stack trace/);
    expect(
      problems(409, '{"message":"duplicate key value violates unique constraint \\"x\\"","code":"conflict"}'),
    ).toMatch(/SQL/);
    expect(problems(400, '<html>Bad Request</html>', 'text/html')).toMatch(/content-type/);
    expect(problems(400, '{"message":"x"}')).toMatch(/error shape/);
    expect(problems(404, '{"message":"x","code":"conflict"}')).toMatch(/goes with 409/);
    expect(problems(400, '{"message":"x","code":"validation_error"}')).toMatch(/data map/);
    expect(problems(415, '{"message":"x","code":"invalid_json"}')).toMatch(/goes with 400/);
  });

  it("flags a validation message docs/errors.md does not list, such as a validator's own words", () => {
    const answer = (message: string) =>
      problemsOf({
        status: 400,
        contentType: json,
        text: JSON.stringify({ message: 'Invalid.', code: 'validation_error', data: { 'a.b': [message] } }),
      });
    expect(answer('Too big: expected number to be <=100')).toEqual([
      'message not in docs/errors.md, "Messages": "Too big: expected number to be <=100"',
    ]);
    expect(answer('Invalid input: expected object, received undefined')).toHaveLength(1);
    expect(answer('Must be at most 100 characters.')).toEqual([]);
    expect(answer('Must be at most 100 characters')).toHaveLength(1);
  });

  it('flags input a public route does not take that was answered 2xx, except on the PSP route', () => {
    const request = (route: string, notes: string[], body?: string): FuzzRequest => ({
      route,
      method: route.split(' ')[0] as string,
      path: '/x/',
      headers: {},
      notes,
      ...(body === undefined ? {} : { body }),
    });
    const ok = { status: 200, contentType: json, text: '{"message":"ok"}' };
    const refused = { status: 400, contentType: json, text: '{}' };
    expect(strictInputProblems(request('POST /sellers/orders/', ['extra payment.amount']), ok)).toEqual([
      '200 to input the route does not take (extra payment.amount)',
    ]);
    expect(strictInputProblems(request('GET /finance/balance/', ['query unexpected']), ok)).toHaveLength(1);
    expect(strictInputProblems(request('GET /sellers/orders/', ['valid'], '{"status":"PAID"}'), ok)).toEqual([
      '200 to input the route does not take (a body on a GET)',
    ]);
    expect(strictInputProblems(request('POST /sellers/orders/', ['extra payment.amount']), refused)).toEqual(
      [],
    );
    expect(strictInputProblems(request('POST /psp/webhook/pix', ['extra pix.0.extra']), ok)).toEqual([]);
  });
});
