import { createHmac } from 'node:crypto';
import {
  DEFAULT_TOLERANCE_SECONDS,
  WebhookVerificationError,
  signatureFor,
  standardSignatureFor,
  standardSigningKey,
  verifyWebhook,
  type WebhookHeaders,
  type WebhookVerificationErrorCode,
} from './index';

const SECRET = 'whsec_dGVzdC1zZWNyZXQtdGhhdC1pcy1hdC1sZWFzdC0zMi1ieXRlcw';
const OTHER_SECRET = 'whsec_b3RoZXItc2VjcmV0LXRoYXQtaXMtYXQtbGVhc3QtMzItYnl0ZXM';
const EVENT_ID = 'evt_Hq7Tz2Wm9Kc4Xb8Rn1Vp6Ls3';
const NOW_MS = 1_750_000_000_000;
const TIMESTAMP = NOW_MS / 1000;

const envelope = {
  event: 'order.paid',
  occurred_at: '2025-06-15T14:13:20.000Z',
  delivery_attempt: 2,
  data: { order: { uuid: '3f6c1a4e-0d5b-4f8e-9a61-2b7c8d9e0f12', status: 'PAID' }, seller: { name: 'Loja' } },
};
const BODY = JSON.stringify(envelope);

function delivery(overrides: { secret?: string; timestamp?: number; body?: string } = {}): WebhookHeaders {
  const timestamp = overrides.timestamp ?? TIMESTAMP;
  return {
    'content-type': 'application/json',
    'user-agent': 'Webhooks/1.0',
    'x-webhook-event': 'order.paid',
    'x-webhook-event-id': EVENT_ID,
    'x-webhook-timestamp': String(timestamp),
    'x-webhook-signature': signatureFor(
      overrides.secret ?? SECRET,
      EVENT_ID,
      timestamp,
      overrides.body ?? BODY,
    ),
  };
}

function failure(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
  throw new Error('expected a WebhookVerificationError');
}

function codeOf(run: () => unknown): WebhookVerificationErrorCode {
  return failure(run).code;
}

