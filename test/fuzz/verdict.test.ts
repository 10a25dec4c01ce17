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
        text: '{"message":"Invalid.","code":"validation_error","data":{"items.0.quantity":["Too big"]}}',
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
});
