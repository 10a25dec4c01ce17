import { deriveCallKey, pspClientHeaders, verifyPspClient, type CallerKeys } from '@seller-api/service-kit';
import {
  PSP_NOTIFICATION_SECRET_HEADER,
  environmentOfCertificate,
  environmentOfSecret,
  isPspNotificationAuthorized,
  normaliseDn,
  pspNotificationHeaders,
  type PspSenders,
} from './psp-senders';

const LIVE = { subject: 'CN=pix.psp.example,O=PSP SA,C=BR', issuer: 'CN=PSP CA,O=PSP SA,C=BR' };
const TEST = { subject: 'CN=pix-h.psp.example,O=PSP SA,C=BR', issuer: 'CN=PSP Homolog CA,O=PSP SA,C=BR' };
const SENDERS: PspSenders = {
  live: { secret: 'live-secret-0123456789', certificate: LIVE },
  test: { secret: 'test-secret-0123456789', certificate: { subject: TEST.subject, issuer: null } },
};
const PATH = '/psp/webhook/pix';
const BODY = Buffer.from('{"pix":[]}');
const NOW = 1_800_000_000_000;

describe('the shared secret', () => {
  it('is `Authorization: Bearer <secret>`, compared whole', () => {
    const secret = 's'.repeat(20);
    expect(PSP_NOTIFICATION_SECRET_HEADER).toBe('authorization');
    expect(pspNotificationHeaders(secret)).toEqual({ authorization: `Bearer ${secret}` });
    expect(isPspNotificationAuthorized(`Bearer ${secret}`, secret)).toBe(true);
    expect(isPspNotificationAuthorized(`bearer ${secret}`, secret)).toBe(true);
    expect(isPspNotificationAuthorized(`Bearer ${'s'.repeat(19)}`, secret)).toBe(false);
    expect(isPspNotificationAuthorized(secret, secret)).toBe(false);
    expect(isPspNotificationAuthorized(`Basic ${secret}`, secret)).toBe(false);
    expect(isPspNotificationAuthorized(undefined, secret)).toBe(false);
    expect(isPspNotificationAuthorized([`Bearer ${secret}`], secret)).toBe(false);
    expect(isPspNotificationAuthorized('Bearer ', '')).toBe(false);
  });

  it('names the environment of the PSP whose secret it is, or none', () => {
    expect(environmentOfSecret(SENDERS, 'Bearer live-secret-0123456789')).toBe('live');
    expect(environmentOfSecret(SENDERS, 'Bearer test-secret-0123456789')).toBe('test');
    expect(environmentOfSecret(SENDERS, 'Bearer other-secret-0123456789')).toBeNull();
    expect(
      environmentOfSecret({ ...SENDERS, live: { ...SENDERS.live, secret: null } }, 'Bearer x'),
    ).toBeNull();
  });
});

