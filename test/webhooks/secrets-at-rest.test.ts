import { randomBytes } from 'node:crypto';
import { WebhookWithSecret } from '@seller-api/contracts';
import { createLogger } from '@seller-api/service-kit';
import { verifyWebhook } from '@seller-api/webhook-verify';
import { generateSecret } from '../../services/webhook-dispatcher/src/domain/registrations';
import { SecretBox, keyId, parseSecretsKey } from '../../services/webhook-dispatcher/src/domain/secret-box';
import { sealSecrets } from '../../services/webhook-dispatcher/src/jobs/seal-secrets';
import { WEBHOOK_SECRETS_KEY } from '../support/env';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

/*
 * Webhook secrets at rest (docs/webhooks.md, "Secrets at rest"): sealed in webhooks.webhooks, sealed in
 * the stored Idempotency-Key answer, clear ones of before sealed by the job, and a key rotation.
 * The dispatcher runs mid-rotation: WEBHOOK_SECRETS_KEY new, the tests' usual key as the previous one.
 */
const previousKey = parseSecretsKey(WEBHOOK_SECRETS_KEY) as Buffer;
const currentKey = randomBytes(32);
const box = new SecretBox(currentKey, previousKey);
const oldBox = new SecretBox(previousKey);
const logger = createLogger('secrets-at-rest-test', 'silent');

const t = useSystem({
  env: {
    WEBHOOK_SECRETS_KEY: currentKey.toString('base64'),
    WEBHOOK_SECRETS_KEY_PREVIOUS: WEBHOOK_SECRETS_KEY,
  },
  receiver: true,
});

const sql = () => t.system.dispatcher.runtime.sql;

async function storedSecret(id: string) {
  const [row] = await sql().query<{ secret: string | null; secret_sealed: string | null }>(
    'select secret, secret_sealed from webhooks.webhooks where id = $1',
    [id],
  );
  return row;
}

/** Waits for a delivery of `order` to `path` and checks it against `secret`. */
async function deliveredSignedWith(order: string, path: string, secret: string) {
  const hit = await waitFor(
    () =>
      t.receiver.received.find(
        (h) => h.path === path && (h.body.data.order as { uuid?: string } | undefined)?.uuid === order,
      ) ?? null,
    { what: `delivery to ${path}` },
  );
  expect(verifyWebhook({ secret, headers: hit.headers, rawBody: hit.rawBody }).event).toBe('order.created');
}