describe('signatureFor', () => {
  it('is sha256= and the lowercase hex HMAC-SHA256 of "<eventId>.<timestamp>.<body>" keyed by the whole secret', () => {
    const expected = createHmac('sha256', SECRET).update(`${EVENT_ID}.${TIMESTAMP}.${BODY}`).digest('hex');
    expect(signatureFor(SECRET, EVENT_ID, TIMESTAMP, BODY)).toBe(`sha256=${expected}`);
    expect(signatureFor(SECRET, EVENT_ID, String(TIMESTAMP), Buffer.from(BODY))).toBe(`sha256=${expected}`);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('matches a known answer', () => {
    // The worked example of docs/webhooks.md:
    // printf '%s' 'evt_5mQ2xR8vKc3TnW7pL0bZ4hJy.1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'whsec_test'
    const known = '7292ab96669d302c7a49c1704e5d3950d5abedddc4b5b5844f8c043b81e47f0d';
    const independent = createHmac('sha256', Buffer.from('whsec_test', 'utf8'))
      .update(Buffer.from('evt_5mQ2xR8vKc3TnW7pL0bZ4hJy.1700000000.{"a":1}', 'utf8'))
      .digest('hex');
    expect(independent).toBe(known);
    expect(signatureFor('whsec_test', 'evt_5mQ2xR8vKc3TnW7pL0bZ4hJy', 1700000000, '{"a":1}')).toBe(
      `sha256=${known}`,
    );
    expect(
      signatureFor('whsec_test', 'evt_5mQ2xR8vKc3TnW7pL0bZ4hJy', '1700000000', Buffer.from('{"a":1}')),
    ).toBe(`sha256=${known}`);
  });

  it('signs the raw bytes, so non-ASCII bodies give the same answer as string or Buffer', () => {
    const body = '{"name":"João Ção 💸"}';
    expect(signatureFor(SECRET, EVENT_ID, TIMESTAMP, Buffer.from(body, 'utf8'))).toBe(
      signatureFor(SECRET, EVENT_ID, TIMESTAMP, body),
    );
  });

  it('uses the secret as given, without decoding it', () => {
    const withoutPrefix = SECRET.slice('whsec_'.length);
    expect(signatureFor(SECRET, EVENT_ID, TIMESTAMP, BODY)).not.toBe(
      signatureFor(withoutPrefix, EVENT_ID, TIMESTAMP, BODY),
    );
  });

  it('refuses an empty or missing secret instead of signing with an empty key', () => {
    expect(() => signatureFor('', EVENT_ID, TIMESTAMP, BODY)).toThrow(TypeError);
    expect(() => signatureFor(undefined as unknown as string, EVENT_ID, TIMESTAMP, BODY)).toThrow(TypeError);
  });
});

describe('standardSignatureFor', () => {
  it('matches the Standard Webhooks specification example', () => {
    // The example of the specification's reference libraries: secret, message id, timestamp, body.
    const signature = standardSignatureFor(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('keys by the same bytes whether the secret is written in base64 or base64url', () => {
    const bytes = Buffer.from('fb0ff3e8a1c2d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d', 'hex');
    const standard = `whsec_${bytes.toString('base64')}`;
    const url = `whsec_${bytes.toString('base64url')}`;
    expect(standard).not.toBe(url);
    expect(standardSigningKey(url).equals(bytes)).toBe(true);
    expect(standardSignatureFor(url, 'evt_1', 1, 'x')).toBe(standardSignatureFor(standard, 'evt_1', 1, 'x'));
  });

  it('refuses a secret without its whsec_ prefix or with nothing after it', () => {
    expect(() => standardSigningKey('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toThrow(TypeError);
    expect(() => standardSigningKey('whsec_')).toThrow(TypeError);
    expect(() => standardSignatureFor('', 'evt_1', 1, 'x')).toThrow(TypeError);
  });

  it('refuses a secret whose text after whsec_ decodes to no bytes', () => {
    expect(() => standardSigningKey('whsec_!!!!')).toThrow(TypeError);
  });
});

describe('verifyWebhook', () => {
  it('accepts a signed delivery and returns its envelope', () => {
    const verified = verifyWebhook({ secret: SECRET, headers: delivery(), rawBody: BODY, now: NOW_MS });
    expect(verified).toEqual({
      eventId: EVENT_ID,
      timestamp: TIMESTAMP,
      event: 'order.paid',
      occurredAt: envelope.occurred_at,
      deliveryAttempt: 2,
      data: envelope.data,
    });
  });

  it('accepts the body as a Buffer', () => {
    const verified = verifyWebhook({
      secret: SECRET,
      headers: delivery(),
      rawBody: Buffer.from(BODY),
      now: NOW_MS,
    });
    expect(verified.eventId).toBe(EVENT_ID);
  });

  it('defaults to a 5 minute tolerance and the current clock', () => {
    expect(DEFAULT_TOLERANCE_SECONDS).toBe(300);
    const timestamp = Math.floor(Date.now() / 1000);
    const verified = verifyWebhook({ secret: SECRET, headers: delivery({ timestamp }), rawBody: BODY });
    expect(verified.timestamp).toBe(timestamp);
  });

  it('refuses a tampered body', () => {
    const tampered = BODY.replace('"PAID"', '"REFUNDED"');
    expect(
      codeOf(() => verifyWebhook({ secret: SECRET, headers: delivery(), rawBody: tampered, now: NOW_MS })),
    ).toBe('invalid_signature');
  });

  it('refuses a body re-serialised differently (whitespace counts)', () => {
    const reformatted = JSON.stringify(envelope, null, 2);
    expect(
      codeOf(() => verifyWebhook({ secret: SECRET, headers: delivery(), rawBody: reformatted, now: NOW_MS })),
    ).toBe('invalid_signature');
  });

  it('refuses another secret', () => {
    const headers = delivery({ secret: OTHER_SECRET });
    expect(codeOf(() => verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }))).toBe(
      'invalid_signature',
    );
  });

  it('refuses a signature of another event id or timestamp', () => {
    const headers = { ...delivery(), 'x-webhook-event-id': 'evt_other' };
    expect(codeOf(() => verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }))).toBe(
      'invalid_signature',
    );
    const moved = { ...delivery(), 'x-webhook-timestamp': String(TIMESTAMP + 1) };
    expect(codeOf(() => verifyWebhook({ secret: SECRET, headers: moved, rawBody: BODY, now: NOW_MS }))).toBe(
      'invalid_signature',
    );
  });

  it('refuses malformed signatures of any length', () => {
    for (const signature of [
      'sha256=',
      'sha256=abc',
      'garbage',
      'sha1=' + 'a'.repeat(40),
      'sha256=' + 'g'.repeat(64),
    ]) {
      const headers = { ...delivery(), 'x-webhook-signature': signature };
      expect(codeOf(() => verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }))).toBe(
        'invalid_signature',
      );
    }
  });

  it('accepts a signature written in uppercase hex', () => {
    const headers = delivery();
    const upper = { ...headers, 'x-webhook-signature': String(headers['x-webhook-signature']).toUpperCase() };
    expect(verifyWebhook({ secret: SECRET, headers: upper, rawBody: BODY, now: NOW_MS }).eventId).toBe(
      EVENT_ID,
    );
  });

  it('accepts timestamps up to the tolerance away, either way', () => {
    for (const timestamp of [TIMESTAMP - 300, TIMESTAMP + 300]) {
      const headers = delivery({ timestamp });
      expect(verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }).timestamp).toBe(
        timestamp,
      );
    }
  });

  it('refuses an old timestamp', () => {
    const headers = delivery({ timestamp: TIMESTAMP - 301 });
    const error = failure(() => verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }));
    expect(error.code).toBe('timestamp_out_of_tolerance');
    expect(error.message).toMatch(/301 s/);
  });

  it('refuses a future timestamp', () => {
    const headers = delivery({ timestamp: TIMESTAMP + 301 });
    expect(codeOf(() => verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }))).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('honours a custom tolerance and a Date as now', () => {
    const headers = delivery({ timestamp: TIMESTAMP - 3600 });
    expect(
      verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: new Date(NOW_MS), toleranceSeconds: 3600 })
        .eventId,
    ).toBe(EVENT_ID);
    expect(
      codeOf(() =>
        verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS, toleranceSeconds: 60 }),
      ),
    ).toBe('timestamp_out_of_tolerance');
  });

  it('checks the timestamp before the signature', () => {
    const headers = { ...delivery({ timestamp: TIMESTAMP - 10_000 }), 'x-webhook-signature': 'sha256=00' };
    expect(codeOf(() => verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }))).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('refuses a timestamp that is not unix seconds', () => {
    for (const value of ['abc', '1750000000.5', '-1750000000', '2025-06-15T14:13:20Z', '1e9']) {
      const headers = { ...delivery(), 'x-webhook-timestamp': value };
      expect(codeOf(() => verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }))).toBe(
        'invalid_timestamp',
      );
    }
  });

  it.each(['x-webhook-event-id', 'x-webhook-timestamp', 'x-webhook-signature'])(
    'refuses a delivery without %s',
    (name) => {
      const headers: WebhookHeaders = { ...delivery() };
      delete headers[name];
      const error = failure(() => verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }));
      expect(error.code).toBe('missing_header');
      expect(error.message.toLowerCase()).toContain(name);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe('WebhookVerificationError');
    },
  );

  it('treats empty and undefined header values as missing', () => {
    const headers = { ...delivery(), 'x-webhook-signature': '', 'x-webhook-event-id': undefined };
    expect(codeOf(() => verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }))).toBe(
      'missing_header',
    );
  });

  it('finds headers in any case', () => {
    const lower = delivery();
    const canonical: WebhookHeaders = {
      'X-Webhook-Event-Id': lower['x-webhook-event-id'],
      'X-Webhook-Timestamp': lower['x-webhook-timestamp'],
      'X-Webhook-Signature': lower['x-webhook-signature'],
    };
    const upper: WebhookHeaders = {
      'X-WEBHOOK-EVENT-ID': lower['x-webhook-event-id'],
      'X-WEBHOOK-TIMESTAMP': lower['x-webhook-timestamp'],
      'X-WEBHOOK-SIGNATURE': lower['x-webhook-signature'],
    };
    for (const headers of [lower, canonical, upper]) {
      expect(verifyWebhook({ secret: SECRET, headers, rawBody: BODY, now: NOW_MS }).eventId).toBe(EVENT_ID);
    }
  });

  it('takes the first value of a repeated header', () => {
    const headers = delivery();
    const repeated = {
      ...headers,
      'x-webhook-signature': [String(headers['x-webhook-signature']), 'sha256=00'],
    };
    expect(verifyWebhook({ secret: SECRET, headers: repeated, rawBody: BODY, now: NOW_MS }).eventId).toBe(
      EVENT_ID,
    );
  });

  it('accepts any of several secrets while rotating', () => {
    const headers = delivery({ secret: OTHER_SECRET });
    for (const secret of [[SECRET, OTHER_SECRET], [OTHER_SECRET, SECRET], [OTHER_SECRET]]) {
      expect(verifyWebhook({ secret, headers, rawBody: BODY, now: NOW_MS }).eventId).toBe(EVENT_ID);
    }
    expect(
      codeOf(() => verifyWebhook({ secret: [SECRET, 'whsec_x'], headers, rawBody: BODY, now: NOW_MS })),
    ).toBe('invalid_signature');
  });

  it('refuses an empty secret or secret list as a programming error', () => {
    expect(() => verifyWebhook({ secret: '', headers: delivery(), rawBody: BODY, now: NOW_MS })).toThrow(
      TypeError,
    );
    expect(() => verifyWebhook({ secret: [], headers: delivery(), rawBody: BODY, now: NOW_MS })).toThrow(
      TypeError,
    );
  });

  it('refuses a parsed body, which cannot be verified', () => {
    const parsed = envelope as unknown as string;
    expect(() =>
      verifyWebhook({ secret: SECRET, headers: delivery(), rawBody: parsed, now: NOW_MS }),
    ).toThrow(/raw request body/);
  });

  it('refuses a correctly signed body that is not JSON', () => {
    const body = 'not json';
    const headers = delivery({ body });
    expect(codeOf(() => verifyWebhook({ secret: SECRET, headers, rawBody: body, now: NOW_MS }))).toBe(
      'invalid_body',
    );
  });

  it('refuses a correctly signed body that is not an envelope', () => {
    const bodies = [
      '[]',
      '"text"',
      JSON.stringify({ ...envelope, data: null }),
      JSON.stringify({ ...envelope, delivery_attempt: '1' }),
      JSON.stringify({ ...envelope, event: undefined }),
    ];
    for (const body of bodies) {
      const headers = delivery({ body });
      expect(codeOf(() => verifyWebhook({ secret: SECRET, headers, rawBody: body, now: NOW_MS }))).toBe(
        'invalid_body',
      );
    }
  });
});
