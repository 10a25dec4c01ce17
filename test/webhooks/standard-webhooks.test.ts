import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { verifyWebhook } from '@seller-api/webhook-verify';
import { type ReceivedHook } from '../support/receiver';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

/*
 * Receivers that verify deliveries with the Standard Webhooks libraries, as sellers do: `standardwebhooks`
 * and `svix` read the webhook-id, webhook-timestamp and webhook-signature headers and take the secret as
 * it was shown at registration.
 */
const t = useSystem({ receiver: true });

/** The headers as the libraries take them: one string each. */
function flat(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

/** Registers a webhook for order.paid at `path`, pays an order, and returns the webhook and its delivery. */
async function paidDelivery(path: string, secretOf?: (webhookId: string) => Promise<string>) {
  const { key } = await t.newKey();
  const hook = await register(t.url, key, `${t.receiver.url}${path}`, 'order.paid');
  const secret = secretOf ? await secretOf(hook.id) : hook.secret;
  const order = await placeOrder(t.url, key);
  const paid = await call(`${t.url}/sandbox/orders/${order}/pay/`, { method: 'POST', key });
  expect(paid.status).toBe(200);
  const hit: ReceivedHook = await waitFor(
    () =>
      t.receiver.received.find(
        (h) => h.path === path && (h.body.data.order as { uuid?: string } | undefined)?.uuid === order,
      ),
    { what: 'the order.paid delivery' },
  );
  return { hook, secret, hit };
}

/** The body with one character changed. */
const tampered = (rawBody: string) => rawBody.replace('"delivery_attempt":1,', '"delivery_attempt":2,');

it('signs each webhook delivery so that standardwebhooks and svix verify it, and refuse it tampered', async () => {
  const { hook, hit } = await paidDelivery('/standard');
  // New secrets are whsec_ and the standard base64 of 32 random bytes.
  expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(Buffer.from(hook.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
  const headers = flat(hit.headers);
  expect(headers).toMatchObject({
    'webhook-id': headers['x-webhook-event-id'],
    'webhook-timestamp': headers['x-webhook-timestamp'],
    'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
  });
  expect(headers['webhook-id']).toMatch(/^evt_/);
  const envelope: unknown = JSON.parse(hit.rawBody);
  expect(new StandardWebhook(hook.secret).verify(hit.rawBody, headers)).toEqual(envelope);
  // svix 2 answers nothing once the signature holds, and throws when it does not.
  expect(() => new SvixWebhook(hook.secret).verify(hit.rawBody, headers)).not.toThrow();
  // The X-Webhook-Signature of the same delivery still verifies with the package's helper.
  expect(verifyWebhook({ secret: hook.secret, headers, rawBody: hit.rawBody }).event).toBe('order.paid');

  const changed = tampered(hit.rawBody);
  expect(changed).not.toBe(hit.rawBody);
  expect(() => new StandardWebhook(hook.secret).verify(changed, headers)).toThrow(/signature/i);
  expect(() => new SvixWebhook(hook.secret).verify(changed, headers)).toThrow(/signature/i);
});

it('signs with a secret issued in base64url, which the libraries verify once written in standard base64', async () => {
  // A secret as issued before secrets were standard base64: base64url, no padding, with a - or _ in it.
  let encoded = '';
  while (!/[-_]/.test(encoded)) encoded = randomBytes(32).toString('base64url');
  const oldSecret = `whsec_${encoded}`;
  const { hit } = await paidDelivery('/old-secret', async (webhookId) => {
    await t.system.dispatcher.runtime.orm.em
      .fork()
      .execute(`update webhooks.webhooks set secret = ? where id = ?`, [oldSecret, webhookId]);
    return oldSecret;
  });
  const headers = flat(hit.headers);
  // The receiver's conversion: the same 32 bytes, written in standard base64.
  const converted = `whsec_${Buffer.from(encoded, 'base64url').toString('base64')}`;
  expect(converted).not.toBe(oldSecret);
  const envelope: unknown = JSON.parse(hit.rawBody);
  expect(new StandardWebhook(converted).verify(hit.rawBody, headers)).toEqual(envelope);
  expect(() => new SvixWebhook(converted).verify(hit.rawBody, headers)).not.toThrow();
  expect(() => new StandardWebhook(converted).verify(tampered(hit.rawBody), headers)).toThrow(/signature/i);
  // Unconverted, the libraries cannot read it (their decoder knows only standard base64).
  expect(() => new StandardWebhook(oldSecret).verify(hit.rawBody, headers)).toThrow();
  // X-Webhook-Signature is keyed by the secret's text as shown, unconverted.
  expect(verifyWebhook({ secret: oldSecret, headers, rawBody: hit.rawBody }).event).toBe('order.paid');
});
