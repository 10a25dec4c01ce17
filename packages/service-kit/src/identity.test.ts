import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import {
  CALLER_HEADER,
  IDENTITY_HEADER,
  IDENTITY_SIG2_HEADER,
  IDENTITY_SIG3_HEADER,
  IDENTITY_SIG_HEADER,
  IDENTITY_TS_HEADER,
  LEGACY_CALLER,
  bodySha256,
  deriveCallKey,
  idempotencySha256,
  signIdentity,
  signedIdentity,
  verifyIdentity,
  verifySignedIdentity,
  type CallKey,
  type CallerKeys,
} from './identity';

/**
 * Internal calls signed per caller (identity.ts, docs/deploy.md "Internal keys"): each caller signs with
 * its INTERNAL_KEY derived for the callee; the callee verifies with what it was given per caller.
 */
const GATEWAY_KEY = 'a-private-gateway-internal-key-0123456789';
const ORDERS_KEY = 'a-private-orders-internal-key-0123456789ab';
const LEGACY_SECRET = 'the-previous-release-shared-secret-0123';

const callKey = (caller: string, key: string, callee = 'withdrawals', legacySecret?: string): CallKey => ({
  caller,
  callee,
  key: deriveCallKey(key, callee),
  legacySecret,
});
const gateway = callKey('gateway', GATEWAY_KEY);
const orders = callKey('orders', ORDERS_KEY);

/** What withdrawals is given: the gateway's and orders' keys derived for it. */
const keysOf = (
  callers: Record<string, string[]>,
  legacySecrets: string[] = [],
  callee = 'withdrawals',
): CallerKeys => ({
  callee,
  keys: new Map(Object.entries(callers).map(([c, ks]) => [c, ks.map((k) => deriveCallKey(k, callee))])),
  legacySecrets,
});
const withdrawals = keysOf({ gateway: [GATEWAY_KEY], orders: [ORDERS_KEY] });

const identity = {
  user_id: randomUUID(),
  seller_id: randomUUID(),
  environment: 'test' as const,
  role: 'seller' as const,
};
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

const PATH = '/finance/withdrawals/';
const BODY = '{"amount":5000,"pix_key":"maria@example.com","pix_key_type":"email"}';

