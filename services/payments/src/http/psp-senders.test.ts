import { pspClientHeaders, verifyPspClient } from '@seller-api/service-kit';
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
const SECRET = 'payments-internal-secret';
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
  const signed = pspClientHeaders(SECRET, certificate, 'POST', PATH, BODY, NOW);

  it('holds for the call it was made for, with the current or the previous secret', () => {
    expect(verifyPspClient(SECRET, signed, 'POST', PATH, BODY, NOW + 59_000)).toEqual(certificate);
    expect(verifyPspClient(['new-secret', SECRET], signed, 'POST', PATH, BODY, NOW)).toEqual(certificate);
  });

  it('fails for another secret, call, body, time, or a changed certificate', () => {
    expect(verifyPspClient('another-secret', signed, 'POST', PATH, BODY, NOW)).toBeNull();
    expect(verifyPspClient(SECRET, signed, 'POST', `${PATH}?x=1`, BODY, NOW)).toBeNull();
    expect(verifyPspClient(SECRET, signed, 'PUT', PATH, BODY, NOW)).toBeNull();
    expect(verifyPspClient(SECRET, signed, 'POST', PATH, Buffer.from('{"pix":[1]}'), NOW)).toBeNull();
    expect(verifyPspClient(SECRET, signed, 'POST', PATH, BODY, NOW + 61_000)).toBeNull();
    expect(verifyPspClient(SECRET, signed, 'POST', PATH, BODY, NOW - 61_000)).toBeNull();
    const forged = Buffer.from(JSON.stringify({ ...certificate, subject: TEST.subject })).toString(
      'base64url',
    );
    expect(
      verifyPspClient(SECRET, { ...signed, 'x-sa-psp-client': forged }, 'POST', PATH, BODY, NOW),
    ).toBeNull();
    expect(
      verifyPspClient(SECRET, { ...signed, 'x-sa-psp-client-sig': 'zz' }, 'POST', PATH, BODY, NOW),
    ).toBeNull();
    expect(verifyPspClient(SECRET, {}, 'POST', PATH, BODY, NOW)).toBeNull();
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
