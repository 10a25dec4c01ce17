import { createHmac } from 'node:crypto';
import { STANDARD_WEBHOOK_HEADERS } from '@seller-api/contracts';
import * as verify from '@seller-api/webhook-verify';
import { verifyWebhook } from '@seller-api/webhook-verify';
import { buildRequest, compactJson, type DeliveryToSend } from './delivery-request';

// Standard base64 of 32 bytes, with + and / in it.
const SECRET = 'whsec_+/////8+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+Pj4+++8=';
const NOW = Date.parse('2026-11-26T08:00:00.750Z');

function delivery(overrides: Partial<DeliveryToSend> = {}): DeliveryToSend {
  return {
    event: 'order.paid',
    event_id: 'evt_01',
    url: 'https://example.com/hooks?token=abc',
    signed: true,
    secret: SECRET,
    payload: '{"order":{"uuid":"o1","amount":6500}}',
    occurred_at_ms: Date.parse('2026-11-26T07:59:59.123Z'),
    attempts: 2,
    ...overrides,
  };
}

describe('buildRequest', () => {
  it('makes the envelope with the data spliced in as stored and the next attempt number', () => {
    const request = buildRequest(delivery(), NOW);
    expect(request.url).toBe('https://example.com/hooks?token=abc');
    expect(request.body).toBe(
      '{"event":"order.paid","occurred_at":"2026-11-26T07:59:59.123Z","delivery_attempt":3,' +
        '"data":{"order":{"uuid":"o1","amount":6500}}}',
    );
    expect(JSON.parse(request.body)).toEqual({
      event: 'order.paid',
      occurred_at: '2026-11-26T07:59:59.123Z',
      delivery_attempt: 3,
      data: { order: { uuid: 'o1', amount: 6500 } },
    });
  });

  it('sends the data compact, like the envelope, when it is stored as jsonb prints it', () => {
    // PostgreSQL's jsonb text: a space after every `,` and `:` between tokens.
    const spaced = '{"order": {"uuid": "o1", "amount": 6500, "tags": [1, 2.50, {}], "note": "a, b: c"}}';
    const request = buildRequest(delivery({ payload: spaced }), NOW);
    expect(request.body).toBe(
      '{"event":"order.paid","occurred_at":"2026-11-26T07:59:59.123Z","delivery_attempt":3,' +
        '"data":{"order":{"uuid":"o1","amount":6500,"tags":[1,2.50,{}],"note":"a, b: c"}}}',
    );
    // The signature covers those exact bytes.
    expect(
      verifyWebhook({ secret: SECRET, headers: request.headers, rawBody: request.body, now: NOW }),
    ).toMatchObject({ data: { order: { note: 'a, b: c' } } });
  });

  it('signs a signed delivery over the body as sent, at the whole second of `now`', () => {
    const { headers, body } = buildRequest(delivery(), NOW);
    const timestamp = Math.floor(NOW / 1000);
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Webhooks/1.0',
      'X-Webhook-Event': 'order.paid',
      'X-Webhook-Event-Id': 'evt_01',
      'X-Webhook-Timestamp': String(timestamp),
    });
    const expected = createHmac('sha256', SECRET).update(`evt_01.${timestamp}.${body}`).digest('hex');
    expect(headers['X-Webhook-Signature']).toBe(`sha256=${expected}`);
    // A receiver verifying with the published helper accepts it.
    const verified = verifyWebhook({ secret: SECRET, headers, rawBody: body, now: NOW });
    expect(verified).toMatchObject({ eventId: 'evt_01', event: 'order.paid', deliveryAttempt: 3 });
  });

  it('carries the Standard Webhooks headers: the event id, the same timestamp, v1 keyed by the secret bytes', () => {
    const { headers, body } = buildRequest(delivery(), NOW);
    const timestamp = String(Math.floor(NOW / 1000));
    expect(headers['webhook-id']).toBe('evt_01');
    expect(headers['webhook-timestamp']).toBe(timestamp);
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    expect(key).toHaveLength(32);
    const expected = createHmac('sha256', key).update(`evt_01.${timestamp}.${body}`).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('signs a secret issued in base64url with the same bytes as its standard base64 form', () => {
    const bytes = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const old = `whsec_${bytes.toString('base64url')}`;
    expect(old).not.toBe(SECRET);
    const fromOld = buildRequest(delivery({ secret: old }), NOW).headers;
    const fromStandard = buildRequest(delivery(), NOW).headers;
    expect(fromOld['webhook-signature']).toBe(fromStandard['webhook-signature']);
    // X-Webhook-Signature is keyed by the secret's text, so it differs between the two.
    expect(fromOld['X-Webhook-Signature']).not.toBe(fromStandard['X-Webhook-Signature']);
  });

  it("names the Standard Webhooks headers as the receiver's package does", () => {
    expect(STANDARD_WEBHOOK_HEADERS).toEqual(verify.STANDARD_WEBHOOK_HEADERS);
  });

  it('leaves an unsigned delivery (a postback) without timestamp or signature', () => {
    const { headers } = buildRequest(delivery({ signed: false, secret: null }), NOW);
    expect(Object.keys(headers).sort()).toEqual(
      ['X-Webhook-Event', 'X-Webhook-Event-Id', 'content-type', 'user-agent'].sort(),
    );
  });

  it('does not sign without a secret even when marked signed', () => {
    const { headers } = buildRequest(delivery({ secret: null }), NOW);
    expect(headers['X-Webhook-Signature']).toBeUndefined();
    expect(headers['X-Webhook-Timestamp']).toBeUndefined();
    expect(headers['webhook-signature']).toBeUndefined();
  });

  it('escapes the event name as JSON', () => {
    const { body } = buildRequest(delivery({ event: 'odd"name' }), NOW);
    expect(JSON.parse(body)).toMatchObject({ event: 'odd"name' });
  });
});

describe('compactJson', () => {
  it('removes whitespace between tokens and keeps strings and numbers byte for byte', () => {
    expect(compactJson('{"a": 1, "b": [true, null, -0.10, 12345678901234567890]}')).toBe(
      '{"a":1,"b":[true,null,-0.10,12345678901234567890]}',
    );
    expect(compactJson('{"s": "x, y: \\"q\\" \\\\ ", "t": "\\u00e9 São  Paulo\\n"}')).toBe(
      '{"s":"x, y: \\"q\\" \\\\ ","t":"\\u00e9 São  Paulo\\n"}',
    );
    expect(compactJson(' {\n\t"a" :\r\n[ ] } ')).toBe('{"a":[]}');
  });

  it('leaves compact JSON as it is and keeps its value', () => {
    const compact = '{"order":{"uuid":"o1","items":[{"name":"Camiseta \\"P\\""}]}}';
    expect(compactJson(compact)).toBe(compact);
    const spaced = JSON.stringify(JSON.parse(compact), null, 2);
    expect(compactJson(spaced)).toBe(compact);
  });
});
