import { createHmac, randomUUID } from 'node:crypto';
import {
  IDENTITY_SIG2_HEADER,
  bodySha256,
  signIdentity,
  signedIdentity,
  verifyIdentity,
  verifySignedIdentity,
  verifyingSecrets,
} from './identity';

const secret = 'a-shared-internal-secret';
const identity = {
  user_id: randomUUID(),
  seller_id: randomUUID(),
  environment: 'test' as const,
  role: 'seller' as const,
};

/** Headers as a signer of the previous release made them: no query, no body, no version marker. */
function previousReleaseHeaders(path: string, now = Date.now()): Record<string, string> {
  const encoded = Buffer.from(JSON.stringify(identity)).toString('base64url');
  const ts = String(now);
  const sig = createHmac('sha256', secret).update(`${ts}.GET.${path}.${encoded}`).digest('hex');
  return { 'x-sa-identity': encoded, 'x-sa-identity-ts': ts, 'x-sa-identity-sig': sig };
}

describe('gateway identity', () => {
  it('verifies what the gateway signed', () => {
    const headers = signIdentity(secret, identity, 'get', '/sellers/orders/');
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/orders/')).toEqual(identity);
  });

  it('verifies with the previous secret too while it is being replaced, and with nothing else', () => {
    const replaced = 'the-secret-being-replaced';
    const secrets = verifyingSecrets({ INTERNAL_SECRET: secret, INTERNAL_SECRET_PREVIOUS: replaced });
    expect(secrets).toEqual([secret, replaced]);
    expect(verifyingSecrets({ INTERNAL_SECRET: secret })).toEqual([secret]);
    for (const signer of [secret, replaced]) {
      const headers = signIdentity(signer, identity, 'POST', '/x/', '{"a":1}');
      expect(verifyIdentity(secrets, headers, 'POST', '/x/', '{"a":1}')).toEqual(identity);
      // Each secret still covers the body.
      expect(verifyIdentity(secrets, headers, 'POST', '/x/', '{"a":2}')).toBeNull();
    }
    const other = signIdentity('yet-another-secret-value', identity, 'POST', '/x/', '{"a":1}');
    expect(verifyIdentity(secrets, other, 'POST', '/x/', '{"a":1}')).toBeNull();
  });

  it('refuses another secret, method, path, a tampered identity and an old timestamp', () => {
    const headers = signIdentity(secret, identity, 'GET', '/sellers/orders/');
    expect(verifyIdentity('another-secret-value', headers, 'GET', '/sellers/orders/')).toBeNull();
    expect(verifyIdentity(secret, headers, 'POST', '/sellers/orders/')).toBeNull();
    expect(verifyIdentity(secret, headers, 'GET', '/finance/balance/')).toBeNull();
    const tampered = {
      ...headers,
      'x-sa-identity': Buffer.from(JSON.stringify({ ...identity, role: 'operator' })).toString('base64url'),
    };
    expect(verifyIdentity(secret, tampered, 'GET', '/sellers/orders/')).toBeNull();
    const old = signIdentity(secret, identity, 'GET', '/x/', null, Date.now() - 61_000);
    expect(verifyIdentity(secret, old, 'GET', '/x/')).toBeNull();
    expect(verifyIdentity(secret, {}, 'GET', '/x/')).toBeNull();
  });

  it('covers the query: another query or none is refused', () => {
    const headers = signIdentity(secret, identity, 'GET', '/sellers/orders/?limit=5&status=PAID');
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/orders/?limit=5&status=PAID')).toEqual(identity);
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/orders/?limit=5&status=PENDING')).toBeNull();
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/orders/?status=PAID&limit=5')).toBeNull();
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/orders/')).toBeNull();
  });

  it("covers the body's exact bytes: another body, another spelling of it or none is refused", () => {
    const body = '{"amount":5000,"pix_key":"maria@example.com"}';
    const headers = signIdentity(secret, identity, 'POST', '/finance/withdrawals/', body);
    expect(verifyIdentity(secret, headers, 'POST', '/finance/withdrawals/', Buffer.from(body))).toEqual(
      identity,
    );
    expect(
      verifyIdentity(secret, headers, 'POST', '/finance/withdrawals/', body.replace('5000', '9000')),
    ).toBeNull();
    expect(
      verifyIdentity(secret, headers, 'POST', '/finance/withdrawals/', body.replace(',', ', ')),
    ).toBeNull();
    expect(verifyIdentity(secret, headers, 'POST', '/finance/withdrawals/')).toBeNull();
    // No body hashes as the empty string, whichever way the caller says it.
    const empty = signIdentity(secret, identity, 'POST', '/sellers/orders/x/cancel/');
    for (const none of [null, undefined, '', Buffer.alloc(0)]) {
      expect(verifyIdentity(secret, empty, 'POST', '/sellers/orders/x/cancel/', none)).toEqual(identity);
    }
    expect(verifyIdentity(secret, empty, 'POST', '/sellers/orders/x/cancel/', '{}')).toBeNull();
    expect(bodySha256(null)).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('refuses a replay with another body within the 60 s, even of a call verified before', () => {
    const now = Date.now();
    const body = '{"price":5000}';
    const headers = signIdentity(secret, identity, 'POST', '/sellers/products/', body, now);
    expect(verifyIdentity(secret, headers, 'POST', '/sellers/products/', body, now)).toEqual(identity);
    // The same headers again (the verified memo): the same call passes, another body does not.
    expect(verifyIdentity(secret, headers, 'POST', '/sellers/products/', body, now + 30_000)).toEqual(
      identity,
    );
    expect(
      verifyIdentity(secret, headers, 'POST', '/sellers/products/', '{"price":1}', now + 30_000),
    ).toBeNull();
    expect(verifyIdentity(secret, headers, 'POST', '/sellers/products/?x=1', body, now + 30_000)).toBeNull();
    expect(verifyIdentity(secret, headers, 'POST', '/sellers/products/', body, now + 60_001)).toBeNull();
  });

  it("accepts the previous release's form (rolling deploy), but never a current call stripped to it", () => {
    const legacy = previousReleaseHeaders('/finance/balance/');
    expect(verifyIdentity(secret, legacy, 'GET', '/finance/balance/')).toEqual(identity);
    // That form never covered the query: the path alone is checked.
    expect(verifyIdentity(secret, legacy, 'GET', '/finance/balance/?a=1')).toEqual(identity);
    expect(verifyIdentity(secret, legacy, 'GET', '/finance/withdrawals/')).toBeNull();

    // A current signer marks its identity; without sig2 (or with a bad one) its call is refused.
    const current = signIdentity(secret, identity, 'POST', '/sellers/products/', '{"price":5000}');
    const { [IDENTITY_SIG2_HEADER]: _sig2, ...stripped } = current;
    expect(verifyIdentity(secret, stripped, 'POST', '/sellers/products/', '{"price":1}')).toBeNull();
    expect(verifyIdentity(secret, stripped, 'POST', '/sellers/products/', '{"price":5000}')).toBeNull();
    const badSig2 = { ...current, [IDENTITY_SIG2_HEADER]: 'ab'.repeat(32) };
    expect(verifyIdentity(secret, badSig2, 'POST', '/sellers/products/', '{"price":5000}')).toBeNull();
    // It still carries the previous form, for a verifier of the previous release: path, no query, no body.
    const encoded = current['x-sa-identity'] as string;
    const ts = current['x-sa-identity-ts'] as string;
    const previousMac = createHmac('sha256', secret)
      .update(`${ts}.POST./sellers/products/.${encoded}`)
      .digest('hex');
    expect(current['x-sa-identity-sig']).toBe(previousMac);
  });

  it('reuses a signature for a second, then signs anew', () => {
    const now = Date.now();
    const first = signIdentity(secret, identity, 'POST', '/internal/charges/', '{}', now);
    expect(signIdentity(secret, identity, 'POST', '/internal/charges/', '{}', now + 999)).toEqual(first);
    expect(signIdentity(secret, identity, 'POST', '/internal/charges/', '{}', now + 1_000)).not.toEqual(
      first,
    );
    // Another route, body or identity is another signature.
    expect(signIdentity(secret, identity, 'POST', '/internal/other/', '{}', now)).not.toEqual(first);
    expect(signIdentity(secret, identity, 'POST', '/internal/charges/', '[]', now)).not.toEqual(first);
    expect(
      signIdentity(secret, { ...identity, seller_id: randomUUID() }, 'POST', '/internal/charges/', '{}', now),
    ).not.toEqual(first);
    expect(
      signIdentity('another-secret-value', identity, 'POST', '/internal/charges/', '{}', now),
    ).not.toEqual(first);
  });

  it('answers a check made before the same way, and still refuses the same parts elsewhere or too late', () => {
    const now = Date.now();
    const headers = signIdentity(secret, identity, 'GET', '/sellers/products/', null, now);
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/products/', null, now)).toEqual(identity);
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/products/', null, now + 10)).toEqual(identity);
    expect(
      verifyIdentity('another-secret-value', headers, 'GET', '/sellers/products/', null, now),
    ).toBeNull();
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/orders/', null, now)).toBeNull();
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/products/', null, now + 60_001)).toBeNull();
    const tampered = { ...headers, 'x-sa-identity-ts': String(now + 1) };
    expect(verifyIdentity(secret, tampered, 'GET', '/sellers/products/', null, now)).toBeNull();
  });

  it('signs the parts a batch carries for each call over the body that call would send', () => {
    const charge = JSON.stringify({ order_uuid: randomUUID(), amount: 100 });
    const signed = signedIdentity(secret, identity, 'POST', '/internal/charges/', charge);
    expect(verifySignedIdentity(secret, signed, 'POST', '/internal/charges/', charge)).toEqual(identity);
    expect(
      verifySignedIdentity(secret, signed, 'POST', '/internal/charges/', charge.replace('100', '1')),
    ).toBeNull();
  });
});