describe('webhook secrets at rest', () => {
  it('stores a new secret sealed with the current key only, and signs with it', async () => {
    const { key } = await t.newKey();
    const hook = await register(t.url, key, `${t.receiver.url}/sealed`, 'order.created');
    const row = await storedSecret(hook.id);
    expect(row?.secret).toBeNull();
    expect(row?.secret_sealed).toMatch(new RegExp(`^v1:${keyId(currentKey)}:[A-Za-z0-9_-]+$`));
    expect(row?.secret_sealed).not.toContain(hook.secret.slice(6));
    expect(box.open(row?.secret_sealed as string, hook.id)).toBe(hook.secret);
    // Bound to its webhook: it does not open as another's.
    expect(() => box.open(row?.secret_sealed as string, 'another-id')).toThrow();
    await deliveredSignedWith(await placeOrder(t.url, key), '/sealed', hook.secret);
  });

  it('signs with a clear secret of before, and the job seals it and clears the clear copy', async () => {
    const { key } = await t.newKey();
    const hook = await register(t.url, key, `${t.receiver.url}/legacy`, 'order.created');
    // A row as the release before wrote it.
    const legacy = generateSecret();
    await sql().query('update webhooks.webhooks set secret = $2, secret_sealed = null where id = $1', [
      hook.id,
      legacy,
    ]);
    await deliveredSignedWith(await placeOrder(t.url, key), '/legacy', legacy);

    const { sealed } = await sealSecrets(sql(), box, logger);
    expect(sealed).toBeGreaterThanOrEqual(1);
    const row = await storedSecret(hook.id);
    expect(row?.secret).toBeNull();
    expect(box.isCurrent(row?.secret_sealed as string)).toBe(true);
    expect(box.open(row?.secret_sealed as string, hook.id)).toBe(legacy);
    await deliveredSignedWith(await placeOrder(t.url, key), '/legacy', legacy);
  });

  it('opens secrets sealed with the previous key, and the job seals them again with the current one', async () => {
    const { key } = await t.newKey();
    const hook = await register(t.url, key, `${t.receiver.url}/previous`, 'order.created');
    const secret = box.open((await storedSecret(hook.id))?.secret_sealed as string, hook.id);
    await sql().query('update webhooks.webhooks set secret_sealed = $2 where id = $1', [
      hook.id,
      oldBox.seal(secret, hook.id),
    ]);
    await deliveredSignedWith(await placeOrder(t.url, key), '/previous', secret);

    await sealSecrets(sql(), box, logger);
    const row = await storedSecret(hook.id);
    expect(box.isCurrent(row?.secret_sealed as string)).toBe(true);
    // The current key alone opens it now: the previous one may go.
    expect(new SecretBox(currentKey).open(row?.secret_sealed as string, hook.id)).toBe(secret);
  });

  it('records a failed attempt, sends nothing, for a secret sealed with a key it does not hold', async () => {
    const { key } = await t.newKey();
    const hook = await register(t.url, key, `${t.receiver.url}/unknown-key`, 'order.created');
    await sql().query('update webhooks.webhooks set secret_sealed = $2 where id = $1', [
      hook.id,
      new SecretBox(randomBytes(32)).seal('whsec_x', hook.id),
    ]);
    const order = await placeOrder(t.url, key);
    const attempts = await waitFor(
      async () => {
        const res = await call(`${t.url}/config/webhooks/${hook.id}/deliveries/`, { key });
        const [delivery] = (res.body.data as { results: Array<{ attempts: Array<{ error: string }> }> })
          .results;
        return delivery && delivery.attempts.length > 0 ? delivery.attempts : null;
      },
      { what: 'a failed attempt' },
    );
    expect(attempts[0]?.error).toBe('Signing secret unavailable');
    expect(
      t.receiver.received.filter(
        (h) => h.path === '/unknown-key' && (h.body.data.order as { uuid?: string }).uuid === order,
      ),
    ).toEqual([]);
  });
});

describe('the stored answer of a keyed registration', () => {
  it('holds no clear secret, and a replay answers the same secret', async () => {
    const { key } = await t.newKey();
    const idempotencyKey = `register-${randomBytes(6).toString('hex')}`;
    const request = () =>
      call(`${t.url}/config/webhooks/`, {
        method: 'POST',
        key,
        headers: { 'idempotency-key': idempotencyKey },
        body: { url: `${t.receiver.url}/keyed`, event: 'order.paid' },
      });
    const first = await request();
    expect(first.status).toBe(201);
    const created = WebhookWithSecret.parse(first.body.data);

    const rows = await sql().query<{ body: string }>(
      'select body from webhooks.idempotency_keys where key = $1',
      [idempotencyKey],
    );
    expect(rows).toHaveLength(1);
    const stored = rows[0]?.body ?? '';
    expect(stored).toContain(created.id);
    expect(stored).not.toContain(created.secret);
    expect(stored).not.toContain(created.secret.slice(6, 30));
    expect(stored).not.toContain('whsec_');

    const replay = await request();
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    // One registration: the replay made no second webhook.
    const list = await call(`${t.url}/config/webhooks/`, { key });
    expect((list.body.data as { results: unknown[] }).results).toHaveLength(1);
  });

  it('a secret rotation under a key is kept sealed too', async () => {
    const { key } = await t.newKey();
    await register(t.url, key, `${t.receiver.url}/rotate-keyed`, 'order.paid');
    const idempotencyKey = `rotate-${randomBytes(6).toString('hex')}`;
    const rotate = () =>
      call(`${t.url}/config/webhooks/`, {
        method: 'POST',
        key,
        headers: { 'idempotency-key': idempotencyKey },
        body: { url: `${t.receiver.url}/rotate-keyed`, event: 'order.paid' },
      });
    const first = await rotate();
    expect(first.status).toBe(201);
    const { secret } = WebhookWithSecret.parse(first.body.data);
    const [row] = await sql().query<{ body: string }>(
      'select body from webhooks.idempotency_keys where key = $1',
      [idempotencyKey],
    );
    expect(row?.body).not.toContain(secret);
    const replay = await rotate();
    expect(WebhookWithSecret.parse(replay.body.data).secret).toBe(secret);
  });
});