describe('signIdentity and verifyIdentity', () => {
  it('verifies what a caller signed: who signed it and the identity it acts for', () => {
    const headers = signIdentity(gateway, identity, 'post', PATH, BODY);
    expect(headers).toMatchObject({ [CALLER_HEADER]: 'gateway' });
    // No previous-release forms unless the caller is given a legacy secret.
    expect(headers).not.toHaveProperty(IDENTITY_SIG_HEADER);
    expect(headers).not.toHaveProperty(IDENTITY_SIG2_HEADER);
    expect(verifyIdentity(withdrawals, headers, 'POST', PATH, Buffer.from(BODY))).toEqual({
      caller: 'gateway',
      identity,
    });
    // The identity carries its version marker, which the verified identity does not show.
    const sent = JSON.parse(Buffer.from(headers[IDENTITY_HEADER] as string, 'base64url').toString('utf8'));
    expect(sent).toEqual({ ...identity, signature_version: 2 });
    const byOrders = signIdentity(orders, identity, 'POST', '/internal/refund-holds/x/', '{}');
    expect(verifyIdentity(withdrawals, byOrders, 'POST', '/internal/refund-holds/x/', '{}')).toEqual({
      caller: 'orders',
      identity,
    });
  });

  it('refuses another key, another caller named, and the key derived for another callee', () => {
    const stranger = callKey('gateway', 'a-key-withdrawals-was-never-given-000000');
    expect(
      verifyIdentity(withdrawals, signIdentity(stranger, identity, 'POST', PATH, BODY), 'POST', PATH, BODY),
    ).toBeNull();
    // Orders' signature presented as the gateway's (whose row may approve withdrawals), and the reverse.
    const byOrders = signIdentity(orders, identity, 'POST', PATH, BODY);
    expect(
      verifyIdentity(withdrawals, { ...byOrders, [CALLER_HEADER]: 'gateway' }, 'POST', PATH, BODY),
    ).toBeNull();
    const byGateway = signIdentity(gateway, identity, 'POST', PATH, BODY);
    expect(
      verifyIdentity(withdrawals, { ...byGateway, [CALLER_HEADER]: 'orders' }, 'POST', PATH, BODY),
    ).toBeNull();
    // A caller the callee was given no key for, or a name that is not a caller's.
    expect(
      verifyIdentity(withdrawals, { ...byGateway, [CALLER_HEADER]: 'payments' }, 'POST', PATH, BODY),
    ).toBeNull();
    expect(
      verifyIdentity(withdrawals, { ...byGateway, [CALLER_HEADER]: 'Gateway' }, 'POST', PATH, BODY),
    ).toBeNull();
    const { [CALLER_HEADER]: _caller, ...anonymous } = byGateway;
    expect(verifyIdentity(withdrawals, anonymous, 'POST', PATH, BODY)).toBeNull();
    // The gateway's signature for payments (derived for payments) is not one for withdrawals.
    const forPayments = callKey('gateway', GATEWAY_KEY, 'payments');
    expect(
      verifyIdentity(
        withdrawals,
        signIdentity(forPayments, identity, 'POST', PATH, BODY),
        'POST',
        PATH,
        BODY,
      ),
    ).toBeNull();
    // Nor does the callee accept the caller's own INTERNAL_KEY used as if derived.
    const raw: CallKey = { caller: 'gateway', callee: 'withdrawals', key: GATEWAY_KEY };
    expect(
      verifyIdentity(withdrawals, signIdentity(raw, identity, 'POST', PATH, BODY), 'POST', PATH, BODY),
    ).toBeNull();
    // A callee given the key derived for another callee refuses the right signature: the callee is signed.
    // (A call never verified before: see the memo's bug below.)
    const misnamed = { ...keysOf({ gateway: [GATEWAY_KEY] }), callee: 'payments' };
    const fresh = signIdentity(gateway, identity, 'GET', '/misnamed/');
    expect(verifyIdentity(misnamed, fresh, 'GET', '/misnamed/')).toBeNull();
    expect(verifyIdentity(withdrawals, fresh, 'GET', '/misnamed/')).not.toBeNull();
  });

  it('refuses the signature on another method, path, query or body', () => {
    const headers = signIdentity(gateway, identity, 'POST', `${PATH}?limit=5&status=PAID`, BODY);
    const ok = (method: string, path: string, body: string | null) =>
      verifyIdentity(withdrawals, headers, method, path, body);
    expect(ok('POST', `${PATH}?limit=5&status=PAID`, BODY)).not.toBeNull();
    expect(ok('PUT', `${PATH}?limit=5&status=PAID`, BODY)).toBeNull();
    expect(ok('POST', `/ops/withdrawals/?limit=5&status=PAID`, BODY)).toBeNull();
    expect(ok('POST', `${PATH}?limit=5&status=PENDING`, BODY)).toBeNull();
    expect(ok('POST', `${PATH}?status=PAID&limit=5`, BODY)).toBeNull();
    expect(ok('POST', PATH, BODY)).toBeNull();
    expect(ok('POST', `${PATH}?limit=5&status=PAID`, BODY.replace('5000', '9000'))).toBeNull();
    // Another spelling of the same JSON is other bytes.
    expect(ok('POST', `${PATH}?limit=5&status=PAID`, BODY.replace(',', ', '))).toBeNull();
    expect(ok('POST', `${PATH}?limit=5&status=PAID`, null)).toBeNull();
    // No body hashes as the empty string, whichever way the caller says it.
    const empty = signIdentity(gateway, identity, 'POST', '/ops/withdrawals/x/approve/');
    for (const none of [null, undefined, '', Buffer.alloc(0)])
      expect(verifyIdentity(withdrawals, empty, 'POST', '/ops/withdrawals/x/approve/', none)).not.toBeNull();
    expect(verifyIdentity(withdrawals, empty, 'POST', '/ops/withdrawals/x/approve/', '{}')).toBeNull();
    expect(bodySha256(null)).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('covers the Idempotency-Key and the x-idempotency-* headers: changed, added or removed is refused', () => {
    const sent = { 'Idempotency-Key': 'key-a', 'x-idempotency-route': 'POST /finance/withdrawals/' };
    const headers = signIdentity(gateway, identity, 'POST', PATH, BODY, sent);
    // Received, node lowercases the names; other headers are not signed.
    const received = (extra: Record<string, string | undefined>) => ({
      ...headers,
      'idempotency-key': 'key-a',
      'x-idempotency-route': 'POST /finance/withdrawals/',
      'content-type': 'application/json',
      ...extra,
    });
    const verify = (h: Record<string, string | undefined>) =>
      verifyIdentity(withdrawals, h, 'POST', PATH, BODY);
    expect(verify(received({}))).toEqual({ caller: 'gateway', identity });
    expect(verify(received({ 'content-type': 'text/plain', 'x-request-id': 'r1' }))).not.toBeNull();
    expect(verify(received({ 'idempotency-key': 'key-b' }))).toBeNull();
    expect(verify(received({ 'idempotency-key': undefined }))).toBeNull();
    expect(verify(received({ 'x-idempotency-route': 'POST /ops/withdrawals/x/approve/' }))).toBeNull();
    expect(verify(received({ 'x-idempotency-route': undefined }))).toBeNull();
    expect(verify(received({ 'x-idempotency-scope': 'another' }))).toBeNull();

    // Signed without a key, a key added is refused.
    const unkeyed = signIdentity(gateway, identity, 'POST', PATH, BODY, {
      'content-type': 'application/json',
    });
    expect(verifyIdentity(withdrawals, unkeyed, 'POST', PATH, BODY)).not.toBeNull();
    expect(
      verifyIdentity(withdrawals, { ...unkeyed, 'idempotency-key': 'key-a' }, 'POST', PATH, BODY),
    ).toBeNull();
    expect(
      verifyIdentity(withdrawals, { ...unkeyed, 'x-idempotency-route': 'POST /x/' }, 'POST', PATH, BODY),
    ).toBeNull();
    // The hash is of the names lowercased and sorted: the same headers in any case and order.
    expect(
      idempotencySha256({ 'X-Idempotency-B': '2', 'IDEMPOTENCY-KEY': 'k', 'x-idempotency-a': '1' }),
    ).toBe(
      idempotencySha256({
        'x-idempotency-a': '1',
        'idempotency-key': 'k',
        'x-idempotency-b': '2',
        accept: '*/*',
      }),
    );
    expect(idempotencySha256({ accept: '*/*' })).toBe(idempotencySha256(undefined));
  });

  it('refuses a tampered identity, timestamp or signature, and a call missing any part', () => {
    const now = Date.now();
    const headers = signIdentity(gateway, identity, 'GET', PATH, null, undefined, now);
    const verify = (h: Record<string, string | undefined>) =>
      verifyIdentity(withdrawals, h, 'GET', PATH, null, now);
    expect(verify(headers)).not.toBeNull();
    const operator = encode({ ...identity, role: 'operator', signature_version: 2 });
    expect(verify({ ...headers, [IDENTITY_HEADER]: operator })).toBeNull();
    expect(verify({ ...headers, [IDENTITY_TS_HEADER]: String(now + 1) })).toBeNull();
    const sig3 = headers[IDENTITY_SIG3_HEADER] as string;
    expect(
      verify({ ...headers, [IDENTITY_SIG3_HEADER]: `${sig3.slice(0, -1)}${sig3.endsWith('0') ? '1' : '0'}` }),
    ).toBeNull();
    expect(verify({ ...headers, [IDENTITY_SIG3_HEADER]: '' })).toBeNull();
    expect(verify({ ...headers, [IDENTITY_SIG3_HEADER]: sig3.slice(0, 32) })).toBeNull();
    for (const part of [CALLER_HEADER, IDENTITY_HEADER, IDENTITY_TS_HEADER, IDENTITY_SIG3_HEADER]) {
      const { [part]: _gone, ...rest } = headers;
      expect(verify(rest)).toBeNull();
    }
    expect(verify({})).toBeNull();
  });

  it('refuses a signature 61 s old or 61 s ahead, and accepts one within the minute', () => {
    const now = Date.now();
    for (const skew of [-61_000, 61_000]) {
      const headers = signIdentity(gateway, identity, 'GET', `/x/${skew}/`, null, undefined, now + skew);
      expect(verifyIdentity(withdrawals, headers, 'GET', `/x/${skew}/`, null, now)).toBeNull();
    }
    for (const skew of [-59_000, 59_000]) {
      const headers = signIdentity(gateway, identity, 'GET', `/y/${skew}/`, null, undefined, now + skew);
      expect(verifyIdentity(withdrawals, headers, 'GET', `/y/${skew}/`, null, now)).not.toBeNull();
    }
    // A signature checked once is still refused once it is too old.
    const headers = signIdentity(gateway, identity, 'GET', '/z/', null, undefined, now);
    expect(verifyIdentity(withdrawals, headers, 'GET', '/z/', null, now)).not.toBeNull();
    expect(verifyIdentity(withdrawals, headers, 'GET', '/z/', null, now + 60_001)).toBeNull();
  });

  it('accepts both keys of a caller whose key is being replaced, and neither key of another caller', () => {
    const NEW_KEY = 'the-gateways-replacement-internal-key-000';
    const rotating = keysOf({ gateway: [NEW_KEY, GATEWAY_KEY], orders: [ORDERS_KEY] });
    for (const key of [NEW_KEY, GATEWAY_KEY]) {
      const headers = signIdentity(callKey('gateway', key), identity, 'POST', PATH, BODY);
      expect(verifyIdentity(rotating, headers, 'POST', PATH, BODY)).toEqual({ caller: 'gateway', identity });
      // Each key still covers the call.
      expect(verifyIdentity(rotating, headers, 'POST', PATH, '{}')).toBeNull();
      // Orders may not sign with the gateway's keys.
      const asOrders = signIdentity(callKey('orders', key), identity, 'POST', PATH, BODY);
      expect(verifyIdentity(rotating, asOrders, 'POST', PATH, BODY)).toBeNull();
    }
    // Once the old key is dropped, its signatures are refused.
    const rotated = keysOf({ gateway: [NEW_KEY] });
    const old = signIdentity(callKey('gateway', GATEWAY_KEY), identity, 'GET', '/rotated/');
    expect(verifyIdentity(rotated, old, 'GET', '/rotated/')).toBeNull();
  });

  it('signs the parts a batch carries for each call over the body that call would send', () => {
    const charge = JSON.stringify({ order_uuid: randomUUID(), amount: 100 });
    const signed = signedIdentity(orders, identity, 'POST', '/internal/charges/', charge);
    expect(signed.caller).toBe('orders');
    expect(verifySignedIdentity(withdrawals, signed, 'POST', '/internal/charges/', charge)).toEqual({
      caller: 'orders',
      identity,
    });
    expect(
      verifySignedIdentity(withdrawals, signed, 'POST', '/internal/charges/', charge.replace('100', '1')),
    ).toBeNull();
    expect(
      verifySignedIdentity(
        withdrawals,
        { ...signed, caller: 'gateway' },
        'POST',
        '/internal/charges/',
        charge,
      ),
    ).toBeNull();
  });

  it('refuses an identity without its version marker, or with another, even correctly signed', () => {
    const now = Date.now();
    const key = deriveCallKey(GATEWAY_KEY, 'withdrawals');
    const ts = String(now);
    const call = `GET\n${PATH}\n${bodySha256(null)}\n${idempotencySha256(undefined)}`;
    // Headers as signIdentity makes them, signed by hand over a chosen identity.
    const signedOver = (value: unknown) => {
      const encoded = encode(value);
      const sig3 = createHmac('sha256', key)
        .update(`v3\ngateway\nwithdrawals\n${ts}\n${call}\n${encoded}`)
        .digest('hex');
      return {
        [CALLER_HEADER]: 'gateway',
        [IDENTITY_HEADER]: encoded,
        [IDENTITY_TS_HEADER]: ts,
        [IDENTITY_SIG3_HEADER]: sig3,
      };
    };
    // The hand-made signature is the one signIdentity makes: the check below is of the marker alone.
    expect(
      verifyIdentity(withdrawals, signedOver({ ...identity, signature_version: 2 }), 'GET', PATH, null, now),
    ).toEqual({ caller: 'gateway', identity });
    expect(verifyIdentity(withdrawals, signedOver(identity), 'GET', PATH, null, now)).toBeNull();
    expect(
      verifyIdentity(withdrawals, signedOver({ ...identity, signature_version: 1 }), 'GET', PATH, null, now),
    ).toBeNull();
    expect(
      verifyIdentity(
        withdrawals,
        signedOver({ ...identity, signature_version: '2' }),
        'GET',
        PATH,
        null,
        now,
      ),
    ).toBeNull();
    // Nor anything that is not an identity.
    expect(
      verifyIdentity(withdrawals, signedOver({ signature_version: 2 }), 'GET', PATH, null, now),
    ).toBeNull();
  });
});

describe("the previous release's form, while a deployment is upgraded", () => {
  const upgrading = keysOf({ gateway: [GATEWAY_KEY] }, [LEGACY_SECRET, 'the-secret-it-replaced-0123456789']);

  /** Headers exactly as a signer of the previous release made them (its macV2, by hand). */
  function previousRelease(
    secret: string,
    method: string,
    path: string,
    body: string | null,
    now = Date.now(),
  ) {
    const encoded = encode({ ...identity, signature_version: 2 });
    const ts = String(now);
    const sig2 = createHmac('sha256', secret)
      .update(`v2\n${ts}\n${method}\n${path}\n${bodySha256(body)}\n${encoded}`)
      .digest('hex');
    return { [IDENTITY_HEADER]: encoded, [IDENTITY_TS_HEADER]: ts, [IDENTITY_SIG2_HEADER]: sig2 };
  }

  it('accepts a sig2 as the caller legacy, with either secret, only while given INTERNAL_SECRET', () => {
    for (const secret of upgrading.legacySecrets) {
      const headers = previousRelease(secret, 'POST', PATH, BODY);
      expect(verifyIdentity(upgrading, headers, 'POST', PATH, BODY)).toEqual({
        caller: LEGACY_CALLER,
        identity,
      });
      // It still covers the call.
      expect(verifyIdentity(upgrading, headers, 'POST', PATH, '{}')).toBeNull();
      expect(verifyIdentity(upgrading, headers, 'POST', `${PATH}?a=1`, BODY)).toBeNull();
      // Not once the deployment is upgraded (no INTERNAL_SECRET).
      expect(verifyIdentity(withdrawals, headers, 'POST', PATH, BODY)).toBeNull();
    }
    const other = previousRelease('a-secret-this-service-was-never-given', 'POST', PATH, BODY);
    expect(verifyIdentity(upgrading, other, 'POST', PATH, BODY)).toBeNull();
    // The form v1 alone (x-sa-identity-sig) is never accepted.
    const now = Date.now();
    const encoded = encode({ ...identity, signature_version: 2 });
    const sig = createHmac('sha256', LEGACY_SECRET).update(`${now}.GET.${PATH}.${encoded}`).digest('hex');
    const v1 = { [IDENTITY_HEADER]: encoded, [IDENTITY_TS_HEADER]: String(now), [IDENTITY_SIG_HEADER]: sig };
    expect(verifyIdentity(upgrading, v1, 'GET', PATH, null, now)).toBeNull();
  });

  it('a caller given the legacy secret sends both forms; a bad sig3 never falls back to a good sig2', () => {
    const both = callKey('gateway', GATEWAY_KEY, 'withdrawals', LEGACY_SECRET);
    const headers = signIdentity(both, identity, 'POST', PATH, BODY);
    expect(Object.keys(headers)).toEqual(
      expect.arrayContaining([IDENTITY_SIG_HEADER, IDENTITY_SIG2_HEADER, IDENTITY_SIG3_HEADER]),
    );
    // Its sig2 is the previous release's, verified as such; its sig3 names the caller.
    const { [IDENTITY_SIG3_HEADER]: _sig3, [CALLER_HEADER]: _caller, ...sig2Only } = headers;
    expect(verifyIdentity(upgrading, sig2Only, 'POST', PATH, BODY)).toEqual({
      caller: LEGACY_CALLER,
      identity,
    });
    expect(verifyIdentity(upgrading, headers, 'POST', PATH, BODY)).toEqual({ caller: 'gateway', identity });

    const badSig3 = { ...headers, [IDENTITY_SIG3_HEADER]: 'ab'.repeat(32) };
    expect(verifyIdentity(upgrading, badSig3, 'POST', PATH, BODY)).toBeNull();
    // Nor with a caller the callee has no key for, nor a malformed caller, nor an empty sig3.
    expect(
      verifyIdentity(upgrading, { ...headers, [CALLER_HEADER]: 'webhook-dispatcher' }, 'POST', PATH, BODY),
    ).toBeNull();
    expect(
      verifyIdentity(upgrading, { ...headers, [CALLER_HEADER]: 'Not A Caller' }, 'POST', PATH, BODY),
    ).toBeNull();
    expect(
      verifyIdentity(upgrading, { ...headers, [IDENTITY_SIG3_HEADER]: '' }, 'POST', PATH, BODY),
    ).toBeNull();
    // A caller header with only a sig2 is still the legacy form: the caller named is not believed.
    const named = { ...sig2Only, [CALLER_HEADER]: 'gateway' };
    expect(verifyIdentity(upgrading, named, 'POST', PATH, BODY)).toEqual({ caller: LEGACY_CALLER, identity });
  });
});

describe('the memos', () => {
  it('reuse a signature for a second, then sign anew; another caller or call is another signature', () => {
    const now = Date.now();
    const first = signIdentity(gateway, identity, 'POST', '/internal/charges/', '{}', undefined, now);
    expect(signIdentity(gateway, identity, 'POST', '/internal/charges/', '{}', undefined, now + 999)).toEqual(
      first,
    );
    expect(
      signIdentity(gateway, identity, 'POST', '/internal/charges/', '{}', undefined, now + 1_000),
    ).not.toEqual(first);
    expect(signIdentity(orders, identity, 'POST', '/internal/charges/', '{}', undefined, now)).toMatchObject({
      [CALLER_HEADER]: 'orders',
    });
    expect(
      signIdentity(
        callKey('gateway', GATEWAY_KEY),
        identity,
        'POST',
        '/internal/charges/',
        '{}',
        undefined,
        now,
      ),
    ).toEqual(first);
    const payments = callKey('gateway', GATEWAY_KEY, 'payments');
    expect(signIdentity(payments, identity, 'POST', '/internal/charges/', '{}', undefined, now)).not.toEqual(
      first,
    );
    const keyed = signIdentity(
      gateway,
      identity,
      'POST',
      '/internal/charges/',
      '{}',
      { 'idempotency-key': 'k' },
      now,
    );
    expect(keyed).not.toEqual(first);
  });

  it('never make a different call pass with parts verified before', () => {
    const now = Date.now();
    const sent = { 'idempotency-key': 'key-a' };
    const headers = { ...signIdentity(gateway, identity, 'POST', PATH, BODY, sent, now), ...sent };
    const verify = (
      keys: CallerKeys,
      h: Record<string, string>,
      method: string,
      path: string,
      body: string,
    ) => verifyIdentity(keys, h, method, path, body, now + 10);
    // Verified once: the memo now holds these parts.
    expect(verify(withdrawals, headers, 'POST', PATH, BODY)).toEqual({ caller: 'gateway', identity });
    expect(verify(withdrawals, headers, 'POST', PATH, BODY)).toEqual({ caller: 'gateway', identity });
    expect(verify(withdrawals, headers, 'PUT', PATH, BODY)).toBeNull();
    expect(verify(withdrawals, headers, 'POST', '/ops/withdrawals/', BODY)).toBeNull();
    expect(verify(withdrawals, headers, 'POST', `${PATH}?a=1`, BODY)).toBeNull();
    expect(verify(withdrawals, headers, 'POST', PATH, '{}')).toBeNull();
    expect(verify(withdrawals, { ...headers, 'idempotency-key': 'key-b' }, 'POST', PATH, BODY)).toBeNull();
    expect(verify(withdrawals, { ...headers, [CALLER_HEADER]: 'orders' }, 'POST', PATH, BODY)).toBeNull();
    expect(
      verify(withdrawals, { ...headers, [IDENTITY_TS_HEADER]: String(now + 5) }, 'POST', PATH, BODY),
    ).toBeNull();
    const operator = encode({ ...identity, role: 'operator', signature_version: 2 });
    expect(verify(withdrawals, { ...headers, [IDENTITY_HEADER]: operator }, 'POST', PATH, BODY)).toBeNull();
    // A service given another key for the caller (here: a fresh one) does not take the memo's answer.
    const other = keysOf({ gateway: [randomBytes(32).toString('hex')] });
    expect(verify(other, headers, 'POST', PATH, BODY)).toBeNull();
    // The memo's answer is the identity verified, not an object a caller could change for the next.
    const verified = verify(withdrawals, headers, 'POST', PATH, BODY);
    expect(Object.isFrozen(verified?.identity)).toBe(true);
  });

  // The verified memo is per process: two services in one (tests, or two callees given the same key
  // for a caller) must not take each other's verdicts, since the signature names its callee.
  it('never make a call signed for one callee pass at another holding the same key', () => {
    const now = Date.now();
    const headers = signIdentity(gateway, identity, 'GET', '/shared/', null, undefined, now);
    const payments: CallerKeys = { ...withdrawals, callee: 'payments' };
    // Without the memo, payments refuses it: the signature names withdrawals.
    expect(verifyIdentity(payments, headers, 'GET', '/shared/', null, now)).toBeNull();
    expect(verifyIdentity(withdrawals, headers, 'GET', '/shared/', null, now)).not.toBeNull();
    // Once withdrawals has verified it, payments must still refuse it.
    expect(verifyIdentity(payments, headers, 'GET', '/shared/', null, now)).toBeNull();
  });
});
