// Payments reads a PSP notification's body itself (to check a signed certificate against its bytes)
// and caps it as the gateway does, at PSP_NOTIFICATION_MAX_BYTES (docs/limits.md, "Sizes"): a call that
// reaches payments some other way than through the gateway gets no more room than one through it.
import { pspClientHeaders } from '@seller-api/service-kit';
import { gatewayKey } from '../support/keys';
import { useSystem } from '../support/use-system';

const SECRET = 'live-psp-webhook-secret-limits-0123';
const SUBJECT = 'CN=pix.live-psp.test,O=Live PSP,C=BR';

// Payments' own route, called directly: no gateway.
const t = useSystem({
  env: { PSP_WEBHOOK_SECRET: SECRET, PSP_CLIENT_CERT_SUBJECT: SUBJECT },
  gateway: false,
});

const oversized = JSON.stringify({ pix: [], pad: 'x'.repeat(64 * 1024) });

async function post(body: string, headers: Record<string, string>) {
  const res = await fetch(`${t.system.services.payments}/psp/webhook/pix`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("payments' PSP notification route", () => {
  it('answers 413 to a body over 64 KiB sent with the PSP secret', async () => {
    const res = await post(oversized, { authorization: `Bearer ${SECRET}` });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', message: 'Request body exceeds 64 KiB.' });
  });

  it('answers 413 to a body over 64 KiB with a certificate the gateway signed', async () => {
    const signed = pspClientHeaders(
      gatewayKey('payments'),
      { subject: SUBJECT, issuer: '', host: 'psp.seller.test' },
      'POST',
      '/psp/webhook/pix',
      oversized,
    );
    const res = await post(oversized, signed);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large' });
  });

  it('refuses credentials before reading: 401, whatever the size', async () => {
    const res = await post(oversized, { authorization: 'Bearer not-the-secret' });
    expect(res.status).toBe(401);
  });

  it('reads a notification under the cap as before', async () => {
    const res = await post(JSON.stringify({ pix: [] }), { authorization: `Bearer ${SECRET}` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ data: { outcomes: [] } });
  });
});