describe("the gateway's signed certificate", () => {
  const certificate = { ...LIVE, host: 'psp.seller.example' };
  const gatewayKey = deriveCallKey('g'.repeat(40), 'payments');
  const ordersKey = deriveCallKey('o'.repeat(40), 'payments');
  const keys = (gateway: string[], legacySecrets: string[] = []): CallerKeys => ({
    callee: 'payments',
    keys: new Map([
      ['gateway', gateway],
      ['orders', [ordersKey]],
    ]),
    legacySecrets,
  });
  const KEYS = keys([gatewayKey]);
  const signed = pspClientHeaders(
    { caller: 'gateway', callee: 'payments', key: gatewayKey },
    certificate,
    'POST',
    PATH,
    BODY,
    NOW,
  );

  it("holds for the call it was made for, with the gateway's current or previous key", () => {
    expect(verifyPspClient(KEYS, signed, 'POST', PATH, BODY, NOW + 59_000)).toEqual(certificate);
    expect(verifyPspClient(keys(['n'.repeat(43), gatewayKey]), signed, 'POST', PATH, BODY, NOW)).toEqual(
      certificate,
    );
  });

  it("fails with another service's key, another call, body, time, or a changed certificate", () => {
    // Orders' key is a good key, but only the gateway vouches for a PSP.
    const byOrders = pspClientHeaders(
      { caller: 'orders', callee: 'payments', key: ordersKey },
      certificate,
      'POST',
      PATH,
      BODY,
      NOW,
    );
    expect(verifyPspClient(KEYS, byOrders, 'POST', PATH, BODY, NOW)).toBeNull();
    expect(verifyPspClient(keys(['n'.repeat(43)]), signed, 'POST', PATH, BODY, NOW)).toBeNull();
    expect(verifyPspClient(KEYS, signed, 'POST', `${PATH}?x=1`, BODY, NOW)).toBeNull();
    expect(verifyPspClient(KEYS, signed, 'PUT', PATH, BODY, NOW)).toBeNull();
    expect(verifyPspClient(KEYS, signed, 'POST', PATH, Buffer.from('{"pix":[1]}'), NOW)).toBeNull();
    expect(verifyPspClient(KEYS, signed, 'POST', PATH, BODY, NOW + 61_000)).toBeNull();
    expect(verifyPspClient(KEYS, signed, 'POST', PATH, BODY, NOW - 61_000)).toBeNull();
    const forged = Buffer.from(JSON.stringify({ ...certificate, subject: TEST.subject })).toString(
      'base64url',
    );
    expect(
      verifyPspClient(KEYS, { ...signed, 'x-sa-psp-client': forged }, 'POST', PATH, BODY, NOW),
    ).toBeNull();
    expect(
      verifyPspClient(KEYS, { ...signed, 'x-sa-psp-client-sig2': 'zz' }, 'POST', PATH, BODY, NOW),
    ).toBeNull();
    expect(verifyPspClient(KEYS, {}, 'POST', PATH, BODY, NOW)).toBeNull();
  });

  it("accepts the previous release's form only while given its secret, and never after a failed sig2", () => {
    const legacy = 'previous-release-secret-0123456789';
    const both = pspClientHeaders(
      { caller: 'gateway', callee: 'payments', key: gatewayKey, legacySecret: legacy },
      certificate,
      'POST',
      PATH,
      BODY,
      NOW,
    );
    const previousOnly = { ...both };
    delete previousOnly['x-sa-psp-client-sig2'];
    expect(verifyPspClient(keys([], [legacy]), previousOnly, 'POST', PATH, BODY, NOW)).toEqual(certificate);
    expect(verifyPspClient(KEYS, previousOnly, 'POST', PATH, BODY, NOW)).toBeNull();
    // A sig2 that does not hold is not rescued by a good previous-release signature.
    const badNew = { ...both, 'x-sa-psp-client-sig2': '0'.repeat(64) };
    expect(verifyPspClient(keys([gatewayKey], [legacy]), badNew, 'POST', PATH, BODY, NOW)).toBeNull();
  });
});

describe('which PSP a certificate is', () => {
  it('matches the subject, and the issuer when one is configured', () => {
    const from = (subject: string, issuer: string) =>
      environmentOfCertificate(SENDERS, { subject, issuer, host: 'psp.seller.example' });
    expect(from(LIVE.subject, LIVE.issuer)).toBe('live');
    // The live PSP's subject from another CA (one the ingress also trusts) is not the live PSP.
    expect(from(LIVE.subject, TEST.issuer)).toBeNull();
    // No issuer configured for test: the homologation host's CA is what vouches for it.
    expect(from(TEST.subject, 'CN=Anything')).toBe('test');
    expect(from('CN=someone.else,O=PSP SA,C=BR', LIVE.issuer)).toBeNull();
    expect(from('CN=PIX.psp.example,O=PSP SA,C=BR', LIVE.issuer)).toBeNull();
  });

  it("reads an operator's spaces after commas and attribute case, never the values", () => {
    expect(normaliseDn('cn = pix.psp.example, O=PSP\\, SA ,C=BR')).toBe(
      'CN=pix.psp.example,O=PSP\\, SA,C=BR',
    );
    expect(
      environmentOfCertificate(
        {
          ...SENDERS,
          live: {
            secret: null,
            certificate: { subject: 'cn=pix.psp.example, o=PSP SA, c=BR', issuer: null },
          },
        },
        { subject: LIVE.subject, issuer: '', host: 'psp.seller.example' },
      ),
    ).toBe('live');
  });
});
