import { createHmac } from 'node:crypto';
import { verifyWebhook } from '@seller-api/webhook-verify';
import { buildRequest, type DeliveryToSend } from './delivery-request';

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
  });

  it('escapes the event name as JSON', () => {
    const { body } = buildRequest(delivery({ event: 'odd"name' }), NOW);
    expect(JSON.parse(body)).toMatchObject({ event: 'odd"name' });
  });
});
